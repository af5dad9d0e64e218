package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/lkcs"
	"github.com/critsec/critsec/alg/lmutin"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/topology"
)

// The study on the generalized local (l_i,k_i)-CS
// family of Kamei and Kakugawa (2017): the message complexity of section
// 2.3, "the number of message exchanges triggered by a pair of invocations
// of exit-sequence and entry-sequence", per process P_i against |N_i|+1,
// next to Lemma 3 (l_i-LMUTIN: 3(|N_i|+1) in the best case, 6(|N_i|+1) in
// the worst; k_i-LMUTEX = Co(LMUTIN) exchanges the messages of the LMUTIN
// inside it, so the same) and Lemma 6 (LKCS: 6(|N_i|+1)..12(|N_i|+1));
// the waiting times of Entry and Exit; and how often LKCS's sidetrack (the
// leader's Trigger, Algorithm 7) fires. Messages are attributed to the
// process whose Entry or Exit started the chain of handlers that sent them
// (internal/causal), so the attributed counts sum to the run's total.
//
// Published algorithms that break (lkcs-paper deadlocks or takes an
// undefined step) are measured, not fatal: such a run is a row with its
// stop reason and violation (Run.KeepViolations), and is left out of the
// message and waiting statistics, which need whole, drained runs.

// LocalLoad is a workload of the local study: every process is InCS half
// of the time, E = 1/Lambda, as in the global waiting study.
type LocalLoad struct {
	// Name is "light", "heavy" or the rate as written.
	Name string
	// Lambda is the request rate; 0 means light: 1/(1000 n), one request
	// per 1000 time units in the whole system (Light).
	Lambda float64
}

// ParseLocalLoad reads a load: light (λ = 1/(1000 n)), heavy (λ = 1, the
// global study's Heavy) or a rate λ in (0, 10^12]. A rate of 1 is heavy.
func ParseLocalLoad(s string) (LocalLoad, bool) {
	switch s {
	case string(Light):
		return LocalLoad{Name: s}, true
	case string(Heavy):
		return LocalLoad{Name: s, Lambda: 1}, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0 && v <= 1e12) {
		return LocalLoad{}, false
	}
	if v == 1 {
		return LocalLoad{Name: string(Heavy), Lambda: 1}, true
	}
	return LocalLoad{Name: strconv.FormatFloat(v, 'g', -1, 64), Lambda: v}, true
}

// workload returns lambda and E of the load for n processes.
func (l LocalLoad) workload(n int) (lambda, e float64) {
	lambda = l.Lambda
	if lambda == 0 {
		lambda, _ = Light.workload(n)
	}
	return lambda, 1 / lambda
}

// LocalBounds returns the uniform bounds the study gives a (clamped to
// each neighborhood, alg.Spec.Clamp): l = 1 for l_i-LMUTIN (local mutual
// inclusion), k = 2 for k_i-LMUTEX (the inner LMUTIN then has
// l_i = |N_i|-1), and (l, k) = (1, 5) for LKCS, so that k_i - l_i >= 3
// wherever |N_i|+1 >= 4, as section 5.1 asks within two hops of the leader.
func LocalBounds(a alg.Algorithm) (l, k int) {
	switch {
	case a.UsesL && a.FixedK != nil:
		return 1, 0
	case !a.UsesL:
		return 0, 2
	}
	return 1, 5
}

// LocalPaperBounds returns the paper's bounds on the messages of one
// Exit+Entry pair of P_i, per member of N_i ∪ {P_i}: 3 and 6 for
// l_i-LMUTIN (Lemma 3) and k_i-LMUTEX (Co(LMUTIN): its Entry is LMUTIN's
// Exit, its Exit LMUTIN's Entry, the same messages), 6 and 12 for LKCS
// (Lemma 6, which leaves out the sidetrack's Trigger and
// RequestByTrigger).
func LocalPaperBounds(a alg.Algorithm) (lo, hi float64) {
	if a.UsesL && a.FixedK == nil {
		return 6, 12
	}
	return 3, 6
}

