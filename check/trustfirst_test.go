package check_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
)

// notGated hides ftraymond's cs.TrustGated declaration.
type notGated struct{ cs.Machine }

func (m notGated) Clone() cs.Machine                 { return notGated{m.Machine.Clone()} }
func (m notGated) Suspect(env cs.Env, j cs.ID) error { return m.Machine.(cs.Detecting).Suspect(env, j) }
func (m notGated) Trust(env cs.Env, j cs.ID) error   { return m.Machine.(cs.Detecting).Trust(env, j) }
func (m notGated) Initialized() bool                 { return m.Machine.(cs.Initializing).Initialized() }

// TestTrustFirst: with ftraymond declaring cs.TrustGated, the reduction
// explores a trusting detector's first trusts alone (docs/checker.md,
// "Trust first"). It must agree with the full search (verdict, kind, budget
// stops), explore fewer states than the reduction without the declaration,
// and, since T's suspicions of processes not yet trusted then only delay
// ACKs, explore exactly the states of the same check with the perfect
// detector P plus the n(n-1) trusts taken one after another from the
// initial state.
func TestTrustFirst(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		k, crashes int
		long       bool
	}{{2, 0, false}, {1, 1, false}, {2, 2, true}, {1, 2, true}}
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		ms, prop := resolved(t, alg.Spec{Alg: "ftraymond", N: 3, K: intp(c.k)})
		cfg := check.Config{Machines: ms, Property: prop, Budget: 2, Crashes: c.crashes, Detector: check.Trusting{}}
		name := fmt.Sprintf("ftraymond n=3 k=%d crashes=%d", c.k, c.crashes)
		_, reduced := agreeWithReduction(t, name, cfg)
		hidden := make([]cs.Machine, len(ms))
		for i, m := range ms {
			if _, ok := m.(cs.TrustGated); !ok {
				t.Fatalf("P%d's machine (%T) does not declare cs.TrustGated", i+1, m)
			}
			hidden[i] = notGated{m}
		}
		cfg.DepthFirst, cfg.PartialOrder = true, true
		withP := cfg
		withP.Detector = check.Perfect{}
		perfect := mustRun(t, withP)
		cfg.Machines = hidden
		before := mustRun(t, cfg)
		t.Logf("%s: %d states reduced without the declaration, %d with it, %d with P", name, before.States, reduced.States, perfect.States)
		if reduced.Verdict != check.OK || before.Verdict != check.OK || perfect.Verdict != check.OK {
			t.Fatalf("%s: %s with the declaration, %s without, %s with P: want ok", name, reduced.Verdict, before.Verdict, perfect.Verdict)
		}
		if reduced.States >= before.States {
			t.Errorf("%s: %d states with the declaration, %d without: trust first did not shrink", name, reduced.States, before.States)
		}
		if want := perfect.States + 3*2; reduced.States != want || reduced.Depth != perfect.Depth+3*2 {
			t.Errorf("%s: %d states, depth %d with T, trust first; want P's %d states and depth %d plus the 6 trusts", name, reduced.States, reduced.Depth, perfect.States, perfect.Depth)
		}
	}
}

// gated declares cs.TrustGated without its being true: its Trust inputs
// do not commute (log records their order), and Initialized is fixed.
type gated struct {
	i    cs.ID
	log  uint64
	init bool
}

func (m *gated) Self() cs.ID                             { return m.i }
func (m *gated) State() cs.State                         { return cs.OutCS }
func (m *gated) Pending() cs.Op                          { return cs.None }
func (m *gated) Clone() cs.Machine                       { c := *m; return &c }
func (m *gated) AppendState(b []byte) []byte             { return binary.AppendUvarint(b, m.log) }
func (m *gated) Entry(cs.Env) error                      { return cs.ErrConvention }
func (m *gated) Exit(cs.Env) error                       { return cs.ErrConvention }
func (m *gated) Receive(cs.Env, cs.ID, cs.Message) error { return nil }
func (m *gated) Suspect(cs.Env, cs.ID) error             { return nil }
func (m *gated) Trust(_ cs.Env, j cs.ID) error           { m.log = m.log*8 + uint64(j); return nil }
func (m *gated) Initialized() bool                       { return m.init }
func (*gated) TrustGated()                               {}

// TestTrustGatedRefuted: a machine whose cs.TrustGated declaration a state
// contradicts (a crash enabled while a process it has never trusted is
// still suspected; two inputs that do not commute) gets an error violation
// from the reduced search, at the initial state, naming the declaration.
func TestTrustGatedRefuted(t *testing.T) {
	cases := []struct {
		name    string
		init    bool
		crashes int
		want    string
	}{
		{"initialized from the start", true, 1, "a crash is enabled while its detector still suspects P2"},
		{"trusts that do not commute", false, 0, "its detector's trust of P2 and P1 trusts P3 do not commute"},
	}
	for _, c := range cases {
		ms := []cs.Machine{&gated{i: 1, init: c.init}, &gated{i: 2, init: c.init}, &gated{i: 3, init: c.init}}
		cfg := check.Config{Machines: ms, Property: global(t, 3, 0, 3), Budget: 1, Crashes: c.crashes, Detector: check.Trusting{}, DepthFirst: true, PartialOrder: true}
		res := mustRun(t, cfg)
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindError || !strings.Contains(res.Violation.Detail, "declares cs.TrustGated") || !strings.Contains(res.Violation.Detail, c.want) || len(res.Violation.Path) != 0 {
			t.Errorf("%s: %s %+v, want an error violation at the initial state saying %q", c.name, res.Verdict, res.Violation, c.want)
		}
	}
}
