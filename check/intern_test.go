package check

import (
	"fmt"
	"testing"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
)

// TestInternMessages: equal encodings get one id, distinct ones distinct
// ids, across many chunks, and every entry reads back as interned.
func TestInternMessages(t *testing.T) {
	tab := newInterner()
	const n = 3*internChunkLen + 5
	for round := range 2 { // the second round finds every key again
		for i := range n {
			enc := []byte(fmt.Sprint(i))
			id := tab.internMsg(enc, raymond.Reply{Count: int32(i)})
			if id != uint32(i) {
				t.Fatalf("round %d: message %d got id %d", round, i, id)
			}
		}
	}
	for i := range n {
		e := tab.msg(uint32(i))
		if string(e.enc) != fmt.Sprint(i) || e.msg.(raymond.Reply).Count != int32(i) {
			t.Fatalf("entry %d reads back as %q, %v", i, e.enc, e.msg)
		}
	}
}

// TestInternMachineKey: two processes whose machines have equal records
// (Raymond's records do not name their process) get distinct ids, and an
// entry keeps the machine's State and Pending.
func TestInternMachineKey(t *testing.T) {
	ms, err := raymond.New(cs.Params{N: 2, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	if string(ms[0].AppendState(nil)) != string(ms[1].AppendState(nil)) {
		t.Fatal("the initial records differ: the test needs equal ones")
	}
	tab := newInterner()
	a := tab.internMachine(machineKey(nil, ms[0]), ms[0])
	b := tab.internMachine(machineKey(nil, ms[1]), ms[1])
	if a == b {
		t.Fatalf("P1 and P2 share id %d", a)
	}
	if again := tab.internMachine(machineKey(nil, ms[0].Clone()), ms[0].Clone()); again != a {
		t.Fatalf("a clone of P1 got id %d, want %d", again, a)
	}
	if e := tab.machine(b); e.m.Self() != 2 || e.state != cs.OutCS || e.pending != cs.None {
		t.Fatalf("entry %d: %+v", b, e)
	}
}
