package alg

import (
	"testing"

	"critsec/cs"
	"critsec/internal/cstest"
)

// TestLKRegistered builds each algorithm of the global (l,k)-CS family from
// its registry entry with its default initial configuration and runs it on
// random schedules within its bounds.
func TestLKRegistered(t *testing.T) {
	n := 5
	qs := make([][]cs.ID, n)
	for i := range qs {
		qs[i] = []cs.ID{cs.ID(i + 1), cs.ID((i+1)%n + 1), cs.ID((i+2)%n + 1)}
	}
	for _, name := range []string{"mutin", "kmutex", "gcs"} {
		a, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Quorums {
			t.Errorf("%s: Quorums is false", name)
		}
		p := cs.Params{N: n, L: 2, K: 4, Quorums: qs}
		if name == "kmutex" {
			p.L = 0
		}
		p.Initial = a.DefaultInitial(p)
		lo, hi := a.Bounds(p)
		if err := p.CheckInitial(lo, hi); err != nil {
			t.Fatalf("%s: default initial %v: %v", name, p.Initial, err)
		}
		for seed := uint64(1); seed <= 5; seed++ {
			ms, err := a.New(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := cstest.New(ms, lo, hi, seed).Run(100); err != nil {
				t.Errorf("%s seed %d: %v", name, seed, err)
			}
		}
	}
	for _, name := range []string{"mutin-paper", "kmutex-paper", "gcs-paper"} {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
}
