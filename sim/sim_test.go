package sim_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/alg/lkcs"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// global is testnet.GlobalProperty: lo <= #InCS <= hi over n processes.
var global = testnet.GlobalProperty

func raymondMachines(t testing.TB, n, k int) []cs.Machine {
	t.Helper()
	ms, err := raymond.New(cs.Params{N: n, K: k})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// traced runs cfg with a trace and returns the result and the trace bytes.
func traced(t *testing.T, cfg sim.Config) (*sim.Result, []byte) {
	t.Helper()
	return tracedWith(t, cfg, trace.Header{Alg: "test", N: len(cfg.Machines), K: len(cfg.Machines)})
}

// tracedWith runs cfg with a trace whose header starts as h and returns
// the result and the trace bytes.
func tracedWith(t *testing.T, cfg sim.Config, h trace.Header) (*sim.Result, []byte) {
	t.Helper()
	var buf bytes.Buffer
	cfg.Trace = trace.NewWriter(&buf, sim.TraceHeader(cfg, h))
	res, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Trace.Flush(); err != nil {
		t.Fatal(err)
	}
	return res, buf.Bytes()
}

// checkTrace runs the stand-alone trace checker on b and fails on a
// violation.
func checkTrace(t *testing.T, b []byte) *trace.Report {
	t.Helper()
	rep, err := trace.Check(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violation != nil {
		t.Fatalf("trace check: %v", rep.Violation)
	}
	return rep
}

func TestDeterminism(t *testing.T) {
	cfg := func(seed uint64) sim.Config {
		return sim.Config{
			Machines: raymondMachines(t, 6, 2), Property: global(t, 6, 0, 2), Lambda: 0.5, E: 1, Ts: 0.05, Tr: 0.05, Tt: 1,
			TransitDist: sim.Exp, Entries: 300, Seed: seed, Drain: true,
		}
	}
	r1, t1 := traced(t, cfg(7))
	r2, t2 := traced(t, cfg(7))
	if !bytes.Equal(t1, t2) {
		t.Fatal("two runs with the same seed wrote different traces")
	}
	if !reflect.DeepEqual(r1, r2) {
		t.Fatalf("two runs with the same seed differ:\n%+v\n%+v", r1, r2)
	}
	_, t3 := traced(t, cfg(8))
	if bytes.Equal(t1, t3) {
		t.Fatal("different seeds wrote the same trace")
	}
	rep := checkTrace(t, t1)
	if rep.Unreceived != 0 || rep.Pending != 0 || r1.InFlight != 0 || r1.Pending != 0 {
		t.Fatalf("drained run left work: trace %d unreceived %d pending; result %d in flight %d pending",
			rep.Unreceived, rep.Pending, r1.InFlight, r1.Pending)
	}
}

// TestCostModel follows one uncontended request of P1 in Ricart-Agrawala
// (raymond, k = 1, n = 3) through the token K-mutex paper's cost model:
// the two REQUEST copies leave at t0+Ts and t0+2Ts; the two others each
// spend Tr receiving and Ts sending a REPLY; the requester's processor
// receives the two REPLYs one after the other.
func TestCostModel(t *testing.T) {
	const ts, tr, tt = 0.1, 0.25, 1.0
	res, b := traced(t, sim.Config{
		Machines: raymondMachines(t, 3, 1), Property: global(t, 3, 0, 1), Lambda: 1e-3, E: 1, CSDist: sim.Const,
		Ts: ts, Tr: tr, Tt: tt, Entries: 1, Seed: 3,
	})
	if res.Violation != nil || res.Entries != 1 {
		t.Fatalf("%+v", res)
	}
	rd, err := trace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var evs []trace.Event
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 || evs[0].Ev != trace.EvRequest {
		t.Fatalf("trace does not start with a request: %v", evs)
	}
	// The first process to request (r) sends REQUEST to the others (a, b)
	// in id order.
	t0, r := evs[0].T, evs[0].Node
	var others []cs.ID
	for id := cs.ID(1); id <= 3; id++ {
		if id != r {
			others = append(others, id)
		}
	}
	a, b2 := others[0], others[1]
	// r's REQUEST to a leaves at t0+Ts, arrives at t0+Ts+Tt, is handled
	// after Tr; the REPLY leaves Ts later and arrives Tt later, at
	// t0+2Ts+Tr+2Tt. The REPLY from b leaves Ts after its REQUEST (sent
	// second) is handled: arrival t0+3Ts+Tr+2Tt. r handles the first at
	// +Tr, the second when its processor is free, +Tr again.
	first := t0 + 2*ts + tr + 2*tt + tr
	second := max(t0+3*ts+tr+2*tt, first) + tr
	want := []struct {
		ev   string
		node cs.ID
		t    float64
	}{
		{trace.EvRecv, a, t0 + ts + tt + tr},
		{trace.EvRecv, b2, t0 + 2*ts + tt + tr},
		{trace.EvRecv, r, first},
		{trace.EvRecv, r, second},
		{trace.EvState, r, second},
	}
	var got []trace.Event
	for _, ev := range evs {
		if ev.Ev == trace.EvRecv || ev.Ev == trace.EvState {
			got = append(got, ev)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got events %+v", got)
	}
	for i, w := range want {
		if g := got[i]; g.Ev != w.ev || g.Node != w.node || math.Abs(g.T-w.t) > 1e-9 {
			t.Errorf("event %d: got %s at P%d t=%v, want %s at P%d t=%v", i, g.Ev, g.Node, g.T, w.ev, w.node, w.t)
		}
	}
	if d := res.EntryWait.Max - (second - t0); math.Abs(d) > 1e-9 {
		t.Errorf("entry wait %v, want %v", res.EntryWait.Max, second-t0)
	}
}

// TestRaymondMessagesPerEntry: Raymond's
// messages per CS entry lie in [2N-K-1, 2(N-1)] at every load (the bound
// the token K-mutex paper quotes, section 4) and approach 2(N-1) at light
// load.
func TestRaymondMessagesPerEntry(t *testing.T) {
	type size struct{ n, k int }
	sizes := []size{{5, 1}, {5, 3}, {10, 3}, {20, 5}}
	lambdas := []float64{0.001, 0.1, 1, 10}
	entries := int64(1000)
	if testing.Short() {
		entries = 300
	}
	for _, sz := range sizes {
		for _, lambda := range lambdas {
			t.Run(fmt.Sprintf("n=%d,k=%d,lambda=%g", sz.n, sz.k, lambda), func(t *testing.T) {
				res, err := sim.Run(sim.Config{
					Machines: raymondMachines(t, sz.n, sz.k), Property: global(t, sz.n, 0, sz.k), Lambda: lambda, E: 1,
					Ts: 0.1, Tr: 0.1, Tt: 0.8, Entries: entries, Seed: 1, Drain: true,
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Violation != nil {
					t.Fatal(res.Violation)
				}
				lo, hi := float64(2*sz.n-sz.k-1), float64(2*(sz.n-1))
				mpe := res.MessagesPerEntry()
				if mpe < lo || mpe > hi {
					t.Fatalf("%.4f messages per entry, outside [%g, %g]", mpe, lo, hi)
				}
				if lambda == 0.001 && mpe < hi-0.01*hi {
					t.Fatalf("light load: %.4f messages per entry, want within 1%% of 2(N-1) = %g", mpe, hi)
				}
				if res.WordsPerEntry() != 4*mpe {
					t.Fatalf("%.4f words per entry, want 4 per message (%g)", res.WordsPerEntry(), 4*mpe)
				}
			})
		}
	}
}

// TestFIFO: with random transit times a FIFO run never lets a message
// overtake an earlier one on its link (the stand-alone checker verifies
// every recv against its link's oldest send), while an unordered run does.
func TestFIFO(t *testing.T) {
	cfg := sim.Config{
		Machines: raymondMachines(t, 5, 2), Property: global(t, 5, 0, 2), Lambda: 2, E: 0.1, Tt: 1,
		TransitDist: sim.Exp, Entries: 300, Seed: 5, Drain: true,
	}
	_, b := traced(t, cfg)
	if !strings.Contains(string(b[:bytes.IndexByte(b, '\n')]), `"fifo":true`) {
		t.Fatal("FIFO run's header does not say fifo")
	}
	checkTrace(t, b)

	cfg.Machines = raymondMachines(t, 5, 2)
	cfg.Unordered = true
	_, b = traced(t, cfg)
	checkTrace(t, b) // consistent as an unordered trace
	// Read as a FIFO trace, it must show an overtaking.
	fifo := bytes.Replace(b, []byte(`"fifo":false`), []byte(`"fifo":true`), 1)
	rep, err := trace.Check(bytes.NewReader(fifo))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violation == nil || !strings.Contains(rep.Violation.Reason, "oldest message") {
		t.Fatalf("unordered run shows no overtaking: %+v", rep.Violation)
	}
}

// TestBoundsViolation: Raymond with k = 3 lets 3 processes in; told
// hi = 2, the simulator must stop at the first time a third one enters.
func TestBoundsViolation(t *testing.T) {
	res, b := traced(t, sim.Config{
		Machines: raymondMachines(t, 6, 3), Property: global(t, 6, 0, 2), Lambda: 5, E: 2, Tt: 1, Entries: 10000, Seed: 2,
	})
	v := res.Violation
	if v == nil || v.Kind != sim.KindBounds || len(v.InCS) != 3 || res.Stop != sim.StopViolation {
		t.Fatalf("want a bounds violation with 3 processes InCS, got %+v", v)
	}
	if !strings.Contains(v.Event, "received REPLY") || v.Time <= 0 {
		t.Fatalf("violation event %q at %v", v.Event, v.Time)
	}
	if res.MaxInCS != 3 {
		t.Fatalf("MaxInCS = %d", res.MaxInCS)
	}
	// The trace ends at the violation, and the trace checker finds the
	// same one.
	rep, err := trace.Check(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violation == nil || rep.Violation.T != v.Time || !reflect.DeepEqual(rep.Violation.InCS, v.InCS) {
		t.Fatalf("trace check found %+v, the simulator %+v", rep.Violation, v)
	}
}

// greedy is a deliberately wrong mutual exclusion machine: Entry enters at
// once. Its flaws are switched on by its fields.
type greedy struct {
	self      cs.ID
	state     cs.State
	pending   cs.Op
	refuse    bool // Exit returns an error
	silent    bool // Exit changes state without reporting it
	never     bool // Entry never completes
	badTarget bool // Entry sends to a process that does not exist
}

type ping struct{}

func (ping) Kind() string                 { return "PING" }
func (ping) Words() int                   { return 3 }
func (ping) AppendBinary(b []byte) []byte { return append(b, 'p') }

func (g *greedy) Self() cs.ID                 { return g.self }
func (g *greedy) State() cs.State             { return g.state }
func (g *greedy) Pending() cs.Op              { return g.pending }
func (g *greedy) Clone() cs.Machine           { c := *g; return &c }
func (g *greedy) AppendState(b []byte) []byte { return append(b, byte(g.state)) }
func (g *greedy) Entry(env cs.Env) error {
	if err := cs.CheckCall(g, cs.Entry); err != nil {
		return err
	}
	if g.badTarget {
		env.Send(99, ping{})
	}
	if g.never {
		g.pending = cs.Entry
		return nil
	}
	env.Send(g.self%2+1, ping{})
	g.state = cs.InCS
	env.Changed(cs.InCS)
	return nil
}
func (g *greedy) Exit(env cs.Env) error {
	if g.refuse {
		return errors.New("greedy: no")
	}
	if err := cs.CheckCall(g, cs.Exit); err != nil {
		return err
	}
	g.state = cs.OutCS
	if !g.silent {
		env.Changed(cs.OutCS)
	}
	return nil
}
func (g *greedy) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	if g.self == 2 && g.refuse {
		return cs.Unexpected(g.self, from, m)
	}
	return nil
}

func TestMachineViolations(t *testing.T) {
	cases := []struct {
		name   string
		set    func(*greedy)
		kind   string
		detail string
	}{
		{"bounds", func(*greedy) {}, sim.KindBounds, "2 processes InCS"},
		{"refused exit", func(g *greedy) { g.refuse = g.self == 1 }, sim.KindConvention, "refused exit"},
		{"receive error", func(g *greedy) { g.refuse = g.self == 2 }, sim.KindError, "cannot handle PING"},
		{"silent change", func(g *greedy) { g.silent = true }, sim.KindConvention, "is OutCS but reported InCS"},
		{"deadlock", func(g *greedy) { g.never = true }, sim.KindDeadlock, "no event left"},
		{"bad target", func(g *greedy) { g.badTarget = true }, sim.KindError, "not a participant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms := []cs.Machine{&greedy{self: 1}, &greedy{self: 2}}
			for _, m := range ms {
				c.set(m.(*greedy))
			}
			hi := 1
			if c.kind != sim.KindBounds {
				hi = 2
			}
			res, err := sim.Run(sim.Config{Machines: ms, Property: global(t, len(ms), 0, hi), Lambda: 1, E: 1, Tt: 1, Entries: 1000, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			v := res.Violation
			if v == nil || v.Kind != c.kind || !strings.Contains(v.Detail, c.detail) {
				t.Fatalf("want %s violation containing %q, got %+v", c.kind, c.detail, v)
			}
		})
	}
}

// detecting wraps a Raymond machine to record its failure-detector input.
type detecting struct {
	cs.Machine
	suspects *[]cs.ID
}

func (d detecting) Suspect(_ cs.Env, id cs.ID) error {
	*d.suspects = append(*d.suspects, id)
	return nil
}
func (d detecting) Trust(cs.Env, cs.ID) error { return nil }

// TestCrashAndDetector: Raymond tolerates k-1 crashes (FT k-mutex paper,
// section 3); P4 crashes at t=20, every live process suspects it
// DetectDelay later, and the trace stays consistent.
func TestCrashAndDetector(t *testing.T) {
	ms := raymondMachines(t, 4, 2)
	sus := make([][]cs.ID, 4)
	for i := range ms {
		ms[i] = detecting{ms[i], &sus[i]}
	}
	res, b := traced(t, sim.Config{
		Machines: ms, Property: global(t, len(ms), 0, 2), Lambda: 1, E: 1, Tt: 1, Entries: 200, Seed: 4, Drain: true,
		Crashes: []sim.Crash{{At: 20, Node: 4}}, DetectDelay: 3,
	})
	if res.Violation != nil || res.Entries < 200 {
		t.Fatalf("%+v", res)
	}
	for i := 0; i < 3; i++ {
		if !reflect.DeepEqual(sus[i], []cs.ID{4}) {
			t.Fatalf("P%d suspected %v, want [4]", i+1, sus[i])
		}
	}
	if len(sus[3]) != 0 {
		t.Fatalf("crashed P4 got detector input %v", sus[3])
	}
	rep := checkTrace(t, b)
	if rep.Unreceived == 0 {
		t.Fatal("no message to the crashed process was lost")
	}
	if !bytes.Contains(b, []byte(`{"t":23,"ev":"suspect","node":1,"who":4}`)) ||
		!bytes.Contains(b, []byte(`{"t":20,"ev":"crash","node":4}`)) {
		t.Fatal("trace lacks the crash or the suspect event at crash time + DetectDelay")
	}
}

func TestStops(t *testing.T) {
	res, err := sim.Run(sim.Config{Machines: raymondMachines(t, 5, 2), Property: global(t, 5, 0, 2), Lambda: 1, E: 1, Tt: 1, Entries: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != sim.StopEntries || res.Entries != 50 || res.Drained {
		t.Fatalf("entries stop: %+v", res)
	}
	res, err = sim.Run(sim.Config{Machines: raymondMachines(t, 5, 2), Property: global(t, 5, 0, 2), Lambda: 1, E: 1, Tt: 1, MaxTime: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != sim.StopMaxTime || res.EndTime != 40 {
		t.Fatalf("max-time stop: %+v", res)
	}
	sum := 0.0
	for _, f := range res.InCSTime {
		sum += f
	}
	if math.Abs(sum-1) > 1e-9 || res.MeanInCS() <= 0 || res.MeanInCS() > 2 {
		t.Fatalf("InCSTime %v sums to %v, mean %v", res.InCSTime, sum, res.MeanInCS())
	}
	if got := res.Throughput(); math.Abs(got-float64(res.Entries)/40) > 1e-12 {
		t.Fatalf("throughput %v", got)
	}
	// Every process crashes: nothing is left to do.
	res, err = sim.Run(sim.Config{Machines: raymondMachines(t, 2, 1), Property: global(t, 2, 0, 1), Lambda: 1, E: 1, Tt: 1, Entries: 50, Seed: 1,
		Crashes: []sim.Crash{{At: 5, Node: 1}, {At: 5, Node: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != sim.StopIdle || res.Violation != nil || res.EndTime < 5 {
		t.Fatalf("all crashed: %+v", res)
	}
}

func TestValidate(t *testing.T) {
	good := func() sim.Config {
		return sim.Config{Machines: raymondMachines(t, 3, 1), Property: global(t, 3, 0, 1), Lambda: 1, E: 1, Tt: 1, Entries: 10}
	}
	bad := map[string]func(*sim.Config){
		"Machines is empty":   func(c *sim.Config) { c.Machines = nil },
		"Machines[0]":         func(c *sim.Config) { c.Machines[0], c.Machines[1] = c.Machines[1], c.Machines[0] },
		"Property is nil":     func(c *sim.Config) { c.Property = nil },
		"Property is over 4":  func(c *sim.Config) { c.Property = global(t, 4, 0, 1) },
		"Lambda = 0":          func(c *sim.Config) { c.Lambda = 0 },
		"Lambda = NaN":        func(c *sim.Config) { c.Lambda = math.NaN() },
		"E = -1":              func(c *sim.Config) { c.E = -1 },
		"Tt = +Inf":           func(c *sim.Config) { c.Tt = math.Inf(1) },
		"Ts = NaN":            func(c *sim.Config) { c.Ts = math.NaN() },
		"Entries = -1":        func(c *sim.Config) { c.Entries = -1 },
		"never stop":          func(c *sim.Config) { c.Entries = 0 },
		"process 7":           func(c *sim.Config) { c.Crashes = []sim.Crash{{At: 1, Node: 7}} },
		"CSDist = 9":          func(c *sim.Config) { c.CSDist = 9 },
		"DetectDelay = -1":    func(c *sim.Config) { c.DetectDelay = -1 },
		"MaxTime = -5":        func(c *sim.Config) { c.MaxTime = -5 },
		"TransitDist = 7: ne": func(c *sim.Config) { c.TransitDist = 7 },
	}
	for want, f := range bad {
		c := good()
		f(&c)
		_, err := sim.Run(c)
		if err == nil || !strings.Contains(err.Error(), strings.Split(want, ":")[0]) {
			t.Errorf("%s: got error %v", want, err)
		}
	}
	c := good()
	if _, err := sim.Run(c); err != nil {
		t.Fatal(err)
	}
}

// v0 is the kind of res's violation, "" when there is none.
func v0(res *sim.Result) string {
	if res.Violation == nil {
		return ""
	}
	return res.Violation.Kind
}

// TestRegistry simulates every registered algorithm briefly under load:
// its own bounds must hold after every event. The "-paper" variants, as
// published, may deadlock (docs/global-lk-cs.md) or, for the local ones,
// take an undefined step (docs/design/lmutin-fix.md); those are the only
// violations allowed for them.
func TestRegistry(t *testing.T) {
	const n = 6
	for _, a := range alg.All() {
		spec := a.SpecFor(n, 1, 3)
		if a.Quorums {
			spec.Quorums = testnet.Arcs(n)
		}
		pr, err := alg.Resolve(spec)
		if errors.Is(err, lkcs.ErrAssumptions) {
			// LKCS needs k_q - l_q >= 3 near its leader.
			spec = a.SpecFor(n, 0, 3)
			pr, err = alg.Resolve(spec)
		}
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		ms, err := pr.Machines()
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		res, err := sim.Run(sim.Config{Machines: ms, Property: pr.Property, Lambda: 1, E: 1, Ts: 0.01, Tr: 0.01, Tt: 1, Entries: 300, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		t.Logf("%s: stop %s, %d entries, %.2f messages per entry, #InCS %d..%d", a.Name, res.Stop, res.Entries, res.MessagesPerEntry(), res.MinInCS, res.MaxInCS)
		// The published l_i-LMUTIN can also take an undefined step.
		undefined := strings.HasPrefix(a.Name, "lmut") && v0(res) == sim.KindError
		if v := res.Violation; v != nil && !(strings.HasSuffix(a.Name, "-paper") && (v.Kind == sim.KindDeadlock || undefined)) {
			t.Errorf("%s: %v", a.Name, v)
		}
	}
}

// TestDeadlockInTheDrain: a request stuck while the run drains is a
// deadlock, not "ok", unless a bound holds it. The published MUTIN inside
// gcs-paper loses a Release on majority(4) with this seed: P1's entry stays
// pending with only P4 InCS (1 < k = 2). The corrected gcs completes the
// same run, its pending exits held by l.
func TestDeadlockInTheDrain(t *testing.T) {
	run := func(name string) *sim.Result {
		res, err := sim.Run(majority4(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if v := run("gcs-paper").Violation; v == nil || v.Kind != sim.KindDeadlock || !strings.Contains(v.Detail, "P1's entry request") {
		t.Fatalf("gcs-paper: %+v, want P1's entry deadlocked in the drain", v)
	}
	if res := run("gcs"); res.Violation != nil || !res.Drained || res.Pending != res.PendingExits {
		t.Fatalf("gcs: %+v", res)
	}
}

// TestMaxHeap: a run whose heap outgrows Config.MaxHeap stops, incomplete,
// instead of being killed: Raymond broadcasts n-1 REQUESTs per entry, so
// at n = 500 under heavy load the messages in flight soon pass 1 MB.
func TestMaxHeap(t *testing.T) {
	res, err := sim.Run(sim.Config{Machines: raymondMachines(t, 500, 1), Property: global(t, 500, 0, 1), Lambda: 100, E: 1, Tt: 1, Entries: 1000, MaxHeap: 1 << 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != sim.StopMemory || res.Violation != nil || res.Entries >= 1000 {
		t.Fatalf("stop %q after %d entries, violation %v", res.Stop, res.Entries, res.Violation)
	}
}

// TestUnheld: after a drain, Result.Unheld counts the pending requests that
// no bound holds, taken together. For the global problem it is 0 whenever
// the run ends without a violation (the exits left are held by l). l_i-LMUTIN
// with l = 1 on complete:8 ends this run with two processes InCS, both
// waiting to exit (docs/design/lmutin-fix.md, "Exits that no bound holds
// after a drain"). Every neighborhood is all 8 processes, so of the two
// exits one could complete and leave 1 = l InCS, and not both: Unheld is
// min(pending exits, #InCS - l) = 1, where counting each request alone gave
// 2.
func TestUnheld(t *testing.T) {
	run := func(spec alg.Spec) (*sim.Result, []cs.Machine) {
		pr, ms, err := alg.Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.Run(sim.Config{Machines: ms, Property: pr.Property, Lambda: 1, E: 1, Tt: 1, TransitDist: sim.Exp, Entries: 240, Drain: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res, ms
	}
	if res, _ := run(alg.Spec{Alg: "gcs", N: 10}); res.Violation != nil || res.Pending == 0 || res.Unheld != 0 {
		t.Fatalf("gcs: %d pending, %d unheld, violation %v", res.Pending, res.Unheld, res.Violation)
	}
	l := 1
	res, ms := run(alg.Spec{Alg: "lmutin", Topology: "complete:8", L: &l})
	if res.Violation != nil || res.InFlight != 0 || res.Pending != 2 || res.PendingExits != 2 {
		t.Fatalf("lmutin complete:8: %d pending (%d exits), %d in flight, violation %v", res.Pending, res.PendingExits, res.InFlight, res.Violation)
	}
	in := 0
	for _, m := range ms {
		if m.State() == cs.InCS {
			in++
		}
	}
	if want := min(res.PendingExits, in-l); res.Unheld != want {
		t.Fatalf("lmutin complete:8: %d InCS, %d exits pending, %d unheld; want %d", in, res.PendingExits, res.Unheld, want)
	}
}

// TestUnheldAtDeadlock: a deadlock found with no event left counts the
// pending requests no bound holds, as a drain's end does: two entries that
// never complete, with room for both (bounds 0..2).
func TestUnheldAtDeadlock(t *testing.T) {
	ms := []cs.Machine{&greedy{self: 1, never: true}, &greedy{self: 2, never: true}}
	res, err := sim.Run(sim.Config{Machines: ms, Property: global(t, 2, 0, 2), Lambda: 1, E: 1, Tt: 1, Entries: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Violation; v == nil || v.Kind != sim.KindDeadlock || res.Pending != 2 || res.Unheld != 2 {
		t.Fatalf("violation %v, %d pending, %d unheld; want a deadlock with 2 of each", v, res.Pending, res.Unheld)
	}
}

// majority4 is the run TestDeadlockInTheDrain and TestVerdictsConfirmed
// share: algorithm name for (1,2) on the majority coterie of 4, five
// entries at λ = 1 with seed 17, drained.
func majority4(t *testing.T, name string) sim.Config {
	t.Helper()
	a, err := alg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	spec := a.SpecFor(4, 1, 2)
	spec.Coterie = "majority"
	pr, ms, err := alg.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	return sim.Config{Machines: ms, Property: pr.Property, Lambda: 1, E: 1, Tt: 1, TransitDist: sim.Exp, Entries: 5, Drain: true, Seed: 17}
}
