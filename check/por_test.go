package check_test

import (
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// agreeWithReduction runs cfg depth-first without and with partial-order
// reduction and fails unless the verdicts and violation kinds agree, the
// reduced run has no more states, and its counterexample replays on the
// unreduced model; on ok runs, both decide the same number of budget
// stops. It returns both results.
func agreeWithReduction(t *testing.T, name string, cfg check.Config) (full, reduced check.Result) {
	t.Helper()
	cfg.Search = check.DepthFirst
	full = mustRun(t, cfg)
	cfg.PartialOrder = true
	reduced = mustRun(t, cfg)
	t.Logf("%s: %s %d states (%d budget stops) without, %s %d states (%d) with the reduction", name, full.Verdict, full.States, full.BudgetStops, reduced.Verdict, reduced.States, reduced.BudgetStops)
	if full.Verdict != reduced.Verdict {
		t.Errorf("%s: %s without the reduction (%+v), %s with it (%+v, %s)", name, full.Verdict, full.Violation, reduced.Verdict, reduced.Violation, reduced.Reason)
		return
	}
	if full.Verdict == check.OK && reduced.States > full.States {
		t.Errorf("%s: %d states with the reduction, %d without", name, reduced.States, full.States)
	}
	// Persistent sets keep every reachable terminal state, so the same
	// budget stops are decided.
	if full.Verdict == check.OK && reduced.BudgetStops != full.BudgetStops {
		t.Errorf("%s: %d budget stops with the reduction, %d without", name, reduced.BudgetStops, full.BudgetStops)
	}
	if full.Verdict != check.Violated {
		return
	}
	if full.Violation.Kind != reduced.Violation.Kind {
		t.Errorf("%s: a %s violation without the reduction, %s with it (%s)", name, full.Violation.Kind, reduced.Violation.Kind, reduced.Violation.Detail)
	}
	cfg.PartialOrder = false
	if _, v, err := check.Replay(cfg, check.Actions(reduced.Violation.Path)); err != nil || (reduced.Violation.Kind != check.KindDeadlock && (v == nil || v.Kind != reduced.Violation.Kind)) {
		t.Errorf("%s: the reduced run's counterexample does not replay on the whole model: %v %+v", name, err, v)
	}
	return full, reduced
}

// resolved returns the machines and property of spec.
func resolved(t *testing.T, spec alg.Spec) ([]cs.Machine, *property.Property) {
	t.Helper()
	pr, err := alg.Resolve(spec)
	if err != nil {
		t.Fatalf("%s: %v", spec.Alg, err)
	}
	ms, err := pr.Machines()
	if err != nil {
		t.Fatalf("%s: %v", spec.Alg, err)
	}
	return ms, pr.Property
}

// TestPartialOrderAgrees: with and without partial-order reduction, every
// registered algorithm at n = 3 gets the same verdict with its own bounds
// (ok, or the violation the paper variant is known for) and with an upper
// bound one lower (a bounds violation), as in TestRegistry.
func TestPartialOrderAgrees(t *testing.T) {
	const n = 3
	for _, a := range alg.All() {
		pr := problemAt(t, a, n)
		if pr == nil {
			continue
		}
		ms, err := pr.Machines()
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		budget := 2
		if testing.Short() && (a.Quorums || a.Local) {
			budget = 1
		}
		cfg := check.Config{Machines: ms, Property: pr.Property, Budget: budget}
		agreeWithReduction(t, a.Name, cfg)
		p := pr.Params
		lo, hi := pr.Property.GlobalBounds()
		switch {
		case a.Local:
			ks := make([]int, n)
			for i := range ks {
				ks[i] = max(p.Ki[i]-1, p.Li[i])
			}
			if cfg.Property, err = property.Local(p.Neighbors, p.Li, ks); err != nil {
				t.Fatal(err)
			}
		case hi-1 < lo:
			continue
		default:
			cfg.Property = global(t, n, lo, hi-1)
		}
		agreeWithReduction(t, a.Name+" hi-1", cfg)
	}
}

// TestPartialOrderKeepsCounterexamples: the known counterexamples
// (docs/global-lk-cs.md, docs/local-lk-cs.md, docs/fault-tolerance.md,
// docs/traces/) are still found with the reduction, of the same kind.
func TestPartialOrderKeepsCounterexamples(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		name    string
		spec    alg.Spec
		budget  int
		crashes int
		kind    string
	}{
		{"gcs-paper n=4 majority (MUTIN's deadlock)", alg.Spec{Alg: "gcs-paper", N: 4, L: intp(1), K: intp(2), Coterie: "majority"}, 2, 0, check.KindDeadlock},
		{"maekawa-paper grid(4)", alg.Spec{Alg: "maekawa-paper", N: 4, Coterie: "grid"}, 2, 0, check.KindDeadlock},
		{"lmutin-paper path:2", alg.Spec{Alg: "lmutin-paper", Topology: "path:2", L: intp(1)}, 2, 0, check.KindError},
		{"lkcs-paper bowtie", alg.Spec{Alg: "lkcs-paper", Topology: "../alg/testdata/bowtie.edges", L: intp(0), K: intp(3)}, 1, 0, check.KindDeadlock},
		{"raymond n=3 k=2 2 crashes", alg.Spec{Alg: "raymond", N: 3, K: intp(2)}, 2, 2, check.KindDeadlock},
		{"raymond n=4 k=2 2 crashes", alg.Spec{Alg: "raymond", N: 4, K: intp(2)}, 2, 2, check.KindDeadlock},
	}
	for _, c := range cases {
		ms, prop := resolved(t, c.spec)
		cfg := check.Config{Machines: ms, Property: prop, Budget: c.budget, Crashes: c.crashes, MaxStates: 5_000_000}
		full, reduced := agreeWithReduction(t, c.name, cfg)
		if full.Verdict != check.Violated || full.Violation.Kind != c.kind {
			t.Errorf("%s without the reduction: %s %+v, want a %s violation", c.name, full.Verdict, full.Violation, c.kind)
		}
		if reduced.Verdict != check.Violated || reduced.Violation.Kind != c.kind {
			t.Errorf("%s with the reduction: %s %+v, want a %s violation", c.name, reduced.Verdict, reduced.Violation, c.kind)
		}
	}
}

