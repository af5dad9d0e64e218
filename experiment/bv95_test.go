package experiment

import (
	"math"
	"strings"
	"testing"
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
	want := "algorithm,lambda,ts,tr,tt,e,seeds,avg_delay,delay_ci95,msgs_per_entry,words_per_msg,words_per_entry,entries,msgs_per_entry_ci95,words_per_msg_ci95,words_per_entry_ci95"
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
	ci, _ := tab.Column("delay_ci95")
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
