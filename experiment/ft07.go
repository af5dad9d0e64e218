package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// The fault-tolerance study of Bouillaguet, Arantes and Sens, "Fault
// tolerant k-mutual exclusion algorithm using failure detector" (2007),
// section 6: 15 nodes, 5 resources, crashes injected one after another,
// Raymond's algorithm against its extension (Figure 2: the number of
// resources in use over time), and the message counts the section states.
// docs/fault-tolerance.md puts the measurements beside the paper's claims.

// FT07 is the study's setting.
type FT07 struct {
	// N processes, K resources (the paper: 15 and 5).
	N, K int
	// Crashes are injected one after another (Figure 2's triangles).
	Crashes []sim.Crash
	// Lambda and E are the workload (time OutCS ~ Exp(1/Lambda), InCS
	// ~ Exp(E)); transit Tt = 1, Ts = Tr = 0.
	Lambda, E float64
	// Detector and DetectDelay are ftraymond's failure detector.
	Detector    detector.Class
	DetectDelay float64
	// MaxTime ends the runs; Bin is the width of Figure 2's time steps.
	MaxTime, Bin float64
	// Entries is the length of the runs that count messages per CS.
	Entries int64
	Seed    uint64
	// After is how long the survival runs go on after their last crash,
	// and StarveAfter their starvation bound (sim.Config.StarveAfter): a
	// request pending that long while others enter is starved, and
	// requests pending while messages circulate with no state change for
	// that long are a livelock.
	After, StarveAfter float64
	// Algs are the algorithms Survival runs; nil means every registered
	// one. Seeds is the number of survival runs of each, with seeds Seed,
	// Seed+1, ... (0 means 1).
	Algs  []string
	Seeds int
}

// DefaultFT07 is the study as critsec runs it: n = 15, k = 5, a heavy load
// (every process InCS about half of the time, so the k resources are in
// demand), and n-1 = 14 crashes, of P2..P15, one every 100 time units from
// t = 100.
func DefaultFT07() FT07 {
	c := FT07{N: 15, K: 5, Lambda: 1, E: 1, Detector: detector.T, DetectDelay: 5, MaxTime: 1600, Bin: 10, Entries: 3000, Seed: 1, After: 500, StarveAfter: 250}
	for i := range c.N - 1 {
		c.Crashes = append(c.Crashes, sim.Crash{At: float64(100 * (i + 1)), Node: cs.ID(i + 2)})
	}
	return c
}

// traced runs cfg with a trace kept in memory and returns the result and
// the trace's events.
func traced(cfg sim.Config, h trace.Header) (*sim.Result, []trace.Event, error) {
	var buf bytes.Buffer
	cfg.Trace = trace.NewWriter(&buf, sim.TraceHeader(cfg, h))
	res, err := sim.Run(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := cfg.Trace.Flush(); err != nil {
		return nil, nil, err
	}
	r, err := trace.NewReader(&buf)
	if err != nil {
		return nil, nil, err
	}
	var evs []trace.Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		evs = append(evs, ev)
	}
	return res, evs, nil
}

// build returns the machines and property of algorithm name on c's
// problem (k-mutual exclusion, no process InCS).
func (c FT07) build(name string) (*alg.Problem, []cs.Machine, error) {
	a, err := alg.Lookup(name)
	if err != nil {
		return nil, nil, err
	}
	return alg.Build(a.SpecFor(c.N, 0, c.K))
}

