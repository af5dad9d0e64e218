package experiment

import (
	"fmt"
	"sync"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/internal/causal"
	"github.com/critsec/critsec/sim"
)

// Run is one simulation of a study: an algorithm on a problem instance under
// a workload, by default in the timing model of section 3.3 of the global
// (l,k)-CS paper (transit Tt = 1, no local cost: Ts = Tr = 0), with
// constant or exponential transit times (Common.TransitDist); Ts, Tr and
// Tt give the token K-mutex paper's costs instead.
type Run struct {
	// Label names the line the run belongs to in tables and plots; Load,
	// when set, names its workload (the local study's loads).
	Label, Load string
	// Alg is a registered algorithm (alg.Lookup); Coterie is majority or
	// grid for the quorum-based ones and ignored by the others.
	Alg, Coterie string
	// N, L, K are the problem's size and bounds. L is ignored by algorithms
	// without a lower bound, K by those with a fixed one (alg.Algorithm).
	N, L, K int
	// Lambda and E are the workload: time OutCS ~ Exp(mean 1/Lambda),
	// time InCS ~ Exp(mean E).
	Lambda, E float64
	// Topology is the communication graph of a local algorithm (a
	// topology spec or edge-list file); N must be its size and Links its
	// number of links (for EstimateBytes). With it the uniform L and K are
	// clamped to each neighborhood (alg.Spec.Clamp) and the run counts
	// messages per process (Outcome.Counts). Empty: complete:N.
	Topology string
	Links    int
	// KeepViolations makes a violation (a deadlock, a broken bound, an
	// undefined step) a measured outcome, in Outcome.Result.Violation,
	// instead of an error: for studies that run published algorithms
	// known to break (lkcs-paper).
	KeepViolations bool
	// Options are the algorithm's own options by name, as text
	// (alg.Spec.Options); nil gives their defaults.
	Options map[string]string
	// Ts and Tr are the processor times per message copy sent and per
	// message received, Tt the transit time (the token K-mutex paper's
	// section 4, sim.Config); Tt = 0 means 1, the unit every other study
	// uses.
	Ts, Tr, Tt float64
	Common
}

// Common are the settings every run of a study shares.
type Common struct {
	// Entries is the number of CS entries after which the run drains.
	Entries int64
	// Seed fixes the run.
	Seed uint64
	// TransitDist is the distribution of the transit time (of the run's mean Tt);
	// zero is sim.Const, the paper's model.
	TransitDist sim.Dist
	// StarveAfter is the starvation bound (sim.Config.StarveAfter); zero
	// derives it from the run's own waiting times.
	StarveAfter float64
}

// Outcome is what a study keeps of a run.
type Outcome struct {
	Run    Run
	Result *sim.Result
	// Lo and Hi are the bounds the algorithm guaranteed in the run (its L
	// and K after alg.Algorithm.UsesL and FixedK).
	Lo, Hi int
	// MeanQ is the mean quorum size |Q_i| over the processes, 0 for an
	// algorithm without quorums.
	MeanQ float64
	// Counts attributes every message of a run with a Topology to the
	// process whose Entry or Exit caused it (internal/causal, the local
	// paper's section 2.3); nil for other runs. Sizes[i] is |N_i|+1 of
	// process i+1.
	Counts *causal.Counts
	Sizes  []int
}

// Simulate builds the machines of r (the algorithm's default initial
// configuration) and runs them to the end of the drain. A run that violates
// the algorithm's bounds or deadlocks is an error, unless r.KeepViolations:
// a study never reports numbers from a broken run as if it were whole.
func (r Run) Simulate() (Outcome, error) {
	pr, err := r.resolve()
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", r.describe(), err)
	}
	ms, err := pr.Machines()
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", r.describe(), err)
	}
	out := Outcome{Run: r}
	out.Lo, out.Hi = pr.Property.GlobalBounds()
	for _, q := range pr.Params.Quorums {
		out.MeanQ += float64(len(q))
	}
	out.MeanQ /= float64(r.N)
	if r.Topology != "" {
		ms, out.Counts = causal.Wrap(ms)
		for _, ns := range pr.Params.Neighbors {
			out.Sizes = append(out.Sizes, len(ns)+1)
		}
	}
	tt := r.Tt
	if tt == 0 {
		tt = 1
	}
	res, err := sim.Run(sim.Config{
		Machines: ms, Property: pr.Property,
		Lambda: r.Lambda, E: r.E, Ts: r.Ts, Tr: r.Tr, Tt: tt, TransitDist: r.TransitDist,
		Entries: r.Entries, Drain: true, Seed: r.Seed, StarveAfter: r.StarveAfter,
	})
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", r.describe(), err)
	}
	if v := res.Violation; v != nil && !r.KeepViolations {
		return Outcome{}, fmt.Errorf("%s: %s at t=%g: %s", r.describe(), v.Kind, v.Time, v.Detail)
	}
	out.Result = res
	return out, nil
}

// resolve states r as a problem (alg.Spec): L only for algorithms with a
// lower bound, K only for those without a fixed one, the coterie only for
// quorum-based ones.
func (r Run) resolve() (*alg.Problem, error) {
	a, err := alg.Lookup(r.Alg)
	if err != nil {
		return nil, err
	}
	spec := a.SpecFor(r.N, r.L, r.K)
	if r.Topology != "" {
		spec.Topology, spec.N, spec.Clamp = r.Topology, r.N, true
	}
	if a.Quorums {
		spec.Coterie = r.Coterie
	}
	spec.Options = r.Options
	return alg.Resolve(spec)
}

func (r Run) describe() string {
	where := "coterie " + r.Coterie
	if r.Topology != "" {
		where = "topology " + r.Topology
	}
	return fmt.Sprintf("%s (alg %s, %s, n=%d l=%d k=%d, lambda=%g E=%g, seed %d)",
		r.Label, r.Alg, where, r.N, r.L, r.K, r.Lambda, r.E, r.Seed)
}

// SimulateAll runs every run on up to workers goroutines (at least one) and
// returns the outcomes in the order of runs, so the result does not depend on
// workers or on scheduling. progress, when not nil, is called after each run
// completes, from one goroutine at a time.
func SimulateAll(runs []Run, workers int, progress func(done, total int)) ([]Outcome, error) {
	workers = max(1, min(workers, len(runs)))
	outs := make([]Outcome, len(runs))
	errs := make([]error, len(runs))
	next := make(chan int)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outs[i], errs[i] = runs[i].Simulate()
				if progress != nil {
					mu.Lock()
					done++
					progress(done, len(runs))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range runs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return outs, nil
}
