package check

import (
	"hash/maphash"

	"critsec/cs"
)

// The memo. A machine is a deterministic state machine whose state is
// canonically encoded by AppendState, and it acts on the world only through
// the cs.Env of the call, which returns nothing to it. So the effect of a
// call (Receive, Entry, Exit, Suspect or Trust) depends only on the
// process, the call with its arguments, and the machine's record in
// gstate.menc: the machine it leaves, the Send and Changed calls it makes
// in order, and its error. The checker already relies on this when it
// merges states with equal encodings. The memo maps such a key to the
// effect of the first call made with it; a later call with the same key
// is not made: the stepper replays the recorded Send and Changed calls
// through its own Env methods (so crashes, bounds and the convention are
// checked against the new global state exactly as for a real call) and
// the successor shares the resulting machine, which no one modifies
// (copy on write). Calls that return an error are not cached. This saves
// the clone, the call and the encoding of the machine on most transitions,
// and makes successors share machines, which keeps the heap small.

// memoEntries bounds the memo of each stepper: when it is full, it is
// emptied; 0 disables the memo. Results never depend on what the memo
// holds (TestMemo). The bound keeps the memo's memory under about 150 MB
// per worker; the algorithms here need far fewer entries (at n = 3,
// budget 2: 4 000 for kmutex, 16 000 for gcs; Raymond n = 4: 9 000).
var memoEntries = 1 << 18

// effect is a cached machine call.
type effect struct {
	m             cs.Machine // the machine after the call; never modified
	rec           []byte     // its record (appendRecord)
	calls         []envCall  // the Env calls it made, in order
	before, after cs.State   // the machine's state before and after
}

// envCall is a Send(to, m.msg) or a Changed(state) call.
type envCall struct {
	send  bool
	to    cs.ID
	state cs.State
	m     *sent
}

// memoKey appends the memo key of action a (delivering msg) on a machine
// whose record is rec: the record (length-prefixed), the action's fields
// (not Index: the message is what matters), then the message's encoding.
func memoKey(b []byte, a Action, msg *sent, rec []byte) []byte {
	b = append(b, rec...)
	b = append(b, byte(a.Kind), byte(a.Node), byte(a.From), byte(a.Who), byte(a.Op))
	if msg != nil {
		b = append(b, msg.enc...)
	}
	return b
}

// memo is an open-addressing hash table (linear probing) from keys to
// effects. It is faster than a map[string]*effect on this path: one
// hardware-assisted hash of the key bytes, no string conversion.
type memo struct {
	seed  maphash.Seed
	slots []memoSlot
	count int
	limit int
}

type memoSlot struct {
	h   uint64
	key string
	f   *effect // nil: empty slot
}

func newMemo(limit int) *memo {
	return &memo{seed: maphash.MakeSeed(), slots: make([]memoSlot, 1024), limit: limit}
}

// get returns the effect stored under key, or nil.
func (m *memo) get(key []byte) *effect {
	h := maphash.Bytes(m.seed, key)
	mask := uint64(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.f == nil {
			return nil
		}
		if s.h == h && s.key == string(key) {
			return s.f
		}
	}
}

// put stores f under key, which is not in the table. A full table (limit
// entries) is emptied first.
func (m *memo) put(key []byte, f *effect) {
	if m.count >= m.limit {
		clear(m.slots)
		m.count = 0
	}
	if 2*(m.count+1) > len(m.slots) {
		old := m.slots
		m.slots = make([]memoSlot, 2*len(old))
		for _, s := range old {
			if s.f != nil {
				m.insert(s)
			}
		}
	}
	m.insert(memoSlot{h: maphash.Bytes(m.seed, key), key: string(key), f: f})
	m.count++
}

func (m *memo) insert(s memoSlot) {
	mask := uint64(len(m.slots) - 1)
	i := s.h & mask
	for m.slots[i].f != nil {
		i = (i + 1) & mask
	}
	m.slots[i] = s
}