// LocalTopology names the graph of a generator family at n processes:
// ring:n, path:n, star:n, wheel:n, complete:n; grid:RxC and torus:RxC
// with R the largest divisor of n up to √n (at least 2 for grid, 3 for
// torus, so that n = R·C is not a path or a ring); random:n:P:1 with
// P = 8/(n-1) to 3 significant digits (mean degree about 8) and generator
// seed 1, so that every run sees the same graph.
func LocalTopology(family string, n int) (string, error) {
	switch family {
	case "ring", "path", "star", "wheel", "complete":
		return fmt.Sprintf("%s:%d", family, n), nil
	case "grid", "torus":
		least := map[string]int{"grid": 2, "torus": 3}[family]
		r := 1
		for d := 1; d*d <= n; d++ {
			if n%d == 0 {
				r = d
			}
		}
		if r < least {
			return "", fmt.Errorf("%s needs n = R×C with %d <= R <= C, and %d has no such factors: use a square such as 100 or 400", family, least, n)
		}
		return fmt.Sprintf("%s:%dx%d", family, r, n/r), nil
	case "random":
		p := min(1, 8/float64(n-1))
		return fmt.Sprintf("random:%d:%s:1", n, strconv.FormatFloat(p, 'g', 3, 64)), nil
	}
	return "", fmt.Errorf("%q is not a topology family (ring, path, star, wheel, grid, torus, complete, random)", family)
}

// LocalStudy describes the local study: every algorithm on every topology
// under every load, once per seed.
type LocalStudy struct {
	// Algs are local algorithms of the registry (lmutin, lmutex,
	// lkcs-paper, lkcs, ...), run with LocalBounds.
	Algs []string
	// Topologies are topology specs or edge-list files.
	Topologies []string
	Loads      []LocalLoad
	Seeds      []uint64
	// EntriesPerProcess times n is each run's number of CS entries.
	EntriesPerProcess int64
	// TransitDist is the transit time's distribution (mean Tt = 1).
	TransitDist sim.Dist
	// StarveAfter is every run's starvation bound (Common.StarveAfter).
	StarveAfter float64
}

// Skip is an algorithm the study cannot run on a topology: its problem
// does not resolve (LKCS needs a leader with |N_LDR| >= 4 and room within
// two hops, and a safe initial configuration for the tightened bounds).
type Skip struct {
	Alg, Topology, Reason string
}

// LocalRuns returns the runs of s, in the order algorithm, topology, load,
// seed. Violations are kept as outcomes (Run.KeepViolations). An unknown
// or global algorithm, or a topology that does not build, is an error;
// whether each algorithm can run on each topology is Applicable's to say.
func LocalRuns(s LocalStudy) ([]Run, error) {
	var runs []Run
	graphs := make([]*topology.Graph, len(s.Topologies))
	for i, t := range s.Topologies {
		g, err := topology.ByName(t)
		if err != nil {
			return nil, fmt.Errorf("topology %s: %w", t, err)
		}
		graphs[i] = g
	}
	for _, name := range s.Algs {
		a, err := alg.Lookup(name)
		if err != nil {
			return nil, err
		}
		if !a.Local {
			return nil, fmt.Errorf("%s solves a global problem; the local study runs local algorithms", name)
		}
		l, k := LocalBounds(a)
		for i, t := range s.Topologies {
			g := graphs[i]
			for _, load := range s.Loads {
				for _, seed := range s.Seeds {
					r := Run{Label: name, Load: load.Name, Alg: name, Topology: t, N: g.N(), Links: g.Edges(), L: l, K: k,
						KeepViolations: true, Common: Common{Entries: s.EntriesPerProcess * int64(g.N()), Seed: seed, TransitDist: s.TransitDist, StarveAfter: s.StarveAfter}}
					r.Lambda, r.E = load.workload(g.N())
					runs = append(runs, r)
				}
			}
		}
	}
	return runs, nil
}

