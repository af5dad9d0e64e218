package raymond_test

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
)

// machines builds Raymond's algorithm for n processes and k, from the
// initial configuration given.
func machines(t *testing.T, n, k int, initial ...cs.ID) []cs.Machine {
	t.Helper()
	ms, err := raymond.New(cs.Params{N: n, K: k, Initial: initial})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestValidate: New refuses k outside 1..n, a lower bound, and more than
// k processes InCS initially, each with one line naming the parameter.
func TestValidate(t *testing.T) {
	bad := map[string]cs.Params{
		"k = 0":         {N: 3, K: 0},
		"k > n":         {N: 3, K: 4},
		"l > 0":         {N: 3, L: 1, K: 2},
		"too many InCS": {N: 3, K: 1, Initial: []cs.ID{1, 2}},
		"unknown id":    {N: 3, K: 1, Initial: []cs.ID{4}},
	}
	for name, p := range bad {
		_, err := raymond.New(p)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error of more than one line: %v", name, err)
		}
	}
}

// TestEnterAfterNMinusKPermissions: a request enters after n-k REPLYs
// (line 15), not before; a process InCS defers the REQUEST it receives
// (line 24) and replies on exit (line 19).
func TestEnterAfterNMinusKPermissions(t *testing.T) {
	net := testnet.MustGlobal(t, machines(t, 4, 2, 4), 0, 2, testnet.Options{})
	testnet.MustDo(t, net,
		"P1 entry",
		"deliver P1->P2 REQUEST", "deliver P1->P3 REQUEST", "deliver P1->P4 REQUEST",
		"expect transit P2->P1 REPLY, P3->P1 REPLY",
		"deliver P2->P1 REPLY",
		"expect P1 waits entry",
		"deliver P3->P1 REPLY",
		"expect P1 InCS",
		"P4 exit",
		"expect transit P4->P1 REPLY",
	)
}

// TestDeferredRepliesAggregate: two requests of P2 deferred by P1 (InCS)
// are answered by one REPLY(2) on P1's exit, and P2 counts it as one
// permission only once both of its requests are answered (line 31):
// REPLY(2) completes reply_count[1] = 2.
func TestDeferredRepliesAggregate(t *testing.T) {
	net := testnet.MustGlobal(t, machines(t, 3, 2, 1), 0, 2, testnet.Options{})
	testnet.MustDo(t, net,
		"P2 entry",
		"deliver P2->P1 REQUEST", "deliver P2->P3 REQUEST",
		"deliver P3->P2 REPLY",
		"expect P2 InCS", // n-k = 1 permission: P3's
		"P2 exit",
		"P2 entry",
		"deliver P2->P1 REQUEST", "deliver P2->P3 REQUEST",
		"deliver P3->P2 REPLY",
		"expect P2 InCS",
		"expect transit none",
	)
	var sent []cs.Message
	net.SetHook(func(from, to cs.ID, m cs.Message) bool {
		sent = append(sent, m)
		return true
	})
	testnet.MustDo(t, net, "P1 exit", "expect transit P1->P2 REPLY")
	if len(sent) != 1 || sent[0] != (raymond.Reply{Count: 2}) {
		t.Fatalf("P1's exit sent %v, want one REPLY(2)", sent)
	}
	testnet.MustDo(t, net, "deliver P1->P2 REPLY", "P2 exit", "expect transit none")
}

// TestRefusesExcessReply: a REPLY granting more permissions than the
// sender owes is an error of the machine, not a silent miscount.
func TestRefusesExcessReply(t *testing.T) {
	m := machines(t, 3, 1)[0]
	var env cs.Effects
	if err := m.Receive(&env, 2, raymond.Reply{Count: 1}); err == nil || !strings.Contains(err.Error(), "owes only 0") {
		t.Fatalf("REPLY(1) from a process that owes nothing: %v", err)
	}
	if err := m.Receive(&env, 1, raymond.Reply{Count: 1}); err == nil {
		t.Fatal("a REPLY from P1 to itself was accepted")
	}
}

// TestRandomSchedules: random interleavings of calls and deliveries, from
// no process or k processes InCS, keep
// at most k processes InCS, follow the invocation convention and leave no
// request blocked once the messages are delivered.
func TestRandomSchedules(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 5
	}
	for n := 2; n <= 7; n++ {
		for k := 1; k <= n; k++ {
			for seed := uint64(1); seed <= seeds; seed++ {
				var initial []cs.ID // odd seeds start with k processes InCS
				if seed%2 == 1 {
					initial = testnet.First(k)
				}
				net := testnet.MustGlobal(t, machines(t, n, k, initial...), 0, k, testnet.Options{Seed: seed})
				if err := net.RunRandom(30 * n); err != nil {
					t.Errorf("n=%d k=%d seed=%d: %v", n, k, seed, err)
				}
			}
		}
	}
}

// TestCheck model checks n = 3 for every k, one entry and exit per
// process: no violation, no deadlock.
func TestCheck(t *testing.T) {
	for _, c := range []struct{ n, k int }{{3, 1}, {3, 2}, {3, 3}} {
		ms := machines(t, c.n, c.k)
		p := testnet.GlobalProperty(t, c.n, 0, c.k)
		res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != check.OK {
			t.Errorf("n=%d k=%d: %s %v", c.n, c.k, res.Verdict, res.Violation)
		}
	}
}
