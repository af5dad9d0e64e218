package check_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
)

func raymondMachines(t testing.TB, n, k int) []cs.Machine {
	t.Helper()
	ms, err := raymond.New(cs.Params{N: n, K: k})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// global is testnet.GlobalProperty: lo <= #InCS <= hi over n processes.
var global = testnet.GlobalProperty

// build resolves algorithm name on n processes with bounds l and k (as far
// as it takes them) and coterie cot, and returns its machines and property.
func build(t testing.TB, name string, n, l, k int, cot string) ([]cs.Machine, *property.Property) {
	t.Helper()
	a, err := alg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	spec := a.SpecFor(n, l, k)
	spec.Coterie = cot
	pr, ms, err := alg.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return ms, pr.Property
}

func mustRun(t *testing.T, cfg check.Config) check.Result {
	t.Helper()
	res, err := check.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRaymondOK checks Raymond's k-mutex (Raymond 1989) exhaustively at
// small sizes. The state counts are SPIN's: SPIN 6.5.2 on the independent
// Promela model bench/spin/raymond.pml stores one state more in every
// configuration (its init process's start state; bench/spin/run), so a
// change in them means the checker or the algorithm's encoding no longer
// explores the same transition system. n = 4 runs without -short.
func TestRaymondOK(t *testing.T) {
	for _, tc := range []struct {
		n, k, budget int
		states       int64
	}{
		{2, 1, 2, 31},
		{3, 1, 2, 2101},
		{3, 2, 2, 7310},
		{3, 1, 4, 34845},
		{4, 2, 2, 4131677},
	} {
		if tc.n == 4 && testing.Short() {
			continue
		}
		res := mustRun(t, check.Config{Machines: raymondMachines(t, tc.n, tc.k), Property: global(t, tc.n, 0, tc.k), Budget: tc.budget})
		if res.Verdict != check.OK {
			t.Fatalf("n=%d k=%d budget=%d: %s %+v", tc.n, tc.k, tc.budget, res.Verdict, res.Violation)
		}
		if res.States != tc.states {
			t.Errorf("n=%d k=%d budget=%d: %d states, want %d", tc.n, tc.k, tc.budget, res.States, tc.states)
		}
		if res.Transitions < res.States-1 || res.Depth == 0 {
			t.Errorf("n=%d k=%d: implausible counts %+v", tc.n, tc.k, res)
		}
	}
}

// TestWorkersDeterministic: the result, path and counts included, does not
// depend on the number of workers. At n = 4 the violation is found in a
// level of many chunks, some of which other workers may be expanding.
func TestWorkersDeterministic(t *testing.T) {
	for _, tc := range []struct{ n, hi int }{{3, 2}, {3, 1}, {4, 1}} {
		var prev *check.Result
		for _, w := range []int{1, 2, 3, 4} {
			res := mustRun(t, check.Config{Machines: raymondMachines(t, tc.n, 2), Property: global(t, tc.n, 0, tc.hi), Budget: 2, Workers: w})
			res.Seconds = 0
			if prev != nil && !reflect.DeepEqual(*prev, res) {
				t.Fatalf("n=%d hi=%d workers=%d: %+v differs from workers=1: %+v", tc.n, tc.hi, w, res, *prev)
			}
			prev = &res
		}
	}
}

// TestCoRaymondMutualInclusion checks Co(Raymond(k)) on n processes, which
// is (n-k)-mutual inclusion (Theorem 1 of the global paper): at least n-k
// processes InCS. A process waiting to exit needs another one to enter, so
// with a small budget many runs stop with an exit pending; those stops must
// be recognized as the budget's doing, not as deadlocks.
func TestCoRaymondMutualInclusion(t *testing.T) {
	for _, tc := range []struct {
		n, k, budget int
		stops        bool // some run stops with a request pending
	}{{3, 2, 1, true}, {3, 2, 2, false}, {3, 1, 2, false}, {3, 1, 1, true}, {4, 2, 1, true}} {
		if tc.n == 4 && testing.Short() {
			continue // 1.2 million states, 4 s
		}
		ms := raymondMachines(t, tc.n, tc.k)
		for i := range ms {
			ms[i] = cs.Co(ms[i])
		}
		res := mustRun(t, check.Config{Machines: ms, Property: global(t, len(ms), tc.n-tc.k, tc.n), Budget: tc.budget})
		if res.Verdict != check.OK {
			t.Fatalf("Co(raymond) n=%d k=%d budget=%d: %s %+v", tc.n, tc.k, tc.budget, res.Verdict, res.Violation)
		}
		t.Logf("Co(raymond) n=%d k=%d budget=%d: %d states, %d budget stops, %.2fs", tc.n, tc.k, tc.budget, res.States, res.BudgetStops, res.Seconds)
		if tc.stops && res.BudgetStops == 0 {
			t.Errorf("Co(raymond) n=%d k=%d budget=%d: no budget stop analysed; the test no longer covers them", tc.n, tc.k, tc.budget)
		}
	}
}

// replay runs path on fresh machines ms in the test network (testnet, an
// implementation of the checker's transition rules independent of it, FIFO
// links), which checks p after every step. It fails t on an error before
// the last step and returns the network and the last step's error.
func replay(t *testing.T, ms []cs.Machine, p *property.Property, path []check.Step) (*testnet.Network, error) {
	t.Helper()
	net := testnet.MustNew(t, ms, p, testnet.Options{Record: true})
	for i, st := range path {
		if err := net.Do(st.Action.String()); err != nil {
			if i == len(path)-1 {
				return net, err
			}
			t.Fatalf("step %s: %v", st, err)
		}
	}
	return net, nil
}

// checkDeadlock fails t unless net is in a global deadlock: nothing in
// transit and every live process waiting in a request.
func checkDeadlock(t *testing.T, name string, net *testnet.Network) {
	t.Helper()
	if !net.Deadlocked() {
		t.Errorf("%s: after the path: %s, in transit %v, waiting %s; want a deadlock", name, net.Verdict(), net.InTransit(), net.Waits())
	}
	for i := cs.ID(1); int(i) <= net.N(); i++ {
		if _, _, crashed := net.State(i); !crashed && net.Machine(i).Pending() == cs.None {
			t.Errorf("%s: after the path P%d is not waiting", name, i)
		}
	}
}

// TestAssertMaxViolationReplays: a bound stronger than Raymond promises
// (at most 1 InCS with k = 2) is violated, by a shortest path that replays
// on fresh machines to two processes InCS.
func TestAssertMaxViolationReplays(t *testing.T) {
	cfg := check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 1), Budget: 2}
	res := mustRun(t, cfg)
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindBounds {
		t.Fatalf("got %s %+v, want a bounds violation", res.Verdict, res.Violation)
	}
	// Shortest: P1 enters after one REPLY (3 steps), P2 likewise (3 more).
	if got := len(res.Violation.Path); got != 6 {
		t.Errorf("path has %d steps, want 6", got)
	}
	// On fresh machines the last step breaks the bound, with 2 InCS.
	net, err := replay(t, raymondMachines(t, 3, 2), cfg.Property, res.Violation.Path)
	var v *testnet.Violation
	if !errors.As(err, &v) || v.Kind != testnet.KindBounds || v.Failure.Count != 2 || net.CountInCS() != 2 {
		t.Errorf("replayed path ends with %d InCS and %v, want 2 and a bounds violation", net.CountInCS(), err)
	}
	if steps, v, err := check.Replay(cfg, check.Actions(res.Violation.Path)); err != nil || v == nil || v.Kind != check.KindBounds || !reflect.DeepEqual(steps, res.Violation.Path) {
		t.Errorf("check.Replay: %v %+v %v", err, v, err)
	}
	var buf bytes.Buffer
	if err := check.WriteTrace(&buf, traceHeader(), res.Violation.Path); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), `"state":"InCS"`); got != 2 {
		t.Errorf("trace has %d InCS events, want 2:\n%s", got, buf.String())
	}
	// The test network's trace of the same path has the same events.
	var tn bytes.Buffer
	if err := net.WriteTrace(&tn, traceHeader()); err != nil {
		t.Fatal(err)
	}
	_, events, _ := strings.Cut(buf.String(), "\n")
	_, tnEvents, _ := strings.Cut(tn.String(), "\n")
	if events != tnEvents {
		t.Errorf("the checker's trace events\n%s\nthe test network's\n%s", events, tnEvents)
	}
}

