package check

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// idle is a machine whose Entry and Exit complete at once and which sends
// nothing: the smallest process, for tests of the checker's own
// bookkeeping.
type idle struct {
	self  cs.ID
	state cs.State
}

func (m *idle) Self() cs.ID                             { return m.self }
func (m *idle) State() cs.State                         { return m.state }
func (m *idle) Pending() cs.Op                          { return cs.None }
func (m *idle) Clone() cs.Machine                       { c := *m; return &c }
func (m *idle) AppendState(b []byte) []byte             { return append(b, byte(m.state)) }
func (m *idle) Receive(cs.Env, cs.ID, cs.Message) error { return nil }
func (m *idle) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.state = cs.InCS
	env.Changed(cs.InCS)
	return nil
}
func (m *idle) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.state = cs.OutCS
	env.Changed(cs.OutCS)
	return nil
}

// TestCrashOfP64: at n = MaxN = 64 a crash of P64 must
// stop it. Ids used to be 1-based bit positions, so P64's bit was 1<<64 = 0:
// its crash was lost, and it went on making calls and counting as InCS.
func TestCrashOfP64(t *testing.T) {
	ms := make([]cs.Machine, MaxN)
	for i := range ms {
		ms[i] = &idle{self: cs.ID(i + 1)}
	}
	ms[MaxN-1].(*idle).state = cs.InCS
	prop, err := property.Global(MaxN, 0, MaxN)
	if err != nil {
		t.Fatal(err)
	}
	e := newExplorer(Config{Machines: ms, Property: prop, Budget: 1, Crashes: 1})
	w := newStepper(e.x)
	if p := w.apply(e.root, Action{Kind: Crash, Node: MaxN}); p != nil {
		t.Fatalf("crash: %+v", p)
	}
	s := w.materialize()
	if !s.isCrashed(MaxN) || (stateView{s}).InCS(MaxN) {
		t.Fatalf("P%d crashed InCS: isCrashed %v, counts as InCS %v", MaxN, s.isCrashed(MaxN), (stateView{s}).InCS(MaxN))
	}
	for _, a := range w.actions(s, nil) {
		if a.Node == MaxN {
			t.Errorf("crashed P%d still acts: %v", MaxN, a)
		}
	}
	for id := cs.ID(1); id < MaxN; id++ {
		if s.isCrashed(id) {
			t.Errorf("P%d counts as crashed", id)
		}
	}
}

// stuck is idle, except that its Entry (its Exit, with exit) never
// completes: it waits for a message nobody sends.
type stuck struct {
	idle
	exit, waiting bool
}

func (m *stuck) op() cs.Op {
	if m.exit {
		return cs.Exit
	}
	return cs.Entry
}
func (m *stuck) Pending() cs.Op {
	if m.waiting {
		return m.op()
	}
	return cs.None
}
func (m *stuck) Clone() cs.Machine { c := *m; return &c }
func (m *stuck) AppendState(b []byte) []byte {
	return append(m.idle.AppendState(b), b2i(m.waiting), b2i(m.exit))
}
func (m *stuck) call(env cs.Env, op cs.Op) error {
	if op != m.op() {
		if op == cs.Entry {
			return m.idle.Entry(env)
		}
		return m.idle.Exit(env)
	}
	if err := cs.CheckCall(m, op); err != nil {
		return err
	}
	m.waiting = true
	return nil
}
func (m *stuck) Entry(env cs.Env) error { return m.call(env, cs.Entry) }
func (m *stuck) Exit(env cs.Env) error  { return m.call(env, cs.Exit) }

