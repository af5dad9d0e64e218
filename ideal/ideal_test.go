package ideal_test

import (
	"errors"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/ideal"
)

// TestObject: Entry waits for a Grant, Exit completes at once, and a Grant
// from another process or without a pending Entry is refused.
func TestObject(t *testing.T) {
	ms, err := ideal.New(cs.Params{N: 3, K: 2, Initial: []cs.ID{3}})
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	var eff cs.Effects
	if err := eff.Step(m, cs.Deliver(1, ideal.Grant{})); !errors.Is(err, cs.ErrUnexpected) {
		t.Fatalf("grant without a request: %v", err)
	}
	if err := eff.Step(m, cs.Call(cs.Entry)); err != nil || m.Pending() != cs.Entry || len(eff.List) != 0 {
		t.Fatalf("entry: %v, pending %s, effects %v", err, m.Pending(), eff.List)
	}
	if err := eff.Step(m, cs.Deliver(2, ideal.Grant{})); !errors.Is(err, cs.ErrUnexpected) {
		t.Fatalf("grant from P2: %v", err)
	}
	if err := eff.Step(m, cs.Deliver(1, ideal.Grant{})); err != nil || m.State() != cs.InCS || m.Pending() != cs.None {
		t.Fatalf("grant: %v, %s %s", err, m.State(), m.Pending())
	}
	eff.Reset()
	if err := eff.Step(m, cs.Call(cs.Exit)); err != nil || m.State() != cs.OutCS || len(eff.List) != 1 {
		t.Fatalf("exit: %v, %s, effects %v", err, m.State(), eff.List)
	}
	if ms[2].State() != cs.InCS {
		t.Fatalf("P3 starts %s", ms[2].State())
	}
	if _, err := ideal.New(cs.Params{N: 3, K: 1, Initial: []cs.ID{1, 2}}); err == nil {
		t.Fatal("two holders of a 1-object accepted")
	}
	c := ms[1].Clone()
	if err := cs.RestoreState(c, m.AppendState(nil)); err != nil || string(c.AppendState(nil)) != string(m.AppendState(nil)) {
		t.Fatalf("restore: %v", err)
	}
}
