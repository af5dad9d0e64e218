// Package kmtest holds the test helpers the token-based K-mutex baselines
// share (alg/srimanireddy, alg/makki): exhaustive checks at small n and
// simulations at the 1995 study's size, with the bound checked after every
// event and every request completed.
package kmtest

import (
	"maps"
	"testing"

	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// New builds the machines of n processes with bound k.
type New func(p cs.Params) ([]cs.Machine, error)

// Check runs the model checker on n processes with bound k, checking
// #InCS <= assertMax, with budget Entry/Exit calls per process.
func Check(t *testing.T, build New, n, k, assertMax, budget int) check.Result {
	t.Helper()
	ms, err := build(cs.Params{N: n, K: k})
	if err != nil {
		t.Fatal(err)
	}
	prop, err := property.Global(n, 0, assertMax)
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: prop, Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// CheckSmall explores every interleaving at n = 3 with k = 1 and 2, two
// CS cycles per process (one under -short), and fails t unless the
// checker says ok; then it checks k = 2 against an upper bound of 1, which
// must be violated, and returns that result for the caller to inspect.
func CheckSmall(t *testing.T, build New) check.Result {
	t.Helper()
	budget := 4
	if testing.Short() {
		budget = 2
	}
	for _, k := range []int{1, 2} {
		res := Check(t, build, 3, k, k, budget)
		t.Logf("n=3 k=%d budget %d: %s, %d states", k, budget, res.Verdict, res.States)
		if res.Verdict != check.OK {
			t.Errorf("n=3 k=%d: %s %+v", k, res.Verdict, res.Violation)
		}
	}
	res := Check(t, build, 3, 2, 1, 2)
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindBounds {
		t.Fatalf("k=2 checked against 1: %s %+v, want a bounds violation", res.Verdict, res.Violation)
	}
	return res
}

// Sim is one simulation run of the 1995 study's model (Bulgannawar and
// Vaidya, section 4): Ts = Tr = 0.1, Tt = 0.8, E = 0.0002, drained at the
// end so that every request made completes.
func Sim(t *testing.T, build New, n, k int, lambda float64, entries int64, seed uint64) *sim.Result {
	t.Helper()
	ms, err := build(cs.Params{N: n, K: k})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sim.Config{
		Machines: ms, Property: testnet.GlobalProperty(t, n, 0, k),
		Lambda: lambda, E: 0.0002, Ts: 0.1, Tr: 0.1, Tt: 0.8,
		Entries: entries, Drain: true, Seed: seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Network builds n processes with bound k on a test network that records
// its events (for Sent).
func Network(t *testing.T, build New, n, k int) *testnet.Network {
	t.Helper()
	ms, err := build(cs.Params{N: n, K: k})
	if err != nil {
		t.Fatal(err)
	}
	return testnet.MustGlobal(t, ms, 0, k, testnet.Options{Record: true})
}

// Sent counts the messages sent so far on net, by kind (net must record
// its events: testnet.Options.Record).
func Sent(net *testnet.Network) map[string]int {
	c := map[string]int{}
	for _, e := range net.Events() {
		if e.Ev == trace.EvSend {
			c[e.Message.Kind()]++
		}
	}
	return c
}

// WantSent checks that the messages sent on net since before (a count by
// Sent, or nil for the whole run) are want, by kind; what names the step.
func WantSent(t *testing.T, what string, net *testnet.Network, before, want map[string]int) {
	t.Helper()
	got := Sent(net)
	for k, v := range before {
		got[k] -= v
		if got[k] == 0 {
			delete(got, k)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: sent %v, want %v", what, got, want)
	}
}

// RandomSchedules runs 10 random schedules of 300 steps each on small
// systems (n, k) = (3, 1), (4, 2), (5, 3), (6, 6) within the bound k.
func RandomSchedules(t *testing.T, build New) {
	t.Helper()
	for _, c := range []struct{ n, k int }{{3, 1}, {4, 2}, {5, 3}, {6, 6}} {
		for seed := uint64(1); seed <= 10; seed++ {
			ms, err := build(cs.Params{N: c.n, K: c.k})
			if err != nil {
				t.Fatal(err)
			}
			if err := testnet.MustGlobal(t, ms, 0, c.k, testnet.Options{Seed: seed}).RunRandom(300); err != nil {
				t.Errorf("n=%d k=%d seed %d: %v", c.n, c.k, seed, err)
			}
		}
	}
}

// Study runs Sim at n = 30, k = 3 (the 1995 study's size) for lambda =
// 0.01, 0.1, 1 and 10 and seeds 1..5 of 3000 entries (1..2 of 500 under
// -short), fails t unless every run is free of violations, completes every
// request and reaches its entries, and hands each result to each.
func Study(t *testing.T, build New, each func(lambda float64, seed uint64, res *sim.Result)) {
	t.Helper()
	const n, k = 30, 3
	seeds, entries := uint64(5), int64(3000)
	if testing.Short() {
		seeds, entries = 2, 500
	}
	for _, lambda := range []float64{0.01, 0.1, 1, 10} {
		for seed := uint64(1); seed <= seeds; seed++ {
			res := Sim(t, build, n, k, lambda, entries, seed)
			if res.Violation != nil || res.Pending != 0 || res.Entries < entries || res.MaxInCS > k {
				t.Fatalf("lambda %g seed %d: violation %v, %d pending, %d entries, max %d InCS", lambda, seed, res.Violation, res.Pending, res.Entries, res.MaxInCS)
			}
			each(lambda, seed, res)
		}
	}
}
