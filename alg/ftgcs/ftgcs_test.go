package ftgcs_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/critsec/critsec/alg/ftgcs"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
)

// run is a network of ftgcs machines driven at random, with crashes and
// the outputs of a perfect or a trusting detector (every crash eventually
// reported to every live process), checking S1 after every step (the network's state bound)
// and S2 after every completed exit (CrashBounds.AfterExit).
type run struct {
	t      *testing.T
	net    *testnet.Network
	bounds *property.CrashBounds
	rng    *rand.Rand
	n      int
	// was[i] is P_{i+1}'s state after the last step; atCrash its state
	// when it crashed; reported[i] the crashes P_{i+1} was told of.
	was, atCrash []cs.State
	crashed      []bool
	reported     []cs.Set
	exits        int
	// trusting: the detector is T: every module starts suspecting every
	// other process and trusts it at some step (trusted[i]); a suspicion
	// after the trust is the report of a crash.
	trusting bool
	trusted  []cs.Set
}

func newRun(t *testing.T, n, l, k int, initial []cs.ID, design string, seed uint64, trusting bool) *run {
	t.Helper()
	ms, err := ftgcs.New(cs.Params{N: n, L: l, K: k, Initial: initial}, design)
	if err != nil {
		t.Fatal(err)
	}
	p, err := property.FaultTolerantGlobal(n, l, k)
	if err != nil {
		t.Fatal(err)
	}
	net, err := testnet.New(ms, p, testnet.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{t: t, net: net, bounds: p.ExitGuard(), rng: rand.New(rand.NewPCG(seed, 7)), n: n,
		was: make([]cs.State, n), atCrash: make([]cs.State, n), crashed: make([]bool, n), reported: make([]cs.Set, n),
		trusting: trusting, trusted: make([]cs.Set, n)}
	for i := range n {
		r.was[i], _, _ = net.State(cs.ID(i + 1))
		for j := range n {
			if trusting && i != j {
				if err := net.Suspect(cs.ID(i+1), cs.ID(j+1)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return r
}

// The view of CrashBounds.
func (r *run) InCS(id cs.ID) bool       { return !r.crashed[id-1] && r.was[id-1] == cs.InCS }
func (r *run) Crashed(id cs.ID) bool    { return r.crashed[id-1] }
func (r *run) Reported(i, j cs.ID) bool { return r.reported[i-1].Has(j) }
func (r *run) CrashedInCS(id cs.ID) bool {
	return r.crashed[id-1] && r.atCrash[id-1] == cs.InCS
}

// after checks S2 for every process that left the CS in the last step.
func (r *run) after() error {
	var left []cs.ID
	for i := range r.n {
		id := cs.ID(i + 1)
		s, _, _ := r.net.State(id)
		if r.was[i] == cs.InCS && s == cs.OutCS && !r.crashed[i] {
			left = append(left, id)
		}
		r.was[i] = s
	}
	for _, id := range left {
		r.exits++
		if f := r.bounds.AfterExit(id, r); f != nil {
			return f
		}
	}
	return nil
}

func (r *run) initialized() bool {
	for i := range r.n {
		if !r.crashed[i] && !r.net.Machine(cs.ID(i+1)).(cs.Initializing).Initialized() {
			return false
		}
	}
	return true
}

// step takes one random step: with probability 1/50 a crash (up to
// crashes, once every live process has initialized), 1/10 a pending
// report of a crash, 1/10 a trust under T, otherwise a delivery or a
// call.
func (r *run) step(crashes int) (bool, error) {
	live := 0
	for _, c := range r.crashed {
		if !c {
			live++
		}
	}
	switch x := r.rng.IntN(50); {
	case x == 0 && r.n-live < crashes && r.initialized():
		id := cs.ID(r.rng.IntN(r.n) + 1)
		if r.crashed[id-1] {
			return true, nil
		}
		r.atCrash[id-1], r.crashed[id-1] = r.was[id-1], true
		return true, r.net.Crash(id)
	case x < 6:
		for i := range r.n {
			for j := range r.n {
				if !r.crashed[i] && r.crashed[j] && !r.reported[i].Has(cs.ID(j+1)) && (!r.trusting || r.trusted[i].Has(cs.ID(j+1))) {
					r.reported[i].Add(cs.ID(j + 1))
					if err := r.net.Suspect(cs.ID(i+1), cs.ID(j+1)); err != nil {
						return false, err
					}
					return true, r.after()
				}
			}
		}
	case x < 11 && r.trusting:
		i, j := cs.ID(r.rng.IntN(r.n)+1), cs.ID(r.rng.IntN(r.n)+1)
		if i != j && !r.crashed[i-1] && !r.crashed[j-1] && !r.trusted[i-1].Has(j) {
			r.trusted[i-1].Add(j)
			if err := r.net.Trust(i, j); err != nil {
				return false, err
			}
			return true, r.after()
		}
	}
	ok, err := r.net.RandomStep(true)
	if err != nil {
		return ok, err
	}
	if !ok && r.trusting {
		// Nothing else enabled: the detector's next trust, if any.
		for i := range r.n {
			for j := range r.n {
				a, b := cs.ID(i+1), cs.ID(j+1)
				if a != b && !r.crashed[i] && !r.crashed[j] && !r.trusted[i].Has(b) {
					r.trusted[i].Add(b)
					return true, r.net.Trust(a, b)
				}
			}
		}
	}
	return ok, r.after()
}

// TestRandomRunsKeepBounds drives ftgcs at random through crashes, with a
// perfect and with a trusting detector: no state has more than k live processes InCS and no
// exit leaves fewer than l InCS, counting unreported crashes (S1, S2).
// Without a crash, every run goes on until its changes are made.
func TestRandomRunsKeepBounds(t *testing.T) {
	cases := []struct{ n, l, k, crashes int }{{3, 1, 2, 2}, {4, 2, 3, 2}, {5, 2, 3, 3}, {6, 3, 5, 4}, {5, 1, 4, 0}}
	for _, c := range cases {
		for seed := uint64(1); seed <= 60; seed++ {
			initial := make([]cs.ID, c.l)
			for i := range initial {
				initial[i] = cs.ID(i + 1)
			}
			r := newRun(t, c.n, c.l, c.k, initial, ftgcs.Locks, seed, seed%2 == 0)
			for s := 0; s < 4000; s++ {
				ok, err := r.step(c.crashes)
				if err != nil {
					t.Fatalf("n=%d l=%d k=%d crashes %d seed %d, step %d: %v", c.n, c.l, c.k, c.crashes, seed, s, err)
				}
				if !ok {
					if c.crashes == 0 {
						t.Fatalf("n=%d l=%d k=%d seed %d: nothing enabled after %d steps: %s", c.n, c.l, c.k, seed, s, r.net.Waits())
					}
					break
				}
			}
			if c.crashes == 0 && r.exits < 100 {
				t.Errorf("n=%d l=%d k=%d seed %d: %d exits in 4000 steps, want at least 100", c.n, c.l, c.k, seed, r.exits)
			}
		}
	}
}

// TestDroppedDesignsBreakS2 finds, by random runs, the exits that break
// S2 in the two designs ftgcs dropped: the complement of the
// fault-tolerant k-mutex, whose threshold decays with each crash, and the
// same with a fixed threshold, which a stale permission breaks
// (docs/ft-global-lk-cs.md, "Dropped designs").
func TestDroppedDesignsBreakS2(t *testing.T) {
	for _, c := range []struct {
		design           string
		n, l, k, crashes int
	}{{ftgcs.Complement, 3, 1, 2, 1}, {ftgcs.ComplementFixed, 4, 2, 4, 1}} {
		found := uint64(0)
		for seed := uint64(1); seed <= 2000 && found == 0; seed++ {
			initial := make([]cs.ID, c.k)
			for i := range initial {
				initial[i] = cs.ID(i + 1)
			}
			r := newRun(t, c.n, c.l, c.k, initial, c.design, seed, false)
			for s := 0; s < 2000; s++ {
				ok, err := r.step(c.crashes)
				if broke(err) {
					found = seed
					t.Logf("%s: seed %d: %v", c.design, seed, err)
					break
				}
				if err != nil {
					t.Fatalf("%s seed %d: %v", c.design, seed, err)
				}
				if !ok {
					break
				}
			}
		}
		if found == 0 {
			t.Errorf("%s n=%d l=%d k=%d: no S2 violation in 2000 random runs", c.design, c.n, c.l, c.k)
		}
	}
}

// broke reports whether err is a broken S2: found by the run's own check
// after an exit, or by the network, which evaluates the exit guard too.
func broke(err error) bool {
	var v *testnet.Violation
	_, own := err.(*property.CrashFailure)
	return own || errors.As(err, &v) && v.Kind == testnet.KindBounds
}
