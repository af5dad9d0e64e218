package property

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
)

// crashConf is a hand-made configuration: each process's state (its state
// at the crash, for a crashed one), which processes crashed, and which
// crashes each process's detector has reported.
type crashConf struct {
	in       []bool // in[id]: InCS, or InCS when it crashed
	crashed  []bool
	reported map[[2]cs.ID]bool // {i, j}: i's detector reported j's crash
}

// conf builds a configuration of n processes with the given ones InCS.
func conf(n int, inCS ...cs.ID) *crashConf {
	c := &crashConf{in: make([]bool, n+1), crashed: make([]bool, n+1), reported: map[[2]cs.ID]bool{}}
	for _, id := range inCS {
		c.in[id] = true
	}
	return c
}

// crash crashes the processes in their current state.
func (c *crashConf) crash(ids ...cs.ID) *crashConf {
	for _, id := range ids {
		c.crashed[id] = true
	}
	return c
}

// report has process i's detector report the crashes of js.
func (c *crashConf) report(i cs.ID, js ...cs.ID) *crashConf {
	for _, j := range js {
		c.reported[[2]cs.ID{i, j}] = true
	}
	return c
}

// exit makes process i OutCS, as its exit completing does.
func (c *crashConf) exit(i cs.ID) *crashConf {
	c.in[i] = false
	return c
}

func (c *crashConf) InCS(id cs.ID) bool        { return c.in[id] && !c.crashed[id] }
func (c *crashConf) Crashed(id cs.ID) bool     { return c.crashed[id] }
func (c *crashConf) CrashedInCS(id cs.ID) bool { return c.in[id] && c.crashed[id] }
func (c *crashConf) Reported(i, j cs.ID) bool  { return c.reported[[2]cs.ID{i, j}] }