// TestPartialOrderWithFaults: crashes and failure detectors, where the
// reduction must wait for the initialization (ftraymond) and where
// detector outputs make cycles (S suspects and trusts again: the cycle
// proviso, which expands those states fully: no reduction there).
func TestPartialOrderWithFaults(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		name    string
		spec    alg.Spec
		crashes int
		det     check.Detector
		want    check.Verdict
		long    bool // skipped under -short
	}{
		{"raymond n=3 S (cycles)", alg.Spec{Alg: "raymond", N: 3, K: intp(2)}, 0, check.Strong{}, check.OK, false},
		{"raymond n=3 1 crash P", alg.Spec{Alg: "raymond", N: 3, K: intp(2)}, 1, check.Perfect{}, check.OK, false},
		{"ftraymond n=3 k=2 T", alg.Spec{Alg: "ftraymond", N: 3, K: intp(2)}, 0, check.Trusting{}, check.OK, false},
		{"ftraymond n=3 k=2 1 crash T", alg.Spec{Alg: "ftraymond", N: 3, K: intp(2)}, 1, check.Trusting{}, check.OK, true},
		{"ftraymond n=3 k=1 S", alg.Spec{Alg: "ftraymond", N: 3, K: intp(1)}, 0, check.Strong{}, check.Violated, true},
	}
	budget := 2
	if testing.Short() {
		budget = 1
	}
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		ms, prop := resolved(t, c.spec)
		cfg := check.Config{Machines: ms, Property: prop, Budget: budget, Crashes: c.crashes, Detector: c.det}
		full, reduced := agreeWithReduction(t, c.name, cfg)
		if full.Verdict != c.want {
			t.Errorf("%s: %s %+v, want %s", c.name, full.Verdict, full.Violation, c.want)
		}
		if c.want == check.OK && c.det.Name() != "S" && reduced.States >= full.States {
			t.Errorf("%s: %d states with the reduction, %d without: nothing reduced", c.name, reduced.States, full.States)
		}
	}
}

// TestPartialOrderBudgetsPerProcess: with a budget per process the reduction
// keeps its verdicts, states and budget stops as with one budget
// (docs/design/deadlock-under-a-budget.md, "Budgets per process"): a call is
// still a step of its process alone.
func TestPartialOrderBudgetsPerProcess(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		name    string
		spec    alg.Spec
		budgets []int
	}{
		{"gcs n=3 majority 3,2,1", alg.Spec{Alg: "gcs", N: 3, L: intp(1), K: intp(2), Coterie: "majority"}, []int{3, 2, 1}},
		{"lkcs-paper bowtie 1,2,1,2,1 (its deadlock)", alg.Spec{Alg: "lkcs-paper", Topology: "../alg/testdata/bowtie.edges", L: intp(0), K: intp(3)}, []int{1, 2, 1, 2, 1}},
		{"lmutex path:3 3,1,2", alg.Spec{Alg: "lmutex", Topology: "path:3", K: intp(2)}, []int{3, 1, 2}},
		{"mutin n=3 l=1 2,3,1", alg.Spec{Alg: "mutin", N: 3, L: intp(1)}, []int{2, 3, 1}},
	}
	for _, c := range cases {
		ms, prop := resolved(t, c.spec)
		agreeWithReduction(t, c.name, check.Config{Machines: ms, Property: prop, Budgets: c.budgets, MaxStates: 5_000_000, DeadlockStates: 1_000_000})
	}
}
