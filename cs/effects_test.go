package cs

import (
	"errors"
	"testing"
)

// toggler enters and exits at once, sending ping to P2 on Entry.
type toggler struct{ s State }

type ping struct{}

func (ping) Kind() string                      { return "PING" }
func (ping) Words() int                        { return 3 }
func (ping) AppendBinary(b []byte) []byte      { return append(b, 'p') }
func (m *toggler) Self() ID                    { return 1 }
func (m *toggler) State() State                { return m.s }
func (m *toggler) Pending() Op                 { return None }
func (m *toggler) Clone() Machine              { c := *m; return &c }
func (m *toggler) AppendState(b []byte) []byte { return append(b, byte(m.s)) }
func (m *toggler) Receive(env Env, from ID, msg Message) error {
	return Unexpected(1, from, msg)
}
func (m *toggler) Entry(env Env) error {
	if err := CheckCall(m, Entry); err != nil {
		return err
	}
	env.Send(2, ping{})
	m.s = InCS
	env.Changed(InCS)
	env.Send(3, ping{})
	return nil
}
func (m *toggler) Exit(env Env) error {
	if err := CheckCall(m, Exit); err != nil {
		return err
	}
	m.s = OutCS
	env.Changed(OutCS)
	return nil
}

// TestEffectsStep: Step records a call's effects in the order the machine
// made them and starts from an empty list each time; errors pass through.
func TestEffectsStep(t *testing.T) {
	var e Effects
	m := &toggler{}
	if err := e.Step(m, Call(Entry)); err != nil {
		t.Fatal(err)
	}
	want := []Effect{{To: 2, Msg: ping{}}, {State: InCS}, {To: 3, Msg: ping{}}}
	if len(e.List) != len(want) {
		t.Fatalf("effects %+v, want %+v", e.List, want)
	}
	for i := range want {
		if e.List[i] != want[i] || e.List[i].IsSend() != (want[i].Msg != nil) {
			t.Fatalf("effect %d: %+v, want %+v", i, e.List[i], want[i])
		}
	}
	if err := e.Step(m, Call(Exit)); err != nil || len(e.List) != 1 || e.List[0] != (Effect{State: OutCS}) {
		t.Fatalf("exit: %v %+v", err, e.List)
	}
	if err := e.Step(m, Call(Exit)); !errors.Is(err, ErrConvention) || len(e.List) != 0 {
		t.Fatalf("exit while OutCS: %v %+v", err, e.List)
	}
	if err := e.Step(m, Deliver(2, ping{})); !errors.Is(err, ErrUnexpected) {
		t.Fatalf("receive: %v", err)
	}
	if err := e.Step(m, Input{Kind: InSuspect, Who: 2}); !errors.Is(err, ErrUnexpected) {
		t.Fatalf("suspect on a machine without a detector: %v", err)
	}
	if err := e.Step(m, Input{}); !errors.Is(err, ErrUnexpected) {
		t.Fatalf("input of no kind: %v", err)
	}
}

func TestAppendKind(t *testing.T) {
	m := Tagged{Tag: "lmin", Msg: Tagged{Tag: "mx", Msg: ping{}}}
	if got := string(AppendKind([]byte("x"), m)); got != "x"+m.Kind() || got != "xlmin.mx.PING" {
		t.Fatalf("AppendKind = %q, Kind = %q", got, m.Kind())
	}
}
