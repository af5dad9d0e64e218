package check_test

import (
	"reflect"
	"strings"
	"testing"

	"critsec/alg"
	"critsec/check"
	"critsec/cs"
)

// TestMemo: the memo of machine calls changes nothing in the results, paths
// and their events included: runs with the memo disabled, with a memo that
// is emptied after every call, and with the default memo agree on ok runs,
// bounds violations, deadlocks, crashes with and without a failure
// detector, unordered channels, and every registered algorithm.
func TestMemo(t *testing.T) {
	type tc struct {
		name string
		cfg  func() check.Config
	}
	cases := []tc{
		{"raymond", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Hi: 2, Budget: 2, Workers: 2}
		}},
		{"raymond hi=1", func() check.Config { return check.Config{Machines: raymondMachines(t, 3, 2), Hi: 1, Budget: 2} }},
		{"raymond unordered", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Hi: 2, Budget: 2, Unordered: true}
		}},
		{"co(raymond) budget stops", func() check.Config {
			ms := raymondMachines(t, 3, 2)
			for i := range ms {
				ms[i] = cs.Co(ms[i])
			}
			return check.Config{Machines: ms, Lo: 1, Hi: 3, Budget: 1}
		}},
		{"greedy ra deadlock", func() check.Config { return check.Config{Machines: newRA(3, true), Hi: 1, Budget: 2} }},
		{"ra crash", func() check.Config { return check.Config{Machines: newRA(3, false), Hi: 1, Budget: 2, Crashes: 1} }},
		{"ra crash perfect", func() check.Config {
			return check.Config{Machines: newRA(3, false), Hi: 1, Budget: 2, Crashes: 1, Detector: check.Perfect{}}
		}},
	}
	for _, a := range alg.All() {
		p := cs.Params{N: 3, L: 0, K: 2}
		if strings.HasPrefix(a.Name, "mutin") || strings.HasPrefix(a.Name, "gcs") {
			p.L = 1
		}
		if a.Quorums {
			p.Quorums = arcs(3)
		}
		p.Initial = a.DefaultInitial(p)
		lo, hi := a.Bounds(p)
		for _, h := range []int{hi, hi - 1} {
			if h < lo {
				continue
			}
			cases = append(cases, tc{a.Name, func() check.Config {
				ms, err := a.New(p)
				if err != nil {
					t.Fatal(err)
				}
				return check.Config{Machines: ms, Lo: lo, Hi: h, Budget: 1}
			}})
		}
	}
	defer func(n int) { *check.MemoEntries = n }(*check.MemoEntries)
	def := *check.MemoEntries
	for _, c := range cases {
		var want check.Result
		for _, entries := range []int{0, 1, def} {
			*check.MemoEntries = entries
			res := mustRun(t, c.cfg())
			res.Seconds = 0
			if entries == 0 {
				want = res
				continue
			}
			if !reflect.DeepEqual(res, want) {
				t.Errorf("%s: with a memo of %d entries: %+v\nwithout: %+v", c.name, entries, res, want)
			}
		}
	}
}