// Applicable returns the runs whose problem resolves, in their order, and
// one Skip for each algorithm and topology whose problem does not (it is
// resolved once per pair: a large graph takes seconds).
func Applicable(runs []Run) ([]Run, []Skip) {
	var kept []Run
	var skips []Skip
	why := map[[2]string]error{}
	for _, r := range runs {
		key := [2]string{r.Alg, r.Topology}
		err, done := why[key]
		if !done {
			_, err = r.resolve()
			why[key] = err
			if err != nil {
				skips = append(skips, Skip{Alg: r.Alg, Topology: r.Topology, Reason: err.Error()})
			}
		}
		if err == nil {
			kept = append(kept, r)
		}
	}
	return kept, skips
}

// whole reports whether the run ended as planned: its entries made and
// drained, without a violation. Only whole runs enter the message and
// waiting statistics.
func whole(o Outcome) bool { return o.Result.Violation == nil && o.Result.Stop == sim.StopEntries }

// kind counts the messages of kind k over all processes of o.
func kind(o Outcome, k string) int64 {
	var c int64
	for _, m := range o.Counts.ByKind {
		c += m[k]
	}
	return c
}

// memberRatio is Σ_i messages_i / Σ_i pairs_i·(|N_i|+1): the run's
// messages per pair and member of N_i ∪ {P_i}, which Lemma 3 puts in
// 3..6 and Lemma 6 in 6..12; and the least and largest per-process ratio.
func memberRatio(o Outcome) (all, lo, hi float64) {
	var msgs, weighted int64
	lo, hi = math.Inf(1), 0
	for i, size := range o.Sizes {
		p := o.Counts.Pairs(id(i))
		msgs += o.Counts.Messages[i]
		weighted += p * int64(size)
		if p > 0 {
			r := float64(o.Counts.Messages[i]) / float64(p*int64(size))
			lo, hi = min(lo, r), max(hi, r)
		}
	}
	if weighted == 0 {
		return 0, 0, 0
	}
	return float64(msgs) / float64(weighted), lo, hi
}

// pairs is Σ_i pairs_i of o.
func pairs(o Outcome) int64 {
	var p int64
	for i := range o.Sizes {
		p += o.Counts.Pairs(id(i))
	}
	return p
}

// violationKind is the kind of o's violation, or "".
func violationKind(o Outcome) string {
	if v := o.Result.Violation; v != nil {
		return v.Kind
	}
	return ""
}

// The kinds of LKCS's sidetrack messages (Algorithm 7).
var (
	triggerKind          = lkcs.Trigger{}.Kind()
	requestByTriggerKind = lkcs.RequestByTrigger{}.Kind()
	preemptKind          = lmutin.Preempt{}.Kind()
)

// LocalRunTable has one row per run: its algorithm, topology, load, why
// it stopped (sim.Result.Stop) and its violation's kind (empty if none),
// then its counts. messages_per_pair_member is memberRatio; triggers and
// requests_by_trigger count LKCS's sidetrack messages. The last columns
// tell an undecided end from a starved one: the longest wait of a request
// still pending at the end, the starvation bound, the requests pending at
// an end with no verdict (undecided), and those a starvation verdict
// counted (sim.Result.Starved).
func LocalRunTable(outs []Outcome) *Table {
	t := &Table{LabelName: "alg", TagNames: []string{"topology", "load", "stop", "violation"}, Header: []string{
		"n", "links", "lambda_requests_per_time_unit", "E_time_units", "seed", "entries", "exits", "pairs", "messages", "messages_per_pair",
		"messages_per_pair_member", "member_ratio_min", "member_ratio_max", "preempts_per_pair",
		"entry_wait_mean_time_units", "exit_wait_mean_time_units", "pending", "unheld", "triggers", "requests_by_trigger",
		"triggers_per_1000_entries", "end_time_units",
		"pending_wait_max_time_units", "starve_bound_time_units", "undecided_requests", "starved_requests"}}
	for _, o := range outs {
		r, res := o.Run, o.Result
		all, lo, hi := memberRatio(o)
		p := pairs(o)
		trig := kind(o, triggerKind)
		t.AddTagged(r.Label, []string{r.Topology, r.Load, res.Stop, violationKind(o)},
			float64(r.N), float64(r.Links), r.Lambda, r.E, float64(r.Seed), float64(res.Entries), float64(res.Exits),
			float64(p), float64(res.Messages), ratio(float64(res.Messages), float64(p)),
			all, lo, hi, ratio(float64(kind(o, preemptKind)), float64(p)),
			res.EntryWait.Mean, res.ExitWait.Mean, float64(res.Pending), float64(res.Unheld),
			float64(trig), float64(kind(o, requestByTriggerKind)), 1000*ratio(float64(trig), float64(res.Entries)), res.EndTime,
			res.PendingWaitMax, res.StarveBound, float64(res.Undecided()), float64(res.Starved))
	}
	return t
}

