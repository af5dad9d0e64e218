package gcs_test

import (
	"testing"

	"critsec/alg/gcs"
	"critsec/alg/kmutex"
	"critsec/alg/mutin"
	"critsec/alg/raymond"
	"critsec/cs"
)

// lockstep runs machines in the timing model of the paper's section 3.3:
// every message takes one time unit, local computation none. Round r
// delivers, in send order, every message sent in round r-1.
type lockstep struct {
	t         testing.TB
	ms        []cs.Machine
	now, next []envelope
	cur       cs.ID
	sent      int
}

type envelope struct {
	from, to cs.ID
	msg      cs.Message
}

func (s *lockstep) Send(to cs.ID, m cs.Message) {
	s.sent++
	s.next = append(s.next, envelope{s.cur, to, m})
}
func (s *lockstep) Changed(cs.State) {}

// call makes P_i call Exit (if InCS) or Entry, then runs rounds until the
// call completes; it returns the number of rounds waited.
func (s *lockstep) call(i cs.ID) int {
	s.t.Helper()
	m := s.ms[i-1]
	s.cur = i
	var err error
	if m.State() == cs.InCS {
		err = m.Exit(s)
	} else {
		err = m.Entry(s)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	rounds := 0
	for m.Pending() != cs.None {
		if len(s.next) == 0 {
			s.t.Fatalf("P%d blocked with no message in transit", i)
		}
		s.round()
		rounds++
	}
	return rounds
}

func (s *lockstep) round() {
	s.now, s.next = s.next, nil
	for _, e := range s.now {
		s.cur = e.to
		if err := s.ms[e.to-1].Receive(s, e.from, e.msg); err != nil {
			s.t.Fatal(err)
		}
	}
}

// quiesce delivers every message in transit.
func (s *lockstep) quiesce() {
	for len(s.next) > 0 {
		s.round()
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

		ms, err := mutin.New(cs.Params{N: n, L: 1, Quorums: arcs(n), Initial: firstIDs(n)}, o)
		if err != nil {
			t.Fatal(err)
		}
		s := &lockstep{t: t, ms: ms}
		exit := s.call(1)
		entry := s.call(1)
		s.quiesce()
		if want := 2*(n-1) + 5*q; exit != 6 || entry != 0 || s.sent != want {
			t.Errorf("mutin n=%d: exit %d entry %d units, %d messages; want 6, 0, %d", n, exit, entry, s.sent, want)
		}

		ms, err = gcs.New(cs.Params{N: n, L: 1, K: n - 1, Quorums: arcs(n), Initial: firstIDs(2)}, children(o))
		if err != nil {
			t.Fatal(err)
		}
		s = &lockstep{t: t, ms: ms}
		exit = s.call(1)
		s.quiesce()
		entry = s.call(1)
		s.quiesce()
		if want := 4*(n-1) + 10*q; exit != 6 || entry != 6 || s.sent != want {
			t.Errorf("gcs n=%d: exit %d entry %d units, %d messages; want 6, 6, %d", n, exit, entry, s.sent, want)
		}
		t.Logf("n=%d |Q|=%d: mutin pair %d messages, gcs pair %d messages", n, q, 2*(n-1)+5*q, s.sent)
	}
}

// TestBlockedExitWakesInTwo: MUTIN(l) with exactly l processes InCS; P1's
// Exit is blocked until a process enters. From that Entry, the Release and
// the Response2 take 2 time units, then Acquire and Ack 2 more (Lemma 4's
// account of the entry chain).
func TestBlockedExitWakesInTwo(t *testing.T) {
	n := 5
	ms, err := mutin.New(cs.Params{N: n, L: 2, Quorums: arcs(n), Initial: firstIDs(2)}, mutin.Options{Mx: raymond.New, Variant: mutin.Fixed})
	if err != nil {
		t.Fatal(err)
	}
	s := &lockstep{t: t, ms: ms}
	s.cur = 1
	if err := ms[0].Exit(s); err != nil {
		t.Fatal(err)
	}
	s.quiesce()
	if ms[0].Pending() != cs.Exit {
		t.Fatal("P1 exited with only l processes InCS")
	}
	if s.call(4) != 0 {
		t.Fatal("Entry waited")
	}
	rounds := 0
	for ms[0].Pending() != cs.None {
		s.round()
		rounds++
	}
	if rounds != 4 {
		t.Fatalf("P1 exited %d time units after P4 entered, want 4", rounds)
	}
}

// TestKmutexUncontended: Co(MUTIN(n-k)) Entry is MUTIN's Exit (6 units),
// Exit is MUTIN's Entry (no wait).
func TestKmutexUncontended(t *testing.T) {
	ms, err := kmutex.New(cs.Params{N: 5, K: 2, Quorums: arcs(5)}, mutin.Options{Mx: raymond.New, Variant: mutin.Fixed})
	if err != nil {
		t.Fatal(err)
	}
	s := &lockstep{t: t, ms: ms}
	if entry, exit := s.call(3), s.call(3); entry != 6 || exit != 0 {
		t.Fatalf("kmutex: entry %d exit %d units, want 6 and 0", entry, exit)
	}
}
