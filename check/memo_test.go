package check_test

import (
	"reflect"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
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
		// registry: a registered algorithm's case; under -short these run
		// without the one-entry memo (eviction is tested by the others).
		registry bool
	}
	cases := []tc{
		{"raymond", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Workers: 2}
		}, false},
		{"raymond hi=1", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 1), Budget: 2}
		}, false},
		{"raymond unordered", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Unordered: true}
		}, false},
		{"co(raymond) budget stops", func() check.Config {
			ms := raymondMachines(t, 3, 2)
			for i := range ms {
				ms[i] = cs.Co(ms[i])
			}
			return check.Config{Machines: ms, Property: global(t, len(ms), 1, 3), Budget: 1}
		}, false},
		{"greedy ra deadlock", func() check.Config {
			return check.Config{Machines: newRA(3, true), Property: global(t, 3, 0, 1), Budget: 2}
		}, false},
		{"ra crash", func() check.Config {
			return check.Config{Machines: newRA(3, false), Property: global(t, 3, 0, 1), Budget: 2, Crashes: 1}
		}, false},
		{"ra crash perfect", func() check.Config {
			return check.Config{Machines: newRA(3, false), Property: global(t, 3, 0, 1), Budget: 2, Crashes: 1, Detector: check.Perfect{}}
		}, false},
	}
	for _, a := range alg.All() {
		pr := problemAt(t, a, 3)
		if pr == nil {
			continue // LKCS needs a leader with 4 neighbors
		}
		lo, hi := pr.Property.GlobalBounds()
		for _, h := range []int{hi, hi - 1} {
			if h < lo {
				continue
			}
			cases = append(cases, tc{a.Name, func() check.Config {
				ms, err := pr.Machines()
				if err != nil {
					t.Fatal(err)
				}
				return check.Config{Machines: ms, Property: global(t, len(ms), lo, h), Budget: 1}
			}, true})
		}
	}
	defer func(n int) { *check.MemoEntries = n }(*check.MemoEntries)
	def := *check.MemoEntries
	for _, c := range cases {
		var want check.Result
		for _, entries := range []int{0, 1, def} {
			if entries == 1 && c.registry && testing.Short() {
				continue
			}
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