// TestBudgetsPerProcess: Config.Budgets gives each process its own
// budget. The same budget for all explores the same space as Budget; more
// calls for one process explore a space between the two uniform ones; and
// only a process with calls left ever calls.
func TestBudgetsPerProcess(t *testing.T) {
	run := func(budget int, budgets []int, hi int) check.Result {
		t.Helper()
		return mustRun(t, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, hi), Budget: budget, Budgets: budgets, Search: check.DepthFirst})
	}
	// Budgets b and b+1: 2 and 3 (7 310 and 623 642 states), 1 and 2 under
	// -short (1 570 and 7 310).
	b := 2
	if testing.Short() {
		b = 1
	}
	lo, hi := run(b, nil, 2), run(b+1, nil, 2)
	if same := run(0, []int{b, b, b}, 2); same.Verdict != check.OK || same.States != lo.States || same.Transitions != lo.Transitions {
		t.Errorf("Budgets %d,%d,%d: %s, %d states, %d transitions; Budget %d: %s, %d, %d", b, b, b, same.Verdict, same.States, same.Transitions, b, lo.Verdict, lo.States, lo.Transitions)
	}
	for _, bs := range [][]int{{b + 1, b, b}, {b, b, b + 1}} {
		if r := run(0, bs, 2); r.Verdict != check.OK || r.States <= lo.States || r.States >= hi.States {
			t.Errorf("Budgets %v: %s with %d states, want ok strictly between budget %d (%d) and %d (%d)", bs, r.Verdict, r.States, b, lo.States, b+1, hi.States)
		}
	}
	// With at most 0 InCS the first entry violates the bound; when only
	// P2 has calls, every call on the counterexample's path is P2's.
	if r := run(0, []int{0, 0, 0}, 0); r.Verdict != check.OK {
		t.Errorf("Budgets 0,0,0 with at most 0 InCS: %s, want ok (no process may call)", r.Verdict)
	}
	r := run(0, []int{0, 2, 0}, 0)
	if r.Verdict != check.Violated || r.Violation.Kind != check.KindBounds {
		t.Fatalf("Budgets 0,2,0 with at most 0 InCS: %s %+v, want a bounds violation", r.Verdict, r.Violation)
	}
	for _, s := range r.Violation.Path {
		if s.Action.Kind == check.Request && s.Action.Node != 2 {
			t.Errorf("P%d calls %v with budget 0: path %v", s.Action.Node, s.Action.Op, r.Violation.Path)
		}
	}
}

