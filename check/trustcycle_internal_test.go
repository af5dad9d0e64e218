package check

import (
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/cs"
)

// TestTrustGatedEverywhere holds ftraymond to its cs.TrustGated declaration in
// every reachable state of the whole model (n = 3, T, no reduction), not only in
// those the reduced search meets, where the reduction's own checks see little
// (docs/design/partial-order-reduction.md, "Trust first"): (a) an initialized
// process is trusted by every other live process, and (b) for a process x that
// some other live process still suspects, each enabled Trust(x, j) and each
// other enabled action of x stay enabled after each other and reach the same
// state in either order.
func TestTrustGatedEverywhere(t *testing.T) {
	cases := []struct{ k, budget, crashes int }{{2, 2, 0}, {1, 2, 1}, {1, 3, 0}}
	if testing.Short() {
		cases = cases[:1]
		cases[0].budget = 1
	}
	for _, c := range cases {
		k := c.k
		pr, err := alg.Resolve(alg.Spec{Alg: "ftraymond", N: 3, K: &k})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := pr.Machines()
		if err != nil {
			t.Fatal(err)
		}
		e := newExplorer(Config{Machines: ms, Property: pr.Property, Budget: c.budget, Crashes: c.crashes, Detector: Trusting{}})
		w := e.workers[0]
		seen := map[fingerprint]bool{fingerprintOf(e.root): true}
		todo := []*gstate{e.root}
		pairs := 0
		for len(todo) > 0 {
			s := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			acts := w.st.actions(s, nil)
			v := View{s: s, x: e.x}
			suspected := func(x cs.ID) bool { // by some other live process
				for z := cs.ID(1); int(z) <= e.x.n; z++ {
					if z != x && !s.isCrashed(z) && v.Suspects(z, x) {
						return true
					}
				}
				return false
			}
			for i := cs.ID(1); int(i) <= e.x.n; i++ {
				if !s.isCrashed(i) && e.x.tab.machine(s.procs[i-1].m).m.(cs.Initializing).Initialized() && suspected(i) {
					t.Fatalf("k=%d budget=%d crashes=%d: P%d is initialized while another live process suspects it (a)", c.k, c.budget, c.crashes, i)
				}
			}
			for _, a := range acts {
				if a.Kind != Trust || !suspected(a.Node) {
					continue
				}
				for _, b := range acts {
					if b.Node != a.Node || b == a {
						continue
					}
					pairs++
					if !enabledAfter(w, s, a, b) || !enabledAfter(w, s, b, a) || !w.commute(s, a, b) {
						t.Fatalf("k=%d budget=%d crashes=%d: %v and %v do not commute in a reachable state (b)", c.k, c.budget, c.crashes, a, b)
					}
				}
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
		t.Logf("k=%d budget=%d crashes=%d: %d states, %d pairs of a first trust and another action of its process", c.k, c.budget, c.crashes, len(seen), pairs)
		if pairs == 0 {
			t.Errorf("k=%d budget=%d crashes=%d: no first trust met another action: the test checked nothing", c.k, c.budget, c.crashes)
		}
	}
}

// enabledAfter reports whether b is enabled in the state a leads to from s.
func enabledAfter(w *worker, s *gstate, a, b Action) bool {
	if w.st.apply(s, a) != nil {
		return false
	}
	next := w.st.materialize()
	for _, c := range w.st.actions(next, nil) {
		if c == b {
			return true
		}
	}
	return false
}
