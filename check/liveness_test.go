package check_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
)

// arbiter is a two-process mutual exclusion in which P1 hosts the lock.
// P2 asks for it with REQ and gives it back with DONE; P1 takes it locally.
// When P1 leaves, it releases the lock through a RELEASE message to itself,
// and on RELEASE it decides who goes next. With prio set it prefers itself
// whenever it is requesting again, even when P2 has waited all along: a
// fixed-priority arbiter, which starves P2 under weak fairness (P1 leaves,
// asks again before its RELEASE arrives, and wins every time). Without
// prio, RELEASE serves a waiting P2 first.
type arbiter struct {
	i    int
	prio bool
	testPhase
	lock     uint8 // P1: 0 free, 1 or 2 the holder
	waiting2 bool  // P1: P2's REQ arrived and is not served
	release  bool  // P1: a RELEASE is in transit
}

type arbMsg struct{ K string }

func (m arbMsg) Kind() string                 { return m.K }
func (arbMsg) Words() int                     { return 3 }
func (m arbMsg) AppendBinary(b []byte) []byte { return append(b, m.K...) }

func newArbiter(prio bool) []cs.Machine {
	return []cs.Machine{&arbiter{i: 1, prio: prio}, &arbiter{i: 2, prio: prio}}
}

func (m *arbiter) Self() cs.ID { return cs.ID(m.i) }

func (m *arbiter) enter(env cs.Env) {
	m.phase = 2
	env.Changed(cs.InCS)
}

func (m *arbiter) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.phase = 1
	if m.i == 2 {
		env.Send(1, arbMsg{"REQ"})
		return nil
	}
	if m.lock == 0 && !m.release {
		m.lock = 1
		m.enter(env)
	}
	return nil
}

func (m *arbiter) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.phase = 0
	env.Changed(cs.OutCS)
	if m.i == 2 {
		env.Send(1, arbMsg{"DONE"})
		return nil
	}
	m.release = true
	env.Send(1, arbMsg{"RELEASE"})
	return nil
}

// next gives the free lock to the next process.
func (m *arbiter) next(env cs.Env) {
	switch {
	case m.phase == 1 && (m.prio || !m.waiting2):
		m.lock = 1
		m.enter(env)
	case m.waiting2:
		m.lock, m.waiting2 = 2, false
		env.Send(2, arbMsg{"GRANT"})
	}
}

func (m *arbiter) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	switch msg.Kind() {
	case "REQ":
		m.waiting2 = true
		if m.lock == 0 && !m.release {
			m.next(env)
		}
	case "RELEASE":
		m.release, m.lock = false, 0
		m.next(env)
	case "DONE":
		m.lock = 0
		if !m.release {
			m.next(env)
		}
	case "GRANT":
		m.enter(env)
	default:
		return cs.Unexpected(m.Self(), from, msg)
	}
	return nil
}

func (m *arbiter) Clone() cs.Machine { c := *m; return &c }

func (m *arbiter) AppendState(b []byte) []byte {
	return fmt.Appendf(b, "%d%d%d%t%t", m.phase, m.lock, m.i, m.waiting2, m.release)
}

// TestStarvationFound: the fixed-priority arbiter starves P2. The checker
// reports a starvation whose lasso replays: CheckLasso confirms that the
// cycle returns to its start, that P2 waits all along it and that it is
// weakly fair. The fair arbiter has none, although its graph has unfair
// cycles on which P2 waits (P1 enters and leaves forever while P2's REQ is
// never delivered): the component check must reject them.
func TestStarvationFound(t *testing.T) {
	for _, bound := range []int{0, 1, 3} {
		cfg := check.Config{Machines: newArbiter(true), Property: global(t, 2, 0, 1), Budget: 2, Search: check.Liveness, FairBound: bound}
		res := mustRun(t, cfg)
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindStarvation {
			t.Fatalf("bound %d: got %s %+v, want a starvation", bound, res.Verdict, res.Violation)
		}
		v := res.Violation
		if v.Cycle < 1 || v.Cycle >= len(v.Path) || !strings.Contains(v.Detail, "P2's entry request") {
			t.Fatalf("bound %d: cycle at %d of %d steps, %q", bound, v.Cycle, len(v.Path), v.Detail)
		}
		t.Logf("bound %d: %s; stem %s; cycle %s", bound, v.Detail, pathString(v.Path[:v.Cycle]), pathString(v.Path[v.Cycle:]))
		starved, err := check.CheckLasso(cfg, check.Actions(v.Path), v.Cycle)
		if err != nil {
			t.Fatalf("bound %d: %v", bound, err)
		}
		if starved != 1<<1 {
			t.Errorf("bound %d: starved set %b, want P2 only", bound, starved)
		}
		// The path replays under Replay's rules too.
		if steps, pv, err := check.Replay(cfg, check.Actions(v.Path)); err != nil || pv != nil || len(steps) != len(v.Path) {
			t.Errorf("bound %d: Replay: %v %+v", bound, err, pv)
		}
		fair := mustRun(t, check.Config{Machines: newArbiter(false), Property: global(t, 2, 0, 1), Budget: 2, Search: check.Liveness, FairBound: bound})
		if fair.Verdict != check.OK {
			t.Errorf("fair arbiter, bound %d: %s %+v", bound, fair.Verdict, fair.Violation)
		}
	}
}

