package experiment

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// TestInUse: the time steps of Figure 2 from a hand-made event list.
func TestInUse(t *testing.T) {
	evs := []trace.Event{
		{T: 1, Ev: trace.EvState, Node: 1, State: "InCS"},
		{T: 5, Ev: trace.EvState, Node: 2, State: "InCS"},
		{T: 12, Ev: trace.EvCrash, Node: 1},
		{T: 15, Ev: trace.EvState, Node: 2, State: "OutCS"},
	}
	tb := &Table{}
	inUse(tb, "x", evs, 3, 10, 20)
	want := [][]float64{{0, (4*1 + 5*2) / 10.0, 2, 3}, {10, (2*2 + 3*1) / 10.0, 2, 2}}
	if len(tb.Rows) != len(want) {
		t.Fatalf("rows %v", tb.Rows)
	}
	for i, w := range want {
		for j := range w {
			if math.Abs(tb.Rows[i][j]-w[j]) > 1e-12 {
				t.Errorf("row %d = %v, want %v", i, tb.Rows[i], w)
			}
		}
	}
	// A process that crashes InCS at a step's start does not count in
	// that step's maximum: no time of the step saw it InCS.
	tb = &Table{}
	inUse(tb, "x", []trace.Event{
		{T: 1, Ev: trace.EvState, Node: 1, State: "InCS"},
		{T: 10, Ev: trace.EvCrash, Node: 1},
	}, 3, 10, 20)
	if len(tb.Rows) != 2 || tb.Rows[1][2] != 0 || tb.Rows[1][3] != 2 {
		t.Errorf("crash at a step's start: rows %v, want the second with maximum 0 and 2 live", tb.Rows)
	}
}

// TestFT07Small runs the study's three parts on a small instance: Raymond
// stops entering once k processes have crashed, ftraymond goes on to the
// last live process, and the message counts sit within the paper's bounds.
func TestFT07Small(t *testing.T) {
	c := FT07{N: 5, K: 2, Lambda: 1, E: 1, Detector: detector.T, DetectDelay: 3, MaxTime: 700, Bin: 10, Entries: 300, Seed: 2}
	for i := range c.N - 1 {
		c.Crashes = append(c.Crashes, sim.Crash{At: float64(100 * (i + 1)), Node: cs.ID(i + 2)})
	}
	fig, err := c.Figure2()
	if err != nil {
		t.Fatal(err)
	}
	lastBusy := map[string]float64{}
	for i, r := range fig.Rows {
		if r[2] > 0 {
			lastBusy[fig.Labels[i]] = r[0]
		}
	}
	if lastBusy["raymond"] >= 300 || lastBusy["ftraymond"] < 500 {
		t.Errorf("last step with a resource in use: %v (k = 2 crashes at t = 200, the last at 400)", lastBusy)
	}
	// The plot draws both algorithms' maximum and mean; an empty table is
	// refused with one line and no file.
	dir := t.TempDir()
	if err := PlotFigure2(fig, c.Crashes, filepath.Join(dir, "f.svg")); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "f.svg"))
	if err != nil || !strings.Contains(string(svg), "ftraymond maximum") || !strings.Contains(string(svg), "raymond mean") {
		t.Errorf("figure 2 (%v) lacks the maximum or the mean in its legend", err)
	}
	if err := PlotFigure2(&Table{LabelName: "alg", Header: fig.Header}, c.Crashes, filepath.Join(dir, "e.svg")); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("empty table: %v, want one line", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "e.svg")); err == nil {
		t.Error("a refused figure left a file")
	}
	msgs, err := c.Messages()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range msgs.Rows {
		if r[2] < r[3] || r[2] > r[4] {
			t.Errorf("%s = %g, outside the paper's %g..%g", msgs.Labels[i], r[2], r[3], r[4])
		}
	}
}

// TestRecovery: the recovery time counts the requests pending at the
// crash, not those made later, and is infinite while one never completes.
func TestRecovery(t *testing.T) {
	evs := []trace.Event{
		{T: 1, Ev: trace.EvRequest, Node: 1, Op: "entry"},
		{T: 2, Ev: trace.EvRequest, Node: 2, Op: "entry"},
		{T: 5, Ev: trace.EvCrash, Node: 3},
		{T: 6, Ev: trace.EvState, Node: 2, State: "InCS"},
		{T: 7, Ev: trace.EvRequest, Node: 4, Op: "entry"},
		{T: 8, Ev: trace.EvState, Node: 4, State: "InCS"},
		{T: 12, Ev: trace.EvState, Node: 1, State: "InCS"},
	}
	if first, all := recovery(evs, 4, 5); first != 1 || all != 7 {
		t.Errorf("recovery = %g, %g; want 1, 7", first, all)
	}
	if _, all := recovery(evs[:6], 4, 5); !math.IsInf(all, 1) {
		t.Errorf("recovery with P1 still waiting = %g, want +Inf", all)
	}
}
