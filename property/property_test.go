package property

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
)

type set []bool

func (s set) InCS(id cs.ID) bool { return s[id] }

// ring returns the neighbor lists of a ring of n processes.
func ring(n int) [][]cs.ID {
	ns := make([][]cs.ID, n)
	for i := range ns {
		ns[i] = []cs.ID{cs.ID((i+n-1)%n + 1), cs.ID((i+1)%n + 1)}
	}
	return ns
}

func uniform(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestTrackerAgainstCheck compares the incremental Tracker with a full
// re-count (Check) after every random change, for a global and a local
// property.
func TestTrackerAgainstCheck(t *testing.T) {
	const n = 9
	g, err := Global(n, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Local(ring(n), uniform(n, 1), uniform(n, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Property{g, l} {
		rng := rand.New(rand.NewPCG(1, 2))
		v := make(set, n+1)
		tr, f := NewTracker(p, v)
		if (f == nil) != (p.Check(v) == nil) {
			t.Fatalf("%v: initial: tracker %v, check %v", p, f, p.Check(v))
		}
		for range 5000 {
			id := cs.ID(rng.IntN(n) + 1)
			v[id] = !v[id]
			got := tr.Set(id, v[id])
			want := p.CheckAround(id, v)
			if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
				t.Fatalf("%v: after P%d: tracker %v, check %v", p, id, got, want)
			}
			for bi := range p.Bounds() {
				c := 0
				for _, m := range p.Bounds()[bi].Members {
					if v[m] {
						c++
					}
				}
				if tr.Count(bi) != c {
					t.Fatalf("%v: bound %d: tracker counts %d, want %d", p, bi, tr.Count(bi), c)
				}
			}
		}
	}
}

func TestFailureNamesTheBound(t *testing.T) {
	l, err := Local(ring(4), uniform(4, 0), uniform(4, 1))
	if err != nil {
		t.Fatal(err)
	}
	v := set{false, true, true, false, false}
	f := l.CheckAround(2, v)
	if f == nil || f.Error() != "N[1]={P1,P2,P4}: 2 InCS, outside the bounds 0..1" {
		t.Fatalf("got %v", f)
	}
	g, _ := Global(4, 0, 1)
	if f := g.Check(v); f == nil || f.Error() != "2 processes InCS, outside the bounds 0..1" {
		t.Fatalf("got %v", f)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		neighbors [][]cs.ID
		l, k      []int
		want      string
	}{
		{[][]cs.ID{{2}, {1, 1}}, []int{0, 0}, []int{1, 1}, "P2 lists neighbor P1 twice"},
		{[][]cs.ID{{1}, {1}}, []int{0, 0}, []int{1, 1}, "P1 lists itself"},
		{[][]cs.ID{{3}, {1}}, []int{0, 0}, []int{1, 1}, "ids run from 1 to n = 2"},
		{[][]cs.ID{{2}, {1}}, []int{0, 0}, []int{1, 3}, "need 0 <= lo <= hi <= 2"},
		{[][]cs.ID{{2}, {1}}, []int{0}, []int{1, 1}, "need one of each"},
		{nil, nil, nil, "no processes"},
	} {
		_, err := Local(c.neighbors, c.l, c.k)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Local(%v, %v, %v) = %v, want an error containing %q", c.neighbors, c.l, c.k, err, c.want)
		}
	}
	if _, err := Global(0, 0, 0); err == nil {
		t.Error("Global(0, 0, 0) accepted")
	}
	if _, err := Global(3, 2, 1); err == nil {
		t.Error("Global(3, 2, 1) accepted")
	}
}

// TestBlocks: an entry is blocked exactly when a bound counting the
// process is at its upper end, an exit when one is at its lower end.
func TestBlocks(t *testing.T) {
	g, _ := Global(4, 1, 2)
	v := set{false, true, true, false, false}
	tr, f := NewTracker(g, v)
	if f != nil {
		t.Fatal(f)
	}
	if !tr.Blocks(3, true) || tr.Blocks(1, false) || tr.Blocks(1, true) {
		t.Fatalf("at 2 of 1..2: entry of P3 blocked %v, exit of P1 %v", tr.Blocks(3, true), tr.Blocks(1, false))
	}
	tr.Set(2, false)
	if tr.Blocks(3, true) || !tr.Blocks(1, false) {
		t.Fatalf("at 1 of 1..2: entry of P3 blocked %v, exit of P1 %v", tr.Blocks(3, true), tr.Blocks(1, false))
	}
}

// TestCompletable: requests that compete for the same slack count once
// together, a change that only a later one makes possible counts in a
// later pass, and the tracker is left as it was.
func TestCompletable(t *testing.T) {
	exit := func(id cs.ID) Change { return Change{ID: id} }
	entry := func(id cs.ID) Change { return Change{ID: id, In: true} }
	complete8 := make([][]cs.ID, 8)
	l, k := make([]int, 8), make([]int, 8)
	for i := range complete8 {
		for j := 1; j <= 8; j++ {
			if j != i+1 {
				complete8[i] = append(complete8[i], cs.ID(j))
			}
		}
		l[i], k[i] = 1, 8
	}
	local, err := Local(complete8, l, k)
	if err != nil {
		t.Fatal(err)
	}
	g81, _ := Global(8, 1, 8)
	g31, _ := Global(3, 1, 3)
	g01, _ := Global(3, 0, 1)
	two := set{false, false, false, false, false, false, true, true, false} // P6, P7 InCS
	for _, c := range []struct {
		name string
		p    *Property
		v    set
		reqs []Change
		want []Change
	}{
		// Every neighborhood is all 8 processes, at 2 InCS with l = 1:
		// one of the two exits, the first in order, not both.
		{"local complete:8, two exits", local, two, []Change{exit(7), exit(6)}, []Change{exit(7)}},
		{"global 1..8, two exits", g81, two, []Change{exit(6), exit(7)}, []Change{exit(6)}},
		// At 1 of 1..3, P1's exit waits for P2's entry: a second pass.
		{"exit after an entry", g31, set{false, true, false, false}, []Change{exit(1), entry(2)}, []Change{entry(2), exit(1)}},
		{"entries at 0..1", g01, set{false, false, false, false}, []Change{entry(1), entry(2)}, []Change{entry(1)}},
		// A request for the state a process is already in is no change.
		{"no change", g31, set{false, true, false, false}, []Change{entry(1)}, nil},
	} {
		tr, f := NewTracker(c.p, c.v)
		if f != nil {
			t.Fatal(f)
		}
		if got := tr.Completable(c.reqs); !slices.Equal(got, c.want) {
			t.Errorf("%s: Completable(%v) = %v, want %v", c.name, c.reqs, got, c.want)
		}
		for id := cs.ID(1); int(id) <= c.p.N(); id++ {
			if tr.InCS(id) != c.v.InCS(id) {
				t.Errorf("%s: P%d changed in the tracker", c.name, id)
			}
		}
	}
}
