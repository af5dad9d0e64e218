package check_test

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/cs"
)

// TestDepthFirstAgrees: depth-first search visits exactly the states
// breadth-first search visits (the same count, every one reachable) and
// reaches the same verdict: ok runs, bounds violations whose paths replay,
// deadlocks (a broken Ricart-Agrawala, the published Maekawa on grid(4)),
// crashes with and without a failure detector.
func TestDepthFirstAgrees(t *testing.T) {
	grid4, err := coterie.Grid(4)
	if err != nil {
		t.Fatal(err)
	}
	maekawaPaper := func() []cs.Machine {
		a, err := alg.Lookup("maekawa-paper")
		if err != nil {
			t.Fatal(err)
		}
		ms, err := a.New(cs.Params{N: 4, K: 1, Quorums: grid4})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	cases := []struct {
		name string
		cfg  func() check.Config
		want check.Verdict
		kind string
	}{
		{"raymond n=3 k=2", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2}
		}, check.OK, ""},
		{"raymond n=3 k=2 assert-max 1", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 1), Budget: 2}
		}, check.Violated, check.KindBounds},
		{"raymond n=3 k=1 unordered", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 1), Property: global(t, 3, 0, 1), Budget: 2, Unordered: true}
		}, check.OK, ""},
		{"greedy Ricart-Agrawala", func() check.Config {
			return check.Config{Machines: newRA(3, true), Property: global(t, 3, 0, 1), Budget: 2}
		}, check.Violated, check.KindDeadlock},
		{"crash without detector", func() check.Config {
			return check.Config{Machines: newRA(3, false), Property: global(t, 3, 0, 1), Budget: 2, Crashes: 1}
		}, check.Violated, check.KindDeadlock},
		{"crash with perfect detector", func() check.Config {
			return check.Config{Machines: newRA(3, false), Property: global(t, 3, 0, 1), Budget: 2, Crashes: 1, Detector: check.Perfect{}}
		}, check.OK, ""},
		{"maekawa-paper grid(4)", func() check.Config {
			return check.Config{Machines: maekawaPaper(), Property: global(t, 4, 0, 1), Budget: 2}
		}, check.Violated, check.KindDeadlock},
	}
	for _, c := range cases {
		bfs := mustRun(t, c.cfg())
		dcfg := c.cfg()
		dcfg.Search = check.DepthFirst
		dfs := mustRun(t, dcfg)
		if bfs.Verdict != c.want || dfs.Verdict != c.want {
			t.Errorf("%s: bfs %s, dfs %s, want %s", c.name, bfs.Verdict, dfs.Verdict, c.want)
			continue
		}
		if c.want == check.OK {
			if dfs.States != bfs.States || dfs.BudgetStops != bfs.BudgetStops {
				t.Errorf("%s: dfs %d states, %d budget stops; bfs %d, %d", c.name, dfs.States, dfs.BudgetStops, bfs.States, bfs.BudgetStops)
			}
			continue
		}
		if dfs.Violation.Kind != c.kind {
			t.Errorf("%s: dfs found %s, want %s", c.name, dfs.Violation.Kind, c.kind)
			continue
		}
		if len(dfs.Violation.Path) < len(bfs.Violation.Path) && c.kind != check.KindDeadlock {
			t.Errorf("%s: dfs path of %d steps is shorter than bfs's shortest, %d", c.name, len(dfs.Violation.Path), len(bfs.Violation.Path))
		}
		_, v, err := check.Replay(dcfg, check.Actions(dfs.Violation.Path))
		if c.kind != check.KindDeadlock {
			if err != nil || v == nil || v.Kind != c.kind {
				t.Errorf("%s: the dfs path does not replay to a %s: %v %+v", c.name, c.kind, err, v)
			}
			continue
		}
		if err != nil || v != nil {
			t.Errorf("%s: the dfs path does not replay: %v %+v", c.name, err, v)
		}
		// The path ends in a global deadlock: on fresh machines, every
		// live process waits and nothing is in transit.
		net, err := replay(t, c.cfg().Machines, c.cfg().Property, dfs.Violation.Path)
		if err != nil {
			t.Errorf("%s: the dfs path does not replay in the test network: %v", c.name, err)
			continue
		}
		checkDeadlock(t, c.name, net)
	}
}

// TestDepthFirstLimits: max-states stops a depth-first run as incomplete.
func TestDepthFirstLimits(t *testing.T) {
	res := mustRun(t, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Search: check.DepthFirst, MaxStates: 100})
	if res.Verdict != check.Incomplete || res.States != 100 {
		t.Fatalf("got %s after %d states, want incomplete at 100", res.Verdict, res.States)
	}
}

// TestMemoryLimit: a run whose live heap passes MaxMemory stops as
// incomplete, never ok, and the breadth-first reason points to depth-first
// search.
func TestMemoryLimit(t *testing.T) {
	for _, search := range []check.Search{check.BreadthFirst, check.DepthFirst} {
		res := mustRun(t, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, MaxMemory: 1, Search: search})
		if res.Verdict != check.Incomplete || !strings.Contains(res.Reason, "memory limit") {
			t.Errorf("%s: %s (%s), want incomplete for the memory limit", search, res.Verdict, res.Reason)
		}
		if search == check.BreadthFirst && !strings.Contains(res.Reason, "--search dfs") {
			t.Errorf("bfs reason does not suggest depth-first search: %s", res.Reason)
		}
	}
}
