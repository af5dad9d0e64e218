package cs

import (
	"encoding/binary"
	"math/bits"
)

// Set is a set of process ids, as a bit set indexed by id. The zero value is
// the empty set. Iteration (Each, Members) is in increasing id order, so
// results never depend on map order.
type Set struct{ w []uint64 }

// NewSet returns the set of the given ids.
func NewSet(ids ...ID) Set {
	var s Set
	for _, id := range ids {
		s.Add(id)
	}
	return s
}

// Add puts id in the set.
func (s *Set) Add(id ID) {
	i := int(id) >> 6
	for len(s.w) <= i {
		s.w = append(s.w, 0)
	}
	s.w[i] |= 1 << (uint(id) & 63)
}

// Remove takes id out of the set.
func (s *Set) Remove(id ID) {
	if i := int(id) >> 6; i < len(s.w) {
		s.w[i] &^= 1 << (uint(id) & 63)
	}
}

// Has reports whether id is in the set.
func (s Set) Has(id ID) bool {
	i := int(id) >> 6
	return id >= 0 && i < len(s.w) && s.w[i]&(1<<(uint(id)&63)) != 0
}

// Len is the number of ids in the set.
func (s Set) Len() int {
	n := 0
	for _, w := range s.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// Union adds every member of t to s.
func (s *Set) Union(t Set) {
	for len(s.w) < len(t.w) {
		s.w = append(s.w, 0)
	}
	for i, w := range t.w {
		s.w[i] |= w
	}
}

// Equal reports whether s and t have the same members.
func (s Set) Equal(t Set) bool {
	a, b := s.w, t.w
	if len(a) < len(b) {
		a, b = b, a
	}
	for i, w := range a {
		var v uint64
		if i < len(b) {
			v = b[i]
		}
		if w != v {
			return false
		}
	}
	return true
}

// Clear empties the set, keeping its storage.
func (s *Set) Clear() { clear(s.w) }

// Clone returns a copy that shares no storage with s.
func (s Set) Clone() Set { return Set{w: append([]uint64(nil), s.w...)} }

// Members returns the ids in increasing order.
func (s Set) Members() []ID {
	ids := make([]ID, 0, s.Len())
	for i, w := range s.w {
		for w != 0 {
			ids = append(ids, ID(i<<6+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return ids
}

// AppendBinary appends a canonical encoding: trailing zero words are dropped,
// so equal sets encode equally whatever their storage size.
func (s Set) AppendBinary(b []byte) []byte {
	n := len(s.w)
	for n > 0 && s.w[n-1] == 0 {
		n--
	}
	b = binary.AppendUvarint(b, uint64(n))
	for _, w := range s.w[:n] {
		b = binary.AppendUvarint(b, w)
	}
	return b
}