// sizeGroup sums, for one algorithm and load, the processes with
// |N_i|+1 = size over the whole runs.
type sizeGroup struct {
	alg, load   string
	size        int
	nodes       int64 // processes summed (one per run)
	pairs, msgs int64
	// seeds are the runs' seeds in the order they occur, and bySeed the
	// pairs and messages of each seed's runs (over the topologies).
	seeds  []uint64
	bySeed map[uint64]*[2]int64
}

// perPair returns the messages per pair of each seed (its runs pooled
// over the topologies), for their confidence interval.
func (g *sizeGroup) perPair() []float64 {
	xs := make([]float64, len(g.seeds))
	for i, s := range g.seeds {
		c := g.bySeed[s]
		xs[i] = ratio(float64(c[1]), float64(c[0]))
	}
	return xs
}

// sizeGroups groups the whole runs of outs by algorithm and load (in the
// order they first occur) and |N_i|+1 (increasing).
func sizeGroups(outs []Outcome) []sizeGroup {
	var keys [][2]string
	bySize := map[[2]string]map[int]*sizeGroup{}
	for _, o := range outs {
		if !whole(o) {
			continue
		}
		key := [2]string{o.Run.Label, o.Run.Load}
		if bySize[key] == nil {
			keys = append(keys, key)
			bySize[key] = map[int]*sizeGroup{}
		}
		for i, size := range o.Sizes {
			g := bySize[key][size]
			if g == nil {
				g = &sizeGroup{alg: key[0], load: key[1], size: size, bySeed: map[uint64]*[2]int64{}}
				bySize[key][size] = g
			}
			g.nodes++
			g.pairs += o.Counts.Pairs(id(i))
			g.msgs += o.Counts.Messages[i]
			c := g.bySeed[o.Run.Seed]
			if c == nil {
				c = &[2]int64{}
				g.bySeed[o.Run.Seed] = c
				g.seeds = append(g.seeds, o.Run.Seed)
			}
			c[0] += o.Counts.Pairs(id(i))
			c[1] += o.Counts.Messages[i]
		}
	}
	var out []sizeGroup
	for _, key := range keys {
		m := bySize[key]
		sizes := make([]int, 0, len(m))
		for s := range m {
			sizes = append(sizes, s)
		}
		slices.Sort(sizes)
		for _, s := range sizes {
			out = append(out, *m[s])
		}
	}
	return out
}

// LocalSizeTable has one row per algorithm, load and neighborhood size
// |N_i|+1 over the whole runs: the processes of that size summed over
// topologies and seeds (messages attributed to them / their pairs), next
// to the paper's bounds (LocalPaperBounds) and whether the measured value
// lies within them (1) or not (0); then the 95 % confidence half-widths of
// messages per pair and per member over the seeds (each seed's processes
// of that size pooled over the topologies; MeanCI, NaN with one seed).
func LocalSizeTable(outs []Outcome) *Table {
	t := &Table{LabelName: "alg", TagNames: []string{"load"}, Header: []string{
		"size", "processes", "pairs", "messages", "messages_per_pair", "per_member", "paper_lo", "paper_hi", "within",
		"messages_per_pair_ci95", "per_member_ci95"}}
	for _, g := range sizeGroups(outs) {
		a, _ := alg.Lookup(g.alg)
		lo, hi := LocalPaperBounds(a)
		s := float64(g.size)
		per := ratio(float64(g.msgs), float64(g.pairs))
		within := 0.0
		if per >= lo*s && per <= hi*s {
			within = 1
		}
		_, ci := MeanCI(g.perPair())
		t.AddTagged(g.alg, []string{g.load}, s, float64(g.nodes), float64(g.pairs), float64(g.msgs), per, per/s, lo*s, hi*s, within, ci, ci/s)
	}
	return t
}

