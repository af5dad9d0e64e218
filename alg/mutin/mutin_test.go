package mutin_test

import (
	"errors"
	"fmt"
	"testing"

	"critsec/alg/mutin"
	"critsec/alg/raymond"
	"critsec/cs"
	"critsec/internal/cstest"
)

// arcs returns the quorums Q_i = {P_i, P_i+1, ..., P_i+n/2} (ids mod n): each
// holds more than half of the processes, so every two intersect.
func arcs(n int) [][]cs.ID {
	qs := make([][]cs.ID, n)
	for i := range qs {
		for d := 0; d <= n/2; d++ {
			qs[i] = append(qs[i], cs.ID((i+d)%n+1))
		}
	}
	return qs
}

func firstIDs(c int) []cs.ID {
	ids := make([]cs.ID, c)
	for i := range ids {
		ids[i] = cs.ID(i + 1)
	}
	return ids
}

func newMutin(t testing.TB, n, l int, v mutin.Variant) []cs.Machine {
	t.Helper()
	ms, err := mutin.New(cs.Params{N: n, L: l, Quorums: arcs(n), Initial: firstIDs(l)}, mutin.Options{Mx: raymond.New, Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestRandomSchedules checks l <= #InCS and the absence of deadlock on random
// schedules. The Paper variant is run only with l <= n-2: with l = n-1 these
// schedules find the deadlock of TestPaperLosesRelease.
func TestRandomSchedules(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 10
	}
	for _, v := range []mutin.Variant{mutin.Paper, mutin.Fixed} {
		for n := 3; n <= 9; n++ {
			for _, l := range []int{0, 1, n / 2, n - 1} {
				if v == mutin.Paper && l == n-1 {
					continue
				}
				for seed := uint64(1); seed <= seeds; seed++ {
					net := cstest.New(newMutin(t, n, l, v), l, n, seed)
					if err := net.Run(40 * n); err != nil {
						t.Errorf("%v n=%d l=%d seed=%d: %v", v, n, l, seed, err)
					}
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	good := cs.Params{N: 3, L: 1, Quorums: arcs(3), Initial: []cs.ID{1}}
	if err := mutin.Validate(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]cs.Params{
		"l >= n":          {N: 3, L: 3, Quorums: arcs(3), Initial: []cs.ID{1, 2, 3}},
		"l < 0":           {N: 3, L: -1, Quorums: arcs(3)},
		"unsafe initial":  {N: 3, L: 2, Quorums: arcs(3), Initial: []cs.ID{1}},
		"no quorums":      {N: 3, L: 1, Initial: []cs.ID{1}},
		"empty quorum":    {N: 3, L: 1, Quorums: [][]cs.ID{{1, 2}, {}, {1, 3}}, Initial: []cs.ID{1}},
		"disjoint":        {N: 4, L: 1, Quorums: [][]cs.ID{{1, 2}, {2, 3}, {3, 4}, {4, 1}}, Initial: []cs.ID{1}},
		"unknown id":      {N: 3, L: 1, Quorums: [][]cs.ID{{1, 2}, {2, 7}, {1, 3}}, Initial: []cs.ID{1}},
		"repeated member": {N: 3, L: 1, Quorums: [][]cs.ID{{1, 1}, {2, 1}, {1, 3}}, Initial: []cs.ID{1}},
	}
	for name, p := range bad {
		if err := mutin.Validate(p); err == nil {
			t.Errorf("%s: accepted", name)
		} else if _, err2 := mutin.New(p, mutin.Options{Mx: raymond.New}); err2 == nil {
			t.Errorf("%s: New accepted", name)
		}
	}
	if _, err := mutin.New(good, mutin.Options{}); err == nil {
		t.Error("New without mx accepted")
	}
}

// TestInitialProcsInCS checks procsInCS_i = {P_j ∈ R_i | P_j InCS initially}
// through what Response1 reports.
func TestInitialProcsInCS(t *testing.T) {
	// Q_1 = {1,2}, Q_2 = {2,3}, Q_3 = {3,1}: R_1 = {1,3}, R_2 = {1,2}, R_3 = {2,3}.
	ms, err := mutin.New(cs.Params{N: 3, L: 1, Quorums: arcs(3), Initial: []cs.ID{1, 3}}, mutin.Options{Mx: raymond.New})
	if err != nil {
		t.Fatal(err)
	}
	want := map[cs.ID]string{1: "[1 3]", 2: "[1]", 3: "[3]"}
	for _, m := range ms {
		var env recEnv
		// P_j asks P_i, for some P_j in R_i.
		from := cs.ID(1)
		if m.Self() == 3 {
			from = 2
		}
		if err := m.Receive(&env, from, mutin.Query{ReqCnt: 1}); err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(env.sent[0].msg.(mutin.Response1).ProcsInCS)
		if got != want[m.Self()] {
			t.Errorf("P%d reports procsInCS %s, want %s", m.Self(), got, want[m.Self()])
		}
	}
}

func TestRefusesStrangers(t *testing.T) {
	ms := newMutin(t, 3, 1, mutin.Paper)
	var env recEnv
	// R_2 = {1, 2}: P3 never sends P2 a Release.
	if err := ms[1].Receive(&env, 3, mutin.Release{}); !errors.Is(err, cs.ErrUnexpected) {
		t.Fatalf("Release from outside R_2: %v", err)
	}
	if err := ms[1].Receive(&env, 9, mutin.Release{}); !errors.Is(err, cs.ErrUnexpected) {
		t.Fatalf("Release from P9: %v", err)
	}
	if err := ms[1].Receive(&env, 1, cs.Tagged{Tag: "other", Msg: mutin.Ack{}}); !errors.Is(err, cs.ErrUnexpected) {
		t.Fatalf("foreign tag: %v", err)
	}
}

type sent struct {
	to  cs.ID
	msg cs.Message
}

type recEnv struct {
	sent    []sent
	changes []cs.State
}

func (r *recEnv) Send(to cs.ID, m cs.Message) { r.sent = append(r.sent, sent{to, m}) }
func (r *recEnv) Changed(s cs.State)          { r.changes = append(r.changes, s) }

// TestPaperLosesRelease is the counterexample to Lemma 2 (liveness) for
// Algorithms 1-2 as published: a process sends at most one Response2 per
// Query, so when two Releases reach P_j after a Query, the second is never
// forwarded. n = 5, l = 4, Q_i = {P_i, P_i+1, P_i+2}; P1..P4 InCS initially.
// P2 ends up holding mx and knowing {P1..P4} InCS, while P5's Release reached
// its only member of Q_2 (P2 itself) after P1's had used up the Response2.
// Every process then calls Exit and blocks on mx: a global deadlock. The
// Fixed variant forwards the second Release and P2 exits.
func TestPaperLosesRelease(t *testing.T) {
	for _, v := range []mutin.Variant{mutin.Paper, mutin.Fixed} {
		s := newScript(t, newMutin(t, 5, 4, v))
		l52 := [2]cs.ID{5, 2}
		// P1 and P2 ask for mx (Ricart-Agrawala: P1 wins the tie); P5,
		// OutCS, grants both.
		s.call(1)
		s.call(2)
		s.drain()
		// P5 enters; its Release to P2 is delayed. P1 learns of P5 from
		// its own procsInCS, exits and passes mx to P2 (the REPLY on link
		// P1->P2); then P1 enters again, its Release queued behind that
		// REPLY.
		l12 := [2]cs.ID{1, 2}
		s.call(5)
		s.drain(l52, l12)
		s.deliver(1, 2) // P1's Acquire
		s.drain(l52, l12)
		if st := s.ms[0].State(); st != cs.OutCS {
			t.Fatalf("%v: P1 is %v, want OutCS", v, st)
		}
		s.call(1)
		s.deliver(1, 2) // mx REPLY: P2 holds mx and sends Query to Q_2 = {2, 3, 4}
		s.drain(l52, l12)
		if s.ms[1].Pending() != cs.Exit {
			t.Fatalf("%v: P2 is not waiting in Exit", v)
		}
		s.deliver(1, 2) // P1's Release: P2 answers its own Query with Response2 {1, 2}
		s.deliver(5, 2) // P5's Release: Paper sends nothing more
		s.drain()
		for _, i := range []cs.ID{1, 3, 4, 5} {
			s.call(i)
		}
		s.drain()
		if got := s.deadlocked(); got != (v == mutin.Paper) {
			t.Fatalf("%v: deadlocked = %v, want %v", v, got, v == mutin.Paper)
		}
		if v == mutin.Fixed && s.ms[1].State() != cs.OutCS {
			t.Fatalf("fixed: P2 is %v, want OutCS", s.ms[1].State())
		}
	}
}
