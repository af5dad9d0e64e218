package check_test

import (
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/internal/testnet"
)

// TestRegistry runs the checker on every registered algorithm at a size
// that takes seconds: the algorithm's own bounds must hold (ok), and an
// upper bound one lower than it promises must be violated by a path that
// replays.
func TestRegistry(t *testing.T) {
	const n = 3
	for _, a := range alg.All() {
		spec := a.SpecFor(n, 1, 2)
		if a.Quorums {
			spec.Quorums = testnet.Arcs(n)
		}
		pr, err := alg.Resolve(spec)
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		p := pr.Params
		lo, hi := pr.Property.GlobalBounds()
		ms, err := pr.Machines()
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		budget := 2
		if testing.Short() && a.Quorums {
			budget = 1
		}
		cfg := check.Config{Machines: ms, Property: pr.Property, Budget: budget, Workers: 2}
		res := mustRun(t, cfg)
		t.Logf("%s n=%d l=%d k=%d budget=%d: %s, %d states, %d budget stops, %.2fs", a.Name, n, p.L, p.K, budget, res.Verdict, res.States, res.BudgetStops, res.Seconds)
		if res.Verdict != check.OK {
			t.Errorf("%s: %s %+v", a.Name, res.Verdict, res.Violation)
			continue
		}
		if hi-1 < lo {
			continue
		}
		cfg.Property = global(t, n, lo, hi-1)
		res = mustRun(t, cfg)
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindBounds {
			t.Errorf("%s with hi = %d: %s %+v, want a bounds violation", a.Name, hi-1, res.Verdict, res.Violation)
			continue
		}
		if _, v, err := check.Replay(cfg, check.Actions(res.Violation.Path)); err != nil || v == nil || v.Kind != check.KindBounds {
			t.Errorf("%s: the counterexample does not replay: %v %+v", a.Name, err, v)
		}
	}
}
