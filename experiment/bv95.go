package experiment

import (
	"fmt"
	"strconv"

	"github.com/critsec/critsec/sim"
)

// The study of section 4 of Bulgannawar and Vaidya, "A distributed
// K-mutual exclusion algorithm" (ICDCS 1995): N = 30 nodes, K = 3 tokens,
// ν = 2, the dynamic-forest algorithm with its token-choice heuristic and
// with a random token, against Raymond's, Srimani and Reddy's and Makki et
// al.'s K-mutex and the partitioning scheme of section 5 (over forest,
// Raymond's and Srimani and Reddy's algorithms), over the request
// rate λ, in the paper's cost model (a node spends Ts per message copy it
// sends and Tr per message it receives; a message spends Tt in transit).
// Figure 3(a) plots the mean time to enter the CS with Ts = Tr = 0.1,
// Tt = 0.8, E = 0.0002; Figure 3(b) the same with Ts = Tr = 0, Tt = 1;
// Figure 4 the messages per CS entry and Figure 5 the words per message,
// both with Ts = Tr = 0.1. docs/token-k-mutex.md puts the measurements
// beside the paper's claims.

// BV95Setting is one cost setting of section 4.
type BV95Setting struct {
	// Ts, Tr, Tt are the costs of a message (sim.Config); E is the mean
	// time InCS.
	Ts, Tr, Tt, E float64
}

// BV95Settings are the settings of section 4: Ts = Tr = 0.1, Tt = 0.8,
// E = 0.0002 (Figures 3(a), 4 and 5); the same with E = 1 ("also
// similar"); and Ts = Tr = 0, Tt = 1, E = 0.0002 (Figure 3(b)).
var BV95Settings = []BV95Setting{
	{Ts: 0.1, Tr: 0.1, Tt: 0.8, E: 0.0002},
	{Ts: 0.1, Tr: 0.1, Tt: 0.8, E: 1},
	{Ts: 0, Tr: 0, Tt: 1, E: 0.0002},
}

// BV95Line is one line of the study's plots: a registered algorithm with
// its options.
type BV95Line struct {
	Label, Alg string
	// Options are the algorithm's own options (alg.Spec.Options).
	Options map[string]string
}

// BV95Lines returns the study's lines with ν INFORM messages per exit
// that keeps a token: forest with the paper's heuristic (the last seen
// token, "new+heuristics") and with a random token ("new+random token"),
// the three K-mutex baselines, the partitioning scheme of section 5 (K
// clusters of forest with one token, and of the two baselines the section
// works it out for: Raymond's, about 2(N/K - 1) messages per entry, and
// Srimani and Reddy's, about N/K - 1), and forest-paper, the algorithm as
// published, whose words per message section 4 measured.
func BV95Lines(nu int) []BV95Line {
	v := strconv.Itoa(nu)
	return []BV95Line{
		{Label: "forest", Alg: "forest", Options: map[string]string{"token": "last-seen", "nu": v}},
		{Label: "forest-random", Alg: "forest", Options: map[string]string{"token": "random", "nu": v}},
		{Label: "raymond", Alg: "raymond"},
		{Label: "srimani-reddy", Alg: "srimani-reddy"},
		{Label: "makki", Alg: "makki"},
		{Label: "partition", Alg: "partition", Options: map[string]string{"nu": v}},
		{Label: "partition-raymond", Alg: "partition-raymond"},
		{Label: "partition-srimani-reddy", Alg: "partition-srimani-reddy"},
		{Label: "forest-paper", Alg: "forest-paper", Options: map[string]string{"token": "last-seen", "nu": v}},
	}
}

// BV95Study describes the study: every line under every setting at every
// rate, once per seed.
type BV95Study struct {
	// N nodes, K tokens, Nu INFORM messages (the paper: 30, 3, 2).
	N, K, Nu int
	Lambdas  []float64
	Settings []BV95Setting
	Seeds    []uint64
	// Entries is each run's number of CS entries (drained);
	// TransitDist the transit time's distribution (mean Tt).
	Entries     int64
	TransitDist sim.Dist
	// StarveAfter is every run's starvation bound (Common.StarveAfter).
	StarveAfter float64
}

