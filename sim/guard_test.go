package sim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// shared is the memory the guarded machines share: who has entered and
// not exited, as each machine last wrote it (a crash leaves its mark).
type shared struct{ in map[cs.ID]bool }

// guarded is a test machine for the exit guard of
// property.FaultTolerantGlobal, cheating with shared memory: an entry
// completes at once (k = n) and tells the others; an exit completes once at
// least l other processes are marked InCS and not suspected by this
// process's detector, which is S2 exactly. Its flaws are switched on by
// its fields.
type guarded struct {
	self      cs.ID
	n, l      int
	w         *shared
	state     cs.State
	pending   cs.Op
	suspected map[cs.ID]bool
	naive     bool // exits at once
	deaf      bool // ignores its detector
}

func guardedMachines(n, l int, initial []cs.ID, set func(*guarded)) []cs.Machine {
	w := &shared{in: map[cs.ID]bool{}}
	ms := make([]cs.Machine, n)
	for i := range ms {
		g := &guarded{self: cs.ID(i + 1), n: n, l: l, w: w, state: cs.OutCS, suspected: map[cs.ID]bool{}}
		if set != nil {
			set(g)
		}
		ms[i] = g
	}
	for _, id := range initial {
		ms[id-1].(*guarded).state = cs.InCS
		w.in[id] = true
	}
	return ms
}

func (g *guarded) Self() cs.ID                 { return g.self }
func (g *guarded) State() cs.State             { return g.state }
func (g *guarded) Pending() cs.Op              { return g.pending }
func (g *guarded) Clone() cs.Machine           { c := *g; return &c }
func (g *guarded) AppendState(b []byte) []byte { return append(b, byte(g.state)) }

func (g *guarded) Entry(env cs.Env) error {
	if err := cs.CheckCall(g, cs.Entry); err != nil {
		return err
	}
	g.state, g.w.in[g.self] = cs.InCS, true
	env.Changed(cs.InCS)
	for j := cs.ID(1); int(j) <= g.n; j++ {
		if j != g.self {
			env.Send(j, ping{})
		}
	}
	return nil
}

func (g *guarded) Exit(env cs.Env) error {
	if err := cs.CheckCall(g, cs.Exit); err != nil {
		return err
	}
	g.pending = cs.Exit
	g.try(env)
	return nil
}

// try completes a pending exit when S2 allows it.
func (g *guarded) try(env cs.Env) {
	if g.pending != cs.Exit {
		return
	}
	others := 0
	for j := range g.w.in {
		if j != g.self && g.w.in[j] && !g.suspected[j] {
			others++
		}
	}
	if others < g.l && !g.naive {
		return
	}
	g.state, g.pending, g.w.in[g.self] = cs.OutCS, cs.None, false
	env.Changed(cs.OutCS)
}

func (g *guarded) Receive(env cs.Env, _ cs.ID, _ cs.Message) error {
	g.try(env)
	return nil
}

func (g *guarded) Suspect(env cs.Env, id cs.ID) error {
	if !g.deaf {
		g.suspected[id] = true
	}
	g.try(env)
	return nil
}

func (g *guarded) Trust(env cs.Env, id cs.ID) error {
	delete(g.suspected, id)
	return nil
}

