package gcs_test

import (
	"errors"
	"testing"

	"github.com/critsec/critsec/alg/gcs"
	"github.com/critsec/critsec/alg/kmutex"
	"github.com/critsec/critsec/alg/mutin"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
)

// children builds the paper's children of (l,k)-GCS with MUTIN options o:
// lmin = MUTIN(l), kmex = Co(MUTIN(n-k)).
func children(o mutin.Options) gcs.Options {
	return gcs.Options{
		Lmin: func(p cs.Params) ([]cs.Machine, error) { return mutin.New(p, o) },
		Kmex: func(p cs.Params) ([]cs.Machine, error) { return kmutex.New(p, o) },
	}
}

func TestRandomSchedules(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 5
	}
	for n := 3; n <= 9; n++ {
		for _, lk := range [][2]int{{0, 1}, {0, n}, {1, 2}, {1, n}, {n / 2, n/2 + 1}, {1, n - 1}, {n - 1, n}} {
			l, k := lk[0], lk[1]
			for _, c := range []int{l, k} {
				for seed := uint64(1); seed <= seeds; seed++ {
					p := cs.Params{N: n, L: l, K: k, Quorums: testnet.Arcs(n), Initial: testnet.First(c)}
					ms, err := gcs.New(p, children(mutin.Options{Mx: raymond.New, Variant: mutin.Fixed}))
					if err != nil {
						t.Fatal(err)
					}
					net := testnet.MustGlobal(t, ms, l, k, testnet.Options{Seed: seed})
					if err := net.RunRandom(30 * n); err != nil {
						t.Errorf("n=%d l=%d k=%d initial=%d seed=%d: %v", n, l, k, c, seed, err)
					}
				}
			}
		}
	}
}

// grid returns the grid coterie of Example 2 for n = s*s: Q_i is the row and
// the column of P_i.
func grid(s int) [][]cs.ID {
	qs := make([][]cs.ID, s*s)
	for i := range qs {
		x, y := i%s, i/s
		for j := 0; j < s; j++ {
			qs[i] = append(qs[i], cs.ID(j+y*s+1))
			if j != y {
				qs[i] = append(qs[i], cs.ID(x+j*s+1))
			}
		}
	}
	return qs
}

// TestOtherCoteries runs (l,k)-GCS on grid coteries and on a coterie whose
// quorums do not contain their owner (every Q_i = {P_1, P_2}).
func TestOtherCoteries(t *testing.T) {
	central := func(n int) [][]cs.ID {
		qs := make([][]cs.ID, n)
		for i := range qs {
			qs[i] = []cs.ID{1, 2}
		}
		return qs
	}
	cases := []struct {
		name    string
		quorums [][]cs.ID
		l, k    int
	}{
		{"grid4", grid(2), 1, 3},
		{"grid9", grid(3), 2, 6},
		{"grid16", grid(4), 3, 8},
		{"central5", central(5), 1, 3},
		{"central5-mutex", central(5), 0, 1},
	}
	for _, c := range cases {
		n := len(c.quorums)
		for seed := uint64(1); seed <= 5; seed++ {
			p := cs.Params{N: n, L: c.l, K: c.k, Quorums: c.quorums, Initial: testnet.First(c.l)}
			ms, err := gcs.New(p, children(mutin.Options{Mx: raymond.New, Variant: mutin.Fixed}))
			if err != nil {
				t.Fatal(err)
			}
			if err := testnet.MustGlobal(t, ms, c.l, c.k, testnet.Options{Seed: seed}).RunRandom(20 * n); err != nil {
				t.Errorf("%s seed %d: %v", c.name, seed, err)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	bad := map[string]cs.Params{
		"l = k":          {N: 3, L: 2, K: 2, Quorums: testnet.Arcs(3), Initial: []cs.ID{1, 2}},
		"k > n":          {N: 3, L: 1, K: 4, Quorums: testnet.Arcs(3), Initial: []cs.ID{1}},
		"too few InCS":   {N: 3, L: 1, K: 2, Quorums: testnet.Arcs(3)},
		"too many InCS":  {N: 3, L: 0, K: 2, Quorums: testnet.Arcs(3), Initial: []cs.ID{1, 2, 3}},
		"missing quorum": {N: 3, L: 0, K: 2, Quorums: testnet.Arcs(2)},
	}
	for name, p := range bad {
		if _, err := gcs.New(p, children(mutin.Options{Mx: raymond.New})); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestPaperDeadlocks: with Algorithms 1-2 as published, (l,k)-GCS deadlocks
// on random schedules for n = 5, l = 2, k = 3 (the querier of lmin never
// hears of a process whose Release reached its quorum member after another
// Release had used up that member's single Response2; see package mutin and
// docs/design/mutin-fix.md). The Fixed variant runs the same seeds to the end.
func TestPaperDeadlocks(t *testing.T) {
	stuck := map[mutin.Variant]int{}
	for _, v := range []mutin.Variant{mutin.Paper, mutin.Fixed} {
		for seed := uint64(1); seed <= 20; seed++ {
			p := cs.Params{N: 5, L: 2, K: 3, Quorums: testnet.Arcs(5), Initial: testnet.First(2)}
			ms, err := gcs.New(p, children(mutin.Options{Mx: raymond.New, Variant: v}))
			if err != nil {
				t.Fatal(err)
			}
			err = testnet.MustGlobal(t, ms, 2, 3, testnet.Options{Seed: seed}).RunRandom(300)
			switch {
			case err == nil:
			case errors.Is(err, testnet.ErrDeadlock):
				stuck[v]++
			default:
				t.Fatalf("%v seed %d: %v", v, seed, err)
			}
		}
	}
	if stuck[mutin.Paper] == 0 || stuck[mutin.Fixed] != 0 {
		t.Fatalf("runs stuck out of 20: paper %d (want > 0), fixed %d (want 0)", stuck[mutin.Paper], stuck[mutin.Fixed])
	}
	t.Logf("runs stuck out of 20: paper %d, fixed %d", stuck[mutin.Paper], stuck[mutin.Fixed])
}

// TestLargeN runs (l,k)-GCS with n up to 100 on random schedules, the bounds
// checked after every step (long; skipped with -short).
func TestLargeN(t *testing.T) {
	if testing.Short() {
		t.Skip("long: n up to 100")
	}
	for _, n := range []int{20, 50, 100} {
		for _, lk := range [][2]int{{1, n - 1}, {n / 3, 2 * n / 3}, {n/2 - 1, n/2 + 1}} {
			for seed := uint64(1); seed <= 3; seed++ {
				p := cs.Params{N: n, L: lk[0], K: lk[1], Quorums: testnet.Arcs(n), Initial: testnet.First(lk[0])}
				ms, err := gcs.New(p, children(mutin.Options{Mx: raymond.New, Variant: mutin.Fixed}))
				if err != nil {
					t.Fatal(err)
				}
				if err := testnet.MustGlobal(t, ms, lk[0], lk[1], testnet.Options{Seed: seed}).RunRandom(4 * n); err != nil {
					t.Errorf("n=%d l=%d k=%d seed=%d: %v", n, lk[0], lk[1], seed, err)
				}
			}
		}
	}
}
