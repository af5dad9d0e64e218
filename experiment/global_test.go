package experiment

import (
	"bytes"
	"math"
	"testing"
)

// TestSimulateAllDeterministic: the tables do not depend on the number of
// workers (runs finish in any order, outcomes keep the order of the runs).
func TestSimulateAllDeterministic(t *testing.T) {
	runs := MessageRuns([]int{4, 9}, Heavy, Common{Entries: 60, Seed: 7}, 1)
	var csv [2]bytes.Buffer
	for i, workers := range []int{1, 3} {
		outs, err := SimulateAll(runs, workers, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := MessageTable(outs).WriteCSV(&csv[i]); err != nil {
			t.Fatal(err)
		}
	}
	if csv[0].String() != csv[1].String() {
		t.Fatalf("1 worker:\n%s\n3 workers:\n%s", csv[0].String(), csv[1].String())
	}
}

// TestLightLoadMatchesPseudoCode: uncontended, an Exit+Entry pair costs what
// the pseudo-code of Algorithms 1-3 sends (UncontendedMessages), within 3 %
// (the rare overlapping request adds Response2s and FAILEDs), and Raymond
// stays in [2n-k-1, 2(n-1)].
func TestLightLoadMatchesPseudoCode(t *testing.T) {
	outs, err := SimulateAll(MessageRuns([]int{16, 25}, Light, Common{Entries: 300, Seed: 1}, 1), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		got := o.Result.MessagesPerEntry()
		want := UncontendedMessages(o.Run.Alg, o.Run.N, o.MeanQ)
		if o.Run.Alg == "raymond" {
			if lo := float64(2*o.Run.N - o.Hi - 1); got < lo || got > want {
				t.Errorf("%s n=%d: %.2f messages per pair outside [%v, %v]", o.Run.Label, o.Run.N, got, lo, want)
			}
			continue
		}
		if math.Abs(got-want) > 0.03*want {
			t.Errorf("%s n=%d: %.2f messages per pair, pseudo-code says %.2f", o.Run.Label, o.Run.N, got, want)
		}
	}
}

// TestUncontendedWaits: with unit transit delay and no local cost, an
// uncontended MUTIN exit and (l,k)-GCS entry and exit take 6 time units
// (docs/experiments.md explains the paper's 7 and 9), Raymond's entry 2.
func TestUncontendedWaits(t *testing.T) {
	outs, err := SimulateAll(WaitingRuns([]int{16}, []float64{0.001}, Common{Entries: 400, Seed: 1}, 1), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"gcs": {6, 6}, "mutin": {0, 6}, "kmutex": {6, 0}, "raymond": {2, 0}}
	for _, o := range outs {
		w := want[o.Run.Alg]
		// p50 comes from a histogram accurate to 0.39 %.
		if e, x := o.Result.EntryWait.P50, o.Result.ExitWait.P50; math.Abs(e-w[0]) > 0.04 || math.Abs(x-w[1]) > 0.04 {
			t.Errorf("%s: median entry wait %.3f, exit wait %.3f; want %v, %v", o.Run.Alg, e, x, w[0], w[1])
		}
	}
}

// TestSeedsSummarised: with three seeds a point is one row, its
// seeds column 3, its mean the mean of the three runs' values and its
// half-width Student's t with 2 degrees of freedom times s/√3.
func TestSeedsSummarised(t *testing.T) {
	runs := WaitingRuns([]int{9}, []float64{0.1}, Common{Entries: 100, Seed: 5}, 3)
	if len(runs) != 4*3 || runs[0].Seed != 5 || runs[2].Seed != 7 || runs[3].Seed != 5 {
		t.Fatalf("%d runs, seeds %d %d %d; want 12, 5 7 5", len(runs), runs[0].Seed, runs[2].Seed, runs[3].Seed)
	}
	outs, err := SimulateAll(runs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab := WaitingTable(outs)
	if len(tab.Rows) != 4 {
		t.Fatalf("%d rows, want one per algorithm", len(tab.Rows))
	}
	seeds, _ := tab.Column("seeds")
	mean, _ := tab.Column("entry_wait_mean_time_units")
	ci, _ := tab.Column("entry_wait_ci95_time_units")
	var xs []float64
	for _, o := range outs[:3] {
		xs = append(xs, o.Result.EntryWait.Mean)
	}
	m := (xs[0] + xs[1] + xs[2]) / 3
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	half := 4.303 * math.Sqrt(ss/2) / math.Sqrt(3)
	r := tab.Rows[0]
	if r[seeds] != 3 || math.Abs(r[mean]-m) > 1e-9 || math.Abs(r[ci]-half) > 1e-9 {
		t.Errorf("%s: seeds %v, mean %v, ci %v; want 3, %v, %v", tab.Labels[0], r[seeds], r[mean], r[ci], m, half)
	}
	msgs := MessageTable(outs)
	if c, _ := msgs.Column("messages_per_pair_ci95"); len(msgs.Rows) != 4 || math.IsNaN(msgs.Rows[0][c]) {
		t.Errorf("message table of the same runs: %d rows, first half-width %v; want 4 rows and a number", len(msgs.Rows), msgs.Rows[0][c])
	}
}

func TestSimulateRefusesBadRuns(t *testing.T) {
	for _, r := range []Run{
		{Label: "x", Alg: "nope", N: 4, K: 2, Lambda: 1, E: 1, Common: Common{Entries: 10}},
		{Label: "x", Alg: "gcs", Coterie: "nope", N: 4, L: 1, K: 2, Lambda: 1, E: 1, Common: Common{Entries: 10}},
		{Label: "x", Alg: "gcs", Coterie: "grid", N: 4, L: 2, K: 2, Lambda: 1, E: 1, Common: Common{Entries: 10}},
		{Label: "x", Alg: "raymond", N: 4, K: 2, Lambda: 0, E: 1, Common: Common{Entries: 10}},
	} {
		if _, err := SimulateAll([]Run{r}, 1, nil); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}

// TestSaturationCeiling: under saturation (lambda = E = 1, Tt = 1 const)
// a MUTIN object completes at most one Exit per 5 to 6 time units: each
// holds mx for 4 (Query/Response1, Acquire/Ack) and passing mx on takes
// Maekawa's RELEASE and LOCKED (2), or only 1 when the arbiter that must
// pass the lock is the old or the new holder (reached without the
// network). At n = 3 on majority every handover is short (1/5); on
// grid(16) none is (1/6); n = 4 mixes both (docs/experiments.md).
func TestSaturationCeiling(t *testing.T) {
	c := Common{Entries: 1500, Seed: 1}
	for _, tc := range []struct {
		run    Run
		lo, hi float64
	}{
		{Run{Label: "mutin majority 3", Alg: "mutin", Coterie: "majority", N: 3, L: 1, K: 3, Lambda: 1, E: 1, Common: c}, 0.198, 0.2},
		{Run{Label: "kmutex grid 4", Alg: "kmutex", Coterie: "grid", N: 4, K: 3, Lambda: 1, E: 1, Common: c}, 0.175, 0.195},
		{Run{Label: "kmutex grid 16", Alg: "kmutex", Coterie: "grid", N: 16, K: 12, Lambda: 1, E: 1, Common: c}, 0.164, 1.0 / 6},
		{Run{Label: "gcs grid 16", Alg: "gcs", Coterie: "grid", N: 16, L: 4, K: 12, Lambda: 1, E: 1, Common: c}, 0.164, 1.0 / 6},
	} {
		o, err := tc.run.Simulate()
		if err != nil {
			t.Fatal(err)
		}
		if th := o.Result.Throughput(); th < tc.lo || th > tc.hi {
			t.Errorf("%s: throughput %.4f outside [%.4f, %.4f]", tc.run.Label, th, tc.lo, tc.hi)
		}
	}
}
