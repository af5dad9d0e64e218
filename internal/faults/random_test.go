package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// randomCases are the clusters of TestRandomSchedule; their schedules
// are drawn at random.
var randomCases = []Case{
	{name: "raymond", problem: "alg: raymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1}, period: 400 * time.Millisecond, live: 3},
	{name: "gcs-always", problem: "alg: gcs\nn: 5\nl: 2\nk: 3\n", n: 5, bounds: Bounds{K: 3, L: 2}, live: 3},
	{name: "gcs-signal", problem: "alg: gcs\nn: 5\nl: 1\nk: 3\n", n: 5, bounds: Bounds{K: 3}, period: 400 * time.Millisecond, live: 5},
	// Majority mode, so that partitions of any length keep the bound; each
	// fault past the timeout may cost a member for good, and after two of
	// the five the rest may wedge (docs/fencing.md), so nothing is asked of
	// the copies after the schedule but the bound.
	{name: "ftraymond-majority", problem: "alg: ftraymond\nn: 5\nk: 2\n", n: 5, bounds: Bounds{K: 2}, period: 400 * time.Millisecond,
		detector: majorityDetector, live: 0},
}

// randomSchedule draws faults (every kind but KillSupervisor, whose
// orphan breaks the bound until the command dies with its supervisor)
// until they fill d: each 0.3-2 s after the previous, lasting 0.2-3 s,
// on the member InCS at the time two times in three, else on any. With
// a detector, a pause-tree lasts at most 300 ms (crashStopKinds says why).
func randomSchedule(rng *rand.Rand, n int, d time.Duration, detector bool) []Fault {
	var s []Fault
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Millisecond }
	for total := time.Duration(0); total < d; {
		k := Kind(rng.IntN(int(nKinds)))
		if k == KillSupervisor {
			continue
		}
		f := Fault{Kind: k, After: ms(300, 2000), For: ms(200, 3000)}
		if k == PauseTree && detector {
			f.For = ms(100, 300)
		}
		if rng.IntN(3) == 0 {
			f.Target = 1 + rng.IntN(n)
		}
		switch k {
		case Loss:
			f.Pct = 10 + rng.IntN(41)
		case Delay:
			f.Delay = ms(20, 300)
		}
		s = append(s, f)
		total += f.After + f.For
	}
	return s
}

// TestRandomSchedule runs each of randomCases for an equal share of
// -faults.duration under a random schedule drawn from -faults.seed, and
// prints a table: faults per kind, the most copies at once, the spans
// over k (and under l) with their total length. Skipped unless
// -faults.duration is given (docs/faults.md):
//
//	go test ./internal/faults -run TestRandomSchedule -v -faults.duration 10m -faults.seed 7
func TestRandomSchedule(t *testing.T) {
	if *duration <= 0 {
		t.Skip("give -faults.duration to run the random schedules (docs/faults.md)")
	}
	needNet(t)
	build(t)
	run := randomCases
	share := *duration / time.Duration(len(run))
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "case\t")
	for _, k := range Kinds() {
		fmt.Fprintf(tw, "%s\t", k)
	}
	fmt.Fprint(tw, "copies\tmax (k)\tover k\tms over k\tmin (l)\tunder l\ttrace\t\n")
	failed := false
	for i, c := range run {
		c.schedule = randomSchedule(rand.New(rand.NewPCG(*seed, uint64(i))), c.n, share, c.detector != "")
		var res Result
		ok := t.Run(c.name, func(t *testing.T) {
			res = runCase(t, c, 0)
			t.Log(summary(c, res))
			for _, p := range res.Problems {
				t.Error(p)
			}
		})
		failed = failed || !ok
		count := map[Kind]int{}
		for _, in := range res.Injected {
			count[in.Kind]++
		}
		fmt.Fprintf(tw, "%s\t", c.name)
		for _, k := range Kinds() {
			fmt.Fprintf(tw, "%d\t", count[k])
		}
		var overMs int64
		for _, s := range res.Record.Over {
			overMs += s.Ms
		}
		verdict := "ok"
		if res.Trace == nil {
			verdict = "-"
		} else if res.Trace.Violation != nil {
			verdict = "violation"
		}
		minL := "-"
		if c.bounds.L > 0 {
			minL = fmt.Sprintf("%d (%d)", res.Record.Min, c.bounds.L)
		}
		fmt.Fprintf(tw, "%d\t%d (%d)\t%d\t%d\t%s\t%d\t%s\t\n", len(res.Record.Copies), res.Record.Max, c.bounds.K,
			len(res.Record.Over), overMs, minL, len(res.Record.Under), verdict)
	}
	tw.Flush()
	fmt.Fprintf(os.Stdout, "random schedules, seed %d, %s in all:\n%s", *seed, *duration, table.String())
	if failed {
		t.Error("some schedules failed: see above")
	}
}
