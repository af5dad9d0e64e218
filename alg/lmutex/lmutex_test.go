package lmutex_test

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/lmutex"
	"github.com/critsec/critsec/alg/lmutin"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/topology"
)

// params are the parameters of k_i-LMUTEX on the topology spec with
// uniform k clamped to each neighborhood, from initial, and the property
// it guarantees.
func params(t *testing.T, spec string, k int, initial []cs.ID) (cs.Params, *property.Property) {
	t.Helper()
	g, err := topology.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := topology.Uniform(g, 0, k, true)
	if err != nil {
		t.Fatal(err)
	}
	prop, err := property.Local(g.Lists(), b.L, b.K)
	if err != nil {
		t.Fatal(err)
	}
	return cs.Params{N: g.N(), Neighbors: g.Lists(), Ki: b.K, Initial: initial}, prop
}

// TestValidate: New refuses k_i outside 1..|N_i|+1, a lower bound, an
// unknown initial id and an initial configuration over some k_i, each
// with one line.
func TestValidate(t *testing.T) {
	p, _ := params(t, "path:3", 1, nil)
	with := func(f func(*cs.Params)) cs.Params {
		q := p
		q.Ki = append([]int(nil), p.Ki...)
		f(&q)
		return q
	}
	bad := map[string]cs.Params{
		"k = 0":           with(func(q *cs.Params) { q.Ki[0] = 0 }),
		"k over |N_i|+1":  with(func(q *cs.Params) { q.Ki[0] = 3 }),
		"l > 0":           with(func(q *cs.Params) { q.Li = []int{1, 0, 0} }),
		"unknown id":      with(func(q *cs.Params) { q.Initial = []cs.ID{4} }),
		"neighbors InCS":  with(func(q *cs.Params) { q.Initial = []cs.ID{1, 2} }),
		"no neighborhood": with(func(q *cs.Params) { q.Neighbors = nil }),
	}
	for name, q := range bad {
		_, err := lmutex.New(q, lmutin.Fixed)
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error of more than one line: %v", name, err)
		}
	}
}

// TestInitialComplement: a process InCS initially is OutCS in the inner
// LMUTIN (Theorem 2) and reports InCS here; the others report OutCS.
func TestInitialComplement(t *testing.T) {
	p, prop := params(t, "path:4", 1, []cs.ID{1, 4})
	ms, err := lmutex.New(p, lmutin.Fixed)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		want := cs.OutCS
		if i == 0 || i == 3 {
			want = cs.InCS
		}
		if m.State() != want {
			t.Errorf("P%d is %v, want %v", i+1, m.State(), want)
		}
	}
	net := testnet.MustNew(t, ms, prop, testnet.Options{Seed: 3})
	if err := net.RunRandom(200); err != nil {
		t.Fatal(err)
	}
}

// TestRandomSchedules: random interleavings of calls and deliveries keep
// at most k_i of every neighborhood InCS, follow the invocation
// convention and complete every request, on graphs of several shapes.
func TestRandomSchedules(t *testing.T) {
	seeds := uint64(10)
	if testing.Short() {
		seeds = 3
	}
	for _, spec := range []string{"path:2", "ring:5", "star:5", "grid:3x3", "complete:4", "random:10:0.3:1"} {
		for _, k := range []int{1, 2, 3} {
			for seed := uint64(1); seed <= seeds; seed++ {
				p, prop := params(t, spec, k, nil)
				ms, err := lmutex.New(p, lmutin.Fixed)
				if err != nil {
					t.Fatal(err)
				}
				net := testnet.MustNew(t, ms, prop, testnet.Options{Seed: seed})
				if err := net.RunRandom(20 * p.N); err != nil {
					t.Errorf("%s k=%d seed=%d: %v", spec, k, seed, err)
				}
			}
		}
	}
}