// TestCheckLassoRejects: a cycle that does not return, or one that is not
// weakly fair, is refused.
func TestCheckLassoRejects(t *testing.T) {
	cfg := check.Config{Machines: newArbiter(true), Property: global(t, 2, 0, 1), Budget: 2, Search: check.Liveness}
	res := mustRun(t, cfg)
	if res.Violation == nil {
		t.Fatal("no starvation")
	}
	path, cyc := check.Actions(res.Violation.Path), res.Violation.Cycle
	if _, err := check.CheckLasso(cfg, path[:len(path)-1], cyc); err == nil {
		t.Error("a cycle cut short was accepted")
	}
	// P1 enters and leaves while P2's REQ waits undelivered: a cycle
	// (P1 entry, P1 exit, deliver RELEASE) on which the delivery of P2's
	// REQ is enabled all along and never taken.
	unfair := []check.Action{
		{Kind: check.Request, Node: 2, Op: cs.Entry},
		{Kind: check.Request, Node: 1, Op: cs.Entry},
		{Kind: check.Request, Node: 1, Op: cs.Exit},
		{Kind: check.Deliver, Node: 1, From: 1},
	}
	_, err := check.CheckLasso(cfg, unfair, 1)
	if err == nil || !strings.Contains(err.Error(), "not weakly fair") {
		t.Errorf("unfair cycle: %v", err)
	}
}