func ftGlobal(t *testing.T, n, l, k int) *property.Property {
	t.Helper()
	p, err := property.FaultTolerantGlobal(n, l, k)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// guardedTrace runs cfg with a trace whose header carries the exit guard
// and the initial configuration.
func guardedTrace(t *testing.T, cfg sim.Config) (*sim.Result, []byte) {
	t.Helper()
	h := trace.Header{Alg: "test", N: len(cfg.Machines), Initial: []cs.ID{}}
	for _, m := range cfg.Machines {
		if m.State() == cs.InCS {
			h.Initial = append(h.Initial, m.Self())
		}
	}
	return tracedWith(t, cfg, h)
}

// TestExitGuardViolation: an exit that leaves fewer than l processes InCS
// breaks S2; the simulator stops there and trace check confirms it from
// the trace alone.
func TestExitGuardViolation(t *testing.T) {
	ms := guardedMachines(3, 1, []cs.ID{1}, func(g *guarded) { g.naive = true })
	res, b := guardedTrace(t, sim.Config{Machines: ms, Property: ftGlobal(t, 3, 1, 3), Lambda: 0.01, E: 1, Tt: 1, Entries: 100, Seed: 1})
	v := res.Violation
	if v == nil || v.Kind != sim.KindBounds || !strings.Contains(v.Detail, "exit left 0 live processes InCS and 0 unreported crashes InCS, below the lower bound 1") {
		t.Fatalf("want an S2 violation, got %+v", v)
	}
	rep, err := trace.Check(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Confirmation != trace.Confirmed || rep.Violation.T != v.Time || rep.Violation.Reason != v.Detail {
		t.Fatalf("trace check: %v %s (%+v); the simulator: %+v", rep.Confirmation, rep.ClaimNote, rep.Violation, v)
	}
	// The initial configuration must have at least l processes InCS.
	res, err = sim.Run(sim.Config{Machines: guardedMachines(3, 1, nil, nil), Property: ftGlobal(t, 3, 1, 3), Lambda: 1, E: 1, Tt: 1, Entries: 10, Seed: 1})
	if err != nil || res.Violation == nil || !strings.Contains(res.Violation.Detail, "initially, below the lower bound 1") {
		t.Fatalf("initial configuration below l: %v %+v", err, res.Violation)
	}
}

// TestExitGuardReports: the reports are the detector's outputs, no
// earlier and no later. A machine that counts a crashed process InCS until
// its detector reports the crash keeps S2, under P and under T (whose
// initial suspicions are not reports, or its exits in the detection delay
// would be violations); one that ignores its detector breaks it once a
// crash is reported, with the crash counted as reported.
func TestExitGuardReports(t *testing.T) {
	crashes := []sim.Crash{{At: 30, Node: 1}, {At: 60, Node: 2}, {At: 61, Node: 3}}
	for _, c := range []detector.Class{detector.P, detector.T} {
		for _, deaf := range []bool{false, true} {
			ms := guardedMachines(8, 3, []cs.ID{1, 2, 3, 4, 5, 6}, func(g *guarded) { g.deaf = deaf })
			res, b := guardedTrace(t, sim.Config{
				Machines: ms, Property: ftGlobal(t, 8, 3, 8), Lambda: 0.5, E: 2, Tt: 1, MaxTime: 400, Seed: 3, Drain: true,
				Crashes: crashes, Detector: c, DetectDelay: 10,
			})
			rep, err := trace.Check(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			switch v := res.Violation; {
			case !deaf && v != nil:
				t.Fatalf("%v: a machine that keeps S2 broke it: %v", c, v)
			case !deaf && rep.Violation != nil:
				t.Fatalf("%v: trace check: %v", c, rep.Violation)
			case deaf && (v == nil || !strings.Contains(v.Detail, "unreported crash")):
				t.Fatalf("%v: a machine deaf to its detector kept S2: %+v", c, v)
			case deaf && rep.Confirmation != trace.Confirmed:
				t.Fatalf("%v: trace check: %v %s", c, rep.Confirmation, rep.ClaimNote)
			case deaf && v.Time < 40:
				t.Fatalf("%v: the violation at t=%g comes before the first report (t=40)", c, v.Time)
			}
		}
	}
}

// TestExitGuardWait: with at most l processes live, a pending exit waits
// for ever, as the specification requires: neither a deadlock nor a stall,
// with or without a drain.
func TestExitGuardWait(t *testing.T) {
	for _, drain := range []bool{false, true} {
		ms := guardedMachines(4, 2, []cs.ID{1, 2, 3}, nil)
		res, err := sim.Run(sim.Config{
			Machines: ms, Property: ftGlobal(t, 4, 2, 4), Lambda: 1, E: 1, Tt: 1, Entries: 1000, Seed: 2, Drain: drain,
			Crashes: []sim.Crash{{At: 5, Node: 1}, {At: 6, Node: 2}}, DetectDelay: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Violation != nil || res.Stop != sim.StopIdle || res.PendingExits != 2 || res.Unheld != 0 {
			t.Fatalf("drain %v: want the survivors' exits waiting, stop idle; got stop %s, pending exits %d, unheld %d, %v",
				drain, res.Stop, res.PendingExits, res.Unheld, res.Violation)
		}
	}
}

// TestRecoveryTime: a crash of a process InCS leaves a deficit that lasts
// until the next entry; one of a process OutCS leaves none.
func TestRecoveryTime(t *testing.T) {
	ms := guardedMachines(4, 2, []cs.ID{1, 2}, nil)
	res, b := guardedTrace(t, sim.Config{
		Machines: ms, Property: ftGlobal(t, 4, 2, 4), Lambda: 0.01, E: 1e6, CSDist: sim.Const, Tt: 1, MaxTime: 1e4, Seed: 5,
		Crashes: []sim.Crash{{At: 10, Node: 1}, {At: 11, Node: 3}}, DetectDelay: 1,
	})
	if res.Violation != nil {
		t.Fatal(res.Violation)
	}
	if len(res.CrashStats) != 2 {
		t.Fatalf("crash stats %+v", res.CrashStats)
	}
	first, second := res.CrashStats[0], res.CrashStats[1]
	// The first entry after the crash, read from the trace.
	entry := -1.0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"state":"InCS"`) {
			ev, err := trace.NewReader(strings.NewReader(strings.SplitN(string(b), "\n", 2)[0] + "\n" + line + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			e, err := ev.Next()
			if err != nil {
				t.Fatal(err)
			}
			entry = e.T
			break
		}
	}
	if entry < 11 {
		t.Fatalf("no entry after the crashes (first at %g)", entry)
	}
	if first.Node != 1 || !first.InCS || first.Deficit != 1 || !first.Recovered || first.Recovery != entry-10 {
		t.Fatalf("crash of P1 InCS: %+v, want deficit 1 and recovery %g", first, entry-10)
	}
	if second.Node != 3 || second.InCS || second.Deficit != 1 || second.Recovered {
		t.Fatalf("crash of P3 OutCS: %+v", second)
	}
}

// TestNoLivelockAfterTheMessages: a drain that ends with exits held by the
// lower bound, its last messages delivered just after its last state
// change and the Entry timers the stop left running long after, is no
// livelock: no message circulated through the quiet time.
func TestNoLivelockAfterTheMessages(t *testing.T) {
	ms := guardedMachines(4, 2, []cs.ID{1, 2, 3}, nil)
	res, err := sim.Run(sim.Config{Machines: ms, Property: ftGlobal(t, 4, 2, 4), Lambda: 0.01, E: 1, CSDist: sim.Const, Tt: 1,
		Entries: 2, Drain: true, StarveAfter: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Violation != nil || !res.Drained || res.PendingExits != 2 || res.EndTime < 100 {
		t.Fatalf("want a drain ending with 2 exits held and idle timers to t >= 100; got %v, drained %v, pending exits %d, end %g",
			res.Violation, res.Drained, res.PendingExits, res.EndTime)
	}
}

// TestDeficitExits: a crash InCS that leaves no deficit recovers at once,
// and an exit that still counts it (its exiter has not been told yet)
// leaves one, which DeficitExits counts.
func TestDeficitExits(t *testing.T) {
	ms := guardedMachines(4, 1, []cs.ID{1, 2}, nil)
	res, err := sim.Run(sim.Config{
		Machines: ms, Property: ftGlobal(t, 4, 1, 4), Lambda: 1e-6, E: 12, CSDist: sim.Const, Tt: 1, MaxTime: 100, Seed: 1,
		Crashes: []sim.Crash{{At: 10, Node: 2}}, DetectDelay: 5,
	})
	if err != nil || res.Violation != nil {
		t.Fatal(err, res.Violation)
	}
	want := sim.CrashStat{Node: 2, At: 10, InCS: true, Deficit: 0, Recovered: true, Recovery: 0}
	if len(res.CrashStats) != 1 || res.CrashStats[0] != want || res.DeficitExits != 1 || res.Exits != 1 {
		t.Fatalf("crash stats %+v, deficit exits %d, exits %d; want %+v and 1 deficit exit", res.CrashStats, res.DeficitExits, res.Exits, want)
	}
}
