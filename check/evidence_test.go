package check_test

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/critsec/critsec/check"
)

// TestGlobalFamilyExhaustive is the exhaustive evidence for the global (l,k)-CS
// family as registered (mx = Maekawa, corrected variant): every
// interleaving with one exit and one entry per process (budget 2) keeps the
// bounds and never deadlocks, for Maekawa on majority(3) and grid(4),
// MUTIN(1) and MUTIN(2) on majority(3), and (l,k)-GCS on majority(3) for
// every 0 <= l < k <= 3, and (1,3)-GCS on majority(4) with one call per
// process. The four largest spaces (0.4-2.9 million states) run only
// without -short. docs/results.md records the counts.
func TestGlobalFamilyExhaustive(t *testing.T) {
	type tc struct {
		alg, coterie string
		n, l, k      int
		long         bool
		budget       int // 0: 2
	}
	cases := []tc{
		{"maekawa", "majority", 3, 0, 1, false, 0},
		{"maekawa", "grid", 4, 0, 1, false, 0},
		{"mutin", "majority", 3, 1, 3, false, 0},
		{"mutin", "majority", 3, 2, 3, false, 0},
		{"gcs", "majority", 3, 0, 1, false, 0},
		{"gcs", "majority", 3, 1, 2, false, 0},
		{"gcs", "majority", 3, 2, 3, false, 0},
		{"gcs", "majority", 3, 0, 2, true, 0},
		{"gcs", "majority", 3, 1, 3, true, 0},
		{"gcs", "majority", 3, 0, 3, true, 0},
		// n = 4 at budget 2 has more than 10^9 states (docs/results.md);
		// budget 1, every process makes one call: 2.9 million states.
		{"gcs", "majority", 4, 1, 3, true, 1},
	}
	for _, c := range cases {
		budget := cmp.Or(c.budget, 2)
		name := fmt.Sprintf("%s/%s/n=%d/l=%d/k=%d/budget=%d", c.alg, c.coterie, c.n, c.l, c.k, budget)
		t.Run(name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("a large state space; runs without -short")
			}
			ms, prop := build(t, c.alg, c.n, c.l, c.k, c.coterie)
			res := mustRun(t, check.Config{Machines: ms, Property: prop, Budget: budget, Workers: 2})
			t.Logf("%s: %s, %d states, %d budget stops, %.2fs", name, res.Verdict, res.States, res.BudgetStops, res.Seconds)
			if res.Verdict != check.OK {
				t.Fatalf("%s %+v", res.Verdict, res.Violation)
			}
		})
	}
}

// TestPaperMUTINDeadlockN4: the published MUTIN (gcs-paper) deadlocks on
// majority(4) with Maekawa as mx, as the simulator found
// (docs/design/mutin-fix.md). Depth-first search reaches it after a few
// thousand states: every process blocked in a request, P1 waiting to exit,
// no message in transit; the path replays.
func TestPaperMUTINDeadlockN4(t *testing.T) {
	ms, prop := build(t, "gcs-paper", 4, 1, 2, "majority")
	cfg := check.Config{Machines: ms, Property: prop, Budget: 2, Search: check.DepthFirst, MaxStates: 1_000_000}
	res := mustRun(t, cfg)
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock || !strings.Contains(res.Violation.Detail, "global deadlock") {
		t.Fatalf("%s after %d states: %+v", res.Verdict, res.States, res.Violation)
	}
	steps, v, err := check.Replay(cfg, check.Actions(res.Violation.Path))
	if err != nil || v != nil || len(steps) != len(res.Violation.Path) {
		t.Fatalf("replay: %d of %d steps, violation %v, error %v", len(steps), len(res.Violation.Path), v, err)
	}
	t.Logf("%d states, %d-step path: %s", res.States, len(res.Violation.Path), res.Violation.Detail)
}
