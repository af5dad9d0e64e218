package experiment

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/trace"
)

// TestSteps: the timeline's time steps from a hand-made event list that
// starts with processes InCS: the minimum follows the crash InCS.
func TestSteps(t *testing.T) {
	evs := []trace.Event{
		{T: 4, Ev: trace.EvCrash, Node: 1},
		{T: 6, Ev: trace.EvState, Node: 3, State: "InCS"},
		{T: 15, Ev: trace.EvState, Node: 2, State: "OutCS"},
	}
	var got [][]float64
	steps(evs, 3, []cs.ID{1, 2}, 10, 20, func(at, mean float64, lo, hi, live int) {
		got = append(got, []float64{at, mean, float64(lo), float64(hi), float64(live)})
	})
	want := [][]float64{{0, (4*2 + 2*1 + 4*2) / 10.0, 1, 2, 2}, {10, (5*2 + 5*1) / 10.0, 1, 2, 2}}
	if len(got) != len(want) {
		t.Fatalf("steps %v", got)
	}
	for i := range want {
		for j := range want[i] {
			if math.Abs(got[i][j]-want[i][j]) > 1e-12 {
				t.Errorf("step %d = %v, want %v", i, got[i], want[i])
			}
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ q, want float64 }{{0.5, 5}, {0.9, 9}, {0.95, 10}, {1, 10}, {0.01, 1}} {
		if got := Quantile(xs, c.q); got != c.want {
			t.Errorf("Quantile(%g) = %g, want %g", c.q, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile of nothing is a number")
	}
}

// TestRecoveryCDF: the crashes that never recovered count in the fraction's
// denominator, not as points; every point has the curve's band.
func TestRecoveryCDF(t *testing.T) {
	crashes := &Table{LabelName: "alg", Header: []string{"seed", "node", "t_time_units", "deficit", "recovery_time_units"}}
	crashes.Add(FTGCSName, 1, 2, 10, 1, 7)
	crashes.Add(FTGCSName, 1, 3, 20, 1, math.Inf(1))
	crashes.Add(FTGCSName, 2, 2, 30, 2, 3)
	cdf, err := RecoveryCDF(crashes)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{3, 1.0 / 3}, {7, 2.0 / 3}}
	if len(cdf.Rows) != 2 || cdf.Rows[0][0] != want[0][0] || cdf.Rows[1][1] != want[1][1] {
		t.Fatalf("cdf %v, want %v", cdf.Rows, want)
	}
	// The band over 3 crashes: sqrt(ln 40 / 6) = 0.7841, one for the curve.
	for _, r := range cdf.Rows {
		if math.Abs(r[2]-0.7841) > 1e-4 {
			t.Errorf("band %v, want 0.784 (Dvoretzky-Kiefer-Wolfowitz, 3 crashes)", r[2])
		}
	}
}

// TestFTGCSSmall runs the study's three parts on a small instance: #InCS
// stays within k through the crashes, every algorithm of the sweep has its
// rows, ftgcs costs more messages than ftraymond alone, and every crash
// InCS of the recovery runs is counted.
func TestFTGCSSmall(t *testing.T) {
	c := FTGCS{N: 6, L: 2, K: 3, Random: 2, From: 50, To: 200, Lambda: 0.05, E: 1, Detector: detector.T, DetectDelay: 3,
		After: 200, Bin: 10, Seed: 1, Seeds: 3, Ns: []int{4, 6}, SweepL: 1, SweepK: 2, SweepCrashes: 1, Entries: 200}
	tl, err := c.Timeline()
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Rows) != int(c.end(nil)/c.Bin) {
		t.Fatalf("timeline: %d rows, want one per step up to %v", len(tl.Rows), c.end(nil))
	}
	svg := filepath.Join(t.TempDir(), "tl.svg")
	if err := c.PlotTimeline(tl, svg); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("mean over 3 runs; band: minimum to maximum over the runs")) {
		t.Fatalf("the timeline's title does not say what its band is (%v)", err)
	}
	for _, r := range tl.Rows {
		if r[3] > float64(c.K) || r[2] < 0 || r[1] < r[2] || r[1] > r[3] || r[5] != 2 || r[6] != 3 {
			t.Fatalf("timeline row %v", r)
		}
	}
	msgs, err := c.Messages()
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]float64{}
	for i, r := range msgs.Rows {
		per[fmt.Sprint(msgs.Labels[i], r[0])] = r[5]
	}
	if len(msgs.Rows) != 10 || per["ftgcs6"] <= per["ftraymond6"] {
		t.Fatalf("messages: %v", per)
	}
	perCrash, summary, err := c.Recovery()
	if err != nil {
		t.Fatal(err)
	}
	if len(summary.Rows) != 1 || summary.Rows[0][4] != float64(len(perCrash.Rows)) || summary.Rows[0][5] > summary.Rows[0][4] {
		t.Fatalf("recovery: %v over %d crashes InCS", summary.Rows, len(perCrash.Rows))
	}
}
