package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/sim"
)

// smallBV95 runs a study small enough for -short: every line, every
// setting, two rates, two seeds of 200 entries, on workers goroutines.
func smallBV95(t *testing.T, workers int) *Table {
	t.Helper()
	s := BV95Study{N: 30, K: 3, Nu: 2, Lambdas: []float64{0.01, 1}, Settings: BV95Settings, Seeds: []uint64{1, 2}, Entries: 200}
	outs, err := SimulateAll(BV95Runs(s), workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	return BV95Table(outs)
}

// TestBV95TableDeterministic: the study's table has its documented columns,
// one row per line, setting and rate with the seeds pooled, and is the
// same byte for byte on one worker and on two.
func TestBV95TableDeterministic(t *testing.T) {
	one, two := csvOf(t, smallBV95(t, 1)), csvOf(t, smallBV95(t, 2))
	if one != two {
		t.Fatalf("one worker and two give different tables:\n%s\n%s", one, two)
	}
	lines := strings.Split(strings.TrimSpace(one), "\n")
	want := "algorithm,lambda_requests_per_time_unit,ts_time_units,tr_time_units,tt_time_units,e_time_units,seeds,avg_delay_time_units,delay_ci95_time_units,msgs_per_entry,words_per_msg,words_per_entry,entries,msgs_per_entry_ci95,words_per_msg_ci95,words_per_entry_ci95"
	if lines[0] != want {
		t.Errorf("header %q, want %q", lines[0], want)
	}
	if got, rows := len(lines)-1, len(BV95Lines(2))*len(BV95Settings)*2; got != rows {
		t.Errorf("%d rows, want %d (lines × settings × rates)", got, rows)
	}
	tab := smallBV95(t, 2)
	seeds, _ := tab.Column("seeds")
	entries, _ := tab.Column("entries")
	ci, _ := tab.Column("msgs_per_entry_ci95")
	for i, r := range tab.Rows {
		if math.IsNaN(r[ci]) || r[ci] < 0 {
			t.Errorf("row %d (%s): msgs_per_entry_ci95 %v with two seeds, want a half-width >= 0", i, tab.Labels[i], r[ci])
		}
		// Each drained run makes its 200 entries and at most the n-1
		// requests pending at the stop.
		if r[seeds] != 2 || r[entries] < 400 || r[entries] > 400+2*29 {
			t.Errorf("row %d (%s): seeds %v, entries %v; want 2 and 400..458", i, tab.Labels[i], r[seeds], r[entries])
		}
	}
}

// TestBV95RaymondUncontended: at a rate so low that requests never
// overlap, Raymond's k-mutex sends a REQUEST to each of the n-1 others
// and each replies at once (none is InCS or asking): 2(n-1) messages per
// entry, the upper bound section 4 quotes; a REPLY carries no more than a
// REQUEST, 4 words (Figure 5's horizontal line).
func TestBV95RaymondUncontended(t *testing.T) {
	s := BV95Study{N: 30, K: 3, Nu: 2, Lambdas: []float64{1e-4}, Settings: BV95Settings[:1], Seeds: []uint64{1}, Entries: 300}
	var runs []Run
	for _, r := range BV95Runs(s) {
		if r.Label == "raymond" {
			runs = append(runs, r)
		}
	}
	outs, err := SimulateAll(runs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab := BV95Table(outs)
	m, _ := tab.Column("msgs_per_entry")
	w, _ := tab.Column("words_per_msg")
	ci, _ := tab.Column("delay_ci95_time_units")
	if len(tab.Rows) != 1 || tab.Rows[0][m] != 2*(30-1) || tab.Rows[0][w] != 4 {
		t.Fatalf("raymond at lambda 1e-4: %v (want msgs_per_entry 58, words_per_msg 4)", tab.Rows)
	}
	if !math.IsNaN(tab.Rows[0][ci]) {
		t.Errorf("one seed gives a confidence interval %v, want NaN", tab.Rows[0][ci])
	}
}

// TestBV95Rows: the rows of one setting are exactly those with its costs.
func TestBV95Rows(t *testing.T) {
	tab := smallBV95(t, 2)
	for _, c := range BV95Settings {
		sub := BV95Rows(tab, c)
		if len(sub.Rows) != len(BV95Lines(2))*2 {
			t.Errorf("setting %+v: %d rows, want %d", c, len(sub.Rows), len(BV95Lines(2))*2)
		}
		for _, r := range sub.Rows {
			if r[1] != c.Ts || r[2] != c.Tr || r[3] != c.Tt || r[4] != c.E {
				t.Errorf("setting %+v: row %v", c, r)
			}
		}
	}
}

// countingEnv counts the messages and words a machine sends, by kind.
type countingEnv struct {
	cs.Env
	msgs, words map[string]int64
}

func (e countingEnv) Send(to cs.ID, m cs.Message) {
	e.msgs[m.Kind()]++
	e.words[m.Kind()] += int64(m.Words())
	e.Env.Send(to, m)
}

// counted passes every call of a machine a countingEnv.
type counted struct {
	cs.Machine
	env countingEnv
}

func (m counted) Entry(env cs.Env) error { m.env.Env = env; return m.Machine.Entry(m.env) }
func (m counted) Exit(env cs.Env) error  { m.env.Env = env; return m.Machine.Exit(m.env) }
func (m counted) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	m.env.Env = env
	return m.Machine.Receive(m.env, from, msg)
}

// TestBV95WordsByKind: at λ = 1 (Ts = Tr = 0.1, Tt = 0.8, E = 0.0002) the
// forest with the last seen token sends more words per message than with a
// random token, not because its messages are larger (REQUEST and INFORM
// have one size, TOKEN differs by under a fifth) but because the random
// choice adds small REQUEST hops and INFORMs per entry: the mean over
// messages falls while the words per entry rise (docs/token-k-mutex.md,
// "Words per message with and without the heuristic").
func TestBV95WordsByKind(t *testing.T) {
	type tally struct{ entries, msgs, words map[string]float64 }
	by := map[string]tally{}
	for _, choice := range []string{"last-seen", "random"} {
		a, err := alg.Lookup("forest")
		if err != nil {
			t.Fatal(err)
		}
		spec := a.SpecFor(30, 0, 3)
		spec.Options = map[string]string{"token": choice, "nu": "2"}
		pr, err := alg.Resolve(spec)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := pr.Machines()
		if err != nil {
			t.Fatal(err)
		}
		env := countingEnv{msgs: map[string]int64{}, words: map[string]int64{}}
		for i := range ms {
			ms[i] = counted{ms[i], env}
		}
		c := BV95Settings[0]
		res, err := sim.Run(sim.Config{Machines: ms, Property: pr.Property, Lambda: 1, E: c.E, Ts: c.Ts, Tr: c.Tr, Tt: c.Tt,
			Entries: 2000, Drain: true, Seed: 1})
		if err != nil || res.Violation != nil {
			t.Fatalf("%s: %v %v", choice, err, res.Violation)
		}
		tl := tally{map[string]float64{}, map[string]float64{}, map[string]float64{}}
		for k, n := range env.msgs {
			tl.entries[k] = float64(n) / float64(res.Entries)
			tl.msgs[k] = float64(n)
			tl.words[k] = float64(env.words[k])
		}
		var m, w float64
		for k := range tl.msgs {
			m += tl.msgs[k]
			w += tl.words[k]
		}
		tl.msgs["all"], tl.words["all"], tl.entries["all"] = m, w, float64(res.Entries)
		by[choice] = tl
	}
	size := func(c, k string) float64 { return by[c].words[k] / by[c].msgs[k] }
	perEntry := func(c string) float64 { return by[c].words["all"] / by[c].entries["all"] }
	last, random := "last-seen", "random"
	t.Logf("words per message %.2f / %.2f, TOKEN %.1f / %.1f words, words per entry %.1f / %.1f (last seen / random)",
		size(last, "all"), size(random, "all"), size(last, "TOKEN"), size(random, "TOKEN"), perEntry(last), perEntry(random))
	if size(last, "all") <= size(random, "all")+2 {
		t.Errorf("words per message %.2f (last seen) against %.2f (random): want the gap the study measures", size(last, "all"), size(random, "all"))
	}
	if size(last, "REQUEST") != size(random, "REQUEST") || math.Abs(size(last, "TOKEN")-size(random, "TOKEN")) > 0.2*size(random, "TOKEN") {
		t.Errorf("sizes: REQUEST %.2f / %.2f, TOKEN %.2f / %.2f: want equal REQUESTs and TOKENs within a fifth",
			size(last, "REQUEST"), size(random, "REQUEST"), size(last, "TOKEN"), size(random, "TOKEN"))
	}
	small := func(c string) float64 { return by[c].entries["REQUEST"] + by[c].entries["INFORM"] }
	if small(random) < small(last)+0.5 || perEntry(random) <= perEntry(last) {
		t.Errorf("REQUEST+INFORM per entry %.2f (random) against %.2f, words per entry %.1f against %.1f: want more small messages and more words per entry with a random token",
			small(random), small(last), perEntry(random), perEntry(last))
	}
}
