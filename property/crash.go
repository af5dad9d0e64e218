package property

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// CrashView is what CrashBounds looks at: a configuration of a run in
// which processes may have crashed, with what each detector module has
// reported. The runtime that checks builds it from its state (the model
// checker), its events (the simulator) or a trace.
type CrashView interface {
	// View's InCS reports whether id is live and InCS.
	View
	// Crashed reports whether id has crashed.
	Crashed(id cs.ID) bool
	// CrashedInCS reports whether id has crashed and was InCS when it
	// did.
	CrashedInCS(id cs.ID) bool
	// Reported reports whether process i's detector module has reported
	// j's crash: output a suspicion of j that is not one of a trusting
	// detector's initial suspicions (under P every suspicion, under T a
	// suspicion after a trust). Reports are final.
	Reported(i, j cs.ID) bool
}

// CrashBounds is the safety part of the fault-tolerant global (l,k)-CS
// problem under crash-stop failures (docs/ft-global-lk-cs.md), which the
// global (l,k)-CS paper (Kamei and Kakugawa 2019, section 6) leaves open:
//
//   - S1, a state property: at most k live processes are InCS (Upper), the
//     bound of the fault-tolerant k-mutex (Bouillaguet, Arantes and Sens
//     2007, Lemma 1);
//   - S2, a property of exits: when a live process P_i completes an exit,
//     the live processes InCS plus the processes that crashed InCS
//     without P_i's detector having reported it are at least l
//     (AfterExit).
//
// The lower bound is deliberately not a state property: a crash of a
// process InCS lowers the count below l whatever the algorithm, and only
// entries bring it back (Deficit measures how far). It is read-only after
// NewCrashBounds and safe to share.
type CrashBounds struct {
	n, l, k int
}

// NewCrashBounds returns the bounds l and k over n processes. It refuses
// n < 1 and bounds outside 0 <= l < k <= n (Definition 2 of the global
// paper: with l = k no exit could ever complete).
func NewCrashBounds(n, l, k int) (*CrashBounds, error) {
	if n < 1 {
		return nil, fmt.Errorf("property: n = %d: need n >= 1", n)
	}
	if l < 0 || l >= k || k > n {
		return nil, fmt.Errorf("property: bounds %d..%d over %d processes: need 0 <= l < k <= n", l, k, n)
	}
	return &CrashBounds{n: n, l: l, k: k}, nil
}

// L is the lower bound, which every exit keeps (S2).
func (b *CrashBounds) L() int { return b.l }

// K is the upper bound on the live processes InCS (S1).
func (b *CrashBounds) K() int { return b.k }

// DrainTracker returns a tracker of the global bounds l..k starting from
// v: at the end of a drain it says which pending requests a bound holds,
// which is S2 once every crash is reported (the detector plan has run
// out). A crash a trusting module never reported (one before its first
// trust) would let S2 allow an exit that these bounds hold: the judgement
// errs towards holding. The simulator and trace check judge the end of a
// drain with it.
func (b *CrashBounds) DrainTracker(v View) *Tracker {
	p, _ := Global(b.n, b.l, b.k) // valid: NewCrashBounds checked them
	t, _ := NewTracker(p, v)
	return t
}

// String describes the bounds in one line.
func (b *CrashBounds) String() string {
	return fmt.Sprintf("#live InCS <= %d; every exit leaves >= %d InCS, counting unreported crashes (crash-stop)", b.k, b.l)
}

// CrashFailure is a broken part of CrashBounds.
type CrashFailure struct {
	// Exiter is the process whose exit broke S2, or 0 when S1 or the
	// initial configuration's bounds broke.
	Exiter cs.ID
	// InCS is the number of live processes InCS; Unreported, for S2, the
	// processes that crashed InCS and whose crash the exiter's detector
	// has not reported.
	InCS, Unreported int
	// Bound is the bound broken: k for S1, l for S2 and for an initial
	// configuration with fewer than l processes InCS.
	Bound int
}

// Error is the readable form used in reports, e.g. "3 live processes
// InCS, above the upper bound 2" or "P1's exit left 1 live process InCS
// and 0 unreported crashes InCS, below the lower bound 2".
func (f *CrashFailure) Error() string {
	switch {
	case f.Exiter == 0 && f.InCS < f.Bound:
		return fmt.Sprintf("%d %s InCS initially, below the lower bound %d", f.InCS, plural(f.InCS), f.Bound)
	case f.Exiter == 0:
		return fmt.Sprintf("%d live %s InCS, above the upper bound %d", f.InCS, plural(f.InCS), f.Bound)
	}
	return fmt.Sprintf("P%d's exit left %d live %s InCS and %d unreported %s InCS, below the lower bound %d",
		f.Exiter, f.InCS, plural(f.InCS), f.Unreported, crashes(f.Unreported), f.Bound)
}

func crashes(c int) string {
	if c == 1 {
		return "crash"
	}
	return "crashes"
}

// inCS counts the live processes InCS in v.
func (b *CrashBounds) inCS(v CrashView) int {
	c := 0
	for id := cs.ID(1); int(id) <= b.n; id++ {
		if v.InCS(id) {
			c++
		}
	}
	return c
}

// Upper checks S1 in v: at most k live processes InCS. Check it after
// every entry; a crash or an exit cannot break it. It costs n.
func (b *CrashBounds) Upper(v CrashView) *CrashFailure {
	if c := b.inCS(v); c > b.k {
		return &CrashFailure{InCS: c, Bound: b.k}
	}
	return nil
}

// Initial checks the initial configuration v, in which nobody has
// crashed: l <= #InCS <= k (the global paper's safe initial
// configuration, Definition 2). It costs n.
func (b *CrashBounds) Initial(v CrashView) *CrashFailure {
	if c := b.inCS(v); c < b.l {
		return &CrashFailure{InCS: c, Bound: b.l}
	}
	return b.Upper(v)
}

// AfterExit checks S2 for the exit of process i that led to v: the live
// processes InCS plus the processes that crashed InCS without i's
// detector having reported it are at least l. Counting only the live
// would be impossible to meet: a crash just before the exit completes is
// invisible to i (docs/ft-global-lk-cs.md, I2). It costs n.
func (b *CrashBounds) AfterExit(i cs.ID, v CrashView) *CrashFailure {
	c, u := b.inCS(v), 0
	for j := cs.ID(1); int(j) <= b.n; j++ {
		if j != i && v.CrashedInCS(j) && !v.Reported(i, j) {
			u++
		}
	}
	if c+u < b.l {
		return &CrashFailure{Exiter: i, InCS: c, Unreported: u, Bound: b.l}
	}
	return nil
}

// Live returns the number of processes of v that have not crashed.
func (b *CrashBounds) Live(v CrashView) int {
	c := 0
	for id := cs.ID(1); int(id) <= b.n; id++ {
		if !v.Crashed(id) {
			c++
		}
	}
	return c
}

// Deficit returns how many live processes InCS v lacks to reach
// min(l, live): positive only after crashes of processes InCS, until
// entries make it up (the recovery the specification asks for). It is not
// a failure. It costs n.
func (b *CrashBounds) Deficit(v CrashView) int {
	return max(0, min(b.l, b.Live(v))-b.inCS(v))
}

// ExitsBlocked reports whether v has at most l live processes: then no
// exit may complete once every crash is reported (it would leave fewer
// than l InCS), so a pending exit that waits for ever is what the
// specification requires, not a deadlock.
func (b *CrashBounds) ExitsBlocked(v CrashView) bool {
	return b.Live(v) <= b.l
}
