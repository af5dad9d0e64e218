package faults

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/trace"
)

var (
	detector = flag.String("faults.detector", "", "YAML of the detector section for the ftraymond cases (lines, \\n-separated), instead of each case's")
	runArgs  = flag.String("faults.runargs", "", "extra flags of every critsec run, separated by spaces")
	duration = flag.Duration("faults.duration", 0, "TestRandomSchedule: how long the random schedules run in all (0: skip it)")
	seed     = flag.Uint64("faults.seed", 1, "TestRandomSchedule: the seed of the schedules")
)

// bins are the executables the cases run, built once.
var bins struct {
	once          sync.Once
	dir           string
	critsec, beat string
	err           error
}

func TestMain(m *testing.M) {
	if v := os.Getenv(RelayEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "relay: %s=%q: want a number of members\n", RelayEnv, v)
			os.Exit(2)
		}
		os.Exit(RelayMain(n, os.Stdin, os.Stdout, os.Stderr))
	}
	flag.Parse()
	code := m.Run()
	if bins.dir != "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// build builds critsec and the stand-in service (once).
func build(t *testing.T) {
	t.Helper()
	bins.once.Do(func() {
		if bins.dir, bins.err = os.MkdirTemp("", "critsec-faults-"); bins.err != nil {
			return
		}
		bins.critsec, bins.beat = filepath.Join(bins.dir, "critsec"), filepath.Join(bins.dir, "beat")
		for _, b := range []struct{ out, pkg string }{{bins.critsec, "../../cmd/critsec"}, {bins.beat, "./testdata/beat"}} {
			if out, err := exec.Command("go", "build", "-o", b.out, b.pkg).CombinedOutput(); err != nil {
				bins.err = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
}

// Case is one run of a cluster under a schedule of faults.
type Case struct {
	name    string
	problem string // the cluster file's problem lines
	n       int
	bounds  Bounds // K: never more copies; L: never fewer once settled (0: not checked)
	// period > 0: each member wants in two periods in three (--policy
	// signal); 0: --policy always.
	period time.Duration
	// detector is the cluster file's detector section (ftraymond, ftgcs).
	detector string
	runArgs  []string
	schedule []Fault
	// live is how many members must run a copy after the faults are
	// undone (a fault they should survive loses no member for good).
	live int
}

// ftDetector is the detector section of the ftraymond cases in
// crash-stop mode (the defaults, written out), majorityDetector in
// majority mode (docs/fencing.md).
const (
	ftDetector       = "detector:\n  heartbeat: 100ms\n  timeout: 500ms\n"
	majorityDetector = ftDetector + "  mode: majority\n"
	// majoritySlow has a timeout of a second: a cut of 200-300 ms costs
	// a connection's read deadline (three heartbeats) and a new TLS
	// handshake on top, which the 500 ms timeout does not always cover.
	majoritySlow = "detector:\n  heartbeat: 100ms\n  timeout: 1s\n  mode: majority\n"
	// crashStopSlow is the same in crash-stop mode, for the case of every
	// kind: there a cut that costs a declaration costs a member for good.
	crashStopSlow = "detector:\n  heartbeat: 100ms\n  timeout: 1s\n"
)

// everyKind is a short schedule of every kind of fault on the member
// InCS at the time, but KillSupervisor (a regression case of its own).
var everyKind = []Fault{
	{Kind: Pause, For: time.Second},
	{Kind: PauseTree, For: 600 * time.Millisecond},
	{Kind: Kill, For: 500 * time.Millisecond},
	{Kind: Isolate, For: 1500 * time.Millisecond},
	{Kind: Minority, For: time.Second},
	{Kind: Loss, Pct: 30, For: 1500 * time.Millisecond},
	{Kind: Delay, Delay: 100 * time.Millisecond, For: 1500 * time.Millisecond},
}

// majorityKinds is every kind of fault for majority mode on five
// members: a pause past the timeout (one member declared crashed, for
// good), the others well under the timeout (majoritySlow) or losing no
// frame for that long. A second member lost leaves three, each of whose leases then needs
// every other's echo: one more vote wedges them (docs/fencing.md, "Two
// modes"); the longer partitions are cases of their own.
var majorityKinds = []Fault{
	{Kind: Pause, For: 2 * time.Second},
	{Kind: PauseTree, For: 300 * time.Millisecond},
	{Kind: Kill, For: 200 * time.Millisecond},
	{Kind: Isolate, For: 200 * time.Millisecond},
	{Kind: Minority, For: 200 * time.Millisecond},
	{Kind: Loss, Pct: 30, For: 1500 * time.Millisecond},
	{Kind: Delay, Delay: 100 * time.Millisecond, For: 1500 * time.Millisecond},
}

// crashStopKinds is every kind of fault for ftraymond in crash-stop mode:
// its pause-tree shorter than the detector's timeout (a member frozen,
// watchdog and all, while its command runs on is suspected after the
// timeout, and no fence kept by a process of that member can stop the
// command then; fencing tokens can), and its partitions too (in
// crash-stop mode a longer one splits the cluster, as documented:
// docs/fencing.md, "Two modes"), and its kill too, restart included (a
// member restarted after the peers declared it crashed is refused and
// stops for good).
var crashStopKinds = []Fault{
	{Kind: Pause, For: time.Second},
	{Kind: PauseTree, For: 300 * time.Millisecond},
	{Kind: Kill, For: 200 * time.Millisecond},
	{Kind: Isolate, For: 300 * time.Millisecond},
	{Kind: Minority, For: 300 * time.Millisecond},
	{Kind: Loss, Pct: 30, For: 1500 * time.Millisecond},
	{Kind: Delay, Delay: 100 * time.Millisecond, For: 1500 * time.Millisecond},
}

var cases = []Case{
	{name: "raymond/every-kind", problem: "alg: raymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		period: 400 * time.Millisecond, schedule: everyKind, live: 3},
	{name: "gcs-always/every-kind", problem: "alg: gcs\nn: 4\nl: 1\nk: 2\n", n: 4, bounds: Bounds{K: 2, L: 1},
		schedule: everyKind, live: 2},
	{name: "gcs-signal/every-kind", problem: "alg: gcs\nn: 5\nl: 2\nk: 3\n", n: 5, bounds: Bounds{K: 3},
		period: 400 * time.Millisecond, schedule: everyKind, live: 5},
	{name: "ftraymond/short-faults", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		period: 400 * time.Millisecond, detector: ftDetector, live: 3, schedule: []Fault{
			{Kind: Pause, For: 200 * time.Millisecond},
			{Kind: Delay, Delay: 50 * time.Millisecond, For: time.Second},
			{Kind: Loss, Pct: 1, For: time.Second},
		}},
	{name: "ftraymond/every-kind", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		period: 400 * time.Millisecond, detector: crashStopSlow, schedule: crashStopKinds, live: 1},
	{name: "ftraymond-majority/every-kind", problem: "alg: ftraymond\nn: 5\nk: 2\n", n: 5, bounds: Bounds{K: 2},
		period: 400 * time.Millisecond, detector: majoritySlow, schedule: majorityKinds, live: 2},
	{name: "ftraymond-majority/minority-2s", problem: "alg: ftraymond\nn: 5\nk: 1\n", n: 5, bounds: Bounds{K: 1},
		detector: majorityDetector, schedule: []Fault{{Kind: Minority, For: 2 * time.Second}}, live: 1},
	// ftgcs in majority mode (critsec run refuses l > 0 in crash-stop
	// mode): each fault takes one member, so two copies at least run
	// throughout, as a single crash leaves them.
	{name: "ftgcs-majority/every-kind", problem: "alg: ftgcs\nn: 5\nl: 2\nk: 3\n", n: 5, bounds: Bounds{K: 3, L: 2},
		detector: majoritySlow, schedule: majorityKinds, live: 3},
	// The regressions: each a finding of probing critsec run by hand.
	{name: "ftraymond/paused-holder-2s", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		detector: ftDetector, schedule: []Fault{{Kind: Pause, For: 2 * time.Second}}, live: 1},
	{name: "ftraymond/paused-holder-n4k2", problem: "alg: ftraymond\nn: 4\nk: 2\n", n: 4, bounds: Bounds{K: 2},
		detector: ftDetector, schedule: []Fault{{Kind: Pause, For: 2 * time.Second}}, live: 2},
	{name: "ftraymond/paused-holder-0.8s", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		detector: ftDetector, schedule: []Fault{{Kind: Pause, For: 800 * time.Millisecond}}, live: 1},
	{name: "ftraymond/partitioned-holder-2s", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		detector: majorityDetector, schedule: []Fault{{Kind: Isolate, For: 2 * time.Second}}, live: 1},
	{name: "ftraymond/partitioned-holder-3.5s", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		period: 400 * time.Millisecond, detector: majorityDetector, schedule: []Fault{{Kind: Isolate, For: 3500 * time.Millisecond}},
		live: 2},
	{name: "ftraymond/partitioned-holder-7s", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		detector: majorityDetector, schedule: []Fault{{Kind: Isolate, For: 7 * time.Second}}, live: 1},
	{name: "raymond/dead-supervisor", problem: "alg: raymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		schedule: []Fault{{Kind: KillSupervisor, For: 300 * time.Millisecond}}, live: 1},
	{name: "ftraymond/orphan", problem: "alg: ftraymond\nn: 3\nk: 1\n", n: 3, bounds: Bounds{K: 1},
		detector: ftDetector, schedule: []Fault{{Kind: KillSupervisor, Down: true, For: 2 * time.Second}}, live: 1},
}

// recoverMargin is how long after a fault is undone, beyond the
// detector's timeout, copies may still run below l: a link silent past
// its read deadline is dialed again with a TLS handshake, a replacement
// enters after the vote's trip and the CRASH message, a copy starts; each
// is slow on a loaded machine.
const recoverMargin = 2 * time.Second

// Result is what a run of a case found.
type Result struct {
	Injected []Injected
	Record   Report
	// Excused are the spans under l that a fault explains (Excused).
	Excused []Span
	// Unmeant are the silences past the timeout that no fault was meant
	// to cause (a loaded machine): the lower bound and the members'
	// return are then not checked.
	Unmeant []Silence
	// Late are the watchdogs' kills that came more than node.FenceSlack
	// after their deadline, but for a watchdog frozen by a pause-tree.
	Late     []LateKill
	Trace    *trace.Report
	Problems []string // every assertion that failed, one line each
}

// TestFaults runs each case: the members start, the schedule runs (each
// fault 500 ms after the previous one was undone), then the cluster must
// have its live members running copies again; the members are stopped,
// the record checked against the bounds and the merged node logs by the
// trace checker.
func TestFaults(t *testing.T) {
	needNet(t)
	build(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runCase(t, c, 500*time.Millisecond)
			t.Log(summary(c, res))
			for _, p := range res.Problems {
				t.Error(p)
			}
		})
	}
}

// runCase runs c, gap between faults, and returns what it found.
func runCase(t *testing.T, c Case, gap time.Duration) Result {
	t.Helper()
	det := c.detector
	if *detector != "" && det != "" {
		det = strings.ReplaceAll(*detector, `\n`, "\n")
		if !strings.HasSuffix(det, "\n") {
			det += "\n"
		}
	}
	args := append([]string{"--grace", "200ms"}, c.runArgs...)
	args = append(args, strings.Fields(*runArgs)...)
	cl, err := NewCluster(Config{Dir: t.TempDir(), Problem: c.problem, N: c.n, Detector: det, RunArgs: args,
		Period: c.period, Critsec: bins.critsec, Beat: bins.beat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	})
	bound := 2 * time.Minute // start, stop, and the wait for the live members
	for _, f := range c.schedule {
		bound += max(f.After, gap) + f.For + 30*time.Second // a kill's restart, a holder to hit
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for id := 1; id <= c.n; id++ {
		if err := cl.Start(id); err != nil {
			t.Fatal(err)
		}
	}
	for id := 1; id <= c.n; id++ {
		if err := cl.Ready(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	var res Result
	if err := cl.waitRunning(ctx, 0, max(c.bounds.L, 1)); err != nil {
		t.Fatal(err)
	}
	var crashes []trace.Event
	for _, f := range c.schedule {
		pause := gap
		if f.After > 0 {
			pause = f.After
		}
		time.Sleep(pause) // the schedule's pace, not a wait for a condition
		in, err := cl.Inject(ctx, f)
		res.Injected = append(res.Injected, in)
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
			break
		}
		if f.Down {
			crashes = append(crashes, trace.Event{T: float64(in.At.UnixNano()) / 1e9, Ev: trace.EvCrash, Node: cs.ID(in.Members[0])})
		}
	}
	cl.Net.Heal()
	liveErr := cl.waitRunning(ctx, cl.recordLen(), c.live)
	until, stopAt := cl.recordLen(), time.Now()
	cl.Stop()
	lines, err := cl.ReadRecord()
	if err != nil {
		t.Fatal(err)
	}
	b := c.bounds
	b.Until = until
	res.Record = Check(lines, b)
	dc := cl.Node.Detector
	res.Unmeant = unmeant(cl.Silences(stopAt), res.Injected, dc.Timeout)
	res.Late = lateUnmeant(cl.LateKills(node.FenceSlack), res.Injected)
	var broken []string
	if len(res.Late) > 0 {
		broken = append(broken, "the timing argument's assumption broken: "+describeLate(res.Late))
		res.Problems = append(res.Problems, fmt.Sprintf("a watchdog killed more than node.FenceSlack (%v) after its deadline, "+
			"which the timing argument assumes it never does (docs/fencing.md): %s", node.FenceSlack, describeLate(res.Late)))
	}
	if len(res.Unmeant) > 0 && dc.Mode != node.ModeMajority {
		broken = append(broken, "silences past the timeout that no fault meant ("+describeSilences(res.Unmeant)+
			"): in crash-stop mode members silent to each other that long declare each other crashed and split the cluster "+
			"(docs/fencing.md, \"Two modes\"); every link runs through the harness's relay")
	}
	why := ""
	if len(broken) > 0 {
		why = " (" + strings.Join(broken, "; ") + ")"
	}
	for _, s := range res.Record.Over {
		res.Problems = append(res.Problems, "more than k copies"+why+": "+res.Record.Describe(s))
	}
	// The members' return and the lower bound hold only while no member
	// is silent past the timeout but those the schedule meant to be: a
	// vote is final, and with ⌊n/2⌋ members out every lease needs the
	// echoes of every other live member, so a stall of any of them stops
	// every copy (docs/faults.md).
	timely := len(res.Unmeant) == 0
	if liveErr != nil && timely {
		res.Problems = append(res.Problems, fmt.Sprintf("after the faults: %v", liveErr))
	}
	within := recoverMargin
	if dc.Heartbeat > 0 {
		within += dc.Timeout
	}
	var under []Span
	res.Excused, under = Excused(lines, res.Record.Under, res.Injected, within)
	for _, s := range under {
		if !timely {
			break
		}
		res.Problems = append(res.Problems, fmt.Sprintf("fewer than l copies, not while a fault held a member or within %v of its end: %s",
			within, res.Record.Describe(s)))
	}
	if len(res.Record.Over) > 0 || len(under) > 0 || liveErr != nil {
		t.Log(res.Record.Timeline(lines))
		for id := 1; id <= c.n; id++ {
			t.Logf("P%d's log:\n%s", id, cl.Notes(id, 60))
		}
	}
	res.Trace, err = cl.CheckTrace(crashes...)
	switch {
	case err != nil:
		res.Problems = append(res.Problems, fmt.Sprintf("merged trace: %v", err))
	case res.Trace.Violation != nil:
		res.Problems = append(res.Problems, fmt.Sprintf("merged trace: %v", res.Trace.Violation))
	}
	return res
}

// unmeant lists the silences that no fault of the schedule was meant to
// cause: a silence is meant when its deaf or its silent member was hit by
// a fault that silences a member (a pause, a kill, a cut, a loss of every
// packet) lasting the timeout or longer, or by a kill left down. Loss of
// some packets and delay are meant to silence nobody.
func unmeant(silences []Silence, faults []Injected, timeout time.Duration) []Silence {
	long := func(m int) bool {
		for _, in := range faults {
			mute := in.Kind != Loss && in.Kind != Delay || in.Kind == Loss && in.Pct >= 100
			if mute && (in.For >= timeout || in.Down) && slices.Contains(in.Members, m) {
				return true
			}
		}
		return false
	}
	var out []Silence
	for _, s := range silences {
		if !long(s.By) && !long(s.Of) {
			out = append(out, s)
		}
	}
	return out
}

// lateUnmeant drops from late the kills of members whose tree a
// pause-tree froze: their watchdog, stopped past its deadline by the
// fault, kills as it resumes, late by design.
func lateUnmeant(late []LateKill, faults []Injected) []LateKill {
	var out []LateKill
	for _, k := range late {
		frozen := slices.ContainsFunc(faults, func(in Injected) bool {
			return in.Kind == PauseTree && slices.Contains(in.Members, k.Member)
		})
		if !frozen {
			out = append(out, k)
		}
	}
	return out
}

// describeSilences names each member silent past the timeout to another.
func describeSilences(ss []Silence) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("P%d to P%d", s.Of, s.By))
	}
	return strings.Join(parts, " ")
}

// describeLate says which watchdogs killed late, and by how much.
func describeLate(late []LateKill) string {
	var parts []string
	for _, k := range late {
		parts = append(parts, fmt.Sprintf("P%d's by %v", k.Member, k.Late))
	}
	return strings.Join(parts, ", ")
}

// waitRunning waits until copies of at least want members wrote to the
// record after its line from.
func (c *Cluster) waitRunning(ctx context.Context, from, want int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		lines, err := c.ReadRecord()
		if err != nil {
			return err
		}
		members := map[int]bool{}
		for _, l := range lines[min(from, len(lines)):] {
			members[l.Member] = true
		}
		if len(members) >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("copies of %d members ran after record line %d, want %d: %w", len(members), from, want, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// summary is a case's result in a few lines.
func summary(c Case, res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d faults; record: %d lines, %d copies, max %d at once (k = %d)", c.name, len(res.Injected),
		res.Record.Lines, len(res.Record.Copies), res.Record.Max, c.bounds.K)
	if c.bounds.L > 0 {
		fmt.Fprintf(&b, ", min %d once settled (l = %d)", res.Record.Min, c.bounds.L)
	}
	if res.Trace != nil {
		fmt.Fprintf(&b, "; trace: %d events, #InCS %d..%d", res.Trace.Events, res.Trace.MinInCS, res.Trace.MaxInCS)
	}
	for _, in := range res.Injected {
		fmt.Fprintf(&b, "\n  %s", in)
	}
	if len(res.Unmeant) > 0 {
		fmt.Fprintf(&b, "\n  silent past the timeout though no fault meant it (votes and declarations in the logs): %s; "+
			"the lower bound and the members' return not checked", describeSilences(res.Unmeant))
	}
	for _, s := range res.Excused {
		fmt.Fprintf(&b, "\n  while a fault held a member: %s", res.Record.Describe(s))
	}
	return b.String()
}
