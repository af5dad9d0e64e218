package main

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// step is the number of copies running from t (until the next step).
type step struct {
	t      int64
	copies int
}

// killed is what followed one kill: the killed member's copy's last
// record (gone, at least the kill's time), the first copy started after
// the kill (the replacement; 0 if none), and the fewest and most copies
// from gone to the replacement (detection) and from the replacement to
// the next kill or the end (after recovery).
type killed struct {
	t, gone, replaced    int64
	member               int
	minDuring, maxDuring int
	minAfter, maxAfter   int
}

// analysis is the count of running copies over a run.
type analysis struct {
	t0, steady, end int64 // the first record, the first time k copies ran, the end record
	steps           []step
	kills           []killed
	min, max        int // from steady to end
	maxAll          int // over the whole log
}

// analyze counts the copies running at each moment: a copy (a pid) runs
// from its start record to its last record, so the count is exact to
// within one heartbeat at a copy's end. Statistics are taken from the
// first moment k copies ran (the start-up is over) to the end record.
func analyze(recs []record, k int) (*analysis, error) {
	if len(recs) == 0 {
		return nil, errors.New("no records")
	}
	type span struct {
		from, to int64
		member   int
	}
	spans := map[int]*span{}
	a := &analysis{t0: recs[0].t, end: -1}
	var kills []record
	for _, r := range recs {
		a.t0 = min(a.t0, r.t)
		switch r.kind {
		case kindKill:
			kills = append(kills, r)
		case kindEnd:
			if a.end < 0 {
				a.end = r.t
			}
		default:
			if s, ok := spans[r.pid]; ok {
				s.from, s.to = min(s.from, r.t), max(s.to, r.t)
			} else {
				spans[r.pid] = &span{r.t, r.t, r.member}
			}
		}
	}
	// A killed member's copy ran until the kill at least: the kill record
	// comes before the copy's death, its last beat may come before both.
	gone := map[int64]int64{}
	for _, r := range kills {
		var last *span
		for _, s := range spans {
			if s.member == r.member && s.from <= r.t && (last == nil || s.from > last.from) {
				last = s
			}
		}
		gone[r.t] = r.t
		if last != nil {
			last.to = max(last.to, r.t)
			gone[r.t] = last.to
		}
	}
	if a.end < 0 {
		return nil, errors.New("no end record: the run did not finish")
	}
	type change struct {
		t int64
		d int
	}
	var cs []change
	for _, s := range spans {
		cs = append(cs, change{s.from, +1}, change{s.to + 1, -1})
	}
	slices.SortFunc(cs, func(x, y change) int { return cmp.Compare(x.t, y.t) })
	n := 0
	for i, c := range cs {
		n += c.d
		if i+1 < len(cs) && cs[i+1].t == c.t {
			continue
		}
		a.steps = append(a.steps, step{c.t, n})
		a.maxAll = max(a.maxAll, n)
	}
	a.steady = -1
	for _, s := range a.steps {
		if s.copies >= k {
			a.steady = s.t
			break
		}
	}
	if a.steady < 0 || a.steady > a.end {
		return nil, fmt.Errorf("never %d copies before the end", k)
	}
	a.min, a.max = a.span(a.steady, a.end)
	starts := make([]int64, 0, len(spans))
	for _, s := range spans {
		starts = append(starts, s.from)
	}
	slices.Sort(starts)
	slices.SortFunc(kills, func(x, y record) int { return cmp.Compare(x.t, y.t) })
	for i, r := range kills {
		kl := killed{t: r.t, gone: gone[r.t], member: r.member}
		next := a.end
		if i+1 < len(kills) {
			next = kills[i+1].t
		}
		if j := slices.IndexFunc(starts, func(s int64) bool { return s > r.t }); j >= 0 && starts[j] < next {
			kl.replaced = starts[j]
			kl.minDuring, kl.maxDuring = a.span(kl.gone+1, kl.replaced)
			kl.minAfter, kl.maxAfter = a.span(kl.replaced, next)
		} else {
			kl.minDuring, kl.maxDuring = a.span(kl.gone+1, next)
		}
		a.kills = append(a.kills, kl)
	}
	return a, nil
}

// count is the number of copies running at t.
func (a *analysis) count(t int64) int {
	n := 0
	for _, s := range a.steps {
		if s.t > t {
			break
		}
		n = s.copies
	}
	return n
}

// span returns the fewest and most copies running during [from, to).
func (a *analysis) span(from, to int64) (lo, hi int) {
	lo, hi = a.count(from), a.count(from)
	for _, s := range a.steps {
		if s.t > from && s.t < to {
			lo, hi = min(lo, s.copies), max(hi, s.copies)
		}
	}
	return lo, hi
}