// TestDeadlockFound: the greedy Ricart-Agrawala variant deadlocks when two
// processes request together; the checker must say so, with a path that
// replays to a state where every process waits and no message is in
// transit.
func TestDeadlockFound(t *testing.T) {
	for _, n := range []int{2, 3} {
		res := mustRun(t, check.Config{Machines: newRA(n, true), Property: global(t, n, 0, 1), Budget: 2})
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock {
			t.Fatalf("n=%d: got %s %+v, want a deadlock", n, res.Verdict, res.Violation)
		}
		net, err := replay(t, newRA(n, true), global(t, n, 0, 1), res.Violation.Path)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		checkDeadlock(t, fmt.Sprintf("n=%d", n), net)
		for i := cs.ID(1); int(i) <= n; i++ {
			if net.Machine(i).Pending() != cs.Entry {
				t.Errorf("n=%d: after the path P%d is not waiting to enter: %v", n, i, res.Violation.Path)
			}
		}
	}
	// The correct variant passes the same check.
	if res := mustRun(t, check.Config{Machines: newRA(3, false), Property: global(t, 3, 0, 1), Budget: 2}); res.Verdict != check.OK {
		t.Fatalf("correct Ricart-Agrawala: %s %+v", res.Verdict, res.Violation)
	}
}