// waitGroup gathers the runs of one algorithm, topology and load.
type waitGroup struct {
	alg, topology, load string
	n                   int
	lambda              float64
	runs, broken        int
	starved             int   // broken runs with a starvation or a livelock
	entries             int64 // over every run, broken ones included
	triggers, rbt       int64
	entryMeans          []float64 // one per whole run
	exitMeans           []float64
	memberRatios        []float64
}

func waitGroups(outs []Outcome) []*waitGroup {
	var gs []*waitGroup
	index := map[[3]string]*waitGroup{}
	for _, o := range outs {
		r := o.Run
		key := [3]string{r.Label, r.Topology, r.Load}
		g := index[key]
		if g == nil {
			g = &waitGroup{alg: r.Label, topology: r.Topology, load: r.Load, n: r.N, lambda: r.Lambda}
			index[key] = g
			gs = append(gs, g)
		}
		g.runs++
		g.entries += o.Result.Entries
		g.triggers += kind(o, triggerKind)
		g.rbt += kind(o, requestByTriggerKind)
		if !whole(o) {
			g.broken++
			if k := violationKind(o); k == sim.KindStarvation || k == sim.KindLivelock {
				g.starved++
			}
			continue
		}
		g.entryMeans = append(g.entryMeans, o.Result.EntryWait.Mean)
		g.exitMeans = append(g.exitMeans, o.Result.ExitWait.Mean)
		all, _, _ := memberRatio(o)
		g.memberRatios = append(g.memberRatios, all)
	}
	return gs
}

// LocalWaitTable has one row per algorithm, topology and load: how many
// runs broke and how many of them starved a request or livelocked, the
// waiting times of Entry and Exit (request to state change), the mean
// over the whole runs of each run's mean with a 95 % confidence interval
// over the seeds (MeanCI; NaN with fewer than two whole runs), the
// messages per pair and member, and the sidetrack's rate: Triggers and
// RequestByTriggers per 1000 CS entries, over every run (a broken run
// counts the entries and triggers it made before it broke); then the 95 %
// half-width of messages per pair and member over the whole runs.
func LocalWaitTable(outs []Outcome) *Table {
	t := &Table{LabelName: "alg", TagNames: []string{"topology", "load"}, Header: []string{
		"n", "lambda_requests_per_time_unit", "runs", "broken", "starved",
		"entry_wait_mean_time_units", "entry_wait_ci95_time_units", "exit_wait_mean_time_units", "exit_wait_ci95_time_units",
		"messages_per_pair_member", "triggers_per_1000_entries", "requests_by_trigger_per_1000_entries",
		"messages_per_pair_member_ci95"}}
	for _, g := range waitGroups(outs) {
		em, eci := MeanCI(g.entryMeans)
		xm, xci := MeanCI(g.exitMeans)
		mr, mci := MeanCI(g.memberRatios)
		t.AddTagged(g.alg, []string{g.topology, g.load}, float64(g.n), g.lambda, float64(g.runs), float64(g.broken), float64(g.starved),
			em, eci, xm, xci, mr,
			1000*ratio(float64(g.triggers), float64(g.entries)), 1000*ratio(float64(g.rbt), float64(g.entries)), mci)
	}
	return t
}

// t975 holds the 0.975 quantiles of Student's t distribution with 1 to 30
// degrees of freedom; beyond 30 MeanCI uses the last (2.042, within 4 % of
// the normal's 1.960, so slightly wide).
var t975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// MeanCI returns the mean of xs, independent replications (one per seed),
// and the half-width of its 95 % confidence interval, t·s/√m with s the
// sample standard deviation and t Student's 0.975 quantile with m-1
// degrees of freedom. With one value the half-width is NaN (unknown);
// with none both are NaN.
func MeanCI(xs []float64) (mean, half float64) {
	m := len(xs)
	if m == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(m)
	if m == 1 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := t975[min(m-1, len(t975))-1]
	return mean, t * math.Sqrt(ss/float64(m-1)) / math.Sqrt(float64(m))
}

