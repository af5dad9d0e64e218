package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// build returns a configuration of registered algorithm name on n
// processes (on topology, when not empty) with bounds l and k, at load
// lambda = E = 1 unless the caller changes it.
func build(t *testing.T, name, topology string, n, l, k int) sim.Config {
	t.Helper()
	a, err := alg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	spec := a.SpecFor(n, l, k)
	if topology != "" {
		spec.Topology = topology
	}
	pr, ms, err := alg.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return sim.Config{Machines: ms, Property: pr.Property, Lambda: 1, E: 1, Tt: 1, Seed: 1}
}

// lkcsCrash is LKCS on complete:15 with (l, k) = (1, 4), P3 crashing at
// t = 100 and the workload stopping at t = 150: after the crash one
// message circulates for ever, one hop per time unit, and no process
// changes state again.
func lkcsCrash(t *testing.T) sim.Config {
	cfg := build(t, "lkcs", "complete:15", 15, 1, 4)
	cfg.Lambda, cfg.MaxTime, cfg.Drain = 0.1, 150, true
	cfg.Crashes = []sim.Crash{{At: 100, Node: 3}}
	return cfg
}

// TestLivelockInTheDrain: a drain whose messages circulate with no state
// change is cut at its time limit (by default the starvation bound) and
// reported as a livelock, naming the oldest pending request.
func TestLivelockInTheDrain(t *testing.T) {
	res, err := sim.Run(lkcsCrash(t))
	if err != nil {
		t.Fatal(err)
	}
	v := res.Violation
	if v == nil || v.Kind != sim.KindLivelock || !strings.Contains(v.Detail, "14 requests are pending, the oldest P11's entry request") || v.Event != "drain cut" {
		t.Fatalf("violation %+v, want a livelock with 14 requests pending", v)
	}
	if !strings.Contains(res.DrainCut, "time limit") || res.Drained || res.Entries != 5 {
		t.Fatalf("drain cut %q, drained %v, %d entries", res.DrainCut, res.Drained, res.Entries)
	}
	// The drain ended one starvation bound after the stop: the floor, 100
	// times Tt + E, above twice the longest wait (71.3).
	if res.EndTime != 150+res.StarveBound || res.StarveBound != sim.StarveFloor*2 || res.EntryWait.Max > 72 {
		t.Fatalf("end %g, starvation bound %g, longest entry wait %v", res.EndTime, res.StarveBound, res.EntryWait.Max)
	}
	cfg := lkcsCrash(t)
	cfg.DrainTime = 20
	if res, err := sim.Run(cfg); err != nil || res.Violation == nil || res.Violation.Kind != sim.KindLivelock || res.EndTime != 170 {
		t.Fatalf("drain time 20: %v, %+v", err, res)
	}
}

// TestDrainEventLimit: a drain cut by its event limit before any verdict
// leaves the run incomplete (Result.DrainCut), not drained and not ok.
func TestDrainEventLimit(t *testing.T) {
	cfg := lkcsCrash(t)
	cfg.DrainEvents = 100
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Violation != nil || res.Drained || !strings.Contains(res.DrainCut, "event limit: 100 events after the stop at t=150") || res.Stop != sim.StopMaxTime {
		t.Fatalf("violation %v, drained %v, cut %q, stop %s", res.Violation, res.Drained, res.DrainCut, res.Stop)
	}
}