// TestCrashAndPerfectDetector: one crash makes plain Ricart-Agrawala wait
// forever for the crashed process's REPLY (a deadlock); with a perfect
// failure detector, suspecting the crashed process unblocks it.
func TestCrashAndPerfectDetector(t *testing.T) {
	res := mustRun(t, check.Config{Machines: newRA(3, false), Property: global(t, 3, 0, 1), Budget: 2, Crashes: 1})
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock {
		t.Fatalf("crash without detector: got %s %+v, want a deadlock", res.Verdict, res.Violation)
	}
	if !strings.Contains(pathString(res.Violation.Path), "crash P") {
		t.Errorf("deadlock path has no crash: %s", pathString(res.Violation.Path))
	}
	res = mustRun(t, check.Config{Machines: newRA(3, false), Property: global(t, 3, 0, 1), Budget: 2, Crashes: 1, Detector: check.Perfect{}})
	if res.Verdict != check.OK {
		t.Fatalf("crash with a perfect detector: %s %+v", res.Verdict, res.Violation)
	}
}

func pathString(p []check.Step) string {
	var s []string
	for _, st := range p {
		s = append(s, st.String())
	}
	return strings.Join(s, "; ")
}

// TestLimits: hitting MaxStates (breadth-first), or the deadline of Run's
// context or its cancellation (in every search), gives Incomplete, never
// OK.
func TestLimits(t *testing.T) {
	res := mustRun(t, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, MaxStates: 100})
	if res.Verdict != check.Incomplete || res.States != 100 || !strings.Contains(res.Reason, "max-states") {
		t.Fatalf("MaxStates: got %s, %d states, %q", res.Verdict, res.States, res.Reason)
	}
	late, cancelLate := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancelLate()
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	for _, search := range []check.Search{check.BreadthFirst, check.DepthFirst, check.Liveness} {
		for _, c := range []struct {
			ctx    context.Context
			reason string
		}{{late, "timeout 0s reached "}, {stopped, "interrupted "}} {
			res, err := check.Run(c.ctx, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Search: search})
			if err != nil || res.Verdict != check.Incomplete || !strings.HasPrefix(res.Reason, c.reason) {
				t.Errorf("%s: got %v %s %q, want incomplete, %q...", search, err, res.Verdict, res.Reason, c.reason)
			}
		}
	}
}

// TestUnordered: with unordered channels every order of a channel's
// messages is explored, so there are more states than with FIFO.
func TestUnordered(t *testing.T) {
	fifo := mustRun(t, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2})
	any := mustRun(t, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Unordered: true})
	if any.Verdict != check.OK || any.States <= fifo.States {
		t.Fatalf("unordered: %s with %d states (FIFO: %d)", any.Verdict, any.States, fifo.States)
	}
}

func TestBadConfig(t *testing.T) {
	ms := raymondMachines(t, 3, 2)
	for _, cfg := range []check.Config{
		{},
		{Machines: ms},
		{Machines: ms, Property: global(t, 4, 0, 2)},
		{Machines: ms, Property: global(t, len(ms), 0, 2), Budget: -1},
		{Machines: ms, Property: global(t, len(ms), 0, 2), Crashes: 4},
		{Machines: ms, Property: global(t, len(ms), 0, 2), Budgets: []int{2, 2}},
		{Machines: ms, Property: global(t, len(ms), 0, 2), Budgets: []int{2, 101, 2}},
		{Machines: ms, Property: global(t, len(ms), 0, 2), Budgets: []int{2, -1, 2}},
		{Machines: []cs.Machine{ms[1], ms[0], ms[2]}, Property: global(t, 3, 0, 2)},
	} {
		if _, err := check.Run(t.Context(), cfg); !errors.Is(err, check.ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", cfg, err)
		}
	}
}

