package check_test

import (
	"fmt"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// crashCases are configurations with crashes, with and without failure
// detectors: ftraymond (ok; on 2 processes under -short), Raymond (ok up
// to k-1 crashes, a deadlock at k), the test Ricart-Agrawala (a deadlock
// without a detector, ok with P).
func crashCases(t *testing.T) []struct {
	name string
	cfg  check.Config
	want check.Verdict
	kind string
	long bool
} {
	t.Helper()
	intp := func(v int) *int { return &v }
	spec := func(a string, n, k int) ([]cs.Machine, *property.Property) {
		return resolved(t, alg.Spec{Alg: a, N: n, K: intp(k)})
	}
	// Under -short ftraymond runs on 2 processes (305 states merged, 379
	// before, with the trusting detector), not 3 (337 679 and 400 842).
	ftn := 3
	if testing.Short() {
		ftn = 2
	}
	ft := fmt.Sprintf("ftraymond n=%d k=2", ftn)
	ftm, ftp := spec("ftraymond", ftn, 2)
	rm, rp := spec("raymond", 3, 2)
	cfg := func(ms []cs.Machine, p *property.Property, crashes int, d check.Detector) check.Config {
		return check.Config{Machines: ms, Property: p, Budget: 2, Crashes: crashes, Detector: d}
	}
	return []struct {
		name string
		cfg  check.Config
		want check.Verdict
		kind string
		long bool
	}{
		{ft + " 1 crash T", cfg(ftm, ftp, 1, check.Trusting{}), check.OK, "", false},
		{ft + " 1 crash P", cfg(ftm, ftp, 1, check.Perfect{}), check.OK, "", false},
		{ft + " 2 crashes T", cfg(ftm, ftp, 2, check.Trusting{}), check.OK, "", true},
		{ft + " 2 crashes P", cfg(ftm, ftp, 2, check.Perfect{}), check.OK, "", true},
		{"raymond n=3 k=2 1 crash", cfg(rm, rp, 1, nil), check.OK, "", false},
		{"raymond n=3 k=2 1 crash P", cfg(rm, rp, 1, check.Perfect{}), check.OK, "", false},
		{"raymond n=3 k=2 2 crashes", cfg(rm, rp, 2, nil), check.Violated, check.KindDeadlock, false},
		{"raymond n=3 k=2 2 crashes P", cfg(rm, rp, 2, check.Perfect{}), check.Violated, check.KindDeadlock, false},
		{"ricart-agrawala n=3 1 crash", cfg(newRA(3, false), global(t, 3, 0, 1), 1, nil), check.Violated, check.KindDeadlock, false},
		{"ricart-agrawala n=3 1 crash P", cfg(newRA(3, false), global(t, 3, 0, 1), 1, check.Perfect{}), check.OK, "", false},
		{"ricart-agrawala n=3 2 crashes P", cfg(newRA(3, false), global(t, 3, 0, 1), 2, check.Perfect{}), check.OK, "", false},
		{"greedy ricart-agrawala n=3 1 crash P", cfg(newRA(3, true), global(t, 3, 0, 1), 1, check.Perfect{}), check.Violated, check.KindDeadlock, false},
	}
}

// TestCrashedStatesMerge: leaving a crashed process's budget and suspicions out
// of the state (docs/design/partial-order-reduction.md, "Crashed processes: an
// exact merge") keeps every verdict, violation kind and budget stop, and
// explores strictly fewer states once something crashes; breadth-first and
// depth-first agree, and so do runs with partial-order reduction
// (agreeWithReduction).
func TestCrashedStatesMerge(t *testing.T) {
	for _, c := range crashCases(t) {
		if c.long && testing.Short() {
			continue
		}
		cfg := c.cfg
		cfg.Search = check.DepthFirst
		*check.MergeCrashed = false
		before := mustRun(t, cfg)
		*check.MergeCrashed = true
		after := mustRun(t, cfg)
		cfg.Search = check.BreadthFirst
		bfs := mustRun(t, cfg)
		t.Logf("%s: %s, %d states (%d budget stops) before, %d (%d) merged, %d breadth-first", c.name, after.Verdict, before.States, before.BudgetStops, after.States, after.BudgetStops, bfs.States)
		for _, r := range []check.Result{before, after, bfs} {
			if r.Verdict != c.want || (c.kind != "" && r.Violation.Kind != c.kind) {
				t.Errorf("%s: %s %+v, want %s %s", c.name, r.Verdict, r.Violation, c.want, c.kind)
			}
		}
		if c.want != check.OK {
			continue
		}
		if after.States >= before.States {
			t.Errorf("%s: %d states merged, %d before: nothing merged", c.name, after.States, before.States)
		}
		if bfs.States != after.States || bfs.BudgetStops != after.BudgetStops {
			t.Errorf("%s: breadth-first %d states (%d budget stops), depth-first %d (%d)", c.name, bfs.States, bfs.BudgetStops, after.States, after.BudgetStops)
		}
		if after.BudgetStops > before.BudgetStops {
			t.Errorf("%s: %d budget stops merged, %d before", c.name, after.BudgetStops, before.BudgetStops)
		}
	}
	*check.MergeCrashed = true
}

// TestPartialOrderWithCrashes: with crashes, with and without the
// reduction: same verdicts, violation kinds and budget stops, no more
// states, and counterexamples that replay (agreeWithReduction).
func TestPartialOrderWithCrashes(t *testing.T) {
	for _, c := range crashCases(t) {
		if c.long && testing.Short() {
			continue
		}
		full, reduced := agreeWithReduction(t, c.name, c.cfg)
		if full.Verdict != c.want || reduced.Verdict != c.want {
			t.Errorf("%s: %s without, %s with the reduction, want %s", c.name, full.Verdict, reduced.Verdict, c.want)
		}
	}
}