// TestLivenessConfig: the combinations the starvation search does not
// define are refused.
func TestLivenessConfig(t *testing.T) {
	base := check.Config{Machines: newArbiter(true), Property: global(t, 2, 0, 1), Budget: 2, Search: check.Liveness}
	for name, mod := range map[string]func(*check.Config){
		"unordered": func(c *check.Config) { c.Unordered = true },
		"crashes":   func(c *check.Config) { c.Crashes = 1 },
		"disk":      func(c *check.Config) { c.DiskDir = t.TempDir() },
		"bound":     func(c *check.Config) { c.FairBound = 251 },
		"states":    func(c *check.Config) { c.LivenessStates = -1 },
	} {
		c := base
		mod(&c)
		if _, err := check.Run(t.Context(), c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLivenessLimit: a continuation graph larger than LivenessStates makes
// the run incomplete, never ok.
func TestLivenessLimit(t *testing.T) {
	res := mustRun(t, check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Search: check.Liveness, FairBound: 2, LivenessStates: 100})
	if res.Verdict != check.Incomplete || !strings.Contains(res.Reason, "--liveness-states") || !strings.Contains(res.Reason, "P1") {
		t.Fatalf("got %s %q", res.Verdict, res.Reason)
	}
}

// TestNoStarvation: the algorithms whose papers claim starvation freedom
// have no weakly fair starvation cycle in the explored continuations (with
// the fairness bound given; 0 is exact weak fairness), at sizes that take
// about a second.
func TestNoStarvation(t *testing.T) {
	cases := []struct {
		name          string
		n, l, k       int
		coterie       string
		budget, bound int
		states        int64 // continuation states, when pinned
		long          bool  // skipped under -short
	}{
		{"raymond", 3, 0, 1, "", 2, 0, 14720, false}, // exact weak fairness
		{"raymond", 3, 0, 2, "", 2, 2, 0, false},
		{"maekawa", 3, 0, 1, "majority", 2, 3, 0, false},
		{"mutin", 3, 1, 3, "majority", 1, 1, 0, false},
		{"mutin", 3, 1, 3, "majority", 2, 1, 0, true},
		{"forest", 3, 0, 1, "", 3, 2, 0, false},
		{"forest", 3, 0, 2, "", 3, 2, 0, false},
		{"gcs", 3, 0, 2, "majority", 1, 2, 0, true},
	}
	for _, c := range cases {
		if c.long && testing.Short() {
			continue
		}
		ms, prop := build(t, c.name, c.n, c.l, c.k, c.coterie)
		res := mustRun(t, check.Config{Machines: ms, Property: prop, Budget: c.budget, Search: check.Liveness, FairBound: c.bound})
		t.Logf("%s n=%d l=%d k=%d %s budget %d bound %d: %s, %d stems, %d continuation states, %.2fs", c.name, c.n, c.l, c.k, c.coterie, c.budget, c.bound, res.Verdict, res.States, res.LivenessStates, res.Seconds)
		if res.Verdict != check.OK {
			t.Errorf("%s n=%d k=%d: %s %s %+v", c.name, c.n, c.k, res.Verdict, res.Reason, res.Violation)
		}
		if c.states > 0 && res.LivenessStates != c.states {
			t.Errorf("%s n=%d k=%d: %d continuation states, want %d", c.name, c.n, c.k, res.LivenessStates, c.states)
		}
		// Exact fairness cuts nothing; a bound cuts some states' every
		// step, never all of them (the roots keep a step).
		if c.bound == 0 && res.LivenessDeadEnds != 0 || res.LivenessDeadEnds >= res.LivenessStates {
			t.Errorf("%s n=%d k=%d bound %d: %d dead ends of %d continuation states", c.name, c.n, c.k, c.bound, res.LivenessDeadEnds, res.LivenessStates)
		}
	}
}

// TestStarvationForestPaper: the published forest algorithm loses a
// request after a stale INFORM (docs/design/forest-fix.md): P1's second
// request is never served while P2 and P3 go on. The starvation search
// finds it at budget 3, with a lasso that CheckLasso confirms; the fixed
// variant has none there.
func TestStarvationForestPaper(t *testing.T) {
	ms, prop := build(t, "forest-paper", 3, 0, 1, "")
	cfg := check.Config{Machines: ms, Property: prop, Budget: 3, Search: check.Liveness, FairBound: 1}
	res := mustRun(t, cfg)
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindStarvation {
		t.Fatalf("got %s %+v, want a starvation", res.Verdict, res.Violation)
	}
	v := res.Violation
	starved, err := check.CheckLasso(cfg, check.Actions(v.Path), v.Cycle)
	if err != nil {
		t.Fatal(err)
	}
	if starved&1 == 0 {
		t.Errorf("starved %b: want P1 among them; %s", starved, v.Detail)
	}
	t.Logf("%s; stem %s; cycle %s", v.Detail, pathString(v.Path[:v.Cycle]), pathString(v.Path[v.Cycle:]))
	ms, prop = build(t, "forest", 3, 0, 1, "")
	if res := mustRun(t, check.Config{Machines: ms, Property: prop, Budget: 3, Search: check.Liveness, FairBound: 1}); res.Verdict != check.OK {
		t.Errorf("fixed forest: %s %s %+v", res.Verdict, res.Reason, res.Violation)
	}
}

// TestLivenessDeadlock: a continuation that reaches a state with nothing
// enabled is a global deadlock, reported as such: the published Maekawa
// algorithm on grid(4) (docs/design/partial-order-reduction.md, "Tests").
func TestLivenessDeadlock(t *testing.T) {
	ms, prop := build(t, "maekawa-paper", 4, 0, 1, "grid")
	cfg := check.Config{Machines: ms, Property: prop, Budget: 1, Search: check.Liveness, FairBound: 1}
	res := mustRun(t, cfg)
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock {
		t.Fatalf("got %s %+v, want a deadlock", res.Verdict, res.Violation)
	}
	if _, pv, err := check.Replay(cfg, check.Actions(res.Violation.Path)); err != nil || pv != nil {
		t.Errorf("the path does not replay: %v %+v", err, pv)
	}
}
