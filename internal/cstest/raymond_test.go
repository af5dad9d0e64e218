package cstest_test

import (
	"testing"

	"critsec/alg/raymond"
	"critsec/cs"
	"critsec/internal/cstest"
)

func TestRaymondRandomSchedules(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		for _, nk := range [][2]int{{2, 1}, {3, 1}, {4, 2}, {5, 3}} {
			ms, err := raymond.New(cs.Params{N: nk[0], K: nk[1]})
			if err != nil {
				t.Fatal(err)
			}
			net := cstest.New(ms, 0, nk[1], seed)
			if err := net.Run(200); err != nil {
				t.Fatalf("n=%d k=%d seed=%d: %v", nk[0], nk[1], seed, err)
			}
		}
	}
}

func TestCoSwapsStates(t *testing.T) {
	ms, err := raymond.New(cs.Params{N: 3, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ms {
		ms[i] = cs.Co(ms[i])
	}
	// Co(1-mutex on 3) is (2,3)-CS: at least 2 InCS. All start InCS in Co.
	net := cstest.New(ms, 2, 3, 1)
	if net.InCS() != 3 {
		t.Fatalf("Co: %d InCS initially, want 3", net.InCS())
	}
	if err := ms[0].Entry(net); err == nil {
		t.Fatal("Co: Entry while InCS accepted")
	}
	if err := net.Run(300); err != nil {
		t.Fatal(err)
	}
}