// BV95Runs returns the runs of s in the order line, setting, rate, seed.
func BV95Runs(s BV95Study) []Run {
	var runs []Run
	for _, l := range BV95Lines(s.Nu) {
		for _, c := range s.Settings {
			for _, lambda := range s.Lambdas {
				for _, seed := range s.Seeds {
					runs = append(runs, Run{Label: l.Label, Alg: l.Alg, Options: l.Options, N: s.N, K: s.K,
						Lambda: lambda, E: c.E, Ts: c.Ts, Tr: c.Tr, Tt: c.Tt,
						Common: Common{Entries: s.Entries, Seed: seed, TransitDist: s.TransitDist, StarveAfter: s.StarveAfter}})
				}
			}
		}
	}
	return runs
}

// bv95Group gathers the runs of one line, setting and rate.
type bv95Group struct {
	label                    string
	lambda                   float64
	c                        BV95Setting
	delays                   []float64 // each run's mean entry waiting time
	entries, messages, words int64
	// Each run's messages per entry, words per message and per entry.
	msgsPerEntry, wordsPerMsg, wordsPerEntry []float64
}

// BV95Columns are the columns of BV95Table after the algorithm's.
var BV95Columns = []string{"lambda_requests_per_time_unit", "ts_time_units", "tr_time_units", "tt_time_units", "e_time_units",
	"seeds", "avg_delay_time_units", "delay_ci95_time_units",
	"msgs_per_entry", "words_per_msg", "words_per_entry", "entries",
	"msgs_per_entry_ci95", "words_per_msg_ci95", "words_per_entry_ci95"}

// BV95Table has one row per line, setting and rate, in the order of the
// outcomes: the rate in requests per time unit OutCS, the costs Ts, Tr,
// Tt and E in time units (the simulator's, which are the paper's: section
// 4 gives every cost in the same unnamed time unit), avg_delay_time_units
// the mean over the seeds of each run's mean time to enter the CS
// (request to InCS, Figure 3) and delay_ci95_time_units its 95 %
// confidence half-width (MeanCI; NaN with one seed); msgs_per_entry,
// words_per_msg and words_per_entry pool every seed's messages, words
// (cs.Message.Words) and entries (Figures 4 and 5), and their _ci95
// columns are the 95 % half-widths of the same ratios taken run by run
// (the runs are of equal length, so the pooled ratio and the mean of the
// runs' ratios differ by far less than the half-width).
func BV95Table(outs []Outcome) *Table {
	var gs []*bv95Group
	index := map[string]*bv95Group{}
	for _, o := range outs {
		r := o.Run
		c := BV95Setting{Ts: r.Ts, Tr: r.Tr, Tt: r.Tt, E: r.E}
		key := fmt.Sprintf("%s %v %v", r.Label, r.Lambda, c)
		g := index[key]
		if g == nil {
			g = &bv95Group{label: r.Label, lambda: r.Lambda, c: c}
			index[key] = g
			gs = append(gs, g)
		}
		res := o.Result
		g.delays = append(g.delays, res.EntryWait.Mean)
		g.entries += res.Entries
		g.messages += res.Messages
		g.words += res.Words
		e, m, w := float64(res.Entries), float64(res.Messages), float64(res.Words)
		g.msgsPerEntry = append(g.msgsPerEntry, ratio(m, e))
		g.wordsPerMsg = append(g.wordsPerMsg, ratio(w, m))
		g.wordsPerEntry = append(g.wordsPerEntry, ratio(w, e))
	}
	t := &Table{LabelName: "algorithm", Header: BV95Columns}
	for _, g := range gs {
		d, ci := MeanCI(g.delays)
		e, m, w := float64(g.entries), float64(g.messages), float64(g.words)
		_, mpe := MeanCI(g.msgsPerEntry)
		_, wpm := MeanCI(g.wordsPerMsg)
		_, wpe := MeanCI(g.wordsPerEntry)
		t.Add(g.label, g.lambda, g.c.Ts, g.c.Tr, g.c.Tt, g.c.E, float64(len(g.delays)), d, ci,
			ratio(m, e), ratio(w, m), ratio(w, e), e, mpe, wpm, wpe)
	}
	return t
}

// BV95Rows returns the rows of t (a BV95Table) under setting c, for the
// plot of one figure.
func BV95Rows(t *Table, c BV95Setting) *Table {
	out := &Table{LabelName: t.LabelName, Header: t.Header}
	for i, r := range t.Rows {
		if (BV95Setting{Ts: r[1], Tr: r[2], Tt: r[3], E: r[4]}) == c {
			out.Add(t.Labels[i], r...)
		}
	}
	return out
}
