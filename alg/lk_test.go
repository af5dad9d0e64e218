package alg

import (
	"testing"

	"github.com/critsec/critsec/internal/testnet"
)

// TestLKRegistered builds each algorithm of the global (l,k)-CS family
// through Resolve, with its default initial configuration and with each
// choice of its options, and runs it on random schedules within its bounds.
func TestLKRegistered(t *testing.T) {
	n := 5
	qs := testnet.Arcs(n) // Q_i = {P_i, P_i+1, P_i+2}
	for _, c := range []struct {
		name    string
		options map[string]string
	}{
		{"mutin", nil},
		{"mutin", map[string]string{"mx": "ra"}},
		{"kmutex", nil},
		{"kmutex", map[string]string{"mx": "ra"}},
		{"gcs", nil},
		{"gcs", map[string]string{"mx": "ra"}},
		{"gcs", map[string]string{"kmex": "raymond"}},
		{"gcs", map[string]string{"mx": "ra", "kmex": "raymond"}},
	} {
		a, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Quorums {
			t.Errorf("%s: Quorums is false", c.name)
		}
		spec := a.SpecFor(n, 2, 4)
		spec.Quorums, spec.Options = qs, c.options
		pr, err := Resolve(spec)
		if err != nil {
			t.Fatalf("%s %v: %v", c.name, c.options, err)
		}
		for seed := uint64(1); seed <= 5; seed++ {
			ms, err := pr.Machines()
			if err != nil {
				t.Fatal(err)
			}
			if err := testnet.MustNew(t, ms, pr.Property, testnet.Options{Seed: seed}).RunRandom(100); err != nil {
				t.Errorf("%s %v seed %d: %v", c.name, c.options, seed, err)
			}
		}
	}
	for _, name := range []string{"mutin-paper", "kmutex-paper", "gcs-paper"} {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
}
