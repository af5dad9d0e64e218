package detector

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/critsec/critsec/cs"
)

// TestPlanKeepsTheClass replays every plan output against the class's
// definition (section 2 of the fault-tolerant k-mutex paper): each output
// is one Allows permits in the state the plan has reached (so P never
// suspects a live process, T never suspects again a process it trusted
// unless it crashed, S never suspects its witness), and at the end every
// correct process suspects exactly the crashed ones (strong completeness,
// and the eventual accuracy all three classes imply).
func TestPlanKeepsTheClass(t *testing.T) {
	inf := math.Inf(1)
	schedules := [][]float64{
		{0, inf, inf, inf, inf},
		{0, inf, 5, inf, 2},
		{0, 0.5, 1, 1.5, inf},
		{0, 3, 3, 3, 3}, // everybody crashes: S has no witness
	}
	for _, c := range []Class{P, T, S} {
		for si, crashAt := range schedules {
			for seed := range uint64(20) {
				n := len(crashAt) - 1
				plan := Plan(c, crashAt, 1, rand.New(rand.NewPCG(seed, 1)))
				sus := map[[2]cs.ID]bool{}
				trusted := map[[2]cs.ID]bool{}
				if c.InitiallySuspects() {
					for i := cs.ID(1); int(i) <= n; i++ {
						for j := cs.ID(1); int(j) <= n; j++ {
							if i != j {
								sus[[2]cs.ID{i, j}] = true
							}
						}
					}
					// the initial suspicions are also plan outputs at 0
				}
				witness := cs.ID(0)
				for j := 1; j <= n; j++ {
					if math.IsInf(crashAt[j], 1) {
						witness = cs.ID(j)
						break
					}
				}
				prev := 0.0
				for k, o := range plan {
					p := [2]cs.ID{o.Node, o.Who}
					if o.At < prev {
						t.Fatalf("%v schedule %d seed %d: output %d at %g after one at %g", c, si, seed, k, o.At, prev)
					}
					prev = o.At
					crashed := o.At >= crashAt[o.Who]
					if c == T && o.At == 0 && !o.Trust && sus[p] && !trusted[p] {
						continue // T's initial suspicion
					}
					if !c.Allows(o.Trust, sus[p], crashed, o.Who == witness) {
						t.Fatalf("%v schedule %d seed %d: output %+v not allowed (suspected %v, crashed %v)", c, si, seed, o, sus[p], crashed)
					}
					if !o.Trust && trusted[p] && !crashed && c != S {
						t.Fatalf("%v: %+v suspects a trusted live process", c, o)
					}
					sus[p] = !o.Trust
					if o.Trust {
						trusted[p] = true
					}
				}
				for i := cs.ID(1); int(i) <= n; i++ {
					for j := cs.ID(1); int(j) <= n; j++ {
						if i == j || !math.IsInf(crashAt[i], 1) {
							continue
						}
						p := [2]cs.ID{i, j}
						if crashed := !math.IsInf(crashAt[j], 1); crashed != sus[p] {
							t.Errorf("%v schedule %d seed %d: at the end P%d suspects P%d: %v, crashed: %v", c, si, seed, i, j, sus[p], crashed)
						}
					}
				}
			}
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []Class{P, T, S} {
		if got, err := Parse(c.String()); err != nil || got != c {
			t.Errorf("Parse(%q) = %v, %v", c, got, err)
		}
	}
	if _, err := Parse("Q"); err == nil {
		t.Error("Parse(Q) accepted")
	}
}

func TestAllows(t *testing.T) {
	cases := []struct {
		c                                  Class
		trust, suspected, crashed, witness bool
		want                               bool
	}{
		{P, false, false, false, false, false}, // strong accuracy
		{P, false, false, true, false, true},
		{P, true, true, true, false, false},
		{T, true, true, false, false, true},    // first trust
		{T, false, false, false, false, false}, // trusting accuracy
		{T, false, false, true, false, true},
		{T, true, true, true, false, false},   // strong completeness
		{S, false, false, false, false, true}, // false suspicion
		{S, false, false, false, true, false}, // weak accuracy
		{S, true, true, false, false, true},
	}
	for _, c := range cases {
		if got := c.c.Allows(c.trust, c.suspected, c.crashed, c.witness); got != c.want {
			t.Errorf("%v.Allows(trust %v, suspected %v, crashed %v, witness %v) = %v", c.c, c.trust, c.suspected, c.crashed, c.witness, got)
		}
	}
}