// Figure2 runs Raymond and ftraymond through the same crash scenario, once
// per seed (c.Seeds seeds from c.Seed; 0 means 1), and returns the
// resources in use over time: one row per algorithm and time step, with
// the time-weighted mean and the maximum of #InCS (live processes) over
// the step, each the mean over the seeds with the half-width of its 95 %
// confidence interval (NaN with one seed), the live processes at the
// step's end (the crash schedule's, the same in every run), and the
// largest of the runs' maxima (in_use_max_over_seeds: the most any run
// had in use at once in the step). Raymond's run
// ends in a deadlock (every live process waits): that is the result, not
// an error, as a starvation or a livelock would be; a broken bound or a
// machine's error is one.
func (c FT07) Figure2() (*Table, error) {
	t := &Table{LabelName: "alg", Header: []string{"t_time_units", "in_use_mean", "in_use_max", "live", "in_use_mean_ci95", "in_use_max_ci95", "in_use_max_over_seeds"}}
	for _, name := range []string{raymond.Name, ftraymond.Name} {
		var runs []*Table
		for i := range max(c.Seeds, 1) {
			pr, ms, err := c.build(name)
			if err != nil {
				return nil, err
			}
			cfg := sim.Config{Machines: ms, Property: pr.Property, Lambda: c.Lambda, E: c.E, Tt: 1,
				MaxTime: c.MaxTime, Seed: c.Seed + uint64(i), Crashes: c.Crashes, Detector: c.Detector, DetectDelay: c.DetectDelay}
			res, evs, err := traced(cfg, trace.Header{Alg: name, N: c.N, K: c.K})
			if err != nil {
				return nil, err
			}
			if v := res.Violation; v != nil && !liveness(v.Kind) {
				return nil, fmt.Errorf("ft07: %s, seed %d: %v", name, cfg.Seed, v)
			}
			run := &Table{}
			inUse(run, name, evs, c.N, c.Bin, c.MaxTime)
			runs = append(runs, run)
		}
		for j, r := range runs[0].Rows {
			mean, meanCI := MeanCI(column(runs, j, 1))
			hi, hiCI := MeanCI(column(runs, j, 2))
			t.Add(name, r[0], mean, hi, r[3], meanCI, hiCI, slices.Max(column(runs, j, 2)))
		}
	}
	return t, nil
}

// column returns value v of row j of every run: one per seed.
func column(runs []*Table, j, v int) []float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = r.Rows[j][v]
	}
	return xs
}

// liveness reports whether a violation of this kind is a liveness
// failure (a deadlock, a starvation or a livelock): a result of a crash
// study, not an error.
func liveness(kind string) bool {
	return kind == sim.KindDeadlock || kind == sim.KindStarvation || kind == sim.KindLivelock
}

// inUse adds to t the rows of one algorithm: per time step of width bin
// up to end, the time-weighted mean and the maximum of the live processes
// InCS, and the live processes at the step's end.
func inUse(t *Table, label string, evs []trace.Event, n int, bin, end float64) {
	steps(evs, n, nil, bin, end, func(at, mean float64, _, hi, live int) {
		t.Add(label, at, mean, float64(hi), float64(live))
	})
}

// steps replays the state and crash events evs of n processes, initial
// InCS at the start, and calls emit for every time step of width bin up to
// end with the step's start, the time-weighted mean, the minimum and the
// maximum of the live processes InCS over it, and the live processes at
// its end. The state at a step's start is the one after the events at
// that instant: a process that crashes InCS at a step's start does not
// count in the step's maximum.
func steps(evs []trace.Event, n int, initial []cs.ID, bin, end float64, emit func(at, mean float64, lo, hi, live int)) {
	in := make([]bool, n+1)
	for _, id := range initial {
		in[id] = true
	}
	count, live := len(initial), n
	step, last := 0, 0.0
	mean, lo, hi := 0.0, count, count
	flush := func(upTo float64) {
		for float64(step+1)*bin <= upTo {
			stepEnd := float64(step+1) * bin
			mean += float64(count) * (stepEnd - last)
			last = stepEnd
			emit(float64(step)*bin, mean/bin, lo, hi, live)
			step++
			mean, lo, hi = 0, count, count
		}
	}
	for _, ev := range evs {
		if ev.T > end {
			break
		}
		flush(ev.T)
		mean += float64(count) * (ev.T - last)
		last = ev.T
		switch ev.Ev {
		case trace.EvState:
			now := ev.State == cs.InCS.String()
			if now != in[ev.Node] {
				in[ev.Node] = now
				if now {
					count++
				} else {
					count--
				}
			}
		case trace.EvCrash:
			live--
			if in[ev.Node] {
				in[ev.Node] = false
				count--
			}
		}
		if ev.T == float64(step)*bin {
			// No time has passed in this step: its state starts after
			// the events at its start (a process crashing InCS at a
			// step's start is not InCS in it).
			lo, hi = count, count
		}
		lo, hi = min(lo, count), max(hi, count)
	}
	flush(end)
}

