package srimanireddy_test

import (
	"testing"

	"github.com/critsec/critsec/alg/srimanireddy"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/kmtest"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/sim"
)

func network(t *testing.T, n, k int) *testnet.Network {
	return kmtest.Network(t, srimanireddy.New, n, k)
}

// TestSuzukiKasami: with K = 1 the algorithm is Suzuki and Kasami's. An
// uncontended request by a site without the privilege costs its N-1
// REQUESTs and the one PRIVILEGE (N messages); a request made while the
// privilege is in use costs N-1 REQUESTs, and the PRIVILEGE comes when the
// holder exits; the holder enters again with no message.
func TestSuzukiKasami(t *testing.T) {
	net := network(t, 4, 1)
	before := kmtest.Sent(net)
	testnet.MustDo(t, net, "P2 entry", "drain", "expect P2 InCS")
	kmtest.WantSent(t, "uncontended request by P2", net, before, map[string]int{"REQUEST": 3, "PRIVILEGE": 1})

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P3 entry", "drain", "expect P3 waits entry")
	kmtest.WantSent(t, "P3 while P2 InCS", net, before, map[string]int{"REQUEST": 3})
	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P2 exit", "drain", "expect P3 InCS")
	kmtest.WantSent(t, "P2 exit", net, before, map[string]int{"PRIVILEGE": 1})

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P3 exit", "P3 entry", "expect P3 InCS", "P3 exit", "drain")
	kmtest.WantSent(t, "P3 again with the privilege", net, before, map[string]int{})
}

// TestKPrivileges follows the K = 2 privileges, initially at P1 and P2, on
// n = 5: the first request of P5 reaches both idle privileges, and each
// holder sends its own (N-1 + K = 6 messages, the N+K-1 worst case of the
// 1992 paper); P5 then holds both and enters again without messages; the
// next request, by P3, finds both at P5, which sends one only (PLN marks
// P3's request granted): N = 5 messages.
func TestKPrivileges(t *testing.T) {
	net := network(t, 5, 2)
	before := kmtest.Sent(net)
	testnet.MustDo(t, net, "P5 entry", "drain", "expect P5 InCS")
	kmtest.WantSent(t, "first request by P5", net, before, map[string]int{"REQUEST": 4, "PRIVILEGE": 2})
	if h := net.Machine(5).(*srimanireddy.Machine).Held(); h != 2 {
		t.Errorf("P5 holds %d privileges, want 2", h)
	}

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P5 exit", "P5 entry", "expect P5 InCS", "P5 exit", "drain")
	kmtest.WantSent(t, "P5 again", net, before, map[string]int{})

	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P3 entry", "drain", "expect P3 InCS")
	kmtest.WantSent(t, "request by P3", net, before, map[string]int{"REQUEST": 4, "PRIVILEGE": 1})
	for id, want := range map[cs.ID]int{3: 1, 5: 1, 1: 0, 2: 0} {
		if h := net.Machine(id).(*srimanireddy.Machine).Held(); h != want {
			t.Errorf("P%d holds %d privileges, want %d", id, h, want)
		}
	}

	// Two sites in the CS with both privileges: a third waits for an exit.
	before = kmtest.Sent(net)
	testnet.MustDo(t, net, "P5 entry", "expect P5 InCS", "P1 entry", "drain", "expect P1 waits entry", "P3 exit", "drain", "expect P1 InCS")
	kmtest.WantSent(t, "P1 behind P3 and P5", net, before, map[string]int{"REQUEST": 4, "PRIVILEGE": 1})
}

// TestRandomSchedules runs random schedules on small systems within the
// bound k (kmtest.RandomSchedules).
func TestRandomSchedules(t *testing.T) { kmtest.RandomSchedules(t, srimanireddy.New) }

// TestCheck explores every interleaving at n = 3 (kmtest.CheckSmall): ok
// for k = 1 and 2, and a bound of 1 with k = 2 is violated by two sites
// entering with the two privileges they start with.
func TestCheck(t *testing.T) {
	if res := kmtest.CheckSmall(t, srimanireddy.New); len(res.Violation.Path) != 2 {
		t.Errorf("k=2 checked against 1: path %v, want P1 entry, P2 entry", res.Violation.Path)
	}
}

// TestSimulation runs the 1995 study's model at n = 30, k = 3 over a range
// of request rates and seeds: the bound holds after every event, every
// request completes, and the messages per entry stay within the 1992
// paper's worst case N+K-1: a request costs N-1 REQUESTs, and each of the
// K privileges is sent at most once for it (whoever sends it marks the
// request granted, and the requester never sends it back), while an entry
// with a resident privilege costs nothing.
func TestSimulation(t *testing.T) {
	const n, k = 30, 3
	kmtest.Study(t, srimanireddy.New, func(lambda float64, seed uint64, res *sim.Result) {
		if mpe := res.MessagesPerEntry(); mpe > n+k-1 {
			t.Errorf("lambda %g seed %d: %.2f messages per entry", lambda, seed, mpe)
		}
	})
}
