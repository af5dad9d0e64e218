package alg

import (
	"fmt"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/sim"
)

// familyCase is one registered member of the global (l,k)-CS family (with
// Maekawa's algorithm as mx) on a built-in coterie.
type familyCase struct {
	alg, coterie string
	n, l, k      int
}

func (c familyCase) String() string {
	return fmt.Sprintf("%s/%s n=%d l=%d k=%d", c.alg, c.coterie, c.n, c.l, c.k)
}

// build returns the machines of c with the default initial configuration
// and the problem they solve.
func (c familyCase) build(t *testing.T) ([]cs.Machine, *Problem) {
	t.Helper()
	a, err := Lookup(c.alg)
	if err != nil {
		t.Fatal(err)
	}
	spec := a.SpecFor(c.n, c.l, c.k)
	spec.Coterie = c.coterie
	pr, ms, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return ms, pr
}

// familyCases returns MUTIN(l), k-mutex and (l,k)-GCS for each n on both
// built-in coteries, with l and k near the extremes and in the middle.
func familyCases(ns []int) []familyCase {
	var cases []familyCase
	for _, n := range ns {
		for _, cot := range []string{"grid", "majority"} {
			cases = append(cases,
				familyCase{"mutin", cot, n, 1, n},
				familyCase{"mutin", cot, n, n - 1, n},
				familyCase{"kmutex", cot, n, 0, 1},
				familyCase{"kmutex", cot, n, 0, n / 2},
				familyCase{"gcs", cot, n, 1, n - 1},
				familyCase{"gcs", cot, n, n / 4, 3 * n / 4},
				familyCase{"gcs", cot, n, n/2 - 1, n / 2},
			)
		}
	}
	return cases
}

// TestFamilyWithMaekawa runs the registered family, mx = Maekawa, on
// random schedules (any FIFO-respecting delivery order, the bounds checked
// after every step, no deadlock) and in the simulator with exponential
// transit times and heavy load (the bounds, the invocation convention and
// deadlock freedom checked after every event). Under -short: n = 4, 9, 16;
// otherwise also n = 25, 49 and 100 in the simulator.
func TestFamilyWithMaekawa(t *testing.T) {
	ns, simNs, seeds := []int{4, 9}, []int{4, 9, 16}, uint64(3)
	if !testing.Short() {
		ns, simNs, seeds = []int{4, 9, 16}, []int{4, 9, 16, 25, 49, 100}, 6
	}
	for _, c := range familyCases(ns) {
		for seed := uint64(1); seed <= seeds; seed++ {
			ms, pr := c.build(t)
			if err := testnet.MustNew(t, ms, pr.Property, testnet.Options{Seed: seed}).RunRandom(40 * c.n); err != nil {
				t.Errorf("%v random schedule seed %d: %v", c, seed, err)
			}
		}
	}
	for _, c := range familyCases(simNs) {
		for seed := uint64(1); seed <= seeds; seed++ {
			ms, pr := c.build(t)
			res, err := sim.Run(sim.Config{
				Machines: ms, Property: pr.Property, Lambda: 1, E: 1,
				Tt: 1, TransitDist: sim.Exp, Entries: int64(20 * c.n), Drain: true, Seed: seed,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation != nil {
				t.Errorf("%v sim seed %d: %v", c, seed, res.Violation)
			} else if res.Entries < int64(20*c.n) {
				t.Errorf("%v sim seed %d: %d entries, want %d", c, seed, res.Entries, 20*c.n)
			}
		}
	}
}
