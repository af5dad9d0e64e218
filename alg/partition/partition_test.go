package partition_test

import (
	"fmt"
	"testing"

	"github.com/critsec/critsec/alg/forest"
	"github.com/critsec/critsec/alg/partition"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
)

func TestClusters(t *testing.T) {
	for _, c := range []struct {
		n, k int
		want string
	}{
		{30, 3, "10 10 10"},
		{10, 3, "3 3 4"},
		{4, 4, "1 1 1 1"},
		{3, 2, "1 2"},
	} {
		cl := partition.Clusters(c.n, c.k)
		got, next := "", cs.ID(1)
		for i, m := range cl {
			if i > 0 {
				got += " "
			}
			got += fmt.Sprint(len(m))
			for _, id := range m {
				if id != next {
					t.Fatalf("n=%d k=%d: clusters %v are not the blocks 1..n in order", c.n, c.k, cl)
				}
				next++
			}
		}
		if got != c.want || int(next) != c.n+1 {
			t.Errorf("n=%d k=%d: sizes %s, want %s", c.n, c.k, got, c.want)
		}
	}
}

func build(t *testing.T, n, k int, initial ...cs.ID) ([]cs.Machine, *property.Property) {
	t.Helper()
	ms, err := partition.New(cs.Params{N: n, K: k, Initial: initial}, forest.Options{Nu: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := property.Global(n, 0, k)
	if err != nil {
		t.Fatal(err)
	}
	return ms, p
}

// TestCheck: every interleaving at n = 4, K = 2 (two clusters of two)
// and n = 5, K = 2 (2 and 3).
func TestCheck(t *testing.T) {
	for _, c := range []struct{ n, k, budget int }{{4, 2, 4}, {5, 2, 2}, {3, 2, 4}} {
		ms, p := build(t, c.n, c.k)
		res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: c.budget})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != check.OK {
			t.Errorf("n=%d k=%d: %s %v", c.n, c.k, res.Verdict, res.Violation)
		}
	}
}

// TestOneTokenPerCluster: each cluster's first node holds its token, the
// others start with none: two first nodes may start InCS, a second node
// may not; a node never takes a message from another cluster.
func TestOneTokenPerCluster(t *testing.T) {
	ms, _ := build(t, 6, 2, 1, 4)
	if ms[0].State() != cs.InCS || ms[3].State() != cs.InCS {
		t.Fatal("the first nodes of the clusters {1,2,3} and {4,5,6} do not start InCS")
	}
	if _, err := partition.New(cs.Params{N: 6, K: 2, Initial: []cs.ID{2}}, forest.Options{}); err == nil {
		t.Error("node 2, without a token, accepted InCS initially")
	}
	var env cs.Effects
	if err := ms[1].Receive(&env, 5, forest.Request{Y: 5, T: 1}); err == nil {
		t.Error("node 2 took a REQUEST from node 5, in the other cluster")
	}
}

// TestSimulation: n = 30, K = 3, the bound after every event and every
// request served after the drain.
func TestSimulation(t *testing.T) {
	entries := int64(3000)
	if testing.Short() {
		entries = 600
	}
	for _, lambda := range []float64{0.1, 1} {
		ms, p := build(t, 30, 3)
		res, err := sim.Run(sim.Config{
			Machines: ms, Property: p, Lambda: lambda, E: 1, Ts: 0.1, Tr: 0.1, Tt: 0.8,
			TransitDist: sim.Exp, Entries: entries, Drain: true, Seed: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violation != nil || res.Pending != 0 || res.Entries < entries {
			t.Errorf("lambda %g: %v, %d pending, %d entries", lambda, res.Violation, res.Pending, res.Entries)
		}
	}
}