func mustCrashBounds(t *testing.T, n, l, k int) *CrashBounds {
	t.Helper()
	b, err := NewCrashBounds(n, l, k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewCrashBoundsRefusesBadBounds(t *testing.T) {
	for _, c := range []struct{ n, l, k int }{{0, 0, 1}, {3, 2, 2}, {3, -1, 2}, {3, 1, 4}, {3, 3, 2}} {
		if _, err := NewCrashBounds(c.n, c.l, c.k); err == nil {
			t.Errorf("NewCrashBounds(%d, %d, %d) accepted", c.n, c.l, c.k)
		}
	}
	for _, c := range []struct{ n, l, k int }{{1, 0, 1}, {3, 0, 1}, {3, 2, 3}, {5, 2, 3}} {
		if _, err := NewCrashBounds(c.n, c.l, c.k); err != nil {
			t.Errorf("NewCrashBounds(%d, %d, %d): %v", c.n, c.l, c.k, err)
		}
	}
}

// TestCrashBoundsUpper: S1 counts the live processes InCS only; a crash
// InCS frees its slot, as in the fault-tolerant k-mutex's Lemma 1.
func TestCrashBoundsUpper(t *testing.T) {
	b := mustCrashBounds(t, 4, 1, 2)
	if f := b.Upper(conf(4, 1, 2)); f != nil {
		t.Errorf("2 InCS: %v", f)
	}
	f := b.Upper(conf(4, 1, 2, 3))
	if f == nil || f.InCS != 3 || f.Error() != "3 live processes InCS, above the upper bound 2" {
		t.Errorf("3 InCS: got %v", f)
	}
	if f := b.Upper(conf(4, 1, 2, 3).crash(3)); f != nil {
		t.Errorf("3 InCS, one crashed: %v", f)
	}
}

func TestCrashBoundsInitial(t *testing.T) {
	b := mustCrashBounds(t, 4, 2, 3)
	for _, c := range []struct {
		in   []cs.ID
		want string
	}{
		{[]cs.ID{1, 2}, ""},
		{[]cs.ID{1, 2, 3}, ""},
		{[]cs.ID{1}, "1 process InCS initially, below the lower bound 2"},
		{[]cs.ID{1, 2, 3, 4}, "4 live processes InCS, above the upper bound 3"},
	} {
		f, got := b.Initial(conf(4, c.in...)), ""
		if f != nil {
			got = f.Error()
		}
		if got != c.want {
			t.Errorf("%v InCS: got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCrashBoundsExitGuard: without crashes S2 is the crash-free lower
// bound checked at exits.
func TestCrashBoundsExitGuard(t *testing.T) {
	b := mustCrashBounds(t, 4, 2, 3)
	if f := b.AfterExit(1, conf(4, 1, 2, 3).exit(1)); f != nil {
		t.Errorf("exit leaving 2: %v", f)
	}
	f := b.AfterExit(1, conf(4, 1, 2).exit(1))
	want := "P1's exit left 1 live process InCS and 0 unreported crashes InCS, below the lower bound 2"
	if f == nil || f.Error() != want {
		t.Errorf("exit leaving 1: got %v, want %q", f, want)
	}
}

// TestCrashBoundsCrashIsNotAnExit is I1: a crash InCS at the lower bound
// takes the count below it whatever the algorithm, so the lower bound
// cannot be a state property. property.Global with l > 0 fails on the
// configuration; CrashBounds reports a deficit, not a failure.
func TestCrashBoundsCrashIsNotAnExit(t *testing.T) {
	b := mustCrashBounds(t, 4, 2, 3)
	v := conf(4, 1, 2).crash(2)
	if f := b.Upper(v); f != nil {
		t.Errorf("upper bound after a crash: %v", f)
	}
	if d := b.Deficit(v); d != 1 {
		t.Errorf("deficit after a crash InCS at l: %d, want 1", d)
	}
	g, err := Global(4, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if g.Check(v) == nil {
		t.Error("property.Global(4, 2, 3) accepts 1 live process InCS: it should not")
	}
	// Recovery: an entry of a live process closes the deficit.
	v.in[3] = true
	if d := b.Deficit(v); d != 0 {
		t.Errorf("deficit after an entry: %d, want 0", d)
	}
}

// TestCrashBoundsUnreportedCrash is I2: a crash just before an exit
// completes is invisible to the exiter (detection is never instantaneous,
// even with P), so the exit that leaves l−1 live processes InCS must be
// accepted; once the exiter's detector has reported the crash it must not.
// A report to another process does not count: the exiter has not been
// told. Under T, a crash that the exiter only ever suspected from the start
// (it never trusted the process) is not reported either: the view says so.
func TestCrashBoundsUnreportedCrash(t *testing.T) {
	b := mustCrashBounds(t, 4, 2, 3)
	v := conf(4, 1, 2, 3).crash(2).exit(1)
	if f := b.AfterExit(1, v); f != nil {
		t.Errorf("unreported crash: %v", f)
	}
	v.report(3, 2)
	if f := b.AfterExit(1, v); f != nil {
		t.Errorf("crash reported to P3 only: %v", f)
	}
	v.report(1, 2)
	f := b.AfterExit(1, v)
	if f == nil || f.InCS != 1 || f.Unreported != 0 {
		t.Errorf("crash reported to the exiter: got %v, want a failure with 1 InCS", f)
	}
	// The unreported crash counts only if the process crashed InCS.
	w := conf(4, 1, 3).crash(2).exit(1)
	if f := b.AfterExit(1, w); f == nil || f.Unreported != 0 {
		t.Errorf("crash OutCS: got %v, want a failure with 0 unreported", f)
	}
}

// TestCrashBoundsFewerThanLAlive is I3: with at most l live processes no
// exit may complete once the crashes are reported, and ExitsBlocked says
// that a pending exit waiting for ever is then required, not a deadlock.
func TestCrashBoundsFewerThanLAlive(t *testing.T) {
	b := mustCrashBounds(t, 4, 2, 3)
	v := conf(4, 1, 2, 3, 4).crash(3, 4).report(1, 3, 4)
	if !b.ExitsBlocked(v) {
		t.Error("2 live, l = 2: exits not blocked")
	}
	if d := b.Deficit(v); d != 0 {
		t.Errorf("2 live, both InCS: deficit %d", d)
	}
	if f := b.AfterExit(1, v.exit(1)); f == nil {
		t.Error("exit leaving 1 of 2 live InCS with every crash reported: accepted")
	}
	if d := b.Deficit(v); d != 1 {
		t.Errorf("deficit after that exit: %d, want min(l, live) - 1 = 1", d)
	}
	if b.ExitsBlocked(conf(4, 1, 2, 3).crash(4)) {
		t.Error("3 live, l = 2: exits blocked")
	}
}

// TestCrashBoundsStalePermission is the configuration where the plan's
// first design fails (docs/design/locks-not-permissions.md, "Dropped designs"): l = 2, n = 5;
// P2 has exited on P3's and P4's permissions after granting its own to P1;
// P4 and P5 crashed InCS and P1's detector reported both; P1 then exits on
// the permissions of P2 (now OutCS) and P3. One live process is left InCS.
// With the same crashes unreported to P1 the exit is the concurrent case
// of I2 and is accepted.
func TestCrashBoundsStalePermission(t *testing.T) {
	b := mustCrashBounds(t, 5, 2, 5)
	unreported := conf(5, 1, 3, 4, 5).crash(4, 5).exit(1)
	if f := b.AfterExit(1, unreported); f != nil {
		t.Errorf("crashes unreported to P1: %v", f)
	}
	reported := conf(5, 1, 3, 4, 5).crash(4, 5).report(1, 4, 5).exit(1)
	f := b.AfterExit(1, reported)
	if f == nil || !strings.HasPrefix(f.Error(), "P1's exit left 1 live process InCS") {
		t.Errorf("stale permission: got %v, want P1's exit leaving 1 InCS", f)
	}
}

// TestCrashBoundsMinIsL checks the claim behind S2's form: when every
// crash is reported to the exiter, "the exit leaves at least l InCS" and
// "the exit leaves at least min(l, live) InCS" accept the same exits,
// because with live <= l the exiter itself is live and OutCS. Every
// configuration of 4 processes and every l < k = 4.
func TestCrashBoundsMinIsL(t *testing.T) {
	const n = 4
	for l := 0; l < n; l++ {
		b := mustCrashBounds(t, n, l, n)
		for mask := range 1 << (2 * n) {
			v := conf(n)
			for id := cs.ID(1); id <= n; id++ {
				v.in[id] = mask&(1<<(2*(id-1))) != 0
				v.crashed[id] = mask&(1<<(2*(id-1)+1)) != 0
			}
			if v.crashed[1] || v.in[1] {
				continue // the exiter P1 is live and has just become OutCS
			}
			for j := cs.ID(2); j <= n; j++ {
				v.report(1, j)
			}
			live, in := b.Live(v), b.inCS(v)
			withMin := in >= min(l, live)
			if got := b.AfterExit(1, v) == nil; got != withMin {
				t.Fatalf("l = %d, mask %b: AfterExit accepts %v, the min(l, live) form %v", l, mask, got, withMin)
			}
		}
	}
}

func TestFaultTolerantGlobal(t *testing.T) {
	p, err := FaultTolerantGlobal(5, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := p.GlobalBounds(); lo != 0 || hi != 3 || !p.IsGlobal() {
		t.Errorf("state bounds %d..%d, global %v: want 0..3, global", lo, hi, p.IsGlobal())
	}
	g := p.ExitGuard()
	if g == nil || g.L() != 2 || g.K() != 3 {
		t.Fatalf("exit guard %v: want l = 2, k = 3", g)
	}
	if p.String() != g.String() {
		t.Errorf("String() = %q, want the guard's %q", p, g)
	}
	if q, _ := Global(5, 2, 3); q.ExitGuard() != nil {
		t.Error("Global has an exit guard")
	}
	if _, err := FaultTolerantGlobal(5, 3, 3); err == nil {
		t.Error("l = k accepted")
	}
}
