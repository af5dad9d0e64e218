package mutin_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/critsec/critsec/alg/mutin"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

func newMutin(t testing.TB, n, l int, v mutin.Variant) []cs.Machine {
	t.Helper()
	ms, err := mutin.New(cs.Params{N: n, L: l, Quorums: testnet.Arcs(n), Initial: testnet.First(l)}, mutin.Options{Mx: raymond.New, Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestRandomSchedules checks l <= #InCS and the absence of deadlock on random
// schedules. The Paper variant is run only with l <= n-2: with l = n-1 these
// schedules find the deadlock of testdata/scripts/paper_loses_release.txt.
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
					net := testnet.MustGlobal(t, newMutin(t, n, l, v), l, n, testnet.Options{Seed: seed})
					if err := net.RunRandom(40 * n); err != nil {
						t.Errorf("%v n=%d l=%d seed=%d: %v", v, n, l, seed, err)
					}
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	good := cs.Params{N: 3, L: 1, Quorums: testnet.Arcs(3), Initial: []cs.ID{1}}
	if err := mutin.Validate(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]cs.Params{
		"l >= n":          {N: 3, L: 3, Quorums: testnet.Arcs(3), Initial: []cs.ID{1, 2, 3}},
		"l < 0":           {N: 3, L: -1, Quorums: testnet.Arcs(3)},
		"unsafe initial":  {N: 3, L: 2, Quorums: testnet.Arcs(3), Initial: []cs.ID{1}},
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
	ms, err := mutin.New(cs.Params{N: 3, L: 1, Quorums: testnet.Arcs(3), Initial: []cs.ID{1, 3}}, mutin.Options{Mx: raymond.New})
	if err != nil {
		t.Fatal(err)
	}
	want := map[cs.ID]string{1: "[1 3]", 2: "[1]", 3: "[3]"}
	for _, m := range ms {
		var env cs.Effects
		// P_j asks P_i, for some P_j in R_i.
		from := cs.ID(1)
		if m.Self() == 3 {
			from = 2
		}
		if err := m.Receive(&env, from, mutin.Query{ReqCnt: 1}); err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(env.List[0].Msg.(mutin.Response1).ProcsInCS)
		if got != want[m.Self()] {
			t.Errorf("P%d reports procsInCS %s, want %s", m.Self(), got, want[m.Self()])
		}
	}
}

func TestRefusesStrangers(t *testing.T) {
	ms := newMutin(t, 3, 1, mutin.Paper)
	var env cs.Effects
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

// TestScripts runs the scripts in testdata/scripts (testnet.RunScripts; -rewrite
// rewrites their outputs), with Ricart-Agrawala as mx and the quorums
// testnet.Arcs(n). testdata/scripts/paper_loses_release.txt is the
// counterexample to Lemma 2 (docs/design/mutin-fix.md, "A counterexample at
// n = 5"): the published variant ends in a global deadlock; on the same
// schedule the corrected variant, and a machine built without choosing a
// variant (the zero value), forward P5's Release and P2 exits.
func TestScripts(t *testing.T) {
	testnet.RunScripts(t, "testdata/scripts", func(args map[string]string) (testnet.Setup, error) {
		n, err1 := testnet.Int(args, "n")
		l, err2 := testnet.Int(args, "l")
		v, err3 := testnet.Choice(args, "variant", map[string]mutin.Variant{"paper": mutin.Paper, "fixed": mutin.Fixed})
		if err := errors.Join(err1, err2, err3); err != nil {
			return testnet.Setup{}, err
		}
		qs := testnet.Arcs(n)
		ms, err := mutin.New(cs.Params{N: n, L: l, Quorums: qs, Initial: testnet.First(l)}, mutin.Options{Mx: raymond.New, Variant: v})
		if err != nil {
			return testnet.Setup{}, err
		}
		p, err := property.Global(n, l, n)
		alg := mutin.Name
		if v == mutin.Paper {
			alg += "-paper"
		}
		return testnet.Setup{Machines: ms, Property: p, Header: trace.Header{Alg: alg, L: l, K: n, Coterie: "arcs", Quorums: qs}}, err
	})
}
