package check

import (
	"github.com/critsec/critsec/cs"
)

// The memo. A machine is a deterministic state machine whose state is
// canonically encoded by AppendState, and it acts on the world only through
// the cs.Env of the call, which returns nothing to it. So the effect of a
// call (Receive, Entry, Exit, Suspect or Trust) depends only on the
// process, the call with its arguments, and the machine's interned id
// (which stands for its record): the machine it leaves, the Send and
// Changed calls it makes in order, and its error. The checker already
// relies on this when it merges states with equal encodings. The memo maps
// such a key to the effect of the first call made with it; a later call
// with the same key is not made: the stepper replays the recorded Send and
// Changed calls through its own Env methods (so crashes, bounds and the
// convention are checked against the new global state exactly as for a
// real call) and the successor gets the resulting machine's id. Calls that
// return an error are not cached. This saves the clone, the call, the
// encoding of the machine and a lookup in the shared tables on most
// transitions.

// memoEntries bounds the memo of each stepper: when it is full, it is
// emptied; 0 disables the memo. Results never depend on what the memo
// holds (TestMemo). The algorithms here need far fewer entries (at n = 3,
// budget 2: 4 000 for kmutex, 16 000 for gcs; Raymond n = 4: 9 000).
var memoEntries = 1 << 18

// effect is a cached machine call.
type effect struct {
	m             uint32    // id of the machine after the call
	calls         []envCall // the Env calls it made, in order
	before, after cs.State  // the machine's state before and after
	pending       cs.Op     // and its pending request after
}

// envCall is one effect of a call (cs.Effect) with its message interned:
// a send of message m to process to, or a change to state.
type envCall struct {
	send  bool
	to    cs.ID
	state cs.State
	m     uint32 // message id
}

// memoKey identifies a call: the machine's id and the message's id
// (noMsg for calls other than Receive) in a, and the action's fields in b
// (not Index: the message is what matters).
type memoKey struct{ a, b uint64 }

// noMsg is the message id of calls that deliver none.
const noMsg = ^uint32(0)

func makeMemoKey(act Action, machine, msg uint32) memoKey {
	return memoKey{
		a: uint64(machine)<<32 | uint64(msg),
		b: uint64(act.Kind)<<32 | uint64(uint8(act.Node))<<24 | uint64(uint8(act.From))<<16 | uint64(uint8(act.Who))<<8 | uint64(act.Op),
	}
}

func (k memoKey) hash() uint64 { return fmix64(k.a ^ fmix64(k.b)) }

// memo is an open-addressing hash table (linear probing) from keys to
// effects.
type memo struct {
	slots []memoSlot
	count int
	limit int
}

type memoSlot struct {
	k memoKey
	f *effect // nil: empty slot
}

func newMemo(limit int) *memo {
	return &memo{slots: make([]memoSlot, 1024), limit: limit}
}

// get returns the effect stored under k, or nil.
func (m *memo) get(k memoKey) *effect {
	mask := uint64(len(m.slots) - 1)
	for i := k.hash() & mask; ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.f == nil || s.k == k {
			return s.f
		}
	}
}

// put stores f under k, which is not in the table. A full table (limit
// entries) is emptied first.
func (m *memo) put(k memoKey, f *effect) {
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
	m.insert(memoSlot{k: k, f: f})
	m.count++
}

func (m *memo) insert(s memoSlot) {
	mask := uint64(len(m.slots) - 1)
	i := s.k.hash() & mask
	for m.slots[i].f != nil {
		i = (i + 1) & mask
	}
	m.slots[i] = s
}
