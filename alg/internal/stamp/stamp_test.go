package stamp

import (
	"testing"

	"github.com/critsec/critsec/cs"
)

func TestSet(t *testing.T) {
	var s Set
	for _, x := range []Stamp{{2, 1}, {1, 3}, {1, 2}, {0, 5}} {
		s = s.Insert(x)
	}
	if s[0] != (Stamp{0, 5}) || s.Max() != (Stamp{2, 1}) || !s.Has(Stamp{1, 3}) || s.Has(Stamp{1, 4}) || !s.HasID(2) {
		t.Fatalf("sorted set %v", s)
	}
	s, min := s.DeleteMin()
	if min != (Stamp{0, 5}) || len(s) != 3 || s[0] != (Stamp{1, 2}) {
		t.Fatalf("DeleteMin gave %v, left %v", min, s)
	}
	s, got, ok := s.Take(cs.ID(3))
	if !ok || got != (Stamp{1, 3}) || s.HasID(3) {
		t.Fatalf("Take(3) gave %v %v, left %v", got, ok, s)
	}
	if _, _, ok := s.Take(9); ok {
		t.Error("Take of an absent id succeeded")
	}
	c := s.Clone()
	c[0].TS = 7
	if s[0].TS == 7 {
		t.Error("Clone shares its array")
	}
}
