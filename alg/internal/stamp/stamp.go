// Package stamp is the request timestamp of the local paper's algorithms
// (Kamei and Kakugawa 2017, section 3): a pair (ts_j, P_j), ordered by ts
// then by id, and the sorted sets of them that grantedTo and pendingReq
// are.
package stamp

import (
	"slices"

	"github.com/critsec/critsec/cs"
)

// Stamp is a request's timestamp (ts_j, P_j).
type Stamp struct {
	TS int64
	ID cs.ID
}

// Less is the paper's order: (ts_i, P_i) < (ts_j, P_j) iff ts_i < ts_j, or
// ts_i = ts_j and P_i < P_j.
func (a Stamp) Less(b Stamp) bool { return a.TS < b.TS || (a.TS == b.TS && a.ID < b.ID) }

func compare(a, b Stamp) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// Set is a set of stamps kept sorted, smallest first.
type Set []Stamp

// Insert adds s.
func (l Set) Insert(s Stamp) Set {
	at, _ := slices.BinarySearchFunc(l, s, compare)
	return slices.Insert(l, at, s)
}

// Take deletes (*, id) and returns it, if there.
func (l Set) Take(id cs.ID) (Set, Stamp, bool) {
	for k, s := range l {
		if s.ID == id {
			return slices.Delete(l, k, k+1), s, true
		}
	}
	return l, Stamp{}, false
}

// DeleteMin removes and returns the smallest stamp; l must not be empty.
func (l Set) DeleteMin() (Set, Stamp) {
	s := l[0]
	return slices.Delete(l, 0, 1), s
}

// Max is the largest stamp; l must not be empty.
func (l Set) Max() Stamp { return l[len(l)-1] }

// Has reports whether s is in the set.
func (l Set) Has(s Stamp) bool {
	_, found := slices.BinarySearchFunc(l, s, compare)
	return found
}

// HasID reports whether some (*, id) is in the set.
func (l Set) HasID(id cs.ID) bool {
	return slices.ContainsFunc(l, func(s Stamp) bool { return s.ID == id })
}

// Read reads AppendBinary's encoding of a set of stamps of processes 1..n
// back, refusing one out of order or out of range (into r's error).
func Read(r *cs.Reader, n int) Set {
	c := r.Count("stamp set")
	l := make(Set, 0, c)
	for range c {
		s := Stamp{TS: r.Int(), ID: cs.ID(r.Int32())}
		if r.Err() != nil {
			return nil
		}
		if s.ID < 1 || int(s.ID) > n || (len(l) > 0 && !l[len(l)-1].Less(s)) {
			r.Fail("stamp set not increasing within processes 1..n")
			return nil
		}
		l = append(l, s)
	}
	return l
}

// Clone returns a copy.
func (l Set) Clone() Set { return slices.Clone(l) }

// AppendBinary appends the size and each stamp, in order.
func (l Set) AppendBinary(b []byte) []byte {
	b = cs.AppendInt(b, int64(len(l)))
	for _, s := range l {
		b = cs.AppendInt(cs.AppendInt(b, s.TS), int64(s.ID))
	}
	return b
}