// TestFieldError: Validate names the field it refuses in a FieldError, with
// the value and the rule, or the field it needs, so that a caller can name
// its own input instead (critsec check names the flag).
func TestFieldError(t *testing.T) {
	ms := raymondMachines(t, 3, 2)
	prop := global(t, len(ms), 0, 2)
	for _, c := range []struct {
		cfg  check.Config
		want check.FieldError
	}{
		{check.Config{MaxStates: -1}, check.FieldError{Field: "MaxStates", Value: "-1", Why: "is out of range: need >= 0 (0: no limit)"}},
		{check.Config{Workers: 257}, check.FieldError{Field: "Workers", Value: "257", Why: "is out of range: need 1 <= workers <= 256", Zero: "one"}},
		{check.Config{ExpectedStates: -1}, check.FieldError{Field: "ExpectedStates", Value: "-1", Why: "is out of range: need >= 0 (0: grow as needed)"}},
		{check.Config{PartialOrder: true}, check.FieldError{Field: "PartialOrder", Needs: "Search = DepthFirst", Why: "its cycle proviso uses the depth-first stack"}},
		{check.Config{DiskDir: t.TempDir()}, check.FieldError{Field: "DiskDir", Needs: "Search = DepthFirst", Why: "only the depth-first visited set can be kept on disk"}},
		{check.Config{Budget: 101}, check.FieldError{Field: "Budget", Value: "101", Why: "is out of range: need 0 <= budget <= 100"}},
		{check.Config{Budgets: []int{2, 2}}, check.FieldError{Field: "Budgets", Value: "[2 2]", Why: "gives 2 budgets for 3 processes: give one budget, or one per process (P1 first)"}},
		{check.Config{Budgets: []int{2, -1, 2}}, check.FieldError{Field: "Budgets", Value: "[2 -1 2]", Why: "is out of range: need 0 <= budget <= 100"}},
		{check.Config{Crashes: 4}, check.FieldError{Field: "Crashes", Value: "4", Why: "is out of range: need 0 <= crashes <= n = 3"}},
		{check.Config{Search: 3}, check.FieldError{Field: "Search", Value: "Search(3)", Why: "is out of range: need BreadthFirst, DepthFirst or Liveness"}},
		{check.Config{ExpectedStates: 10}, check.FieldError{Field: "ExpectedStates", Needs: "Search = DepthFirst", Why: "it sizes the depth-first visited set"}},
		{check.Config{FairBound: 2}, check.FieldError{Field: "FairBound", Needs: "Search = Liveness", Why: "it bounds the starvation search"}},
		{check.Config{LivenessStates: 10}, check.FieldError{Field: "LivenessStates", Needs: "Search = Liveness", Why: "it bounds the starvation search"}},
		{check.Config{Search: check.Liveness, Unordered: true}, check.FieldError{Field: "Unordered", Excludes: "Search = Liveness", Why: "the starvation search needs FIFO channels: its fairness units are channel heads"}},
		{check.Config{Search: check.Liveness, Crashes: 1}, check.FieldError{Field: "Crashes", Excludes: "Search = Liveness", Why: "the starvation search is defined without crashes"}},
		{check.Config{Search: check.Liveness, DiskDir: t.TempDir()}, check.FieldError{Field: "DiskDir", Needs: "Search = DepthFirst", Why: "only the depth-first visited set can be kept on disk"}},
	} {
		cfg := c.cfg
		cfg.Machines, cfg.Property = ms, prop
		if cfg.Budget == 0 {
			cfg.Budget = 2
		}
		var fe *check.FieldError
		if err := cfg.Validate(); !errors.As(err, &fe) || *fe != c.want {
			t.Errorf("%s: %v, want %+v", c.want.Field, err, c.want)
		}
	}
}
