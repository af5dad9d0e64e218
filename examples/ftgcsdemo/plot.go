package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/critsec/critsec/experiment"
)

// plot prints the copies' numbers over the run in path's log and draws
// them into out, with l, k and the kills; it returns boundsBroken if more
// than k copies ever ran, fewer than l after a kill's recovery, or a kill
// had no replacement.
func plot(path string, l, k int, out string) error {
	if l < 0 || k <= l || out == "" {
		return fmt.Errorf("-l %d -k %d -out %q: give 0 <= l < k and an image to write", l, k, out)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	recs, err := readRecords(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	a, err := analyze(recs, k)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	sec := func(t int64) float64 { return float64(t-a.t0) / 1e9 }
	ms := func(d int64) string { return time.Duration(d).Round(time.Millisecond).String() }
	fmt.Printf("copies running from the first time %d ran (%.1f s) to the end (%.1f s): %d..%d; at most %d over the whole log\n",
		k, sec(a.steady), sec(a.end), a.min, a.max, a.maxAll)
	// The bounds first and the copies after, so that the copies are drawn
	// over the bounds; the kills' lines reach above k, leaving the legend
	// room above the data.
	t := &experiment.Table{LabelName: "series", Header: []string{"t", "count"}}
	for _, b := range []struct {
		name string
		v    int
	}{{"l", l}, {"k", k}} {
		t.Add(fmt.Sprintf("%s = %d", b.name, b.v), 0, float64(b.v))
		t.Add(fmt.Sprintf("%s = %d", b.name, b.v), sec(a.end), float64(b.v))
	}
	prev := 0
	for _, s := range a.steps {
		if s.t > a.end {
			break
		}
		t.Add("copies running", sec(s.t), float64(prev))
		t.Add("copies running", sec(s.t), float64(s.copies))
		prev = s.copies
	}
	t.Add("copies running", sec(a.end), float64(prev))
	var errs []error
	for i, kl := range a.kills {
		label := fmt.Sprintf("SIGKILL of P%d's critsec run", kl.member)
		t.Add(label, sec(kl.t), 0)
		t.Add(label, sec(kl.t), float64(k)+1.5)
		if kl.replaced == 0 {
			fmt.Printf("kill %d (P%d at %.1f s): its copy's last record %s after the kill, no copy started after it; %d..%d copies until the end\n",
				i+1, kl.member, sec(kl.t), ms(kl.gone-kl.t), kl.minDuring, kl.maxDuring)
			errs = append(errs, fmt.Errorf("kill %d: no replacement", i+1))
			continue
		}
		fmt.Printf("kill %d (P%d at %.1f s): its copy's last record %s after the kill, a new copy's first %s after; %d..%d copies in between, %d..%d after\n",
			i+1, kl.member, sec(kl.t), ms(kl.gone-kl.t), ms(kl.replaced-kl.t), kl.minDuring, kl.maxDuring, kl.minAfter, kl.maxAfter)
		if kl.minAfter < l {
			errs = append(errs, fmt.Errorf("kill %d: %d copies after the recovery, under l = %d", i+1, kl.minAfter, l))
		}
	}
	if a.maxAll > k {
		errs = append(errs, fmt.Errorf("%d copies ran at once, over k = %d", a.maxAll, k))
	}
	if err := t.Plot(experiment.Chart{Title: fmt.Sprintf("critsec run, ftgcs (l,k) = (%d,%d), majority mode: copies running", l, k),
		X: "t", Y: "count", XLabel: "seconds (from the first record to the end of the run)", YLabel: "copies"}, out); err != nil {
		return err
	}
	fmt.Println("wrote", out)
	if len(errs) > 0 {
		return boundsBroken{errors.Join(errs...)}
	}
	return nil
}

// boundsBroken is plot's finding that the copies broke a bound: the run
// completed, and the plot was drawn.
type boundsBroken struct{ error }
