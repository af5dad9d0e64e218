package makki_test

import (
	"testing"

	"github.com/critsec/critsec/alg/makki"
	"github.com/critsec/critsec/internal/kmtest"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/sim"
)

func network(t *testing.T, n, k int) *testnet.Network {
	return kmtest.Network(t, makki.New, n, k)
}

// TestThreeMessages is the heavy-load pattern of the 1992 abstract, with
// k = 2 on n = 3. P1 and P2 enter (P2 by REQUEST and TOKEN: P1, in its CS,
// passes the token with its free slot); P2 keeps it (no slot left) and
// P3's request, forwarded by P1 to P2, waits in its queue until P1's
// RELEASE reaches P2, which passes the token on. Then P2 asks again: one
// REQUEST to P3 (the tail of the queue P2 passed), the TOKEN, and P3's
// RELEASE when P3 exits: three messages for that entry.
func TestThreeMessages(t *testing.T) {
	net := network(t, 3, 2)
	before := kmtest.Sent(net)
	testnet.MustDo(t, net, "P1 entry", "expect P1 InCS")
	kmtest.WantSent(t, "P1 with the token", net, before, map[string]int{})
	testnet.MustDo(t, net, "P2 entry", "drain", "expect P2 InCS",
		"P3 entry", "drain", "expect P3 waits entry",
		"P1 exit", "drain", "expect P3 InCS", "P2 exit", "drain")
	kmtest.WantSent(t, "P2 and P3", net, before, map[string]int{"REQUEST": 3, "TOKEN": 2, "RELEASE": 2})

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P2 entry", "drain", "expect P2 InCS", "P3 exit", "drain")
	kmtest.WantSent(t, "P2 again", net, before, map[string]int{"REQUEST": 1, "TOKEN": 1, "RELEASE": 1})
}

// TestSemaphore follows k = 2 slots on n = 5. P3's request goes to P1 (the
// token's place), which passes the token: 2 messages, and P3 keeps the
// token in its CS (empty queue). P4's request goes to P1 too and is
// forwarded to P3 (P1's last), which passes the token with one free slot:
// 3 messages; P3's exit then costs a RELEASE to P4, which holds the token.
// P4's exit costs nothing, and P5's request is forwarded by P1 to P4, the
// last requester P1 saw: 3 messages.
func TestSemaphore(t *testing.T) {
	net := network(t, 5, 2)
	before := kmtest.Sent(net)
	testnet.MustDo(t, net, "P3 entry", "drain", "expect P3 InCS")
	kmtest.WantSent(t, "P3", net, before, map[string]int{"REQUEST": 1, "TOKEN": 1})

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P4 entry", "drain", "expect P4 InCS", "expect P3 InCS")
	kmtest.WantSent(t, "P4 beside P3", net, before, map[string]int{"REQUEST": 2, "TOKEN": 1})

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P3 exit", "drain", "P4 exit", "drain")
	kmtest.WantSent(t, "P3 and P4 exit", net, before, map[string]int{"RELEASE": 1})
	if !net.Machine(4).(*makki.Machine).HasToken() {
		t.Error("the token is not at P4")
	}

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P5 entry", "drain", "expect P5 InCS")
	kmtest.WantSent(t, "P5", net, before, map[string]int{"REQUEST": 2, "TOKEN": 1})
}

// TestAbsorb: a site waiting for the token keeps a request forwarded to it
// and puts it in the queue when the token comes. With k = 1 on n = 4: P3
// holds the token in its CS; P2's request goes P1 -> P3, P4's goes P1 -> P2
// (P1's last is P2 by then) and reaches P2 first. P3, in its CS with no
// slot free, keeps the token until it exits, then passes it to P2 with the
// slot (no RELEASE); P2 passes it to P4 the same way.
func TestAbsorb(t *testing.T) {
	net := network(t, 4, 1)
	testnet.MustDo(t, net,
		"P3 entry", "drain", "expect P3 InCS",
		"P2 entry", "deliver P2->P1 REQUEST",
		"P4 entry", "deliver P4->P1 REQUEST",
		"deliver P1->P2 REQUEST", "expect P2 waits entry",
		"deliver P1->P3 REQUEST", "drain", "expect P2 waits entry",
		"P3 exit", "drain", "expect P2 InCS", "expect P4 waits entry",
		"P2 exit", "drain", "expect P4 InCS")
	// P3: REQUEST and TOKEN; P2 and P4: two REQUESTs each (one forward)
	// and a TOKEN.
	kmtest.WantSent(t, "the whole run", net, nil, map[string]int{"REQUEST": 5, "TOKEN": 3})
}

// TestRandomSchedules runs random schedules on small systems within the
// bound k (kmtest.RandomSchedules).
func TestRandomSchedules(t *testing.T) { kmtest.RandomSchedules(t, makki.New) }

// TestCheck explores every interleaving at n = 3 (kmtest.CheckSmall): ok
// for k = 1 and 2, and a bound of 1 with k = 2 is violated.
func TestCheck(t *testing.T) { kmtest.CheckSmall(t, makki.New) }

// TestSimulation runs the 1995 study's model at n = 30, k = 3 over a range
// of request rates and seeds: the bound holds after every event and every
// request completes.
func TestSimulation(t *testing.T) {
	kmtest.Study(t, makki.New, func(float64, uint64, *sim.Result) {})
}
