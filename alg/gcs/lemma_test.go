package gcs_test

import (
	"testing"

	"github.com/critsec/critsec/alg/gcs"
	"github.com/critsec/critsec/alg/kmutex"
	"github.com/critsec/critsec/alg/mutin"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
)

// The tests below run in the timing model of the paper's section 3.3:
// every message takes one time unit, local computation none; a round of the
// test network (testnet.Round) delivers, in send order, every message sent
// in the round before.

// call makes P_i call Exit (if InCS) or Entry, then runs rounds until the
// call completes; it returns the number of rounds waited.
func call(t testing.TB, net *testnet.Network, i cs.ID) int {
	t.Helper()
	if err := net.Toggle(i); err != nil {
		t.Fatal(err)
	}
	rounds := 0
	for net.Machine(i).Pending() != cs.None {
		if !round(t, net) {
			t.Fatalf("P%d blocked with no message in transit", i)
		}
		rounds++
	}
	return rounds
}

// round runs one round and reports whether it delivered anything.
func round(t testing.TB, net *testnet.Network) bool {
	t.Helper()
	moved, err := net.Round()
	if err != nil {
		t.Fatal(err)
	}
	return moved
}

// quiesce delivers every message in transit, round after round.
func quiesce(t testing.TB, net *testnet.Network) {
	t.Helper()
	for round(t, net) {
	}
}

// TestUncontendedCost measures, in the paper's timing model, one Exit+Entry
// pair of a process that nobody competes with, and checks it against
// Lemmas 3 and 4 (with Ricart-Agrawala as mx: 2(n-1) messages and 2 time
// units for mx.Entry, no message and no wait for mx.Exit).
//
// MUTIN(l): Exit waits 2 (mx) + 4 (Query, Response1, Acquire, Ack) = 6 time
// units; the paper's 7 adds the 1 unit of mx.Exit, which delays the next
// exiter, not this one. Entry never waits (the paper's 2 is the
// Release/Response2 chain that unblocks another process's Exit). Messages:
// 2(n-1) + 4|Q| for Exit, |Q| Releases for Entry.
//
// (l,k)-GCS: Exit is lmin.Exit (6 units) then kmex.Exit (|Q| Releases);
// Entry is kmex.Entry, an inner MUTIN Exit (6 units), then lmin.Entry (|Q|
// Releases): 6 and 6 time units (the paper says 9) and 4(n-1) + 10|Q|
// messages.
func TestUncontendedCost(t *testing.T) {
	for _, n := range []int{3, 4, 9, 16, 25} {
		q := n/2 + 1
		o := mutin.Options{Mx: raymond.New, Variant: mutin.Fixed}

		ms, err := mutin.New(cs.Params{N: n, L: 1, Quorums: testnet.Arcs(n), Initial: testnet.First(n)}, o)
		if err != nil {
			t.Fatal(err)
		}
		net := testnet.MustGlobal(t, ms, 1, n, testnet.Options{})
		exit := call(t, net, 1)
		entry := call(t, net, 1)
		quiesce(t, net)
		if want, sent := 2*(n-1)+5*q, net.Counts().Sent; exit != 6 || entry != 0 || sent != want {
			t.Errorf("mutin n=%d: exit %d entry %d units, %d messages; want 6, 0, %d", n, exit, entry, sent, want)
		}

		ms, err = gcs.New(cs.Params{N: n, L: 1, K: n - 1, Quorums: testnet.Arcs(n), Initial: testnet.First(2)}, children(o))
		if err != nil {
			t.Fatal(err)
		}
		net = testnet.MustGlobal(t, ms, 1, n-1, testnet.Options{})
		exit = call(t, net, 1)
		quiesce(t, net)
		entry = call(t, net, 1)
		quiesce(t, net)
		if want, sent := 4*(n-1)+10*q, net.Counts().Sent; exit != 6 || entry != 6 || sent != want {
			t.Errorf("gcs n=%d: exit %d entry %d units, %d messages; want 6, 6, %d", n, exit, entry, sent, want)
		}
		t.Logf("n=%d |Q|=%d: mutin pair %d messages, gcs pair %d messages", n, q, 2*(n-1)+5*q, net.Counts().Sent)
	}
}

// TestBlockedExitWakesInTwo: MUTIN(l) with exactly l processes InCS; P1's
// Exit is blocked until a process enters. From that Entry, the Release and
// the Response2 take 2 time units, then Acquire and Ack 2 more (Lemma 4's
// account of the entry chain).
func TestBlockedExitWakesInTwo(t *testing.T) {
	n := 5
	ms, err := mutin.New(cs.Params{N: n, L: 2, Quorums: testnet.Arcs(n), Initial: testnet.First(2)}, mutin.Options{Mx: raymond.New, Variant: mutin.Fixed})
	if err != nil {
		t.Fatal(err)
	}
	net := testnet.MustGlobal(t, ms, 2, n, testnet.Options{})
	testnet.MustDo(t, net, "P1 exit")
	quiesce(t, net)
	if ms[0].Pending() != cs.Exit {
		t.Fatal("P1 exited with only l processes InCS")
	}
	if call(t, net, 4) != 0 {
		t.Fatal("Entry waited")
	}
	rounds := 0
	for ms[0].Pending() != cs.None {
		round(t, net)
		rounds++
	}
	if rounds != 4 {
		t.Fatalf("P1 exited %d time units after P4 entered, want 4", rounds)
	}
}

// TestKmutexUncontended: Co(MUTIN(n-k)) Entry is MUTIN's Exit (6 units),
// Exit is MUTIN's Entry (no wait).
func TestKmutexUncontended(t *testing.T) {
	ms, err := kmutex.New(cs.Params{N: 5, K: 2, Quorums: testnet.Arcs(5)}, mutin.Options{Mx: raymond.New, Variant: mutin.Fixed})
	if err != nil {
		t.Fatal(err)
	}
	net := testnet.MustGlobal(t, ms, 0, 2, testnet.Options{})
	if entry, exit := call(t, net, 3), call(t, net, 3); entry != 6 || exit != 0 {
		t.Fatalf("kmutex: entry %d exit %d units, want 6 and 0", entry, exit)
	}
}
