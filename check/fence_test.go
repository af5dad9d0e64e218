package check_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// forgetful is ftraymond whose tokens name nobody: a process that crashed
// InCS is then named by no later holder.
type forgetful struct{ *ftraymond.Machine }

func (m forgetful) Clone() cs.Machine { return forgetful{m.Machine.Clone().(*ftraymond.Machine)} }

func (m forgetful) Fence() cs.Fence { return cs.Fence{Seq: m.Machine.Fence().Seq} }

// stuck is ftraymond whose tokens all have Seq 1.
type stuck struct{ *ftraymond.Machine }

func (m stuck) Clone() cs.Machine { return stuck{m.Machine.Clone().(*ftraymond.Machine)} }

func (m stuck) Fence() cs.Fence { return cs.Fence{Seq: 1, Crashed: m.Machine.Fence().Crashed} }

func ftMachines(t *testing.T, k int, wrap func(*ftraymond.Machine) cs.Machine) ([]cs.Machine, *property.Property) {
	t.Helper()
	ms, p := resolved(t, alg.Spec{Alg: "ftraymond", N: 3, K: &k})
	if wrap != nil {
		for i, m := range ms {
			ms[i] = wrap(m.(*ftraymond.Machine))
		}
	}
	return ms, p
}

// TestFencing: ftraymond's tokens keep both fencing properties with
// crashes under T and P, at k = 1 and k = 2 (budget 2, 1 under -short); a
// token that names nobody, or a Seq that does not grow, is a fencing
// violation whose trace trace check confirms.
func TestFencing(t *testing.T) {
	okBudget := 2
	if testing.Short() {
		okBudget = 1
	}
	for _, k := range []int{1, 2} {
		for _, d := range []check.Detector{check.Perfect{}, check.Trusting{}} {
			ms, p := ftMachines(t, k, nil)
			res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: okBudget, Crashes: 1, Detector: d, Fencing: true})
			if err != nil || res.Verdict != check.OK {
				t.Errorf("ftraymond k=%d 1 crash %s: %v %+v", k, d.Name(), err, res.Violation)
			}
		}
	}
	forget := func(m *ftraymond.Machine) cs.Machine { return forgetful{m} }
	same := func(m *ftraymond.Machine) cs.Machine { return stuck{m} }
	for _, c := range []struct {
		name   string
		k      int
		wrap   func(*ftraymond.Machine) cs.Machine
		detail string
	}{
		{"names nobody", 1, forget, "2 holders named by no holder's fence, more than k = 1: P1 (crashed InCS), P2"},
		{"seq stuck", 1, same, "P2 entered with fence seq 1, equal to seq 1 of an earlier entry of P1"},
	} {
		ms, p := ftMachines(t, c.k, c.wrap)
		cfg := check.Config{Machines: ms, Property: p, Budget: 2, Crashes: 1, Detector: check.Perfect{}, Fencing: true}
		res, err := check.Run(t.Context(), cfg)
		if err != nil || res.Verdict != check.Violated || res.Violation.Kind != check.KindFencing || !strings.HasSuffix(res.Violation.Detail, c.detail) {
			t.Fatalf("%s: %v %s %+v, want a fencing violation ending %q", c.name, err, res.Verdict, res.Violation, c.detail)
		}
		h := trace.Header{Alg: "ftraymond", N: 3, K: c.k, Lo: 0, Hi: c.k, FIFO: true, Demonstrates: &trace.Claim{Kind: check.KindFencing, Detail: res.Violation.Detail}}
		var buf bytes.Buffer
		if err := check.WriteTrace(&buf, h, res.Violation.Path); err != nil {
			t.Fatal(err)
		}
		rep, err := trace.Check(&buf)
		if err != nil || rep.Confirmation != trace.Confirmed {
			t.Errorf("%s: trace check: %v %s %s", c.name, err, rep.Confirmation, rep.ClaimNote)
		}
		// Depth-first, with and without the partial-order reduction, finds
		// a fencing violation too.
		for _, por := range []bool{false, true} {
			ms, p := ftMachines(t, c.k, c.wrap)
			cfg := check.Config{Machines: ms, Property: p, Budget: 2, Crashes: 1, Detector: check.Perfect{}, Fencing: true, Search: check.DepthFirst, PartialOrder: por}
			if res, err := check.Run(t.Context(), cfg); err != nil || res.Verdict != check.Violated || res.Violation.Kind != check.KindFencing {
				t.Errorf("%s depth-first (reduction %v): %v %s %+v", c.name, por, err, res.Verdict, res.Violation)
			}
		}
	}
	// Without Fencing the same machines are ok; Fencing refuses machines
	// without tokens.
	ms, p := ftMachines(t, 1, forget)
	if res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: 2, Crashes: 1, Detector: check.Perfect{}}); err != nil || res.Verdict != check.OK {
		t.Errorf("forgetful without Fencing: %v %s", err, res.Verdict)
	}
	ms, p = resolved(t, alg.Spec{Alg: "maekawa", N: 3})
	if _, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: 2, Fencing: true}); err == nil || !strings.Contains(err.Error(), "gives no fencing tokens") {
		t.Errorf("maekawa with Fencing: %v, want a refusal", err)
	}
}