// TestDeadlockBySearch reaches the exhaustive completion
// search of the deadlock analysis (deadlock.go, searchCompletion), which no
// test ran: P1's Entry never completes while P2 enters and exits for ever.
// The budget stops in a state where P1 waits; the fair continuation with
// refilled budgets never ends (P2 always has a call to make) and never
// completes P1's request, so it cannot decide; the search then exhausts
// the continuations (P2 in or out, P1 waiting) and proves the deadlock. A
// search limit below the space's size leaves it undecided instead.
func TestDeadlockBySearch(t *testing.T) {
	machines := func() []cs.Machine {
		return []cs.Machine{&stuck{idle: idle{self: 1}}, &idle{self: 2}}
	}
	prop, err := property.Global(2, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, search := range []Search{BreadthFirst, DepthFirst} {
		res, err := Run(t.Context(), Config{Machines: machines(), Property: prop, Budget: 2, Search: search})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Violated || res.Violation.Kind != KindDeadlock ||
			res.Violation.Detail != "P1's entry request can never complete: none of the 2 states reachable from here with unlimited requests completes it" {
			t.Fatalf("%s: %s %+v", search, res.Verdict, res.Violation)
		}
		res, err = Run(t.Context(), Config{Machines: machines(), Property: prop, Budget: 2, Search: search, DeadlockStates: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Incomplete {
			t.Fatalf("%s with DeadlockStates 1: %s %+v, want incomplete", search, res.Verdict, res.Violation)
		}
		if search != DepthFirst {
			continue
		}
		// A limit that strikes later still reports the undecided stop
		// (depth-first meets the stop at its fourth state of six).
		res, err = Run(t.Context(), Config{Machines: machines(), Property: prop, Budget: 2, Search: search, DeadlockStates: 1, MaxStates: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Incomplete || !strings.Contains(res.Reason, "max-states") || !strings.Contains(res.Reason, "left undecided: could not decide whether P1") {
			t.Fatalf("with DeadlockStates 1 and MaxStates 5: %s %q", res.Verdict, res.Reason)
		}
	}
}

// twinA and twinB are two message kinds with the same encoding, as
// raymond.Request and maekawa.Request have.
type twinA struct{ V uint64 }
type twinB struct{ V uint64 }

func (twinA) Kind() string                   { return "A" }
func (twinB) Kind() string                   { return "B" }
func (twinA) Words() int                     { return 4 }
func (twinB) Words() int                     { return 4 }
func (m twinA) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), int64(m.V)) }
func (m twinB) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), int64(m.V)) }

// twins: P1's Entry sends twinA{1} and twinB{1} to P2 and completes; P2
// refuses a second message of a kind it already got.
type twins struct {
	idle
	gotA, gotB bool
}

func (m *twins) Clone() cs.Machine { c := *m; return &c }
func (m *twins) AppendState(b []byte) []byte {
	return append(m.idle.AppendState(b), b2i(m.gotA), b2i(m.gotB))
}
func b2i(v bool) byte {
	if v {
		return 1
	}
	return 0
}
func (m *twins) Entry(env cs.Env) error {
	if m.self == 1 {
		env.Send(2, twinA{1})
		env.Send(2, twinB{1})
	}
	return m.idle.Entry(env)
}
func (m *twins) Receive(_ cs.Env, from cs.ID, msg cs.Message) error {
	switch msg.(type) {
	case twinA:
		if m.gotA {
			return cs.Unexpected(m.self, from, msg)
		}
		m.gotA = true
	case twinB:
		if m.gotB {
			return cs.Unexpected(m.self, from, msg)
		}
		m.gotB = true
	}
	return nil
}

// TestMessageIdentity: two kinds with equal encodings
// are different messages. Interned by their bytes alone, twinB{1} was
// handed to P2 as the twinA{1} met first, and P2 got two A's.
func TestMessageIdentity(t *testing.T) {
	prop, err := property.Global(2, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), Config{Machines: []cs.Machine{&twins{idle: idle{self: 1}}, &twins{idle: idle{self: 2}}}, Property: prop, Budget: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != OK {
		t.Fatalf("%s %+v", res.Verdict, res.Violation)
	}
}

// TestTimeLeft: the timeout a reason names is the time until the deadline
// of Run's context, rounded, so that context.WithTimeout(ctx, 10s) made
// just before Run reads "timeout 10s". A test descheduled between the
// two (a loaded machine) sees the time it lost, and no more.
func TestTimeLeft(t *testing.T) {
	for _, d := range []time.Duration{10 * time.Second, 90 * time.Minute, 1500 * time.Millisecond, 250 * time.Millisecond} {
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), d)
		got := timeLeft(ctx)
		lost := time.Since(start)
		if lost < 500*time.Microsecond && got != d || got > d || got < d-lost-time.Millisecond {
			t.Errorf("WithTimeout(%v): timeLeft %v, %v after the context was made", d, got, lost)
		}
		cancel()
	}
	if got := timeLeft(t.Context()); got != 0 {
		t.Errorf("no deadline: timeLeft %v, want 0", got)
	}
}
