package kmutex_test

import (
	"testing"

	"github.com/critsec/critsec/alg/kmutex"
	"github.com/critsec/critsec/alg/mutin"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
)

func TestRandomSchedules(t *testing.T) {
	seeds := uint64(30)
	if testing.Short() {
		seeds = 8
	}
	for n := 3; n <= 9; n++ {
		for _, k := range []int{1, 2, n / 2, n - 1, n} {
			for seed := uint64(1); seed <= seeds; seed++ {
				ms, err := kmutex.New(cs.Params{N: n, K: k, Quorums: testnet.Arcs(n)}, mutin.Options{Mx: raymond.New, Variant: mutin.Fixed})
				if err != nil {
					t.Fatal(err)
				}
				net := testnet.MustGlobal(t, ms, 0, k, testnet.Options{Seed: seed})
				if err := net.RunRandom(30 * n); err != nil {
					t.Errorf("n=%d k=%d seed=%d: %v", n, k, seed, err)
				}
			}
		}
	}
}

// TestInitialComplement: P_i InCS initially in k-mutex is OutCS in the inner
// MUTIN(n-k), and the k-mutex reports it InCS.
func TestInitialComplement(t *testing.T) {
	ms, err := kmutex.New(cs.Params{N: 4, K: 2, Quorums: testnet.Arcs(4), Initial: []cs.ID{2, 4}}, mutin.Options{Mx: raymond.New})
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
	net := testnet.MustGlobal(t, ms, 0, 2, testnet.Options{Seed: 7})
	if err := net.RunRandom(200); err != nil {
		t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	bad := map[string]cs.Params{
		"k = 0":         {N: 3, K: 0, Quorums: testnet.Arcs(3)},
		"k > n":         {N: 3, K: 4, Quorums: testnet.Arcs(3)},
		"l > 0":         {N: 3, L: 1, K: 2, Quorums: testnet.Arcs(3)},
		"too many InCS": {N: 3, K: 1, Quorums: testnet.Arcs(3), Initial: []cs.ID{1, 2}},
		"no quorums":    {N: 3, K: 1},
	}
	for name, p := range bad {
		if _, err := kmutex.New(p, mutin.Options{Mx: raymond.New}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
