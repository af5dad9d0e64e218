package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// prop is mk(n, l, k): property.Global or property.FaultTolerantGlobal.
func prop(t *testing.T, mk func(n, l, k int) (*property.Property, error), n, l, k int) *property.Property {
	t.Helper()
	p, err := mk(n, l, k)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// idles returns n idle machines, those in in InCS.
func idles(n int, in ...cs.ID) []cs.Machine {
	ms := make([]cs.Machine, n)
	for i := range ms {
		ms[i] = &idle{self: cs.ID(i + 1), state: cs.OutCS}
	}
	for _, id := range in {
		ms[id-1].(*idle).state = cs.InCS
	}
	return ms
}

// TestExitGuardViolation: processes that exit without waiting break S2
// (docs/ft-global-lk-cs.md) at n = 3, l = 1, with P1 and P2 InCS, P1 the
// only one that may call (Exit), and one crash: P2 crashes InCS, P1's
// perfect detector reports it, P1 exits and leaves nobody InCS. Without a
// detector the crash is never reported, so it counts for P1 (it cannot
// know of it) and the run is ok; so it is with the crash-free global bound
// 0..2. Every search finds the same three steps.
func TestExitGuardViolation(t *testing.T) {
	base := Config{Machines: idles(3, 1, 2), Property: prop(t, property.FaultTolerantGlobal, 3, 1, 2), Budgets: []int{1, 0, 0}, Crashes: 1}
	for _, search := range []struct {
		name   string
		search Search
		por    bool
	}{{"bfs", BreadthFirst, false}, {"dfs", DepthFirst, false}, {"dfs por", DepthFirst, true}} {
		cfg := base
		cfg.Search, cfg.PartialOrder, cfg.Detector = search.search, search.por, Perfect{}
		res, err := Run(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		const detail = "after P1 became OutCS: P1's exit left 0 live processes InCS and 0 unreported crashes InCS, below the lower bound 1"
		if res.Verdict != Violated || res.Violation.Kind != KindBounds || res.Violation.Detail != detail {
			t.Fatalf("%s: %s %+v, want the S2 violation %q", search.name, res.Verdict, res.Violation, detail)
		}
		var path []string
		for _, s := range res.Violation.Path {
			path = append(path, s.Action.String())
		}
		if got := strings.Join(path, "; "); got != "crash P2; P1 suspects P2; P1 exit" {
			t.Fatalf("%s: path %s", search.name, got)
		}
		if _, v, err := Replay(cfg, Actions(res.Violation.Path)); err != nil || v == nil || v.Detail != detail {
			t.Fatalf("%s: the replay gives %+v, %v", search.name, v, err)
		}
	}
	for _, c := range []struct {
		name string
		prop *property.Property
		det  Detector
	}{
		{"no detector", base.Property, nil},
		{"bounds 0..2, detector P", prop(t, property.Global, 3, 0, 2), Perfect{}},
	} {
		cfg := base
		cfg.Property, cfg.Detector = c.prop, c.det
		res, err := Run(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != OK {
			t.Fatalf("%s: %s %+v, want ok", c.name, res.Verdict, res.Violation)
		}
	}
}

// TestExitGuardInitial: the initial configuration must have at least l
// processes InCS (Definition 2's safe initial configuration), although the
// state bound is 0..k.
func TestExitGuardInitial(t *testing.T) {
	res, err := Run(t.Context(), Config{Machines: idles(3, 1), Property: prop(t, property.FaultTolerantGlobal, 3, 2, 3), Budget: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Violated || res.Violation.Detail != "in the initial state: 1 process InCS initially, below the lower bound 2" {
		t.Fatalf("%s %+v", res.Verdict, res.Violation)
	}
}

// TestExitGuardTrustingNeedsInitializing: under T, a suspicion of a
// crashed process is a report only if a trust came first, which the state
// does not record; machines that are not cs.Initializing could crash
// before, so the configuration is refused.
func TestExitGuardTrustingNeedsInitializing(t *testing.T) {
	_, err := Run(t.Context(), Config{Machines: idles(3, 1, 2), Property: prop(t, property.FaultTolerantGlobal, 3, 1, 2), Budget: 1, Crashes: 1, Detector: Trusting{}})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "cs.Initializing") {
		t.Fatalf("got %v, want the configuration refused for want of cs.Initializing", err)
	}
	if _, err := Run(t.Context(), Config{Machines: idles(3, 1, 2), Property: prop(t, property.FaultTolerantGlobal, 3, 1, 2), Budget: 1, Detector: Trusting{}}); err != nil {
		t.Fatalf("without crashes: %v", err)
	}
}

// TestCrashedInCSEncoding: with an exit guard, a crashed process that was
// InCS and one that was not are different states, although the crashed
// machine encodes as the reserved id alone (docs/checker.md, "an exact
// merge"): the guard counts the first while its crash is unreported. The
// bit is packed with the state; without a guard or fencing it is not
// encoded (nothing sets it).
func TestCrashedInCSEncoding(t *testing.T) {
	mk := func(guarded bool, zombies uint64) *gstate {
		return &gstate{
			procs:       []proc{{m: 1, state: cs.InCS}, {m: 2, state: cs.InCS}, {m: 3}},
			suspect:     []uint64{0, 0, 0},
			crashed:     bit(2),
			crashesLeft: 1,
			guarded:     guarded,
			zombies:     zombies,
		}
	}
	if fingerprintOf(mk(true, bit(2))) == fingerprintOf(mk(true, 0)) {
		t.Errorf("with a guard, P2 crashed InCS or not: same fingerprint")
	}
	if fingerprintOf(mk(false, 0)) == fingerprintOf(mk(true, 0)) {
		t.Errorf("the guard's word is not encoded")
	}
	x := &model{n: 3, detector: Perfect{}, guard: prop(t, property.FaultTolerantGlobal, 3, 1, 2).ExitGuard()}
	pk := newPacker(x)
	s := pk.unpack(pk.appendPacked(nil, mk(true, bit(2))))
	if !s.guarded || s.zombies != bit(2) || fingerprintOf(s) != fingerprintOf(mk(true, bit(2))) {
		t.Errorf("packed and unpacked: guarded %v, zombies %b", s.guarded, s.zombies)
	}
}

// TestExitGuardRequiredWait: a pending exit with at most l live processes
// is required to wait (docs/ft-global-lk-cs.md, I3), not a deadlock. P1
// is InCS and its Exit never completes; the budget stops come after the
// one crash. At n = 2, l = 1, every stop has P2 crashed (P1 alone, its
// exit must wait: ok) or P1 crashed (nothing pending); the crash-free
// bound 0..2 has no guard and reports the deadlock. At n = 3 two processes
// stay live and the exit must be completable: a deadlock.
func TestExitGuardRequiredWait(t *testing.T) {
	machines := func(n int) []cs.Machine {
		ms := idles(n)
		ms[0] = &stuck{idle: idle{self: 1, state: cs.InCS}, exit: true}
		return ms
	}
	budgets := func(n int) []int { b := make([]int, n); b[0] = 1; return b }
	for _, c := range []struct {
		name   string
		n      int
		prop   *property.Property
		want   Verdict
		detail string
	}{
		{"n=2 l=1 k=2", 2, prop(t, property.FaultTolerantGlobal, 2, 1, 2), OK, ""},
		{"n=2 bounds 0..2", 2, prop(t, property.Global, 2, 0, 2), Violated, "global deadlock"},
		{"n=3 l=1 k=2", 3, prop(t, property.FaultTolerantGlobal, 3, 1, 2), Violated, "P1's exit request can never complete"},
	} {
		for _, search := range []Search{BreadthFirst, DepthFirst} {
			res, err := Run(t.Context(), Config{Machines: machines(c.n), Property: c.prop, Budgets: budgets(c.n), Crashes: 1, Detector: Perfect{}, Search: search})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != c.want || c.want == OK && res.BudgetStops == 0 ||
				c.want == Violated && (res.Violation.Kind != KindDeadlock || !strings.Contains(res.Violation.Detail, c.detail)) {
				t.Fatalf("%s %s: %s, %d budget stops, %+v", c.name, search, res.Verdict, res.BudgetStops, res.Violation)
			}
		}
	}
}

// TestExitGuardRecovery: a budget stop with a deficit must have a
// continuation that closes it (R). n = 3, l = 2, k = 3: P1 and P2 InCS,
// P2's exit pending for ever; P3's Entry never completes. When P1 crashes,
// two processes are live, so P2's exit waits as it must, but the one live
// process InCS stays below min(l, live) = 2: nothing can close the
// deficit. When P3's Entry completes, it closes, and the run is ok.
func TestExitGuardRecovery(t *testing.T) {
	machines := func(enter bool) []cs.Machine {
		ms := []cs.Machine{&idle{self: 1, state: cs.InCS}, &stuck{idle: idle{self: 2, state: cs.InCS}, exit: true}, &stuck{idle: idle{self: 3, state: cs.OutCS}}}
		if enter {
			ms[2] = &idle{self: 3, state: cs.OutCS}
		}
		return ms
	}
	prop := prop(t, property.FaultTolerantGlobal, 3, 2, 3)
	for _, search := range []Search{BreadthFirst, DepthFirst} {
		cfg := Config{Machines: machines(false), Property: prop, Budgets: []int{0, 1, 0}, Crashes: 1, Detector: Perfect{}, Search: search}
		res, err := Run(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Violated || res.Violation.Kind != KindDeadlock ||
			!strings.Contains(res.Violation.Detail, "the exits wait as they must, with 2 live processes and l = 2; the deficit of 1 live processes InCS below min(l, live) never closes") {
			t.Fatalf("%s: %s %+v", search, res.Verdict, res.Violation)
		}
		cfg.Machines = machines(true)
		if res, err = Run(t.Context(), cfg); err != nil || res.Verdict != OK || res.BudgetStops == 0 {
			t.Fatalf("%s, P3 enters: %s, %d budget stops, %+v, %v", search, res.Verdict, res.BudgetStops, res.Violation, err)
		}
	}
}

// initialized is idle with an initialization that is over at once,
// trusted or not.
type initialized struct{ idle }

func (m *initialized) Clone() cs.Machine           { c := *m; return &c }
func (m *initialized) Suspect(cs.Env, cs.ID) error { return nil }
func (m *initialized) Trust(cs.Env, cs.ID) error   { return nil }
func (m *initialized) Initialized() bool           { return true }

// TestExitGuardUntrustedCrash: a crash that a trusting detector's module
// has not trusted yet is an error under an exit guard (that module would
// never report it, and the guard would count its suspicion as a report):
// the machines' initialization does not wait for the trusts.
func TestExitGuardUntrustedCrash(t *testing.T) {
	ms := []cs.Machine{&initialized{idle{self: 1, state: cs.InCS}}, &initialized{idle{self: 2, state: cs.OutCS}}}
	res, err := Run(t.Context(), Config{Machines: ms, Property: prop(t, property.FaultTolerantGlobal, 2, 1, 2), Crashes: 1, Detector: Trusting{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Violated || res.Violation.Kind != KindError || res.Violation.Detail !=
		"P1 crashed before P2's trusting detector ever trusted it: the exit guard cannot tell that crash's suspicion from a report: the machines' initialization must wait for every module's trust, as cs.TrustGated declares" {
		t.Fatalf("%s %+v", res.Verdict, res.Violation)
	}
}
