package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// simFlags are the flags of `critsec sim`.
type simFlags struct {
	problem     problemFlags
	lambda, e   float64
	csDist      string
	ts, tr, tt  float64
	transitDist string
	entries     int64
	maxTime     float64
	seed        uint64
	fifo, drain bool
	drainTime   float64
	drainEvents int64
	starveAfter float64
	tracePath   string
	json        bool
	progress    bool
	maxMemoryGB float64
	faults      crashFlags
	fencing     bool
}

func newSimCmd() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate an algorithm: messages per CS entry, waiting times, #InCS",
		Long: `sim runs one CS object (one machine per process) in a deterministic
discrete-event simulation with the timing model of the token K-mutex paper
(Bulgannawar and Vaidya 1995, section 4): a process OutCS requests the CS
after Exp(mean 1/lambda), stays InCS for a time of mean E, then exits; each
message copy sent costs Ts of the sender's processor, each message received
costs Tr of the receiver's, and a message spends Tt in transit. A node's
processor does one thing at a time.

Times have no unit of their own: use any unit consistently (the paper uses
Tt = 0.8 or 1, Ts = Tr = 0.1 or 0, E = 0.0002 or 1). The bounds lo..hi the
algorithm guarantees (with --topology, every neighborhood's l_i..k_i), the
invocation convention and deadlock freedom are checked after every event; a
violation stops the run. For the fault-tolerant global (l,k)-CS (ftgcs),
every completed exit is also checked against the exit guard l, counting the
crashes its detector has not reported (S2 of docs/ft-global-lk-cs.md), and
each crash's deficit and recovery time are reported; an exit pending while
at most l processes are live waits as the problem requires, which is neither
a deadlock nor a stall. At the end, a request pending for longer than the
starvation bound (--starve-after) while other processes completed requests
is a starvation, and requests pending while messages circulate with no state
change for as long are a livelock; the drain is cut after --drain-time
without a state change or after --drain-events events, and a drain cut
without a verdict leaves the run incomplete.

Exit status: 0 no violation, 1 violation or incomplete run, 2 bad input,
3 I/O error.`,
		Example: `  critsec sim
  critsec sim --alg raymond --n 10 --k 3 --lambda 0.1 --entries 3000 --seed 1 --trace t.jsonl
  critsec sim --n 30 --k 3 --Ts 0.1 --Tr 0.1 --Tt 0.8 --E 0.0002 --lambda 1 --json
  critsec sim --alg lmutex --topology random:60:0.1:7 --k 2 --entries 5000 --seed 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSim(cmd, &f) },
	}
	addProblemFlags(cmd, &f.problem, "gcs", 10)
	fs := cmd.Flags()
	fs.Float64Var(&f.lambda, "lambda", 0.1, "request rate, requests per time unit spent OutCS (time OutCS ~ Exp(mean 1/lambda)), > 0")
	fs.Float64Var(&f.e, "E", 1, "mean time InCS, time units, >= 0")
	fs.StringVar(&f.csDist, "cs-dist", "exp", "distribution of the time InCS: exp (exponential, mean E) or const (always E)")
	fs.Float64Var(&f.ts, "Ts", 0, "sender's processor time per message copy sent, time units, >= 0; default 0")
	fs.Float64Var(&f.tr, "Tr", 0, "receiver's processor time per message received, time units, >= 0; default 0")
	fs.Float64Var(&f.tt, "Tt", 1, "transit time of a message (its mean with --tt-dist exp), time units, >= 0")
	fs.StringVar(&f.transitDist, "tt-dist", "const", "distribution of the transit time: const (always Tt) or exp (exponential, mean Tt)")
	fs.Int64Var(&f.entries, "entries", 3000, "stop after this many completed CS entries, >= 1 (0: no limit, needs --max-time)")
	fs.Float64Var(&f.maxTime, "max-time", 0, "stop at this simulated time, time units, >= 0; default 0: no limit")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the random workload and transit times: equal seeds give identical runs")
	fs.BoolVar(&f.fifo, "fifo", true, "per-link FIFO delivery; --fifo=false lets messages overtake each other (only with --tt-dist exp can they)")
	fs.BoolVar(&f.drain, "drain", true, "at the stop, make no new requests but deliver every message and complete the requests made, so messages per entry count whole requests; --drain=false stops at once")
	fs.Float64Var(&f.drainTime, "drain-time", 0, "cut the drain when no process has changed state for this long, time units, >= 0; default 0: the starvation bound")
	fs.Int64Var(&f.drainEvents, "drain-events", 0, fmt.Sprintf("cut the drain after this many events, >= 0; default 0: as many as the run before the stop, at least %d", sim.MinDrainEvents))
	fs.Float64Var(&f.starveAfter, "starve-after", 0, fmt.Sprintf("starvation bound, time units, >= 0: a request pending longer while others complete requests is a starvation; default 0: %d times the longest waiting time completed, at least %d·(Tt+Ts+Tr+E)", sim.StarveFactor, sim.StarveFloor))
	fs.StringVar(&f.tracePath, "trace", "", "FILE to write every event to (JSON Lines, docs/trace.md); check it with: critsec trace check FILE. Size: about 75 bytes per event, two events per message and four per CS cycle (the default gcs run: 14 MB per 1000 entries)")
	fs.BoolVar(&f.progress, "progress", false, "print progress (events, entries, simulated time) to standard error about once a second; on by default when it is a terminal")
	addMemoryFlag(fs, &f.maxMemoryGB, "refuse a run whose machines alone need more than this many GB, and stop one (incomplete, exit status 1) whose heap grows beyond it")
	fs.BoolVar(&f.json, "json", false, "print a machine-readable JSON summary (stable key order) instead of the table")
	fs.BoolVar(&f.fencing, "fencing", false, "also check the fencing tokens after every event (ftraymond, ftgcs, raymond; docs/fencing.md) and write each entry's token in the trace")
	addSimCrashFlags(fs, &f.faults)
	return cmd
}

func init() { rootCmd.AddCommand(newSimCmd()) }

// simProgress returns the Progress callback: at most a line a second on
// standard error, with --progress or when standard error is a terminal;
// else nil.
func simProgress(cmd *cobra.Command, f *simFlags) func(sim.Progress) {
	w := cmd.ErrOrStderr()
	if !showProgress(f.progress, w) {
		return nil
	}
	start := time.Now()
	last := start.Add(-time.Second) // the first report comes at once
	return func(p sim.Progress) {
		if time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		target := "(no entry limit)"
		switch {
		case f.entries > 0 && p.Entries >= f.entries:
			target = "(draining: completing the requests made)"
		case f.entries > 0:
			target = fmt.Sprintf("of %d", f.entries)
		}
		fmt.Fprintf(w, "progress: %d entries %s, %d events, simulated time %.1f, %.0f s\n", p.Entries, target, p.Events, p.Time, time.Since(start).Seconds())
	}
}

// checkTime refuses a time flag outside 0..sim.MaxTime (NaN included).
func checkTime(flag string, v float64) error {
	if !(v >= 0) || v > sim.MaxTime {
		return badInput("--%s %v is out of range: need a time in 0..%g", flag, v, sim.MaxTime)
	}
	return nil
}

// namedTime is the value of a time flag, named without its dashes.
type namedTime struct {
	name string
	v    float64
}

// checkLoad refuses a --lambda outside 1/sim.MaxTime..sim.MaxTime (NaN
// included), then each time flag outside 0..sim.MaxTime, in order.
func checkLoad(lambda float64, times ...namedTime) error {
	if !(lambda >= 1/sim.MaxTime) || lambda > sim.MaxTime {
		return badInput("--lambda %v is out of range: need a rate in %g..%g", lambda, 1/sim.MaxTime, sim.MaxTime)
	}
	for _, t := range times {
		if err := checkTime(t.name, t.v); err != nil {
			return err
		}
	}
	return nil
}

func runSim(cmd *cobra.Command, f *simFlags) error {
	pr, err := f.problem.resolve(cmd.Flags())
	if err != nil {
		return err
	}
	if err := checkLoad(f.lambda, namedTime{"E", f.e}, namedTime{"Ts", f.ts}, namedTime{"Tr", f.tr}, namedTime{"Tt", f.tt},
		namedTime{"max-time", f.maxTime}, namedTime{"drain-time", f.drainTime}, namedTime{"starve-after", f.starveAfter}); err != nil {
		return err
	}
	csDist, err := sim.ParseDist(f.csDist)
	if err != nil {
		return badInput("--cs-dist: %v", err)
	}
	transit, err := sim.ParseDist(f.transitDist)
	if err != nil {
		return badInput("--tt-dist: %v", err)
	}
	if !f.fifo && transit == sim.Const {
		return badInput("--fifo=false has no effect with constant transit times: every link stays in order; add --tt-dist exp")
	}
	switch {
	case f.entries < 0:
		return badInput("--entries %d is out of range: need entries >= 1 (or 0 with --max-time)", f.entries)
	case f.entries == 0 && f.maxTime == 0:
		return badInput("--entries 0 needs --max-time > 0: otherwise the run never stops")
	case f.drainEvents < 0:
		return badInput("--drain-events %d is out of range: need >= 0 (0: the default)", f.drainEvents)
	}
	if err := checkMemoryFlag(f.maxMemoryGB); err != nil {
		return err
	}
	if err := fits(pr, f.maxMemoryGB); err != nil {
		return err
	}
	cfg := sim.Config{
		Progress: simProgress(cmd, f),
		MaxHeap:  uint64(f.maxMemoryGB * (1 << 30)),
		Property: pr.check,
		Lambda:   f.lambda, E: f.e, CSDist: csDist,
		Ts: f.ts, Tr: f.tr, Tt: f.tt, TransitDist: transit, Unordered: !f.fifo,
		Entries: f.entries, MaxTime: f.maxTime, Drain: f.drain, Seed: f.seed, Fencing: f.fencing,
		DrainTime: f.drainTime, DrainEvents: f.drainEvents, StarveAfter: f.starveAfter,
	}
	if err := f.faults.apply(&cfg, pr.Params.N, f.seed); err != nil {
		return err
	}
	if cfg.Machines, err = pr.machines(); err != nil {
		return err
	}
	if err := checkFencing(f.fencing, pr.Alg.Name, cfg.Machines); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return badInput("%v", err)
	}
	var out *os.File
	if f.tracePath != "" {
		out, err = os.Create(f.tracePath)
		if err != nil {
			return badInput("--trace %s: %v", f.tracePath, err)
		}
		defer out.Close()
		h := sim.TraceHeader(cfg, pr.traceHeader())
		cfg.Trace = trace.NewWriter(out, h)
	}
	if cfg.MaxHeap > 0 {
		// The collector works harder near the limit, so the heap the run
		// checks stays close to what the process holds.
		debug.SetMemoryLimit(int64(cfg.MaxHeap))
		defer debug.SetMemoryLimit(math.MaxInt64)
	}
	res, err := sim.Run(cfg)
	if err != nil {
		return badInput("%v", err)
	}
	// The trace is complete on disk before anything is printed (a reader
	// that closes standard output early must not cut it short); its error
	// is reported after the summary, so it loses no result.
	var traceErr error
	if cfg.Trace != nil {
		traceErr = cfg.Trace.Flush()
		if cerr := out.Close(); traceErr == nil {
			traceErr = cerr
		}
	}
	s := newSimSummary(pr, &cfg, res)
	if err := printSummary(cmd.OutOrStdout(), f.json, s, func(w io.Writer) { printSim(w, s, f.tracePath) }); err != nil {
		return err
	}
	if traceErr != nil {
		traceErr = fmt.Errorf("--trace %s: %w", f.tracePath, traceErr)
	}
	return outcome(cmd, s.Result != "ok", traceErr)
}

// simSummary is the --json output; field order is the key order.
type simSummary struct {
	Result           string      `json:"result"`
	Config           simConfig   `json:"config"`
	Stop             string      `json:"stop"`
	Drained          bool        `json:"drained"`
	DrainCut         string      `json:"drain_cut,omitempty"`
	StarveBound      float64     `json:"starve_bound"`
	Entries          int64       `json:"entries"`
	Exits            int64       `json:"exits"`
	Messages         int64       `json:"messages"`
	Words            int64       `json:"words"`
	MessagesPerEntry float64     `json:"messages_per_entry"`
	WordsPerEntry    float64     `json:"words_per_entry"`
	Delivered        int64       `json:"delivered"`
	InFlight         int64       `json:"in_flight"`
	Pending          int         `json:"pending"`
	PendingExits     int         `json:"pending_exits"`
	Unheld           int         `json:"unheld"`
	Undecided        int         `json:"undecided"` // sim.Result.Undecided: requests pending at an ok end, not starved, not served
	EntryWait        sim.Waits   `json:"entry_wait"`
	ExitWait         sim.Waits   `json:"exit_wait"`
	Throughput       float64     `json:"throughput"`
	InCSTime         []float64   `json:"incs_time"`
	MinInCS          int         `json:"min_incs"`
	MaxInCS          int         `json:"max_incs"`
	MeanInCS         float64     `json:"mean_incs"`
	Events           int64       `json:"events"`
	EndTime          float64     `json:"end_time"`
	Violation        *simViolate `json:"violation,omitempty"`
	Faults           *simFaults  `json:"faults,omitempty"`
}

type simConfig struct {
	Alg         string  `json:"alg"`
	N           int     `json:"n"`
	L           int     `json:"l"`
	K           int     `json:"k"`
	Lo          int     `json:"lo"`
	Hi          int     `json:"hi"`
	Initial     []cs.ID `json:"initial"`
	Coterie     string  `json:"coterie,omitempty"`
	Topology    string  `json:"topology,omitempty"`
	LocalBounds string  `json:"local_bounds,omitempty"`
	Lambda      float64 `json:"lambda"`
	E           float64 `json:"E"`
	CSDist      string  `json:"cs_dist"`
	Ts          float64 `json:"Ts"`
	Tr          float64 `json:"Tr"`
	Tt          float64 `json:"Tt"`
	TransitDist string  `json:"tt_dist"`
	FIFO        bool    `json:"fifo"`
	Entries     int64   `json:"entries"`
	MaxTime     float64 `json:"max_time"`
	Drain       bool    `json:"drain"`
	DrainTime   float64 `json:"drain_time"`
	DrainEvents int64   `json:"drain_events"`
	StarveAfter float64 `json:"starve_after"`
	Seed        uint64  `json:"seed"`
}

type simViolate struct {
	Kind   string  `json:"kind"`
	Time   float64 `json:"t"`
	Event  string  `json:"event"`
	Detail string  `json:"detail"`
	InCS   []cs.ID `json:"incs"`
}

func newSimSummary(pr problem, c *sim.Config, r *sim.Result) simSummary {
	csDist, transit := "exp", "const"
	if c.CSDist == sim.Const {
		csDist = "const"
	}
	if c.TransitDist == sim.Exp {
		transit = "exp"
	}
	lo, hi := pr.bounds()
	s := simSummary{
		Result: "ok",
		Config: simConfig{
			Alg: pr.Alg.Name, N: pr.Params.N, L: pr.Params.L, K: pr.Params.K, Lo: lo, Hi: hi,
			Initial: append([]cs.ID{}, pr.Params.Initial...), Coterie: pr.Coterie,
			Topology: pr.topologyName(), LocalBounds: pr.localBounds(),
			Lambda: c.Lambda, E: c.E, CSDist: csDist, Ts: c.Ts, Tr: c.Tr, Tt: c.Tt, TransitDist: transit,
			FIFO: !c.Unordered, Entries: c.Entries, MaxTime: c.MaxTime, Drain: c.Drain,
			DrainTime: c.DrainTime, DrainEvents: c.DrainEvents, StarveAfter: c.StarveAfter, Seed: c.Seed,
		},
		Stop: r.Stop, Drained: r.Drained, DrainCut: r.DrainCut, StarveBound: r.StarveBound, Entries: r.Entries, Exits: r.Exits,
		Messages: r.Messages, Words: r.Words, MessagesPerEntry: r.MessagesPerEntry(), WordsPerEntry: r.WordsPerEntry(),
		Delivered: r.Delivered, InFlight: r.InFlight, Pending: r.Pending, PendingExits: r.PendingExits, Unheld: r.Unheld,
		EntryWait: r.EntryWait, ExitWait: r.ExitWait, Throughput: r.Throughput(),
		InCSTime: r.InCSTime, MinInCS: r.MinInCS, MaxInCS: r.MaxInCS, MeanInCS: r.MeanInCS(),
		Events: r.Events, EndTime: r.EndTime, Faults: newSimFaults(c, r),
	}
	if r.Stop == sim.StopMemory || r.DrainCut != "" {
		s.Result = "incomplete"
	}
	if v := r.Violation; v != nil {
		s.Result = "violation"
		s.Violation = &simViolate{Kind: v.Kind, Time: v.Time, Event: v.Event, Detail: v.Detail, InCS: append([]cs.ID{}, v.InCS...)}
	}
	if s.Result == "ok" {
		// Not starved is not served (sim.Result.Undecided).
		s.Undecided = r.Undecided()
	}
	return s
}

func printSim(w io.Writer, s simSummary, tracePath string) {
	c := s.Config
	order := "fifo"
	if !c.FIFO {
		order = "unordered"
	}
	fmt.Fprintf(w, "sim %s, seed %d\n", headline(c.Alg, c.N, c.L, c.K, c.Lo, c.Hi, c.Topology, c.LocalBounds), c.Seed)
	fmt.Fprintf(w, "workload: lambda=%g, E=%g (%s); costs: Ts=%g Tr=%g Tt=%g (%s), %s links\n",
		c.Lambda, c.E, c.CSDist, c.Ts, c.Tr, c.Tt, c.TransitDist, order)
	stop := "stopped at " + s.Stop
	switch s.Stop {
	case sim.StopEntries:
		stop = fmt.Sprintf("stopped after %d entries", c.Entries)
	case sim.StopMaxTime:
		stop = fmt.Sprintf("stopped at time %g", c.MaxTime)
	case sim.StopMemory:
		stop = "stopped when the heap reached --max-memory: the counts cover the run so far; give more memory, a smaller --n or a lighter load"
	}
	if s.Drained {
		stop += ", then drained"
	}
	if s.DrainCut != "" {
		stop += ", then the drain was cut"
	}
	switch {
	case s.Stop == sim.StopViolation:
		fmt.Fprintf(w, "result: %s\n", s.Result)
	case s.Undecided > 0:
		after := ""
		if s.Drained {
			after = " after the drain"
		}
		fmt.Fprintf(w, "result: %s (undecided: %d requests pending%s, none yet starved under the bound B=%.6g; %s)\n", s.Result, s.Undecided, after, s.StarveBound, stop)
	default:
		fmt.Fprintf(w, "result: %s (%s)\n", s.Result, stop)
	}
	if v := s.Violation; v != nil {
		fmt.Fprintf(w, "violation: %s at t=%g, %s: %s\n", v.Kind, v.Time, v.Event, v.Detail)
		fmt.Fprintf(w, "InCS then: %s\n", idList(v.InCS))
	}
	if s.DrainCut != "" {
		fmt.Fprintf(w, "drain cut: %s\n", s.DrainCut)
	}
	printSimFaults(w, s.Faults)
	fmt.Fprintf(w, "%-22s %d (exits %d)\n", "CS entries", s.Entries, s.Exits)
	fmt.Fprintf(w, "%-22s %d, %.3f per entry\n", "messages", s.Messages, s.MessagesPerEntry)
	fmt.Fprintf(w, "%-22s %d, %.3f per entry\n", "words", s.Words, s.WordsPerEntry)
	fmt.Fprintf(w, "%-22s %.4g entries per time unit\n", "throughput", s.Throughput)
	held := ""
	switch {
	case s.Drained && s.Unheld > 0:
		held = fmt.Sprintf(" (%d of them held by no bound: that many could complete one after another, oldest first, within every bound, yet no event is left: the algorithm waits for calls the drain does not make, docs/design/lmutin-fix.md)", s.Unheld)
	case s.Drained && s.PendingExits > 0:
		held = fmt.Sprintf(" (%s held by the lower bound l: the drain makes no new entries)", count(int64(s.PendingExits), "exit"))
	}
	fmt.Fprintf(w, "%-22s %d in flight, %s pending%s\n", "at the end", s.InFlight, count(int64(s.Pending), "request"), held)
	fmt.Fprintf(w, "%-22s %.6g (%d events)\n", "simulated time", s.EndTime, s.Events)
	fmt.Fprintf(w, "\nwaiting time (request to state change; p50/p99 within %.2g%%)\n", 100*sim.HistRelErr)
	fmt.Fprintf(w, "  %-6s %8s %10s %10s %10s %10s\n", "", "count", "mean", "p50", "p99", "max")
	for _, r := range []struct {
		name string
		w    sim.Waits
	}{{"entry", s.EntryWait}, {"exit", s.ExitWait}} {
		fmt.Fprintf(w, "  %-6s %8d %10.4g %10.4g %10.4g %10.4g\n", r.name, r.w.Count, r.w.Mean, r.w.P50, r.w.P99, r.w.Max)
	}
	fmt.Fprintf(w, "\n#InCS over time (min %d, max %d, mean %.3f)\n", s.MinInCS, s.MaxInCS, s.MeanInCS)
	for c := s.MinInCS; c <= s.MaxInCS && c < len(s.InCSTime); c++ {
		f := s.InCSTime[c]
		fmt.Fprintf(w, "  %4d  %6.2f%%  %s\n", c, 100*f, strings.Repeat("#", int(math.Round(40*f))))
	}
	if tracePath != "" {
		fmt.Fprintf(w, "\ntrace: %s\n", tracePath)
	}
}

func idList(ids []cs.ID) string {
	if len(ids) == 0 {
		return "none"
	}
	p := make([]string, len(ids))
	for i, id := range ids {
		p[i] = fmt.Sprintf("P%d", id)
	}
	return strings.Join(p, " ")
}
