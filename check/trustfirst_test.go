package check_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
)

// faulty forwards a wrapped ftraymond machine's detector inputs and
// initialization (cs.Detecting, cs.Initializing), and nothing else: the
// wrappers below embed it.
type faulty struct{ cs.Machine }

func (m faulty) Suspect(env cs.Env, j cs.ID) error { return m.Machine.(cs.Detecting).Suspect(env, j) }
func (m faulty) Trust(env cs.Env, j cs.ID) error   { return m.Machine.(cs.Detecting).Trust(env, j) }
func (m faulty) Initialized() bool                 { return m.Machine.(cs.Initializing).Initialized() }

// notGated hides ftraymond's cs.TrustGated declaration.
type notGated struct{ faulty }

func (m notGated) Clone() cs.Machine { return notGated{faulty{m.Machine.Clone()}} }

// overtaken is ftraymond with one more assertion: a process must not get
// REQUEST from P_j before P_j's ACK. With T this happens (P_j's INIT waits
// at line 34 while P_j completes its initialization and requests), with P
// it cannot; it is the behaviour that taking every trust first would lose.
// overtaken changes state on Receive only, so its cs.TrustGated declaration
// is exactly as true as ftraymond's.
type overtaken struct {
	faulty
	acks uint64 // bit j: P_j's ACK has arrived
}

func (m *overtaken) Clone() cs.Machine { c := *m; c.Machine = m.Machine.Clone(); return &c }
func (m *overtaken) AppendState(b []byte) []byte {
	return binary.AppendUvarint(m.Machine.AppendState(b), m.acks)
}
func (m *overtaken) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	switch msg.(type) {
	case ftraymond.Ack:
		m.acks |= 1 << from
	case ftraymond.Request:
		if m.acks&(1<<from) == 0 {
			return fmt.Errorf("P%d got REQUEST from P%d before P%d's ACK", m.Self(), from, from)
		}
	}
	return m.Machine.Receive(env, from, msg)
}
func (*overtaken) TrustGated() {}

// TestTrustFirst: with ftraymond declaring cs.TrustGated, the reduction takes a
// cycle of first trusts alone (docs/design/partial-order-reduction.md, "Trust
// first"). It must agree with the full search (verdict, kind, budget stops,
// counterexamples that replay) and explore fewer states than the reduction
// without the declaration; and it must keep the runs in which a REQUEST
// overtakes the ACK that line 34 held back, which T allows and P does not.
func TestTrustFirst(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		k, crashes int
		long       bool
	}{{2, 0, false}, {1, 1, false}, {2, 2, true}, {1, 2, true}}
	budget := 2
	if testing.Short() {
		budget = 1
	}
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		name := fmt.Sprintf("ftraymond n=3 k=%d crashes=%d budget %d", c.k, c.crashes, budget)
		ms, prop := resolved(t, alg.Spec{Alg: "ftraymond", N: 3, K: intp(c.k)})
		cfg := check.Config{Machines: ms, Property: prop, Budget: budget, Crashes: c.crashes, Detector: check.Trusting{}}
		_, reduced := agreeWithReduction(t, name, cfg)
		hidden := make([]cs.Machine, len(ms))
		watched := make([]cs.Machine, len(ms))
		for i, m := range ms {
			if _, ok := m.(cs.TrustGated); !ok {
				t.Fatalf("P%d's machine (%T) does not declare cs.TrustGated", i+1, m)
			}
			hidden[i] = notGated{faulty{m}}
			watched[i] = &overtaken{faulty: faulty{m}}
		}
		cfg.Search, cfg.PartialOrder, cfg.Machines = check.DepthFirst, true, hidden
		before := mustRun(t, cfg)
		t.Logf("%s: %d states reduced without the declaration, %d with it", name, before.States, reduced.States)
		if reduced.Verdict != check.OK || before.Verdict != check.OK {
			t.Fatalf("%s: %s with the declaration, %s without: want ok", name, reduced.Verdict, before.Verdict)
		}
		if reduced.States >= before.States {
			t.Errorf("%s: %d states with the declaration, %d without: trust first did not shrink", name, reduced.States, before.States)
		}
		cfg.Machines = watched
		full, red := agreeWithReduction(t, name+" REQUEST before ACK", cfg)
		if full.Verdict != check.Violated || !strings.Contains(red.Violation.Detail, "before P") {
			t.Errorf("%s: REQUEST before ACK: %s without the reduction, %s %+v with it; want the error in both", name, full.Verdict, red.Verdict, red.Violation)
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
// contradicts (initialized while another process has never trusted it;
// two inputs that do not commute) gets an error violation from the reduced
// search, at the initial state, naming the declaration.
func TestTrustGatedRefuted(t *testing.T) {
	cases := []struct {
		name string
		init bool
		want string
	}{
		{"initialized from the start", true, "P1 has completed its initialization while P2's detector still suspects it"},
		{"trusts that do not commute", false, "its detector's trust of P2 and P1 trusts P3 do not commute"},
	}
	for _, c := range cases {
		ms := []cs.Machine{&gated{i: 1, init: c.init}, &gated{i: 2, init: c.init}, &gated{i: 3, init: c.init}}
		cfg := check.Config{Machines: ms, Property: global(t, 3, 0, 3), Budget: 1, Detector: check.Trusting{}, Search: check.DepthFirst, PartialOrder: true}
		res := mustRun(t, cfg)
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindError || !strings.Contains(res.Violation.Detail, "declares cs.TrustGated") || !strings.Contains(res.Violation.Detail, c.want) || len(res.Violation.Path) != 0 {
			t.Errorf("%s: %s %+v, want an error violation at the initial state saying %q", c.name, res.Verdict, res.Violation, c.want)
		}
	}
}
