package check_test

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// notLocal hides a machine's cs.Local declaration, so that the checker
// takes it to send to anyone.
type notLocal struct{ cs.Machine }

func (m notLocal) Clone() cs.Machine { return notLocal{m.Machine.Clone()} }

// TestPartialOrderNeighbors: with the local algorithms' machines declaring
// their neighbors (cs.Local), the reduction's closure leaves out the
// processes that cannot send to a member (docs/design/partial-order-reduction.md,
// "The ample set"). On graphs that are not complete it must agree with the full
// search as before (verdict, kind, budget stops, counterexamples that
// replay) and explore strictly fewer states than the reduction without the
// declaration.
func TestPartialOrderNeighbors(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		name   string
		spec   alg.Spec
		budget int
		long   bool
	}{
		{"lmutin path:4 l=1", alg.Spec{Alg: "lmutin", Topology: "path:4", L: intp(1)}, 1, false},
		{"lmutin path:4 l=1", alg.Spec{Alg: "lmutin", Topology: "path:4", L: intp(1)}, 2, true},
		{"lmutex path:3 k=1", alg.Spec{Alg: "lmutex", Topology: "path:3", K: intp(1)}, 1, false},
		{"lmutex path:4 k=1", alg.Spec{Alg: "lmutex", Topology: "path:4", K: intp(1)}, 1, true},
		{"lmutex path:4 k=1", alg.Spec{Alg: "lmutex", Topology: "path:4", K: intp(1)}, 2, true},
		{"lmutin-paper path:2 (undefined step)", alg.Spec{Alg: "lmutin-paper", Topology: "path:2", L: intp(1)}, 2, false},
		{"lkcs bowtie (0,3)", alg.Spec{Alg: "lkcs", Topology: "../alg/testdata/bowtie.edges", L: intp(0), K: intp(3)}, 1, true},
		{"lkcs-paper bowtie (deadlock)", alg.Spec{Alg: "lkcs-paper", Topology: "../alg/testdata/bowtie.edges", L: intp(0), K: intp(3)}, 1, false},
	}
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		ms, prop := resolved(t, c.spec)
		cfg := check.Config{Machines: ms, Property: prop, Budget: c.budget, DeadlockStates: 5_000_000}
		full, reduced := agreeWithReduction(t, c.name, cfg)
		hidden := make([]cs.Machine, len(ms))
		for i, m := range ms {
			if _, ok := m.(cs.Local); !ok {
				t.Fatalf("%s: P%d's machine (%T) does not declare its neighbors", c.name, i+1, m)
			}
			hidden[i] = notLocal{m}
		}
		cfg.Machines, cfg.Search, cfg.PartialOrder = hidden, check.DepthFirst, true
		before := mustRun(t, cfg)
		t.Logf("%s: %d states reduced without the neighbors, %d with them (%d unreduced)", c.name, before.States, reduced.States, full.States)
		if before.Verdict != reduced.Verdict {
			t.Errorf("%s: %s without the neighbors, %s with them", c.name, before.Verdict, reduced.Verdict)
		}
		if full.Verdict == check.OK && reduced.States >= before.States {
			t.Errorf("%s: %d states with the neighbors, %d without: the closure did not shrink", c.name, reduced.States, before.States)
		}
	}
}

// farSender declares no neighbors and sends to P2 on Entry.
type farSender struct{ i cs.ID }

type farMsg struct{}

func (farMsg) Kind() string                 { return "HELLO" }
func (farMsg) Words() int                   { return 3 }
func (farMsg) AppendBinary(b []byte) []byte { return b }

func (m *farSender) Self() cs.ID                             { return m.i }
func (m *farSender) State() cs.State                         { return cs.OutCS }
func (m *farSender) Pending() cs.Op                          { return cs.None }
func (m *farSender) Neighbors() []cs.ID                      { return nil }
func (m *farSender) Clone() cs.Machine                       { c := *m; return &c }
func (m *farSender) AppendState(b []byte) []byte             { return b }
func (m *farSender) Exit(cs.Env) error                       { return cs.ErrConvention }
func (m *farSender) Receive(cs.Env, cs.ID, cs.Message) error { return nil }
func (m *farSender) Entry(env cs.Env) error {
	env.Send(m.i%2+1, farMsg{})
	return nil
}

// TestLocalSendOutside: a cs.Local machine that sends outside N_i ∪ {P_i}
// breaks the declaration the reduction relies on; the checker reports it as
// an error violation, with and without the reduction.
func TestLocalSendOutside(t *testing.T) {
	for _, por := range []bool{false, true} {
		prop, err := property.Global(2, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		cfg := check.Config{Machines: []cs.Machine{&farSender{1}, &farSender{2}}, Property: prop, Budget: 1, Search: check.DepthFirst, PartialOrder: por}
		res := mustRun(t, cfg)
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindError || !strings.Contains(res.Violation.Detail, "not one of its neighbors") {
			t.Errorf("reduction %v: %s %+v, want an error violation naming the neighbors", por, res.Verdict, res.Violation)
		}
	}
}
