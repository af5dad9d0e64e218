package check

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/critsec/critsec/cs"
)

// Interning. A global state does not hold its machines and messages: it
// holds small integer ids into two tables shared by every worker of a run,
// one entry per distinct machine (its process and AppendState record) and
// per distinct message (its kind and AppendBinary encoding). Equal contents get equal ids, and
// distinct contents distinct ids, so a state's vector of ids is a
// canonical encoding of the state (fingerprintOf), several times shorter
// than the records themselves, and packed states (pack.go) hold no pointer
// for the garbage collector to follow. An entry's machine is never modified once interned: a call
// works on a clone and interns the result.
//
// Ids are assigned in the order contents are first met, which with several
// workers depends on timing. Results do not depend on ids: two states are
// merged exactly when their contents are equal. Only the fingerprints of
// the visited set are computed from ids, so what timing can change is which
// pairs of states would collide, with the probability bound of
// fingerprint.

// crashedID stands for the machine of a crashed process in encodings (its
// state no longer matters). Ids count distinct contents from 0, so they
// never reach it in a run that fits in memory.
const crashedID = ^uint32(0)

// Entries are stored in chunks that never move, listed in a directory that
// is replaced, never modified, when it grows; so workers read an entry
// without the lock. A worker only reads ids it got from a frontier state
// (written before the level's barrier) or from intern itself (under the
// lock), so every read of an entry happens after its write.
const (
	internChunkBits = 12
	internChunkLen  = 1 << internChunkBits
)

// machineEntry is an interned machine with its State and Pending.
type machineEntry struct {
	m       cs.Machine
	state   cs.State
	pending cs.Op
	// idealIn and idealWant: the machine's ideal children (abstract.go)
	// that are InCS, and that wait for a grant, by index.
	idealIn, idealWant uint32
}

// msgEntry is an interned message with its key (msgKey), which orders the
// messages of an unordered channel canonically.
type msgEntry struct {
	msg cs.Message
	enc []byte
}

// table is an append-only list of entries in chunks plus the index from
// contents to ids.
type table[T any] struct {
	dir   atomic.Pointer[[]*[internChunkLen]T]
	byKey map[string]uint32
	// reserved holds the keys a checkpoint numbered (reserve) that this
	// run has not met yet, with their ids.
	reserved map[string]uint32
	n        uint32
}

func (t *table[T]) get(id uint32) *T {
	return &(*t.dir.Load())[id>>internChunkBits][id&(internChunkLen-1)]
}

// intern returns the id of key, adding newEntry() under it if it is new.
func (t *table[T]) intern(key []byte, newEntry func() T) uint32 {
	if id, found := t.byKey[string(key)]; found {
		return id
	}
	id, found := t.reserved[string(key)]
	if found {
		delete(t.reserved, string(key))
	} else {
		id = t.n
		t.n++
		t.grow()
	}
	(*t.dir.Load())[id>>internChunkBits][id&(internChunkLen-1)] = newEntry()
	t.byKey[string(key)] = id
	return id
}

// grow adds chunks until ids up to n-1 have room.
func (t *table[T]) grow() {
	dir := t.dir.Load()
	for dir == nil || int((t.n-1)>>internChunkBits) >= len(*dir) {
		var grown []*[internChunkLen]T
		if dir != nil {
			grown = slices.Clone(*dir)
		}
		grown = append(grown, new([internChunkLen]T))
		t.dir.Store(&grown)
		dir = &grown
	}
}

// reserve gives keys[i] the id i for every i >= n, the ids already taken
// (whose keys the caller compared), so that a run continuing a checkpoint
// numbers every content as the run that saved it did (checkpoint.go).
// A key met twice is refused: the file is damaged.
func (t *table[T]) reserve(keys []string) error {
	if t.reserved == nil {
		t.reserved = map[string]uint32{}
	}
	for i := int(t.n); i < len(keys); i++ {
		_, in := t.byKey[keys[i]]
		_, twice := t.reserved[keys[i]]
		if in || twice {
			return fmt.Errorf("key %d is there twice", i)
		}
		t.reserved[keys[i]] = uint32(i)
	}
	if uint32(len(keys)) > t.n {
		t.n = uint32(len(keys))
		t.grow()
	}
	return nil
}

// interner holds a run's machine and message tables.
type interner struct {
	mu       sync.Mutex
	machines table[machineEntry]
	msgs     table[msgEntry]
	// idealIndex numbers the ideal children by path (abstract.go); nil
	// without any. Set before the first machine is interned.
	idealIndex map[string]int
}

func newInterner() *interner {
	t := &interner{}
	t.machines.byKey = map[string]uint32{}
	t.msgs.byKey = map[string]uint32{}
	return t
}

// machine returns the entry of id.
func (t *interner) machine(id uint32) *machineEntry { return t.machines.get(id) }

// msg returns the entry of id.
func (t *interner) msg(id uint32) *msgEntry { return t.msgs.get(id) }

// machineKey appends m's key in the machine table: its process id, then its
// record. A record need not name its process (two processes' machines can
// have equal records), and a machine's behaviour depends on it.
func machineKey(b []byte, m cs.Machine) []byte {
	return m.AppendState(binary.AppendUvarint(b, uint64(m.Self())))
}

// internMachine returns the id of m, whose key (machineKey) is key; m
// becomes the entry's machine if the key is new, and must not be modified
// after.
func (t *interner) internMachine(key []byte, m cs.Machine) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.machines.intern(key, func() machineEntry {
		var in, want uint32
		if t.idealIndex != nil {
			in, want = idealMasks(m, t.idealIndex)
		}
		return machineEntry{m: m, state: m.State(), pending: m.Pending(), idealIn: in, idealWant: want}
	})
}

// msgKey appends m's key in the message table: its kind, a zero byte,
// then its encoding. The encoding alone does not identify a message: two
// kinds may encode alike (raymond.Request and maekawa.Request are both 'Q'
// and a number), and the checker must hand back the Go value of the right
// type (the contract of cs.Message).
func msgKey(b []byte, m cs.Message) []byte {
	return m.AppendBinary(append(cs.AppendKind(b, m), 0))
}

// internMsg returns the id of m, whose key (msgKey) is key.
func (t *interner) internMsg(key []byte, m cs.Message) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.msgs.intern(key, func() msgEntry {
		return msgEntry{msg: m, enc: slices.Clone(key)}
	})
}
