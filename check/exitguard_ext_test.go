package check_test

import (
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// TestExitGuardWithoutCrashes: without crashes the exit guard is the
// global lower bound checked at exits, the only steps that can break it:
// FaultTolerantGlobal(n, l, k) and Global(n, l, k) find the same states
// and verdict, here for MUTIN's l-mutual inclusion at n = 3 (ok), and a
// violation as short when the bound is one more than the algorithm's and
// two processes start InCS.
func TestExitGuardWithoutCrashes(t *testing.T) {
	intp := func(v int) *int { return &v }
	for _, c := range []struct {
		spec alg.Spec
		l, k int
		want check.Verdict
	}{
		{alg.Spec{Alg: "mutin", N: 3, L: intp(1)}, 1, 3, check.OK},
		{alg.Spec{Alg: "mutin", N: 3, L: intp(1), Initial: []cs.ID{1, 2}}, 2, 3, check.Violated},
	} {
		ms, _ := resolved(t, c.spec)
		var res [2]check.Result
		for i, mk := range []func(n, l, k int) (*property.Property, error){property.Global, property.FaultTolerantGlobal} {
			p, err := mk(3, c.l, c.k)
			if err != nil {
				t.Fatal(err)
			}
			if res[i], err = check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: 2}); err != nil {
				t.Fatal(err)
			}
		}
		if res[0].Verdict != c.want || res[1].Verdict != c.want || res[0].States != res[1].States ||
			c.want == check.Violated && len(res[0].Violation.Path) != len(res[1].Violation.Path) {
			t.Errorf("%s l=%d k=%d: Global %s %d states, FaultTolerantGlobal %s %d states", c.spec.Alg, c.l, c.k, res[0].Verdict, res[0].States, res[1].Verdict, res[1].States)
		}
	}
}