// Messages is the message study of section 6: for Raymond and ftraymond
// without crashes, at a light load (uncontended) and at c's load, the
// messages per CS entry without the initialization (the paper: between
// 2n-k-1 and 2n-1), and ftraymond's initialization messages per process
// (INIT and ACK; the paper: between n-1 and 2(n-1)); then ftraymond in c's
// crash scenario: CRASH messages per crash and per process that detected
// it (the paper: n), and the entries per crash. Each value is the mean over
// c.Seeds runs (seeds c.Seed, c.Seed+1, ...; 0 means 1) with the
// half-width of its 95 % confidence interval (value_ci95; NaN with one
// seed).
func (c FT07) Messages() (*Table, error) {
	var runs []*Table
	for i := range max(c.Seeds, 1) {
		run, err := c.messages(c.Seed + uint64(i))
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	t := &Table{LabelName: "measure", Header: []string{"n", "k", "value", "paper_lo", "paper_hi", "value_ci95"}}
	for j, r := range runs[0].Rows {
		mean, ci := MeanCI(column(runs, j, 2))
		t.Add(runs[0].Labels[j], r[0], r[1], mean, r[3], r[4], ci)
	}
	return t, nil
}

// messages is one run of Messages's measures with seed.
func (c FT07) messages(seed uint64) (*Table, error) {
	t := &Table{LabelName: "measure", Header: []string{"n", "k", "value", "paper_lo", "paper_hi"}}
	n, k := float64(c.N), float64(c.K)
	for _, load := range []struct {
		name      string
		lambda, e float64
	}{{"light", 0.001, 1}, {"heavy", c.Lambda, c.E}} {
		for _, name := range []string{raymond.Name, ftraymond.Name} {
			pr, ms, err := c.build(name)
			if err != nil {
				return nil, err
			}
			cfg := sim.Config{Machines: ms, Property: pr.Property, Lambda: load.lambda, E: load.e, Tt: 1,
				Entries: c.Entries, Drain: true, Seed: seed}
			res, evs, err := traced(cfg, trace.Header{Alg: name, N: c.N, K: c.K})
			if err != nil {
				return nil, err
			}
			if res.Violation != nil {
				return nil, fmt.Errorf("ft07: %s: %v", name, res.Violation)
			}
			sent := kinds(evs)
			perCS := float64(sent["REQUEST"]+sent["REPLY"]) / float64(res.Entries)
			t.Add(name+" messages per CS, "+load.name+" load", n, k, perCS, 2*n-k-1, 2*n-1)
			if name == ftraymond.Name && load.name == "light" {
				t.Add("ftraymond INIT+ACK per process", n, k, float64(sent["INIT"]+sent["ACK"])/n, n-1, 2*(n-1))
			}
		}
	}
	pr, ms, err := c.build(ftraymond.Name)
	if err != nil {
		return nil, err
	}
	cfg := sim.Config{Machines: ms, Property: pr.Property, Lambda: c.Lambda, E: c.E, Tt: 1,
		MaxTime: c.MaxTime, Seed: seed, Crashes: c.Crashes, Detector: c.Detector, DetectDelay: c.DetectDelay}
	res, evs, err := traced(cfg, trace.Header{Alg: ftraymond.Name, N: c.N, K: c.K})
	if err != nil {
		return nil, err
	}
	if res.Violation != nil {
		return nil, fmt.Errorf("ft07: ftraymond with crashes: %v", res.Violation)
	}
	crashes := float64(len(res.EntriesAtCrash))
	// A detection is a live process's suspicion of a crashed one (line 43:
	// after the initialization every process trusts every other); it sends
	// CRASH to the n-1 others and applies it locally, the n-th copy.
	crashed := map[cs.ID]bool{}
	detections, crashSends := 0, 0
	for _, ev := range evs {
		switch {
		case ev.Ev == trace.EvCrash:
			crashed[ev.Node] = true
		case ev.Ev == trace.EvSuspect && crashed[ev.Who]:
			detections++
		case ev.Ev == trace.EvSend && ev.Msg == "CRASH":
			crashSends++
		}
	}
	// The paper's n counts the detector's own copy, which critsec applies
	// without a message: n-1 sends.
	t.Add("ftraymond CRASH sends per detection", n, k, float64(crashSends)/float64(detections), n-1, n)
	t.Add("ftraymond detections per crash", n, k, float64(detections)/crashes, 1, n-1)
	t.Add("ftraymond CRASH sends per crash", n, k, float64(crashSends)/crashes, n, n*(n-1))
	return t, nil
}

// recovery returns, for a crash at time at, the time from the crash to the
// next CS entry, and the time until every live process whose request
// (entry or exit) was pending at the crash has completed it (the crash can
// hold any of them up: its permission may be missing); math.Inf when that
// does not happen in evs.
func recovery(evs []trace.Event, n int, at float64) (first, all float64) {
	first, all = math.Inf(1), 0
	pending := make([]bool, n+1)
	var held []bool // the requests pending at the crash, once it happened
	left := 0
	for _, ev := range evs {
		if held == nil && ev.T > at {
			held = append([]bool(nil), pending...)
			for _, p := range held {
				if p {
					left++
				}
			}
		}
		switch ev.Ev {
		case trace.EvRequest:
			pending[ev.Node] = true
		case trace.EvState:
			pending[ev.Node] = false
			if ev.T < at {
				continue
			}
			if ev.State == cs.InCS.String() {
				first = min(first, ev.T-at)
			}
			if held != nil && held[ev.Node] {
				held[ev.Node] = false
				all = max(all, ev.T-at)
				left--
			}
		case trace.EvCrash:
			if held != nil && held[ev.Node] {
				held[ev.Node] = false // it will not enter: not held up, gone
				left--
			}
			pending[ev.Node] = false
		}
	}
	if held == nil || left > 0 {
		return first, math.Inf(1)
	}
	return first, all
}

// kinds counts the sends of each message kind.
func kinds(evs []trace.Event) map[string]int {
	m := map[string]int{}
	for _, ev := range evs {
		if ev.Ev == trace.EvSend {
			m[ev.Msg]++
		}
	}
	return m
}

// Survival runs every registered algorithm (or c.Algs) on n = 15 (k = 5,
// l = 1 where it takes one; the local ones on the complete graph) under
// c's load with the first crashes of c's scenario (1, then k), for c.After
// after the last, c.Seeds times, and reports whether it goes on: the CS
// entries before and after the last crash, the time from the last crash
// to the next entry and the recovery time (recovery; math.Inf when there
// is none), with 95 % confidence intervals over the seeds, and how many
// runs ended in a deadlock, a starvation or a livelock (with the bound
// c.StarveAfter), broke their bounds or failed otherwise (a published
// variant's undefined step, crashes or not).
func (c FT07) Survival(crashes []int) (*Table, error) {
	t := &Table{LabelName: "alg", Header: []string{"crashes", "runs", "entries_before_mean", "entries_after_mean", "entries_after_ci95",
		"first_entry_after_mean_time_units", "first_entry_after_ci95_time_units", "recovered_runs", "recovery_mean_time_units", "recovery_ci95_time_units",
		"deadlock_runs", "starvation_runs", "livelock_runs", "bounds_broken_runs", "error_runs"}}
	algs := alg.All()
	if c.Algs != nil {
		algs = nil
		for _, name := range c.Algs {
			a, err := alg.Lookup(name)
			if err != nil {
				return nil, err
			}
			algs = append(algs, a)
		}
	}
	for _, a := range algs {
		for _, nc := range crashes {
			var s survived
			for i := range max(c.Seeds, 1) {
				if err := s.run(c, a, nc, c.Seed+uint64(i)); err != nil {
					return nil, err
				}
			}
			t.Add(a.Name, append([]float64{float64(nc)}, s.row()...)...)
		}
	}
	return t, nil
}

// survived gathers the survival runs of one algorithm and crash count, one
// per seed.
type survived struct {
	runs                 int
	before, after, first []float64
	recovery             []float64 // the finite ones
	verdicts             [5]float64
}

// run adds the run of algorithm a with c's first nc crashes and seed.
func (s *survived) run(c FT07, a alg.Algorithm, nc int, seed uint64) error {
	pr, ms, err := alg.Build(a.SpecFor(c.N, 1, c.K))
	if err != nil {
		return err
	}
	cfg := sim.Config{Machines: ms, Property: pr.Property, Lambda: c.Lambda, E: c.E, Tt: 1,
		MaxTime: c.Crashes[nc-1].At + c.After, StarveAfter: c.StarveAfter, Seed: seed,
		Crashes: c.Crashes[:nc], Detector: c.Detector, DetectDelay: c.DetectDelay}
	res, evs, err := traced(cfg, trace.Header{Alg: a.Name, N: c.N, K: c.K})
	if err != nil {
		return err
	}
	first, recovery := recovery(evs, c.N, c.Crashes[nc-1].At)
	before := int64(0)
	if len(res.EntriesAtCrash) > 0 {
		before = res.EntriesAtCrash[len(res.EntriesAtCrash)-1]
	}
	s.runs++
	s.before = append(s.before, float64(before))
	s.after = append(s.after, float64(res.Entries-before))
	s.first = append(s.first, first)
	if !math.IsInf(recovery, 1) {
		s.recovery = append(s.recovery, recovery)
	}
	if v := res.Violation; v != nil {
		switch v.Kind {
		case sim.KindDeadlock:
			s.verdicts[0]++
		case sim.KindStarvation:
			s.verdicts[1]++
		case sim.KindLivelock:
			s.verdicts[2]++
		case sim.KindBounds:
			s.verdicts[3]++
		default: // a published variant's undefined step, crash or not
			s.verdicts[4]++
		}
	}
	return nil
}

// row is the table's row after the crash count: means with their 95 %
// confidence intervals over the runs (MeanCI: NaN with one run), the time
// to the first entry +Inf when a run had none, the recovery time's mean
// over the runs that recovered (+Inf when none did), and the verdicts'
// counts.
func (s *survived) row() []float64 {
	before, _ := MeanCI(s.before)
	after, afterCI := MeanCI(s.after)
	first, firstCI := MeanCI(s.first)
	if math.IsInf(first, 1) {
		firstCI = math.NaN()
	}
	rec, recCI := math.Inf(1), math.NaN()
	if len(s.recovery) > 0 {
		rec, recCI = MeanCI(s.recovery)
	}
	return append([]float64{float64(s.runs), before, after, afterCI, first, firstCI, float64(len(s.recovery)), rec, recCI}, s.verdicts[:]...)
}

// PlotFigure2 draws t (Figure2's table) into path: per algorithm, the
// maximum of the resources in use over each time step (a solid line: the
// paper's claim is about how many resources can still be in use at once,
// so the maximum is what Figure 2 compares) and their time-weighted mean
// (dashed, the same colour), each with its 95 % confidence interval over
// the seeds as error bars (none with one seed), and a triangle on the time
// axis at each crash, as the paper's Figure 2 marks them.
func PlotFigure2(t *Table, crashes []sim.Crash, path string) error {
	cols := make([]int, 5)
	for i, name := range []string{"t_time_units", "in_use_max", "in_use_mean", "in_use_max_ci95", "in_use_mean_ci95"} {
		c, err := t.Column(name)
		if err != nil {
			return err
		}
		cols[i] = c
	}
	var algs []string
	lines := map[string][2]plotter.XYs{}
	bars := map[string]*[2]interval{}
	for i, r := range t.Rows {
		l := t.label(i)
		if _, ok := lines[l]; !ok {
			algs = append(algs, l)
			bars[l] = &[2]interval{}
		}
		ls := lines[l]
		for j := range ls {
			if why := undrawable(r[cols[j+1]], false); why != "" {
				return fmt.Errorf("figure 2: row %d (%s) has %s = %v: %s", i+1, l, t.Header[cols[j+1]], r[cols[j+1]], why)
			}
			xy := plotter.XY{X: r[cols[0]], Y: r[cols[j+1]]}
			ls[j] = append(ls[j], xy)
			h := r[cols[j+3]]
			if math.IsNaN(h) {
				continue // one seed: no interval
			}
			if why := undrawable(h, false); why != "" || h < 0 || h > 1e6 {
				return fmt.Errorf("figure 2: row %d (%s) has %s = %v: not a half-width to draw", i+1, l, t.Header[cols[j+3]], h)
			}
			b := &bars[l][j]
			b.XYs = append(b.XYs, xy)
			// Resources in use cannot be negative: the bar stops at 0.
			b.YErrors = append(b.YErrors, struct{ Low, High float64 }{min(h, max(xy.Y, 0)), h})
		}
		lines[l] = ls
	}
	if len(algs) == 0 {
		return fmt.Errorf("figure 2: the table has no rows to draw")
	}
	p := plot.New()
	p.Title.Text = "Resources in use (n = 15, k = 5), crashes marked"
	p.X.Label.Text = "time"
	p.Y.Label.Text = "resources in use per step of 10"
	p.Add(plotter.NewGrid())
	for i, l := range algs {
		for j, what := range []string{"maximum", "mean"} {
			line, err := plotter.NewLine(lines[l][j])
			if err != nil {
				return err
			}
			line.Color = palette[i%len(palette)]
			line.Width = vg.Points(1.5)
			if j == 1 {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
				line.Width = vg.Points(1)
			}
			p.Add(line)
			p.Legend.Add(l+" "+what, line)
			if b := bars[l][j]; len(b.XYs) > 0 {
				eb, err := plotter.NewYErrorBars(&b)
				if err != nil {
					return err
				}
				eb.Color = line.Color
				eb.LineStyle.Width = vg.Points(0.5)
				p.Add(eb)
			}
		}
	}
	// A quarter of a resource of room above and below, so that the
	// maximum lines at k and 0, their intervals and the crash marks are
	// not clipped.
	_, _, _, top := plotter.XYRange(lines[algs[0]][0])
	for _, l := range algs {
		_, _, _, y := plotter.XYRange(lines[l][0])
		top = max(top, y)
		for _, b := range bars[l] {
			for i, xy := range b.XYs {
				top = max(top, xy.Y+b.YErrors[i].High)
			}
		}
	}
	p.Y.Min, p.Y.Max = -0.25, top+0.25
	p.Legend.Top, p.Legend.Left = true, true
	if err := markCrashes(p, crashes); err != nil {
		return err
	}
	return savePlot(p, path)
}

// markCrashes adds to p a triangle on the time axis at each crash.
func markCrashes(p *plot.Plot, crashes []sim.Crash) error {
	marks := make(plotter.XYs, len(crashes))
	for i, c := range crashes {
		marks[i] = plotter.XY{X: c.At, Y: 0}
	}
	tri, err := plotter.NewScatter(marks)
	if err != nil {
		return err
	}
	tri.Shape = draw.TriangleGlyph{}
	tri.Color = color.Black
	tri.Radius = vg.Points(4)
	p.Add(tri)
	p.Legend.Add("crash", tri)
	return nil
}