// TestStarvation: a request pending longer than the starvation bound while
// the others go on is a starvation. Forest's P7 requested at t = 97.7,
// P2 crashed at t = 100, and the others made about 1000 entries by
// t = 600 while P7 waited; with a bound longer than the run there is no
// verdict.
func TestStarvation(t *testing.T) {
	forest := func(after float64) *sim.Result {
		cfg := forestCrash(t, 600)
		cfg.StarveAfter = after
		res, err := sim.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := forest(0)
	v := res.Violation
	if v == nil || v.Kind != sim.KindStarvation || !strings.HasPrefix(v.Detail, "P7's entry request, made at t=97.7118, was still pending 502.288 time units later") ||
		!strings.Contains(v.Detail, "the other processes completed 1005 CS entries") {
		t.Fatalf("violation %+v, want P7 starved", v)
	}
	// Twice the longest completed wait, 17, is below the floor: 100 times
	// Tt + E.
	if res.StarveBound != sim.StarveFloor*2 || res.EntryWait.Max > 20 {
		t.Fatalf("bound %g, longest entry wait %g", res.StarveBound, res.EntryWait.Max)
	}
	if res := forest(600); res.Violation != nil || res.StarveBound != 600 {
		t.Fatalf("bound 600: %v, bound %g", res.Violation, res.StarveBound)
	}
}

// forestCrash is forest on 15 processes with k = 5, P2 crashing at t = 100
// and the workload stopping at maxTime, without a drain: P7's request,
// made at t = 97.7, is never granted (TestStarvation).
func forestCrash(t *testing.T, maxTime float64) sim.Config {
	cfg := build(t, "forest", "", 15, 0, 5)
	cfg.MaxTime = maxTime
	cfg.Crashes, cfg.Detector, cfg.DetectDelay = []sim.Crash{{At: 100, Node: 2}}, detector.T, 5
	return cfg
}

// TestStarvationTrace: the trace of a starved run ends with the verdict,
// the starved process, its request's time and the bound in numbers, and
// trace check confirms it; with an entry of the starved process added,
// trace check refutes it.
func TestStarvationTrace(t *testing.T) {
	res, b := traced(t, forestCrash(t, 300))
	v := res.Violation
	if v == nil || v.Kind != sim.KindStarvation || v.Who != 7 || v.Since != 97.71181640629362 || v.Bound != 200 {
		t.Fatalf("violation %+v, want P7's request at t=97.7 starved, bound 200", v)
	}
	rep := checkTrace(t, b)
	if c := rep.Claim; c == nil || *c != (trace.Claim{Kind: v.Kind, Detail: v.Detail, Who: 7, Since: v.Since, Bound: 200}) || rep.Confirmation != trace.Confirmed {
		t.Fatalf("trace check: claim %+v %s: %s", c, rep.Confirmation, rep.ClaimNote)
	}
	rep = checkTampered(t, b, `{"t":299.9,"ev":"state","node":7,"state":"InCS"}`)
	if rep.Confirmation != trace.NotConfirmed || !strings.Contains(rep.ClaimNote, "P7 has no request pending at the end") {
		t.Fatalf("P7 entered, yet trace check says %s: %s", rep.Confirmation, rep.ClaimNote)
	}
}

// TestLivelockTrace: the trace of a livelocked run ends with the verdict,
// the last state change's time and the bound in numbers, and trace check
// confirms it; with a state change added after it, trace check refutes it.
func TestLivelockTrace(t *testing.T) {
	cfg := lkcsCrash(t)
	var initial []cs.ID // LKCS's leaders, InCS from the start (l = 1)
	for i, m := range cfg.Machines {
		if m.State() == cs.InCS {
			initial = append(initial, cs.ID(i+1))
		}
	}
	res, b := tracedWith(t, cfg, trace.Header{Alg: "lkcs", Initial: initial})
	v := res.Violation
	if v == nil || v.Kind != sim.KindLivelock || v.Who != 0 || v.Since != 98.0158604289664 || v.Bound != 200 {
		t.Fatalf("violation %+v, want a livelock since t=98.0, bound 200", v)
	}
	rep := checkTrace(t, b)
	if c := rep.Claim; c == nil || *c != (trace.Claim{Kind: v.Kind, Detail: v.Detail, Since: v.Since, Bound: 200}) || rep.Confirmation != trace.Confirmed {
		t.Fatalf("trace check: claim %+v %s: %s", c, rep.Confirmation, rep.ClaimNote)
	}
	rep = checkTampered(t, b, `{"t":349.5,"ev":"state","node":11,"state":"InCS"}`)
	if rep.Confirmation != trace.NotConfirmed || !strings.Contains(rep.ClaimNote, "P11 changed state at t=349.5, after the claimed last state change") {
		t.Fatalf("P11 entered, yet trace check says %s: %s", rep.Confirmation, rep.ClaimNote)
	}
}

// checkTampered checks the trace b with line inserted before its last line
// (the verdict), and fails on a violation.
func checkTampered(t *testing.T, b []byte, line string) *trace.Report {
	t.Helper()
	s := strings.TrimSuffix(string(b), "\n")
	i := strings.LastIndexByte(s, '\n')
	if !strings.Contains(s[i:], `"ev":"verdict"`) {
		t.Fatalf("the trace ends with %s, not a verdict", s[i+1:])
	}
	return checkTrace(t, []byte(s[:i+1]+line+s[i:]+"\n"))
}

// TestStarvationWithoutCrash: LKCS on random:60:0.15:7 with (0, 3) starves
// the 33 processes two or more hops from its leader (docs/design/lkcs-fix.md)
// while the others make 3000 entries: those 33 requests wait longer than
// the bound at the stop; the drain then ends with no event left, but the
// verdict is the starvation seen up to the stop.
func TestStarvationWithoutCrash(t *testing.T) {
	cfg := build(t, "lkcs", "random:60:0.15:7", 60, 0, 3)
	cfg.Lambda, cfg.Entries, cfg.Drain = 0.1, 3000, true
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unheld == 0 {
		t.Errorf("the drain ran out of events with %d requests pending, none counted unheld", res.Pending)
	}
	if v := res.Violation; v == nil || v.Kind != sim.KindStarvation || !strings.HasPrefix(v.Detail, "P10's entry request, made at t=0.0158604,") ||
		!strings.Contains(v.Detail, "; 33 requests in all waited longer than the bound") {
		t.Fatalf("violation %+v, want P10's request starved, and 32 more", v)
	}
	if res.Starved != 33 || math.Abs(res.PendingWaitMax-(res.EndTime-0.0158604)) > 1e-6 {
		t.Fatalf("%d starved, longest pending wait %g at the end t=%g; want 33 and P10's", res.Starved, res.PendingWaitMax, res.EndTime)
	}
}

// TestVerdictConfig: the drain's limits and the starvation bound are
// validated like every other field.
func TestVerdictConfig(t *testing.T) {
	for _, c := range []struct {
		set  func(*sim.Config)
		want string
	}{
		{func(c *sim.Config) { c.DrainEvents = -1 }, "DrainEvents = -1"},
		{func(c *sim.Config) { c.DrainTime = -1 }, "DrainTime = -1"},
		{func(c *sim.Config) { c.StarveAfter = 2e12 }, "StarveAfter = 2e+12"},
	} {
		cfg := lkcsCrash(t)
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestVerdictsConfirmed: for seeded runs that end in each kind of verdict,
// trace check confirms the verdict the trace ends with (or, for ok, finds
// nothing wrong and no claim). Forest after a crash with the drain starves
// P7 before the stop and its drain ends with no event left: the verdict is
// the starvation seen up to the stop, which says more than the drain's
// deadlock. A deadlock without a drain, every live process waiting, is
// confirmed, and so is the drain's deadlock: the trace marks the drain,
// after which the idle processes call Entry no more.
func TestVerdictsConfirmed(t *testing.T) {
	gcsPaper := func(drain bool) sim.Config {
		cfg := majority4(t, "gcs-paper")
		if !drain {
			cfg.Entries, cfg.MaxTime, cfg.Drain = 0, 3000, false
		}
		return cfg
	}
	forestDrained := func(seed uint64) sim.Config {
		cfg := build(t, "forest", "", 15, 0, 5)
		cfg.MaxTime, cfg.Drain, cfg.Seed = 600, true, seed
		cfg.Crashes = []sim.Crash{{At: 100, Node: 2}}
		return cfg
	}
	raymond := build(t, "raymond", "", 10, 0, 3)
	raymond.Lambda, raymond.Entries, raymond.Drain = 0.1, 500, true
	for _, c := range []struct {
		name string
		alg  string
		cfg  sim.Config
		kind string // "" for ok
		want trace.Confirmation
	}{
		{"ok", "raymond", raymond, "", trace.NoClaim},
		{"deadlock", "gcs-paper", gcsPaper(false), sim.KindDeadlock, trace.Confirmed},
		{"deadlock in the drain", "gcs-paper", gcsPaper(true), sim.KindDeadlock, trace.Confirmed},
		{"starvation", "forest", forestCrash(t, 300), sim.KindStarvation, trace.Confirmed},
		{"starvation, drained", "forest", forestDrained(1), sim.KindStarvation, trace.Confirmed},
		{"livelock", "lkcs", lkcsCrash(t), sim.KindLivelock, trace.Confirmed},
	} {
		t.Run(c.name, func(t *testing.T) {
			var initial []cs.ID
			for i, m := range c.cfg.Machines {
				if m.State() == cs.InCS {
					initial = append(initial, cs.ID(i+1))
				}
			}
			res, b := tracedWith(t, c.cfg, trace.Header{Alg: c.alg, Initial: initial})
			kind := ""
			if v := res.Violation; v != nil {
				kind = v.Kind
			}
			if kind != c.kind {
				t.Fatalf("verdict %+v, want %q", res.Violation, c.kind)
			}
			if rep := checkTrace(t, b); rep.Confirmation != c.want || c.kind != "" && rep.Claim.Kind != c.kind {
				t.Fatalf("trace check: %s (claim %+v): %s; want %s", rep.Confirmation, rep.Claim, rep.ClaimNote, c.want)
			}
		})
	}
}

// TestVerdictsConfirmedSweep: every verdict that is not ok in a sweep of
// seeds over the majority-4 run, published and corrected GCS, is one
// trace check confirms on the run's own trace.
func TestVerdictsConfirmedSweep(t *testing.T) {
	kinds := map[string]int{}
	for _, name := range []string{"gcs-paper", "gcs"} {
		for seed := uint64(1); seed <= 40; seed++ {
			cfg := majority4(t, name)
			cfg.Seed = seed
			var initial []cs.ID
			for i, m := range cfg.Machines {
				if m.State() == cs.InCS {
					initial = append(initial, cs.ID(i+1))
				}
			}
			res, b := tracedWith(t, cfg, trace.Header{Alg: name, Initial: initial})
			v := res.Violation
			if v == nil {
				continue
			}
			kinds[name+" "+v.Kind]++
			if rep := checkTrace(t, b); rep.Confirmation != trace.Confirmed || rep.Claim.Kind != v.Kind {
				t.Errorf("%s seed %d: %s %s; trace check: %s (%s)", name, seed, v.Kind, v.Detail, rep.Confirmation, rep.ClaimNote)
			}
		}
	}
	t.Logf("verdicts: %v", kinds)
}
