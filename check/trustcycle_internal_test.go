package check

import (
	"testing"

	"github.com/critsec/critsec/alg"
)

// TestTrustGatedEverywhere holds ftraymond to its cs.TrustGated declaration
// in every reachable state of the whole model (n = 3, T, budget 2, no
// reduction), not only in those the reduced search meets: wherever a cycle
// of first trusts is enabled, its processes are uninitialized and each of
// their trusts commutes with each of their other enabled actions.
func TestTrustGatedEverywhere(t *testing.T) {
	for _, c := range []struct{ k, crashes int }{{2, 0}, {1, 1}} {
		k := c.k
		pr, err := alg.Resolve(alg.Spec{Alg: "ftraymond", N: 3, K: &k})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := pr.Machines()
		if err != nil {
			t.Fatal(err)
		}
		e := newExplorer(Config{Machines: ms, Property: pr.Property, Budget: 2, Crashes: c.crashes, Detector: Trusting{}})
		w := e.workers[0]
		seen := map[fingerprint]bool{fingerprintOf(e.root): true}
		todo := []*gstate{e.root}
		cycles := 0
		for len(todo) > 0 {
			s := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			acts := w.st.actions(s, nil)
			set, prob := w.trustCycle(s, acts, func(fingerprint) bool { return false })
			if prob != nil {
				t.Fatalf("k=%d crashes=%d: a reachable state refutes the declaration: %s", c.k, c.crashes, prob.detail)
			}
			if set != nil {
				cycles++
			}
			for _, a := range acts {
				if w.st.apply(s, a) != nil {
					continue
				}
				if fp := fingerprintOf(&w.st.next); !seen[fp] {
					seen[fp] = true
					todo = append(todo, w.st.materialize())
				}
			}
		}
		t.Logf("k=%d crashes=%d: %d states, %d with a cycle of first trusts", c.k, c.crashes, len(seen), cycles)
		if cycles == 0 {
			t.Errorf("k=%d crashes=%d: no state with a cycle of first trusts: the test checked nothing", c.k, c.crashes)
		}
	}
}
