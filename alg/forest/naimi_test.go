package forest_test

import (
	"fmt"
	"testing"

	"github.com/critsec/critsec/alg/forest"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
)

// The expectations below are worked out by hand from Naimi and Trehel's
// rules (M. Naimi, M. Trehel, A. Arnold, "A log(N) distributed mutual
// exclusion algorithm based on path reversal", JPDC 34, 1996), not taken
// from this code. Each node has last (its father, nil at the root) and
// next; initially node 1 holds the token and last = 1 elsewhere.
//
//	request at i:   if last != nil { send REQUEST(i) to last; last := nil }
//	REQUEST(j) at i: if last == nil { if requesting { next := j }
//	                                  else send TOKEN to j }
//	                 else send REQUEST(j) to last
//	                 last := j
//	release at i:   if next != nil { send TOKEN to next; next := nil }
//
// pointer[1] of the forest algorithm with K = 1 is last, with the root (or
// the token holder) pointing to itself instead of nil.

// ntNet is the forest algorithm with one token and no INFORM messages
// (Naimi and Trehel have none) on n nodes.
func ntNet(t *testing.T, n int) *testnet.Network {
	t.Helper()
	ms, err := forest.New(cs.Params{N: n, K: 1}, forest.Options{Nu: 0})
	if err != nil {
		t.Fatal(err)
	}
	return testnet.MustGlobal(t, ms, 0, 1, testnet.Options{})
}

// pointers returns pointer[1] of nodes 1..n as "1:x 2:y ...".
func pointers(net *testnet.Network) string {
	s := ""
	for id := cs.ID(1); int(id) <= net.N(); id++ {
		if id > 1 {
			s += " "
		}
		s += fmt.Sprintf("%d:%d", id, net.Machine(id).(*forest.Machine).Pointer(1))
	}
	return s
}

// TestNaimiTrehelSequential: requests one at a time (each completes, its
// node exits, everything is delivered) on n = 5 nodes. By the rules
// above, a request costs one REQUEST per hop from the requester to the
// root plus one TOKEN, and every node on the path then points to the
// requester:
//
//	P2: 2->1, TOKEN 1->2              2 messages; last: 1->2
//	P3: 3->1->2, TOKEN 2->3           3; 1->3, 2->3
//	P4: 4->1->3, TOKEN 3->4           3; 1->4, 3->4
//	P2: 2->3->4, TOKEN 4->2           3; 3->2, 4->2
//	P5: 5->1->4->2, TOKEN 2->5        4; 1->5, 4->5, 2->5
//	P1: 1->5, TOKEN 5->1              2; 5->1
//	P1 again, holding the token       0
func TestNaimiTrehelSequential(t *testing.T) {
	net := ntNet(t, 5)
	for _, c := range []struct {
		who      cs.ID
		messages int
		after    string // pointer[1] of nodes 1..5 (Naimi-Trehel's last, root = itself)
	}{
		{2, 2, "1:2 2:2 3:1 4:1 5:1"},
		{3, 3, "1:3 2:3 3:3 4:1 5:1"},
		{4, 3, "1:4 2:3 3:4 4:4 5:1"},
		{2, 3, "1:4 2:2 3:2 4:2 5:1"},
		{5, 4, "1:5 2:5 3:2 4:5 5:5"},
		{1, 2, "1:1 2:5 3:2 4:5 5:1"},
		{1, 0, "1:1 2:5 3:2 4:5 5:1"},
	} {
		before := net.Counts().Sent
		testnet.MustDo(t, net, fmt.Sprintf("P%d entry", c.who), "drain", fmt.Sprintf("expect P%d InCS", c.who), fmt.Sprintf("P%d exit", c.who), "drain")
		if got := net.Counts().Sent - before; got != c.messages {
			t.Errorf("request of P%d: %d messages, Naimi-Trehel sends %d", c.who, got, c.messages)
		}
		if got := pointers(net); got != c.after {
			t.Errorf("after the request of P%d: pointers %s, Naimi-Trehel's tree is %s", c.who, got, c.after)
		}
	}
}

// TestNaimiTrehelWaitingRequester: a request that reaches a node still
// waiting for the token is kept there (the node-queue; Naimi and Trehel's
// next), on n = 4. First P3, P4 and P2 request one at a time (2, 3 and 3
// messages as in TestNaimiTrehelSequential), leaving last: 1->2, 3->4,
// 4->2, P2 the root with the token. Then P3 requests: 3->4->2 and P2
// sends the token (3 messages; last_4 = last_2 = 3), which stays in
// transit while P4 requests: 4->3 (1 message), and P3, requesting, keeps
// it (next_3 = 4, last_3 = 4). P3 gets the token, enters, exits and sends
// it to P4 (1 message). Naimi-Trehel: 5 messages for the two requests,
// and last: 1->2, 2->3, 3->4, P4 the root.
func TestNaimiTrehelWaitingRequester(t *testing.T) {
	net := ntNet(t, 4)
	for _, who := range []string{"P3", "P4", "P2"} {
		testnet.MustDo(t, net, who+" entry", "drain", who+" exit", "drain")
	}
	if got, want := net.Counts().Sent, 2+3+3; got != want {
		t.Fatalf("three sequential requests: %d messages, Naimi-Trehel sends %d", got, want)
	}
	if got, want := pointers(net), "1:2 2:2 3:4 4:2"; got != want {
		t.Fatalf("pointers %s, Naimi-Trehel's tree is %s", got, want)
	}
	before := net.Counts().Sent
	testnet.MustDo(t, net,
		"P3 entry", "drain except P2->P3", "expect transit P2->P3 TOKEN",
		"P4 entry", "deliver P4->P3 REQUEST", "expect P3 waits entry",
		"drain", "expect P3 InCS", "P3 exit", "drain", "expect P4 InCS", "P4 exit", "drain")
	if got, want := net.Counts().Sent-before, 5; got != want {
		t.Errorf("two overlapping requests: %d messages, Naimi-Trehel sends %d", got, want)
	}
	if got, want := pointers(net), "1:2 2:3 3:4 4:4"; got != want {
		t.Errorf("pointers %s, Naimi-Trehel's tree is %s", got, want)
	}
}

// TestNaimiTrehelExplicitQueue: where the forest algorithm saves a
// message (section 2, "Comparison with Trehel and Naimi", difference 1:
// explicit queues). On n = 3, P1 holds the token and is InCS; P2 and P3
// request. Naimi-Trehel: 2->1 (P1 in the CS: next_1 = 2, last_1 = 2),
// then 3->1->2 (last_1 = 3; P2 requesting: next_2 = 3, last_2 = 3), then
// two TOKEN messages: 5 messages, last 1->3, 2->3. The forest algorithm
// queues both requests on P1's token-queue (P1 holds the token): 2
// REQUEST and 2 TOKEN messages, and the same tree (P1 points to the
// last-unmodified node, P3; P2 to P3 when it passes the token on).
func TestNaimiTrehelExplicitQueue(t *testing.T) {
	net := ntNet(t, 3)
	testnet.MustDo(t, net, "P1 entry", "P2 entry", "drain", "P3 entry", "drain",
		"P1 exit", "drain", "expect P2 InCS", "P2 exit", "drain", "expect P3 InCS")
	if got, naimiTrehel := net.Counts().Sent, 5; got != naimiTrehel-1 {
		t.Errorf("%d messages; Naimi-Trehel sends %d, the forest algorithm one fewer", got, naimiTrehel)
	}
	if got, want := pointers(net), "1:3 2:3 3:3"; got != want {
		t.Errorf("pointers %s, Naimi-Trehel's tree is %s", got, want)
	}
}
