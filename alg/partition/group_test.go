package partition_test

import (
	"testing"

	"github.com/critsec/critsec/alg/partition"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/alg/srimanireddy"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
)

// baselines are the two 1-mutexes section 5 partitions, with the messages
// per entry it expects of a cluster of m when no request overlaps:
// Raymond's REQUEST to and REPLY from each of the m-1 others, 2(m-1);
// Srimani and Reddy's REQUEST to the m-1 others and the privilege, m, and
// none when the requester holds the idle privilege already (section 5:
// "approximately (N/K) - 1").
var baselines = []struct {
	name  string
	build partition.Build
}{
	{raymond.Name, func(m int, initial []cs.ID) ([]cs.Machine, error) {
		return raymond.New(cs.Params{N: m, K: 1, Initial: initial})
	}},
	{srimanireddy.Name, func(m int, initial []cs.ID) ([]cs.Machine, error) {
		return srimanireddy.New(cs.Params{N: m, K: 1, Initial: initial})
	}},
}

// TestOfRenames: the members of cluster {4, 5, 6} are processes 4..6 to
// the world, send only to each other, and refuse a message from another
// cluster; two processes of one cluster cannot start InCS.
func TestOfRenames(t *testing.T) {
	ms, err := partition.Of(cs.Params{N: 6, K: 2, Initial: []cs.ID{5}}, "p", baselines[0].build)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Self() != cs.ID(i+1) {
			t.Fatalf("machine %d is P%d", i+1, m.Self())
		}
	}
	if ms[4].State() != cs.InCS || ms[3].State() != cs.OutCS {
		t.Fatal("P5 does not start InCS alone in its cluster")
	}
	var env cs.Effects
	if err := ms[3].Entry(&env); err != nil {
		t.Fatal(err)
	}
	var to []cs.ID
	for _, e := range env.List {
		if e.Msg != nil {
			to = append(to, e.To)
		}
	}
	if len(to) != 2 || to[0] != 5 || to[1] != 6 {
		t.Errorf("P4's entry sent to %v, want its cluster's others 5 and 6", to)
	}
	if err := ms[0].Receive(&env, 4, raymond.Request{Last: 1}); err == nil {
		t.Error("P1 took a REQUEST from P4, in the other cluster")
	}
	if _, err := partition.Of(cs.Params{N: 6, K: 2, Initial: []cs.ID{4, 6}}, "p", baselines[0].build); err == nil {
		t.Error("P4 and P6, one cluster, both accepted InCS initially")
	}
}

// TestOfCheck: every interleaving at n = 4 and 5, K = 2, for both
// baselines.
func TestOfCheck(t *testing.T) {
	for _, b := range baselines {
		for _, c := range []struct{ n, k, budget int }{{4, 2, 3}, {5, 2, 2}} {
			ms, err := partition.Of(cs.Params{N: c.n, K: c.k}, b.name, b.build)
			if err != nil {
				t.Fatal(err)
			}
			p, err := property.Global(c.n, 0, c.k)
			if err != nil {
				t.Fatal(err)
			}
			res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: c.budget})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != check.OK {
				t.Errorf("%s n=%d k=%d: %s %v", b.name, c.n, c.k, res.Verdict, res.Violation)
			}
		}
	}
}

// TestOfMessages: N = 30, K = 3 at a rate so low that requests never
// overlap: partitioned Raymond sends 2(N/K - 1) = 18 messages per entry,
// partitioned Srimani-Reddy at most N/K = 10 and at least N/K - 1 = 9 on
// average (an entry at the holder of the idle privilege sends none).
func TestOfMessages(t *testing.T) {
	for _, b := range baselines {
		ms, err := partition.Of(cs.Params{N: 30, K: 3}, b.name, b.build)
		if err != nil {
			t.Fatal(err)
		}
		p, err := property.Global(30, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(sim.Config{Machines: ms, Property: p, Lambda: 1e-4, E: 0.0002, Tt: 1, Entries: 600, Drain: true, Seed: 1})
		if err != nil || res.Violation != nil {
			t.Fatalf("%s: %v %v", b.name, err, res.Violation)
		}
		got := res.MessagesPerEntry()
		lo, hi := 18.0, 18.0
		if b.name == srimanireddy.Name {
			lo, hi = 8.5, 10
		}
		if got < lo || got > hi {
			t.Errorf("%s: %.3f messages per entry, want %v..%v", b.name, got, lo, hi)
		}
	}
}
