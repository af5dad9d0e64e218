package cs

import (
	"encoding/binary"
	"math/bits"
)

// Set is a set of process ids, as a bit set indexed by id. The zero value is
// the empty set. Iteration (Members) is in increasing id order, so results
// never depend on map order. Ids below 64 live in the Set value itself, so
// copying a set of a model-checked system (n <= 63) allocates nothing; the
// model checker clones machines, and their sets, on every transition.
type Set struct {
	lo uint64   // ids 0..63
	hi []uint64 // hi[i]: ids 64(i+1) .. 64(i+1)+63
}

// words returns the number of 64-id words the set spans.
func (s Set) words() int { return 1 + len(s.hi) }

// word returns word i (ids 64i .. 64i+63), 0 beyond the storage.
func (s Set) word(i int) uint64 {
	switch {
	case i == 0:
		return s.lo
	case i-1 < len(s.hi):
		return s.hi[i-1]
	}
	return 0
}

// wordPtr returns a pointer to word i, growing the storage as needed.
func (s *Set) wordPtr(i int) *uint64 {
	if i == 0 {
		return &s.lo
	}
	for len(s.hi) < i {
		s.hi = append(s.hi, 0)
	}
	return &s.hi[i-1]
}

// NewSet returns the set of the given ids.
func NewSet(ids ...ID) Set {
	var s Set
	for _, id := range ids {
		s.Add(id)
	}
	return s
}

// Add puts id in the set.
func (s *Set) Add(id ID) { *s.wordPtr(int(id) >> 6) |= 1 << (uint(id) & 63) }

// Remove takes id out of the set.
func (s *Set) Remove(id ID) {
	if i := int(id) >> 6; i < s.words() {
		*s.wordPtr(i) &^= 1 << (uint(id) & 63)
	}
}

// Has reports whether id is in the set.
func (s Set) Has(id ID) bool {
	return id >= 0 && s.word(int(id)>>6)&(1<<(uint(id)&63)) != 0
}

// Len is the number of ids in the set.
func (s Set) Len() int {
	n := bits.OnesCount64(s.lo)
	for _, w := range s.hi {
		n += bits.OnesCount64(w)
	}
	return n
}

// Union adds every member of t to s.
func (s *Set) Union(t Set) {
	s.lo |= t.lo
	for i, w := range t.hi {
		*s.wordPtr(i + 1) |= w
	}
}

// Equal reports whether s and t have the same members.
func (s Set) Equal(t Set) bool {
	for i := range max(s.words(), t.words()) {
		if s.word(i) != t.word(i) {
			return false
		}
	}
	return true
}

// Clear empties the set, keeping its storage.
func (s *Set) Clear() {
	s.lo = 0
	clear(s.hi)
}

// Clone returns a copy that shares no storage with s.
func (s Set) Clone() Set {
	c := Set{lo: s.lo}
	if len(s.hi) > 0 {
		c.hi = append([]uint64(nil), s.hi...)
	}
	return c
}

// Members returns the ids in increasing order.
func (s Set) Members() []ID {
	ids := make([]ID, 0, s.Len())
	for i := range s.words() {
		for w := s.word(i); w != 0; w &= w - 1 {
			ids = append(ids, ID(i<<6+bits.TrailingZeros64(w)))
		}
	}
	return ids
}

// AppendBinary appends a canonical encoding: the number of words up to the
// last nonzero one, then those words, so equal sets encode equally whatever
// their storage size.
func (s Set) AppendBinary(b []byte) []byte {
	n := s.words()
	for n > 0 && s.word(n-1) == 0 {
		n--
	}
	b = binary.AppendUvarint(b, uint64(n))
	for i := range n {
		b = binary.AppendUvarint(b, s.word(i))
	}
	return b
}
