package experiment

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/alg/gcs"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// The study of ftgcs, the fault-tolerant global (l,k)-CS algorithm
// (docs/ft-global-lk-cs.md, "Study"): #InCS over time through crashes,
// against the bounds l and k; messages per Entry+Exit pair against gcs
// (crash-free) and ftraymond (the k side alone); and the recovery time
// after a crash of a process InCS (R: the time until the live processes
// InCS are min(l, live) again).

// FTGCSName is the registry name of the algorithm studied.
const FTGCSName = "ftgcs"

// FTGCS is the study's setting.
type FTGCS struct {
	// N processes and the bounds L < K of the timeline and recovery runs.
	N, L, K int
	// Crashes is the crash schedule of the timeline and recovery runs;
	// when nil, each run draws Random crashes at times uniform in
	// From..To from its own seed (sim.RandomCrashes).
	Crashes  []sim.Crash
	Random   int
	From, To float64
	// Lambda and E are the workload (time OutCS ~ Exp(1/Lambda), InCS
	// ~ Exp(E)); transit Tt = 1, Ts = Tr = 0.
	Lambda, E float64
	// Detector and DetectDelay are every process's failure detector.
	Detector    detector.Class
	DetectDelay float64
	// After is how long the runs with crashes go on after the last one;
	// Bin is the width of the timeline's time steps.
	After, Bin float64
	// Seed is the first seed; Seeds the number of runs of each setting
	// (seeds Seed, Seed+1, ...; 0 means 1).
	Seed  uint64
	Seeds int
	// Ns are the sizes of the message sweep, with bounds SweepL < SweepK
	// (SweepK <= every n), SweepCrashes random crashes in From..To in its
	// runs with crashes, and Entries entries per run.
	Ns             []int
	SweepL, SweepK int
	SweepCrashes   int
	Entries        int64
}

// DefaultFTGCS is the study as critsec runs it: n = 20, l = 5, k = 10,
// 10 random crashes in 100..1000 (half the processes: l + 1 <= live, so
// exits stay possible), a light load (lambda = 0.02, E = 1: #InCS stays
// near l, so a crash InCS often leaves a deficit), Tt = 1, detector T with
// delay 5, 20 seeds; the message sweep over n = 5, 10, ..., 30 with
// l = 2, k = 3 and 2 random crashes, 1000 entries per run.
func DefaultFTGCS() FTGCS {
	return FTGCS{N: 20, L: 5, K: 10, Random: 10, From: 100, To: 1000, Lambda: 0.02, E: 1,
		Detector: detector.T, DetectDelay: 5, After: 500, Bin: 10, Seed: 1, Seeds: 20,
		Ns: []int{5, 10, 15, 20, 25, 30}, SweepL: 2, SweepK: 3, SweepCrashes: 2, Entries: 1000}
}

// schedule is the crash schedule of a run with seed over n processes,
// count random crashes when c.Crashes is nil.
func (c FTGCS) schedule(n, count int, seed uint64) []sim.Crash {
	if c.Crashes != nil {
		return c.Crashes
	}
	return sim.RandomCrashes(n, count, c.From, c.To, seed)
}

// end is when the runs with crashes stop: After past the last crash.
func (c FTGCS) end(crashes []sim.Crash) float64 {
	last := c.To
	if len(crashes) > 0 {
		last = crashes[len(crashes)-1].At
	}
	return last + c.After
}

