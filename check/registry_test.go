package check_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/lkcs"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
)

// brokenAtThree are the registered algorithms the checker breaks at n = 3,
// with the kind of violation: the published l_i-LMUTIN's undefined step
// (docs/design/lmutin-fix.md).
var brokenAtThree = map[string]string{"lmutin-paper": check.KindError, "lmutex-paper": check.KindError}

// shortTopology: under -short, the local algorithms whose complete graph
// takes seconds run on this graph instead (lmutex at n = 3, budget 1:
// 10 487 states on path:3, 242 923 on complete:3).
var shortTopology = map[string]string{"lmutex": "path", "lmutex-paper": "path"}

// problemAt states a's problem on n processes as TestRegistry checks it
// (l = 1, k = 2 where a takes them, the arc quorums Q_i = {P_i, ...,
// P_(i+n/2)}, a local algorithm on the complete graph or, under -short,
// on its shortTopology), or returns nil when a does not run on n processes.
func problemAt(t *testing.T, a alg.Algorithm, n int) *alg.Problem {
	t.Helper()
	spec := a.SpecFor(n, 1, 2)
	if top, ok := shortTopology[a.Name]; ok && testing.Short() {
		spec.Topology = fmt.Sprintf("%s:%d", top, n)
	}
	if a.Quorums {
		spec.Quorums = testnet.Arcs(n)
	}
	pr, err := alg.Resolve(spec)
	if errors.Is(err, lkcs.ErrAssumptions) {
		t.Logf("%s: does not run on %d processes: %v", a.Name, n, err)
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	return pr
}

// TestRegistry runs the checker on every registered algorithm at a size
// that takes seconds: the algorithm's own bounds must hold (ok), and an
// upper bound one lower than it promises (every k_i one lower, for a
// local algorithm) must be violated by a path that replays.
func TestRegistry(t *testing.T) {
	const n = 3
	for _, a := range alg.All() {
		pr := problemAt(t, a, n)
		if pr == nil {
			continue
		}
		p := pr.Params
		lo, hi := pr.Property.GlobalBounds()
		ms, err := pr.Machines()
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		budget := 2
		if testing.Short() && (a.Quorums || a.Local) {
			budget = 1
		}
		cfg := check.Config{Machines: ms, Property: pr.Property, Budget: budget, Workers: 2}
		res := mustRun(t, cfg)
		t.Logf("%s n=%d l=%d k=%d budget=%d: %s, %d states, %d budget stops, %.2fs", a.Name, n, p.L, p.K, budget, res.Verdict, res.States, res.BudgetStops, res.Seconds)
		if kind, broken := brokenAtThree[a.Name]; broken && budget > 1 {
			if res.Verdict != check.Violated || res.Violation.Kind != kind {
				t.Errorf("%s: %s %+v, want a violation of kind %s", a.Name, res.Verdict, res.Violation, kind)
			}
			continue
		}
		if res.Verdict != check.OK {
			t.Errorf("%s: %s %+v", a.Name, res.Verdict, res.Violation)
			continue
		}
		switch {
		case a.Local:
			ks := make([]int, n)
			for i := range ks {
				ks[i] = max(p.Ki[i]-1, p.Li[i])
			}
			var err error
			if cfg.Property, err = property.Local(p.Neighbors, p.Li, ks); err != nil {
				t.Fatal(err)
			}
		case hi-1 < lo:
			continue
		default:
			cfg.Property = global(t, n, lo, hi-1)
		}
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
