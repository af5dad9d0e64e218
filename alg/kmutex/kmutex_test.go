package kmutex_test

import (
	"testing"

	"critsec/alg/kmutex"
	"critsec/alg/mutin"
	"critsec/alg/raymond"
	"critsec/cs"
	"critsec/internal/cstest"
)

func arcs(n int) [][]cs.ID {
	qs := make([][]cs.ID, n)
	for i := range qs {
		for d := 0; d <= n/2; d++ {
			qs[i] = append(qs[i], cs.ID((i+d)%n+1))
		}
	}
	return qs
}

func TestRandomSchedules(t *testing.T) {
	seeds := uint64(30)
	if testing.Short() {
		seeds = 8
	}
	for n := 3; n <= 9; n++ {
		for _, k := range []int{1, 2, n / 2, n - 1, n} {
			for seed := uint64(1); seed <= seeds; seed++ {
				ms, err := kmutex.New(cs.Params{N: n, K: k, Quorums: arcs(n)}, mutin.Options{Mx: raymond.New, Variant: mutin.Fixed})
				if err != nil {
					t.Fatal(err)
				}
				net := cstest.New(ms, 0, k, seed)
				if err := net.Run(30 * n); err != nil {
					t.Errorf("n=%d k=%d seed=%d: %v", n, k, seed, err)
				}
			}
		}
	}
}

// TestInitialComplement: P_i InCS initially in k-mutex is OutCS in the inner
// MUTIN(n-k), and the k-mutex reports it InCS.
func TestInitialComplement(t *testing.T) {
	ms, err := kmutex.New(cs.Params{N: 4, K: 2, Quorums: arcs(4), Initial: []cs.ID{2, 4}}, mutin.Options{Mx: raymond.New})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		want := cs.OutCS
		if i == 1 || i == 3 {
			want = cs.InCS
		}
		if m.State() != want {
			t.Errorf("P%d is %v, want %v", i+1, m.State(), want)
		}
	}
	net := cstest.New(ms, 0, 2, 7)
	if err := net.Run(200); err != nil {
		t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	bad := map[string]cs.Params{
		"k = 0":         {N: 3, K: 0, Quorums: arcs(3)},
		"k > n":         {N: 3, K: 4, Quorums: arcs(3)},
		"l > 0":         {N: 3, L: 1, K: 2, Quorums: arcs(3)},
		"too many InCS": {N: 3, K: 1, Quorums: arcs(3), Initial: []cs.ID{1, 2}},
		"no quorums":    {N: 3, K: 1},
	}
	for name, p := range bad {
		if _, err := kmutex.New(p, mutin.Options{Mx: raymond.New}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
