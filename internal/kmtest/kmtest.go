// Package kmtest holds the test helpers the token-based K-mutex baselines
// share (alg/srimanireddy, alg/makki): exhaustive checks at small n and
// simulations at the 1995 study's size, with the bound checked after every
// event and every request completed.
package kmtest

import (
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
	res, err := check.Run(check.Config{Machines: ms, Property: prop, Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
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