// Plot is a chart with the table it draws, written as Name.svg (or .png,
// .pdf).
type Plot struct {
	Name  string
	Table *Table
	Chart Chart
}

// LocalPlots returns the study's plots: for each load, messages per pair
// against |N_i|+1 (LocalSizeTable's groups, one line per algorithm) with
// the paper's bound lines 3, 6 and 12 times |N_i|+1, log-log, and the
// same divided by |N_i|+1 (per-member-LOAD, the bounds flat); for each
// algorithm, its mean Entry and Exit waiting times against lambda, one line
// per topology, log-log, where they are positive (lmutin's Entry and
// lmutex's Exit never wait; a group with no whole run has no point). Every
// measured point has its 95 % confidence interval over the seeds as an
// error bar.
func LocalPlots(outs []Outcome, loads []LocalLoad) []Plot {
	var plots []Plot
	groups := sizeGroups(outs)
	for _, load := range loads {
		t := &Table{LabelName: "line", Header: []string{"size", "messages_per_pair", "per_member", "messages_per_pair_ci95", "per_member_ci95"}}
		var sizes []int
		for _, g := range groups {
			if g.load == load.Name {
				per := ratio(float64(g.msgs), float64(g.pairs))
				_, ci := MeanCI(g.perPair())
				t.Add(g.alg, float64(g.size), per, per/float64(g.size), ci, ci/float64(g.size))
				sizes = append(sizes, g.size)
			}
		}
		if len(sizes) == 0 {
			continue
		}
		slices.Sort(sizes)
		sizes = slices.Compact(sizes)
		for _, b := range []struct {
			c     float64
			label string
		}{{3, "3(|N_i|+1): LMUTIN, LMUTEX best"}, {6, "6(|N_i|+1): LMUTIN, LMUTEX worst; LKCS best"}, {12, "12(|N_i|+1): LKCS worst"}} {
			for _, s := range sizes {
				t.Add(b.label, float64(s), b.c*float64(s), b.c, math.NaN(), math.NaN())
			}
		}
		plots = append(plots, Plot{Name: "messages-" + load.Name, Table: t, Chart: Chart{
			Title: "Messages per Exit+Entry pair of P_i, " + load.Name + " load", X: "size", Y: "messages_per_pair", CI: "messages_per_pair_ci95",
			LogX: true, LogY: true, XLabel: "|N_i|+1", YLabel: "messages per pair (attributed to P_i)"}},
			Plot{Name: "per-member-" + load.Name, Table: t, Chart: Chart{
				Title: "Messages per Exit+Entry pair of P_i / (|N_i|+1), " + load.Name + " load", X: "size", Y: "per_member", CI: "per_member_ci95",
				LogX: true, XLabel: "|N_i|+1", YLabel: "messages per pair / (|N_i|+1)"}})
	}
	var algs []string
	for _, o := range outs {
		if !slices.Contains(algs, o.Run.Label) {
			algs = append(algs, o.Run.Label)
		}
	}
	gs := waitGroups(outs)
	for _, a := range algs {
		for _, w := range []struct {
			name  string
			means func(*waitGroup) []float64
		}{{"entry", func(g *waitGroup) []float64 { return g.entryMeans }}, {"exit", func(g *waitGroup) []float64 { return g.exitMeans }}} {
			t := &Table{LabelName: "topology", Header: []string{"lambda", "wait", "wait_ci95"}}
			for _, g := range gs {
				if m, ci := MeanCI(w.means(g)); g.alg == a && m > 0 {
					t.Add(g.topology, g.lambda, m, ci)
				}
			}
			if len(t.Rows) == 0 {
				continue
			}
			plots = append(plots, Plot{Name: "waiting-" + a + "-" + w.name, Table: t, Chart: Chart{
				Title: a + ": " + w.name + " waiting time (mean over seeds, 95 % CI), E = 1/lambda", X: "lambda", Y: "wait", CI: "wait_ci95",
				LogX: true, LogY: true, XLabel: "lambda (requests per time unit OutCS)", YLabel: "time units"}})
		}
	}
	return plots
}

// id is the process of index i.
func id(i int) cs.ID { return cs.ID(i + 1) }

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
