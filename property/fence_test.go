package property_test

import (
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// TestFencesNamed: a holder that crashed InCS stays a holder; it is fenced
// while a holder's token names it, and counts again once that holder has
// left.
func TestFencesNamed(t *testing.T) {
	f := property.NewFences(1)
	steps := []struct {
		name string
		do   func() *property.FenceFailure
		want string
	}{
		{"P1 enters", func() *property.FenceFailure { return f.Enter(1, 4, true, nil) }, ""},
		{"P1 crashes InCS", func() *property.FenceFailure { f.Crash(1); return nil }, ""},
		{"P2 enters naming P1", func() *property.FenceFailure { return f.Enter(2, 8, true, []cs.ID{1}) }, ""},
		{"P2 exits", func() *property.FenceFailure { return f.Exit(2) }, ""},
		{"P3 enters naming nobody", func() *property.FenceFailure { return f.Enter(3, 12, true, nil) },
			"2 holders named by no holder's fence, more than k = 1: P1 (crashed InCS), P3"},
	}
	for _, s := range steps {
		got := ""
		if e := s.do(); e != nil {
			got = e.Error()
		}
		if got != s.want {
			t.Fatalf("%s: %q, want %q", s.name, got, s.want)
		}
	}
}

// TestFencesSeq: at k = 1 a Seq may repeat only for the same process; at
// k = 2 Seq is not checked.
func TestFencesSeq(t *testing.T) {
	cases := []struct {
		k    int
		seqs [][2]uint64 // process, Seq of each entry (each exits before the next)
		want string
	}{
		{1, [][2]uint64{{1, 4}, {1, 4}, {2, 8}}, ""},
		{1, [][2]uint64{{1, 4}, {2, 4}}, "P2 entered with fence seq 4, equal to seq 4 of an earlier entry of P1"},
		{1, [][2]uint64{{1, 8}, {2, 4}}, "P2 entered with fence seq 4, below seq 8 of an earlier entry of P1"},
		{2, [][2]uint64{{1, 8}, {2, 4}}, ""},
	}
	for _, c := range cases {
		f := property.NewFences(c.k)
		got := ""
		for _, e := range c.seqs {
			if err := f.Enter(cs.ID(e[0]), e[1], true, nil); err != nil {
				got = err.Error()
				break
			}
			f.Exit(cs.ID(e[0]))
		}
		if got != c.want {
			t.Errorf("k=%d %v: %q, want %q", c.k, c.seqs, got, c.want)
		}
	}
}
