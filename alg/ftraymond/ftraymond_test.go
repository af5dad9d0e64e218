package ftraymond_test

import (
	"math/rand/v2"
	"testing"

	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
)

func machines(t *testing.T, p cs.Params) []cs.Machine {
	t.Helper()
	ms, err := ftraymond.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func global(t *testing.T, n, k int) *property.Property {
	t.Helper()
	p, err := property.Global(n, 0, k)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, cfg check.Config) check.Result {
	t.Helper()
	res, err := check.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFigure1 replays the execution of the paper's Figure 1 (section 4.2):
// n = 4, k = 2, P2 InCS; P1 requests, P3 replies, P4 crashes, P3's
// detector suspects P4, which it trusted (line 43): CRASH(P4) to all; at
// P1, n becomes 3 and the one permission it holds (P3's) is n-k: P1
// enters.
func TestFigure1(t *testing.T) {
	net, err := testnet.Global(machines(t, cs.Params{N: 4, K: 2, Initial: []cs.ID{2}}), 0, 2, testnet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A process sends its INIT at its first input. P2 leaves and
	// re-enters, which starts it; its INITs start the others; the
	// initialization ends before the figure's T0.
	if err := net.Exit(2); err != nil {
		t.Fatal(err)
	}
	if err := net.Drain(); err != nil {
		t.Fatal(err)
	}
	if err := net.Entry(2); err != nil {
		t.Fatal(err)
	}
	if err := net.Drain(); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := net.State(2); s != cs.InCS {
		t.Fatalf("P2 is %v, want InCS (T0)", s)
	}
	for i := cs.ID(1); i <= 4; i++ {
		if !net.Machine(i).(*ftraymond.Machine).Initialized() {
			t.Fatalf("P%d has not initialized", i)
		}
	}
	if err := net.Entry(1); err != nil { // T1
		t.Fatal(err)
	}
	for _, d := range []struct {
		from, to cs.ID
		kind     string
	}{{1, 3, "REQUEST"}, {3, 1, "REPLY"}, {1, 2, "REQUEST"}} { // T2: P3 replies, P2 defers
		if err := net.Deliver(d.from, d.to, d.kind); err != nil {
			t.Fatal(err)
		}
	}
	if err := net.Crash(4); err != nil { // T2: P4 crashes
		t.Fatal(err)
	}
	if s, _, _ := net.State(1); s != cs.OutCS {
		t.Fatal("P1 entered with one permission while n-k = 2")
	}
	if err := net.Suspect(3, 4); err != nil { // T3
		t.Fatal(err)
	}
	if err := net.Deliver(3, 1, "CRASH"); err != nil { // T4
		t.Fatal(err)
	}
	if s, _, _ := net.State(1); s != cs.InCS {
		t.Fatalf("P1 is %v after CRASH(P4), want InCS", s)
	}
	if got := net.Machine(1).(*ftraymond.Machine).N(); got != 3 {
		t.Errorf("n at P1 = %d, want 3", got)
	}
	if err := net.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckTrusting is ftraymond's correctness evidence: with a
// trusting detector T and up to n-1 crashes after the initialization
// (section 5's assumption), the k bound holds among live processes and no
// live request deadlocks, for n = 3, k = 2 (and n = 4 without -short,
// depth-first: docs/results.md has the counts).
func TestCheckTrusting(t *testing.T) {
	res := run(t, check.Config{Machines: machines(t, cs.Params{N: 3, K: 2}), Property: global(t, 3, 2), Budget: 2, Crashes: 2, Detector: check.Trusting{}, Workers: 2})
	if res.Verdict != check.OK {
		t.Fatalf("n=3 k=2, 2 crashes, T: %s %+v", res.Verdict, res.Violation)
	}
	if res.States < 100_000 {
		t.Errorf("n=3 k=2, 2 crashes, T: only %d states: the crashes and trusts were not explored", res.States)
	}
	res = run(t, check.Config{Machines: machines(t, cs.Params{N: 3, K: 1}), Property: global(t, 3, 1), Budget: 2, Crashes: 2, Detector: check.Perfect{}, Workers: 2})
	if res.Verdict != check.OK {
		t.Fatalf("n=3 k=1, 2 crashes, P: %s %+v", res.Verdict, res.Violation)
	}
}

// TestCheckStrongIsNotEnough: fed a strong detector S instead of T, the
// algorithm takes a false suspicion of a process it trusted for a crash
// (line 43), decrements n while that process lives, and lets k+1
// processes in: trusting accuracy is what makes line 43 safe.
func TestCheckStrongIsNotEnough(t *testing.T) {
	if testing.Short() {
		t.Skip("1.5 million states (10 s)")
	}
	res := run(t, check.Config{Machines: machines(t, cs.Params{N: 3, K: 1}), Property: global(t, 3, 1), Budget: 2, Detector: check.Strong{}, Workers: 2})
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindBounds {
		t.Fatalf("S: %s %+v, want a bounds violation", res.Verdict, res.Violation)
	}
}

// TestRaymondLosesLiveness: plain Raymond tolerates k-1 crashes (section
// 1: it still gathers n-k permissions) but deadlocks once k crashed
// processes can no longer reply.
func TestRaymondLosesLiveness(t *testing.T) {
	ms, err := raymond.New(cs.Params{N: 3, K: 2})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, check.Config{Machines: ms, Property: global(t, 3, 2), Budget: 2, Crashes: 1, Detector: check.Perfect{}, Workers: 2})
	if res.Verdict != check.OK {
		t.Fatalf("raymond n=3 k=2, 1 crash: %s %+v", res.Verdict, res.Violation)
	}
	res = run(t, check.Config{Machines: ms, Property: global(t, 3, 2), Budget: 2, Crashes: 2, Detector: check.Perfect{}, Workers: 2})
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock {
		t.Fatalf("raymond n=3 k=2, 2 crashes: %s %+v, want a deadlock", res.Verdict, res.Violation)
	}
	crashes := 0
	for _, s := range res.Violation.Path {
		if s.Action.Kind == check.Crash {
			crashes++
		}
	}
	if crashes != 2 {
		t.Errorf("the deadlock path has %d crashes, want k = 2: %v", crashes, res.Violation.Path)
	}
	if testing.Short() {
		return
	}
	// n = 4, k = 2: two crashes suffice (2.4 million states, 25 s).
	if ms, err = raymond.New(cs.Params{N: 4, K: 2}); err != nil {
		t.Fatal(err)
	}
	res = run(t, check.Config{Machines: ms, Property: global(t, 4, 2), Budget: 2, Crashes: 2, Detector: check.Perfect{}, Workers: 2})
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock {
		t.Fatalf("raymond n=4 k=2, 2 crashes: %s %+v, want a deadlock", res.Verdict, res.Violation)
	}
}

// TestSimRandomCrashes simulates ftraymond on many seeds with random crash
// schedules of up to n-1 crashes, each after the initialization, under P
// and under T with a detection delay longer than a transit (so INITs wait
// at line 34): no violation, every request of a live process completes
// (the drain leaves none pending), and entries go on in the 200 time units
// after the last crash.
func TestSimRandomCrashes(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 8
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 3 + r.IntN(10)
		k := 1 + r.IntN(n-1)
		count := 1 + r.IntN(n-1)
		var crashes []sim.Crash
		for i, j := range r.Perm(n)[:count] {
			crashes = append(crashes, sim.Crash{At: 50 + 40*float64(i) + 10*r.Float64(), Node: cs.ID(j + 1)})
		}
		for _, d := range []detector.Class{detector.P, detector.T} {
			ms := machines(t, cs.Params{N: n, K: k})
			res, err := sim.Run(sim.Config{Machines: ms, Property: global(t, n, k), Lambda: 0.5, E: 1, Tt: 1, TransitDist: sim.Exp,
				MaxTime: crashes[count-1].At + 200, Drain: true, Seed: seed, Crashes: crashes, Detector: d, DetectDelay: 3})
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation != nil || !res.Drained || res.Pending != 0 {
				t.Fatalf("seed %d n=%d k=%d %v %v: %+v, drained %v, %d pending", seed, n, k, d, crashes, res.Violation, res.Drained, res.Pending)
			}
			if len(res.EntriesAtCrash) != count {
				t.Fatalf("seed %d: %d of %d crashes happened", seed, len(res.EntriesAtCrash), count)
			}
			if last := res.EntriesAtCrash[count-1]; res.Entries-last < 50 {
				t.Errorf("seed %d n=%d k=%d %v: %d entries after the last crash", seed, n, k, d, res.Entries-last)
			}
			if res.MaxInCS > min(k, n) {
				t.Errorf("seed %d: max #InCS %d > k = %d", seed, res.MaxInCS, k)
			}
		}
	}
}

// TestFenceRestore: a machine restored from its snapshot has the same
// token; a snapshot written before tokens existed (without the last set)
// restores with a token that names nobody outside crashed_i.
func TestFenceRestore(t *testing.T) {
	p := cs.Params{N: 3, K: 1, Initial: []cs.ID{2}}
	m := machines(t, p)[1].(*ftraymond.Machine)
	snap := m.AppendState(nil)
	for _, c := range []struct {
		name string
		b    []byte
	}{{"current", snap}, {"before tokens", snap[:len(snap)-1]}} {
		r := machines(t, p)[1].(*ftraymond.Machine)
		if err := cs.RestoreState(r, c.b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got, want := r.Fence(), m.Fence(); got.Seq != want.Seq || !got.Crashed.Equal(want.Crashed) || string(r.AppendState(nil)) != string(snap) {
			t.Errorf("%s: restored token %+v, want %+v", c.name, got, want)
		}
	}
	if f := m.Fence(); f.Seq != cs.FenceSeq(0, 2, 3) || f.Crashed.Len() != 0 {
		t.Errorf("P2 InCS from the start: token %+v, want seq %d and no crashed", f, cs.FenceSeq(0, 2, 3))
	}
}
