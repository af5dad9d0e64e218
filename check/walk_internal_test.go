package check

import (
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// ping, pong and nack are the messages of pinger and ponger.
type ping struct{}
type pong struct{}
type nack struct{}

func (ping) Kind() string                 { return "PING" }
func (pong) Kind() string                 { return "PONG" }
func (nack) Kind() string                 { return "NACK" }
func (ping) Words() int                   { return 3 }
func (pong) Words() int                   { return 3 }
func (nack) Words() int                   { return 3 }
func (ping) AppendBinary(b []byte) []byte { return append(b, 'P') }
func (pong) AppendBinary(b []byte) []byte { return append(b, 'O') }
func (nack) AppendBinary(b []byte) []byte { return append(b, 'N') }

// pinger is P1: stuck, except that its Entry sends PING to P2 and
// completes on PONG; on NACK it sends PING again.
type pinger struct{ stuck }

func (m *pinger) Clone() cs.Machine { c := *m; return &c }
func (m *pinger) Entry(env cs.Env) error {
	if err := m.stuck.Entry(env); err != nil {
		return err
	}
	env.Send(2, ping{})
	return nil
}
func (m *pinger) Receive(env cs.Env, _ cs.ID, msg cs.Message) error {
	switch msg.(type) {
	case pong:
		m.waiting = false
		return m.idle.Entry(env)
	case nack:
		env.Send(2, ping{})
	}
	return nil
}

// ponger is P2, a process whose calls complete at once: it answers a PING
// with PONG while OutCS; a PING that finds it InCS waits, and its Exit
// answers NACK. So P1 enters only if P2 stays out while the PING travels,
// which the fair continuation (P2 calls in every round) never lets happen.
type ponger struct {
	idle
	held bool
}

func (m *ponger) Clone() cs.Machine { c := *m; return &c }
func (m *ponger) AppendState(b []byte) []byte {
	return append(m.idle.AppendState(b), b2i(m.held))
}
func (m *ponger) Receive(env cs.Env, _ cs.ID, msg cs.Message) error {
	if m.state == cs.OutCS {
		env.Send(1, pong{})
	} else {
		m.held = true
	}
	return nil
}
func (m *ponger) Exit(env cs.Env) error {
	if m.held {
		m.held = false
		env.Send(1, nack{})
	}
	return m.idle.Exit(env)
}

// TestRandomContinuation: the budget stop in which P1 waits for its PONG
// while P2, InCS, holds the PING is not decided by the fair continuation,
// which leaves P1 waiting, but a random continuation completes P1's entry;
// so the run is ok even when the exhaustive search may not look at a
// single state (DeadlockStates 1); a second call of the walks decides it the
// same way, as they are seeded by the stop's fingerprint.
func TestRandomContinuation(t *testing.T) {
	prop, err := property.Global(2, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Machines: []cs.Machine{&pinger{stuck{idle: idle{self: 1}}}, &ponger{idle: idle{self: 2}}}, Property: prop, Budgets: []int{1, 1}, Search: DepthFirst, DeadlockStates: 1}
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != OK || res.BudgetStops == 0 {
		t.Fatalf("%s %q with %d budget stops, want ok with a stop decided by a random continuation", res.Verdict, res.Reason, res.BudgetStops)
	}
	// The stop: P2 enters, P1 calls, the PING reaches P2 InCS.
	e := newExplorer(cfg)
	w := &worker{e: e, st: newStepper(e.x)}
	s := e.root
	for _, a := range []Action{{Kind: Request, Node: 2, Op: cs.Entry}, {Kind: Request, Node: 1, Op: cs.Entry}, {Kind: Deliver, Node: 2, From: 1}} {
		if p := w.st.apply(s, a); p != nil {
			t.Fatalf("%v: %+v", a, p)
		}
		s = w.st.materialize()
	}
	if acts := w.st.actions(s, nil); len(acts) != 0 || s.pendingMask() != bit(1) {
		t.Fatalf("not a budget stop with P1 pending: actions %v, pending %b", acts, s.pendingMask())
	}
	if done, v := w.fairContinuation(s, goals{reqs: bit(1)}); done != (goals{}) || v != nil {
		t.Fatalf("the fair continuation decided the stop (completed %+v, verdict %+v): the test no longer reaches the random walks", done, v)
	}
	for range 2 {
		if done, v := w.randomCompletions(s, goals{reqs: bit(1)}); done != (goals{reqs: bit(1)}) || v != nil {
			t.Fatalf("random continuations: completed %+v, verdict %+v; want P1's entry completed", done, v)
		}
	}
}