// run runs algorithm name on n processes with bounds l, k and a trace kept
// in memory when traceIt, and returns the processes InCS at the start too;
// a broken bound (S1 or S2) or a machine's error is an error of the study,
// a liveness verdict a result.
func (c FTGCS) run(name string, n, l, k int, cfg sim.Config, traceIt bool) (*sim.Result, []trace.Event, []cs.ID, error) {
	a, err := alg.Lookup(name)
	if err != nil {
		return nil, nil, nil, err
	}
	pr, ms, err := alg.Build(a.SpecFor(n, l, k))
	if err != nil {
		return nil, nil, nil, err
	}
	cfg.Machines, cfg.Property = ms, pr.Property
	cfg.Lambda, cfg.E, cfg.Tt = c.Lambda, c.E, 1
	cfg.Detector, cfg.DetectDelay = c.Detector, c.DetectDelay
	var res *sim.Result
	var evs []trace.Event
	if traceIt {
		res, evs, err = traced(cfg, trace.Header{Alg: name, N: n, L: pr.Params.L, K: pr.Params.K, Initial: pr.Params.Initial})
	} else {
		res, err = sim.Run(cfg)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if v := res.Violation; v != nil && !liveness(v.Kind) {
		return nil, nil, nil, fmt.Errorf("ftgcs study: %s n=%d l=%d k=%d seed %d: %v", name, n, l, k, cfg.Seed, v)
	}
	return res, evs, pr.Params.Initial, nil
}

// Timeline runs ftgcs through c's crashes c.Seeds times (seeds c.Seed,
// c.Seed+1, ...; with random crashes each run draws its own), every run
// until After past To, and returns #InCS over time: per time step of width
// Bin, the mean over the runs of each run's time-weighted mean, the
// minimum and the maximum over the runs of the live processes InCS, the
// mean of the live processes at the step's end, and l and k.
func (c FTGCS) Timeline() (*Table, error) {
	end := c.end(c.Crashes)
	type step struct {
		mean, live float64
		lo, hi     int
	}
	var agg []step
	runs := max(c.Seeds, 1)
	for i := range runs {
		seed := c.Seed + uint64(i)
		_, evs, initial, err := c.run(FTGCSName, c.N, c.L, c.K, sim.Config{MaxTime: end, Seed: seed, Crashes: c.schedule(c.N, c.Random, seed)}, true)
		if err != nil {
			return nil, err
		}
		j := 0
		steps(evs, c.N, initial, c.Bin, end, func(_, mean float64, lo, hi, live int) {
			if j == len(agg) {
				agg = append(agg, step{lo: lo, hi: hi})
			}
			s := &agg[j]
			s.mean += mean / float64(runs)
			s.live += float64(live) / float64(runs)
			s.lo, s.hi = min(s.lo, lo), max(s.hi, hi)
			j++
		})
	}
	t := &Table{LabelName: "alg", Header: []string{"t_time_units", "incs_mean", "incs_min", "incs_max", "live", "l", "k"}}
	for j, s := range agg {
		t.Add(FTGCSName, float64(j)*c.Bin, s.mean, float64(s.lo), float64(s.hi), s.live, float64(c.L), float64(c.K))
	}
	return t, nil
}

// Messages returns messages per Entry+Exit pair (Messages / Entries of a
// drained run of c.Entries entries) of ftgcs, gcs and ftraymond (bound
// SweepK alone) for every n of c.Ns, without crashes and with
// SweepCrashes random crashes (gcs, which is not fault-tolerant, without
// only): the mean and its 95 % confidence interval over c.Seeds seeds, and
// how many runs ended in a liveness verdict (excluded from the mean). The
// label is the algorithm's name, followed by " with crashes" for the runs
// with crashes.
func (c FTGCS) Messages() (*Table, error) {
	t := &Table{LabelName: "alg", Header: []string{"n", "l", "k", "crashes", "runs", "messages_per_pair_mean", "messages_per_pair_ci95", "stalled_runs"}}
	counts := []int{0}
	if c.SweepCrashes > 0 {
		counts = append(counts, c.SweepCrashes)
	}
	for _, n := range c.Ns {
		for _, name := range []string{FTGCSName, gcs.Name, ftraymond.Name} {
			l := c.SweepL
			if name == ftraymond.Name {
				l = 0
			}
			for _, crashes := range counts {
				if crashes > 0 && name == gcs.Name {
					continue
				}
				var per []float64
				stalled := 0
				for i := range max(c.Seeds, 1) {
					seed := c.Seed + uint64(i)
					cfg := sim.Config{Entries: c.Entries, Drain: true, Seed: seed}
					if crashes > 0 {
						cfg.Crashes = sim.RandomCrashes(n, crashes, c.From, c.To, seed)
					}
					res, _, _, err := c.run(name, n, l, c.SweepK, cfg, false)
					if err != nil {
						return nil, err
					}
					if res.Violation != nil || res.Entries == 0 {
						stalled++
						continue
					}
					per = append(per, res.MessagesPerEntry())
				}
				mean, ci := MeanCI(per)
				label := name
				if crashes > 0 {
					label += " with crashes"
				}
				t.Add(label, float64(n), float64(l), float64(c.SweepK), float64(crashes), float64(len(per)+stalled), mean, ci, float64(stalled))
			}
		}
	}
	return t, nil
}

// Recovery runs ftgcs c.Seeds times (seeds c.Seed, c.Seed+1, ...) through
// c's crashes and returns two tables: every crash of a process InCS (seed,
// process, time, the deficit it left, its recovery time in time units,
// +Inf when the deficit had not closed when the run ended), and the
// distribution of the recovery times: how many crashes InCS, how many
// recovered, how many exits left a deficit (sim.Result.DeficitExits), the
// mean with its 95 % confidence interval, and the 0.5,
// 0.9, 0.95 quantiles and the maximum of those that recovered.
func (c FTGCS) Recovery() (crashes, summary *Table, err error) {
	crashes = &Table{LabelName: "alg", Header: []string{"seed", "node", "t_time_units", "deficit", "recovery_time_units"}}
	var rec []float64
	never, deficitExits := 0, int64(0)
	for i := range max(c.Seeds, 1) {
		seed := c.Seed + uint64(i)
		sched := c.schedule(c.N, c.Random, seed)
		res, _, _, err := c.run(FTGCSName, c.N, c.L, c.K, sim.Config{MaxTime: c.end(sched), Seed: seed, Crashes: sched}, false)
		if err != nil {
			return nil, nil, err
		}
		deficitExits += res.DeficitExits
		for _, st := range res.CrashStats {
			if !st.InCS {
				continue
			}
			r := math.Inf(1)
			if st.Recovered {
				r = st.Recovery
				rec = append(rec, r)
			} else {
				never++
			}
			crashes.Add(FTGCSName, float64(seed), float64(st.Node), st.At, float64(st.Deficit), r)
		}
	}
	summary = &Table{LabelName: "alg", Header: []string{"n", "l", "k", "runs", "crashes_incs", "recovered", "exits_leaving_deficit", "recovery_mean_time_units", "recovery_ci95_time_units",
		"recovery_p50_time_units", "recovery_p90_time_units", "recovery_p95_time_units", "recovery_max_time_units"}}
	mean, ci := MeanCI(rec)
	slices.Sort(rec)
	summary.Add(FTGCSName, float64(c.N), float64(c.L), float64(c.K), float64(max(c.Seeds, 1)), float64(len(rec)+never), float64(len(rec)),
		float64(deficitExits), mean, ci, Quantile(rec, 0.5), Quantile(rec, 0.9), Quantile(rec, 0.95), Quantile(rec, 1))
	return crashes, summary, nil
}

// Quantile returns the q-quantile (0 < q <= 1) of sorted by the nearest
// rank: the smallest value with at least a fraction q of the values at or
// below it; NaN when sorted is empty.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// RecoveryCDF returns the empirical distribution of the finite recovery
// times of Recovery's crash table: one row per crash that recovered, in
// increasing time, with the fraction of the crashes InCS recovered by
// then and the half-width of its 95 % confidence band: the
// Dvoretzky-Kiefer-Wolfowitz bound sqrt(ln(2/0.05) / 2m) over the m
// crashes, which holds for the whole curve at once.
func RecoveryCDF(crashes *Table) (*Table, error) {
	ri, err := crashes.Column("recovery_time_units")
	if err != nil {
		return nil, err
	}
	var rec []float64
	for _, r := range crashes.Rows {
		if !math.IsInf(r[ri], 1) {
			rec = append(rec, r[ri])
		}
	}
	slices.Sort(rec)
	m := float64(len(crashes.Rows))
	band := math.Sqrt(math.Log(2/0.05) / (2 * m))
	t := &Table{LabelName: "alg", Header: []string{"recovery_time_units", "fraction_recovered", "fraction_recovered_band95"}}
	for i, r := range rec {
		t.Add(FTGCSName, r, float64(i+1)/m, band)
	}
	return t, nil
}

// PlotTimeline draws Timeline's table into path: the mean of #InCS per
// time step, the band from the minimum to the maximum over the runs and
// the step, l and k as lines, and a triangle on the time axis at each
// crash when every run has the same; the title says what the band is and,
// with random crashes, where they fall.
func (c FTGCS) PlotTimeline(t *Table, path string) error {
	crashes := fmt.Sprintf("%d random crashes per run in %g..%g", c.Random, c.From, c.To)
	if c.Crashes != nil {
		crashes = fmt.Sprintf("%d crashes", len(c.Crashes))
	}
	p, err := t.chart(Chart{Title: fmt.Sprintf("ftgcs: live processes InCS, n = %d, l = %d, k = %d, %s\nmean over %d runs; band: minimum to maximum over the runs in each step of %g",
		c.N, c.L, c.K, crashes, max(c.Seeds, 1), c.Bin),
		X: "t_time_units", Y: "incs_mean", XLabel: "time", YLabel: "live processes InCS", Dense: true})
	if err != nil {
		return err
	}
	ti, _ := t.Column("t_time_units")
	lo, _ := t.Column("incs_min")
	hi, _ := t.Column("incs_max")
	band := make(plotter.XYs, 0, 2*len(t.Rows))
	for _, r := range t.Rows {
		band = append(band, plotter.XY{X: r[ti], Y: r[lo]})
	}
	for i := len(t.Rows) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: t.Rows[i][ti], Y: t.Rows[i][hi]})
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return err
	}
	r, g, b, _ := palette[0].RGBA()
	poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x40}
	poly.LineStyle.Width = 0
	p.Add(poly)
	p.Legend.Add("minimum to maximum", poly)
	end := 0.0
	if len(t.Rows) > 0 {
		end = t.Rows[len(t.Rows)-1][ti]
	}
	for i, s := range []struct {
		name string
		y    float64
	}{{fmt.Sprintf("l = %d", c.L), float64(c.L)}, {fmt.Sprintf("k = %d", c.K), float64(c.K)}} {
		line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: s.y}, {X: end, Y: s.y}})
		if err != nil {
			return err
		}
		line.LineStyle, _ = lineStyle(i + 1)
		p.Add(line)
		p.Legend.Add(s.name, line)
	}
	if c.Crashes != nil {
		if err := markCrashes(p, c.Crashes); err != nil {
			return err
		}
	}
	return savePlot(p, path)
}
