package sim

import "testing"

// TestUndecided: the requests pending at an ok end are undecided; a
// verdict, a cut drain, a memory stop or an idle stop decides them.
func TestUndecided(t *testing.T) {
	for _, c := range []struct {
		name string
		res  Result
		want int
	}{
		{"ok after the entries", Result{Stop: StopEntries, Pending: 3}, 3},
		{"ok after a drain", Result{Stop: StopEntries, Drained: true, Pending: 2}, 2},
		{"starved", Result{Stop: StopEntries, Pending: 3, Violation: &Violation{Kind: KindStarvation}}, 0},
		{"drain cut", Result{Stop: StopEntries, Pending: 3, DrainCut: "the drain reached its event limit"}, 0},
		{"memory", Result{Stop: StopMemory, Pending: 3}, 0},
		{"idle", Result{Stop: StopIdle, Pending: 1}, 0},
	} {
		if got := c.res.Undecided(); got != c.want {
			t.Errorf("%s: Undecided %d, want %d", c.name, got, c.want)
		}
	}
}
