package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
)

// checkFlags are the flags of `critsec check`.
type checkFlags struct {
	problem        problemFlags
	budget         budgetFlag
	maxStates      int
	timeout        time.Duration
	unordered      bool
	tracePath      string
	vizPath        string
	json           bool
	workers        int
	deadlockStates int
	search         string
	reduce         string
	progress       bool
	maxMemoryGB    float64
	expected       int
	abstract       string
	diskDir        string
	checkpoint     string
	ckEvery        time.Duration
	faults         checkFaultFlags
	liveness       bool
	livenessStates int
	fairBound      int
	fencing        bool
}

// Sizes above these explode; they need an explicit --max-states.
const (
	checkSafeN      = 5
	checkSafeBudget = 4
)

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Model check an algorithm: every interleaving, shortest counterexample",
		Long: `check explores every interleaving of message deliveries (per-link FIFO, or any
order with --unordered) and Entry/Exit calls (--budget calls per process),
breadth-first, and checks after every step that lo <= #InCS <= hi (the
algorithm's bounds, or --assert-min/--assert-max; with --topology, that each
process P_i has l_i..k_i of N_i+P_i InCS; for the fault-tolerant global
(l,k)-CS, 0..k and, after every exit, at least l InCS counting the crashes
the exiter's detector has not reported), that every machine accepts
the calls and messages it gets, and that no pending request is deadlocked.
The result is ok, violation (with a shortest path; --trace writes it as a
trace), or incomplete (a limit was hit: never ok). --search dfs explores
depth-first with far less memory (same verdicts, counterexamples not
necessarily shortest); with it, --reduce por explores only an ample subset
of the actions where one is provably enough (partial-order reduction: same
verdicts, fewer states). See docs/checker.md.

Exit status: 0 ok, 1 violation or incomplete, 2 bad input, 3 I/O error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCheck(cmd, &f) },
	}
	addProblemFlags(cmd, &f.problem, "gcs", 3)
	fs := cmd.Flags()
	f.budget = budgetFlag{each: []int{2}}
	fs.Var(&f.budget, "budget", "Entry/Exit calls each process may make (2 = one cycle), 0.."+fmt.Sprint(checkSafeBudget)+" without --max-states; or one per process, P1 first (2,1,1: only P1 may make a second cycle; docs/design/deadlock-under-a-budget.md)")
	fs.IntVar(&f.maxStates, "max-states", 0, "stop (incomplete) after this many distinct states; required when n > "+fmt.Sprint(checkSafeN)+" or budget > "+fmt.Sprint(checkSafeBudget))
	fs.DurationVar(&f.timeout, "timeout", 0, "stop (incomplete) after this long, e.g. 30s (0: none)")
	addMemoryFlag(fs, &f.maxMemoryGB, "stop (incomplete) when the checker's heap exceeds this many GB, instead of being killed by the operating system")
	fs.BoolVar(&f.unordered, "unordered", false, "channels deliver their messages in any order (default: per-link FIFO)")
	fs.StringVar(&f.tracePath, "trace", "", "write the counterexample path to this file in the trace format")
	fs.StringVar(&f.vizPath, "viz", "", "write the counterexample path to this file as an HTML page (critsec viz, docs/viz.md)")
	fs.BoolVar(&f.json, "json", false, "print a machine-readable JSON summary")
	fs.IntVar(&f.workers, "workers", 2, "goroutines expanding states, 1..256 (results do not depend on it; bfs only)")
	fs.BoolVar(&f.progress, "progress", false, "print progress (states, depth, rate, memory) to standard error; on by default when it is a terminal")
	fs.IntVar(&f.expected, "expected-states", 0, "with --search dfs: size the visited set for this many states up front (12 bytes a slot at load 3/4), so a huge run does not need room for two tables while one doubles; capped at --max-memory")
	fs.StringVar(&f.diskDir, "disk-dir", "", "with --search dfs: keep the visited set partly on disk, in a directory of its own created under this one and removed at the end: a table of fingerprints in memory (half of --max-memory, or --expected-states of them), merged into a sorted file of 12 bytes a state when full; same results, slower (docs/design/visited-set.md)")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "with --disk-dir: save the run's progress in this directory every --checkpoint-every and when a limit stops it, and continue the checkpoint found there (the same command, run again, goes on where it stopped; docs/design/visited-set.md, \"Checkpoints\")")
	fs.DurationVar(&f.ckEvery, "checkpoint-every", check.DefaultCheckpointEvery, "with --checkpoint: the interval between two saves")
	fs.StringVar(&f.search, "search", "bfs", "bfs (breadth-first: shortest counterexamples, whole states of a BFS level in memory) or dfs (depth-first: 12-32 bytes per visited state plus the distinct machines and messages, for spaces whose frontier does not fit; counterexamples not shortest)")
	fs.StringVar(&f.reduce, "reduce", "none", "none, or por (with --search dfs): partial-order reduction, which explores only an ample subset of the actions where one exists; same verdicts, fewer states (docs/design/partial-order-reduction.md)")
	fs.StringVar(&f.abstract, "abstract", "", "replace these child objects by their specification, an ideal k-mutual exclusion object that grants in any order (compositional checking, docs/design/compositional-checking.md): mx (MUTIN's mutual exclusion, in mutin, kmutex, gcs) or kmex (gcs's k-mutual exclusion); comma-separated")
	fs.IntVar(&f.deadlockStates, "deadlock-states", check.DefaultDeadlockStates, "state limit of each re-exploration deciding whether a request left pending by the budget is deadlocked")
	fs.BoolVar(&f.liveness, "liveness", false, "search for starvation instead: a request that a weakly fair scheduler postpones forever, in the continuations with unlimited calls of the states reachable under --budget; a lasso-shaped counterexample (docs/design/liveness.md)")
	fs.IntVar(&f.livenessStates, "liveness-states", check.DefaultLivenessStates, "with --liveness: state limit of each process's continuation graph")
	fs.IntVar(&f.fairBound, "fair-bound", 0, "with --liveness: explore only continuations in which no action stays enabled more than this many consecutive steps without being taken (bounded fairness; keeps the graph finite when counters grow); 0: exact weak fairness")
	fs.BoolVar(&f.fencing, "fencing", false, "also check the fencing tokens (ftraymond, ftgcs, raymond): at k = 1 every entry's seq exceeds every earlier entry's, and at most k holders (InCS, or crashed InCS) are named by no holder's token (docs/fencing.md); more states")
	addCheckCrashFlags(fs, &f.faults)
	return cmd
}

func init() { rootCmd.AddCommand(newCheckCmd()) }

// checkSummary is the --json output; field order is the key order.
type checkSummary struct {
	Result      string `json:"result"`
	Alg         string `json:"alg"`
	N           int    `json:"n"`
	L           int    `json:"l"`
	K           int    `json:"k"`
	Lo          int    `json:"lo"`
	Hi          int    `json:"hi"`
	Topology    string `json:"topology,omitempty"`
	LocalBounds string `json:"local_bounds,omitempty"`
	// Property, for a property with an exit guard (the fault-tolerant
	// global (l,k)-CS), describes it: Lo..Hi are its state bounds 0..k,
	// and the guard checks l at every exit.
	Property string `json:"property,omitempty"`
	// Budget is the budget of every process, or the largest of Budgets.
	Budget   int    `json:"budget"`
	Budgets  []int  `json:"budgets,omitempty"`
	Crashes  int    `json:"crashes,omitempty"`
	Detector string `json:"detector,omitempty"`
	Fencing  bool   `json:"fencing,omitempty"`
	FIFO     bool   `json:"fifo"`
	Search   string `json:"search"`
	Reduce   string `json:"reduce"`
	Abstract string `json:"abstract,omitempty"`
	// Concrete, with Abstract and a violation: whether the counterexample
	// was replayed on the concrete system (Violation is then the concrete
	// one); ConcreteWhy says why not.
	Concrete    *bool        `json:"concrete,omitempty"`
	ConcreteWhy string       `json:"concrete_why,omitempty"`
	States      int64        `json:"states"`
	Transitions int64        `json:"transitions"`
	Depth       int          `json:"depth"`
	BudgetStops int64        `json:"budget_stops"`
	Seconds     float64      `json:"seconds"`
	StatesPerS  float64      `json:"states_per_second"`
	Reason      string       `json:"reason,omitempty"`
	Violation   *checkViolat `json:"violation,omitempty"`
	// Liveness is set with --liveness.
	Liveness *livenessSummary `json:"liveness,omitempty"`
	// Position is where a depth-first run stopped by a limit stood
	// (check.Result.Position).
	Position float64 `json:"position,omitempty"`
	// Resumed is set when the run continued a checkpoint.
	Resumed *resumedSummary `json:"resumed,omitempty"`
}

// resumedSummary describes the earlier runs a run continued (--checkpoint):
// the counts above include theirs, seconds and states/s are this run's.
type resumedSummary struct {
	Dir     string  `json:"checkpoint"`
	Parts   int     `json:"parts"`
	States  int64   `json:"states"`
	Seconds float64 `json:"seconds"`
}

type checkViolat struct {
	Kind   string   `json:"kind"`
	Detail string   `json:"detail"`
	Path   []string `json:"path"`
	// Cycle is, for a starvation, the index in Path of the cycle's first
	// step (Path[Cycle:] repeats forever).
	Cycle int `json:"cycle,omitempty"`
	// Lasso says whether check.CheckLasso confirmed a starvation's lasso.
	Lasso string `json:"lasso,omitempty"`
}

// runCheck is `critsec check`: the flags, the run, the report.
func runCheck(cmd *cobra.Command, f *checkFlags) error {
	pr, err := f.problem.resolve(cmd.Flags())
	if err != nil {
		return err
	}
	if err := f.validate(cmd); err != nil {
		return err
	}
	crashes, det, err := f.faults.config(cmd.Flags().Changed("detector"))
	if err != nil {
		return err
	}
	if err := f.abstractChildren(&pr); err != nil {
		return err
	}
	ms, err := pr.machines()
	if err != nil {
		return err
	}
	if err := checkFencing(f.fencing, pr.Alg.Name, ms); err != nil {
		return err
	}
	maxMemory := uint64(f.maxMemoryGB * (1 << 30))
	cfg := f.config(cmd, &pr, ms, crashes, det, maxMemory)
	if err := cfg.Validate(); err != nil {
		return checkConfigError(err, cmd.Flags())
	}
	if err := f.validateSize(pr.Params.N); err != nil {
		return err
	}
	if f.checkpoint != "" {
		if err := f.bindCheckpoint(&cfg, &pr); err != nil {
			return err
		}
	}
	// The trace and HTML files are opened before the run, so a path that
	// cannot be written is refused at once, not after a long search.
	tf, err := createFlagFile("trace", f.tracePath)
	if err != nil {
		return err
	}
	defer tf.Close()
	vf, err := createFlagFile("viz", f.vizPath)
	if err != nil {
		return err
	}
	defer vf.Close()
	tuneMemory(f.search == "dfs", f.expected, maxMemory)
	defer debug.SetMemoryLimit(math.MaxInt64)
	ctx, stop := checkContext(cmd.Context(), f.timeout)
	defer stop()
	res, err := check.Run(ctx, cfg)
	if errors.Is(err, check.ErrConfig) {
		return checkConfigError(err, cmd.Flags())
	}
	if err != nil {
		return err // an I/O error reading a checkpoint: exit status 3
	}
	var concrete *bool
	var concreteWhy string
	if f.abstract != "" && res.Violation != nil && res.Violation.Kind != check.KindStarvation {
		found := false
		if res.Violation, found, concreteWhy, err = f.concretize(cmd, cfg, res.Violation); err != nil {
			return err
		}
		concrete = &found
	}
	s := f.summary(&pr, cfg, res, crashes, det)
	s.Concrete, s.ConcreteWhy = concrete, concreteWhy
	return f.report(cmd, &pr, res, s, tf, vf)
}

// report writes the counterexample of res to the --trace and --viz files
// tf and vf (nil: none) and the summary s to standard output, removes a
// checkpoint the run spent, and returns the command's outcome.
func (f *checkFlags) report(cmd *cobra.Command, pr *problem, res check.Result, s checkSummary, tf, vf *os.File) error {
	// The trace is written before the report (a reader that closes
	// standard output early must not cut it short); its error comes after
	// the report, so it loses no verdict, and a violation's status (1)
	// wins over the I/O error's (3).
	var traceErr error
	if tf != nil {
		traceErr = f.writeTrace(tf, *pr, res)
	}
	if vf != nil {
		traceErr = errors.Join(traceErr, writeCheckViz(vf, f.vizPath, f.traceHeader(*pr, res), res))
	}
	if err := printSummary(cmd.OutOrStdout(), f.json, s, func(w io.Writer) { printCheck(w, s, f.tracePath) }); err != nil {
		return err
	}
	if res.CheckpointSpent && traceErr == nil {
		// The result is out: the checkpoint that led to it has served.
		traceErr = check.RemoveCheckpoint(f.checkpoint)
	}
	return outcome(cmd, res.Verdict != check.OK, traceErr)
}

// checkContext is the context of a run: the first SIGINT or SIGTERM
// cancels it (the run stops, incomplete, and saves its checkpoint; a second
// signal kills), and --timeout (0: none) sets its deadline. stop releases
// both.
func checkContext(parent context.Context, timeout time.Duration) (ctx context.Context, stop func()) {
	ctx, stopSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stopSignals() }()
	if timeout == 0 {
		return ctx, stopSignals
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, func() { cancel(); stopSignals() }
}

// bindCheckpoint binds cfg's checkpoint to the algorithm, its options and
// this binary.
func (f *checkFlags) bindCheckpoint(cfg *check.Config, pr *problem) error {
	binary, err := binaryID()
	if err != nil {
		return badInput("--checkpoint binds the saved run to this critsec binary, which cannot be read (%v): run critsec from a readable file", err)
	}
	// The algorithm and its options (variants such as mutin and
	// mutin-paper start in equal states), and the binary: another build
	// may explore another graph from the same initial state.
	cfg.CheckpointID = fmt.Sprintf("%s %+v | critsec binary %s", pr.Alg.Name, pr.Params, binary)
	if f.fencing {
		cfg.CheckpointID += " | fencing"
	}
	return nil
}

// validate refuses flags that are out of range, or that do not apply
// together, where no check.Config field states the rule: Config.Validate
// states the rules of the fields the flags set (checkConfigError).
func (f *checkFlags) validate(cmd *cobra.Command) error {
	switch {
	case f.search != "bfs" && f.search != "dfs":
		return badInput("--search %q: choose bfs (breadth-first) or dfs (depth-first)", f.search)
	case f.search == "dfs" && cmd.Flags().Changed("workers"):
		return badInput("--workers %d: depth-first search runs on one goroutine; leave --workers out, or use --search bfs", f.workers)
	case f.timeout < 0:
		return badInput("--timeout %v is out of range: need >= 0 (0: none)", f.timeout)
	case f.checkpoint == "" && cmd.Flags().Changed("checkpoint-every"):
		return badInput("--checkpoint-every sets the interval of --checkpoint: add --checkpoint DIR, or leave it out")
	case f.ckEvery < time.Second:
		return badInput("--checkpoint-every %v is out of range: need >= 1s (each save rewrites the visited set's file), e.g. 10m", f.ckEvery)
	case f.reduce != "none" && f.reduce != "por":
		return badInput("--reduce %q: choose none or por (partial-order reduction)", f.reduce)
	}
	// The library reads 0 as its default (check.FieldError.Zero); on the
	// command line the default is the flag's own, given by leaving the
	// flag out.
	for _, z := range []struct {
		name string
		v    int
	}{{"workers", f.workers}, {"deadlock-states", f.deadlockStates}, {"liveness-states", f.livenessStates}} {
		if z.v == 0 {
			return badInput("--%s 0 is out of range: need >= 1 (leave --%s out for its default)", z.name, z.name)
		}
	}
	if err := f.checkLivenessFlags(cmd); err != nil {
		return err
	}
	if err := checkMemoryFlag(f.maxMemoryGB); err != nil {
		return err
	}
	return nil
}

// validateSize refuses, without an explicit --max-states, a problem on n
// processes whose state space explodes; the checker accepts it with a
// limit.
func (f *checkFlags) validateSize(n int) error {
	switch {
	case f.maxStates == 0 && n > checkSafeN:
		return badInput("--n %d explodes the state space: pass an explicit --max-states (e.g. --max-states 50000000), or use n <= %d", n, checkSafeN)
	case f.maxStates == 0 && f.budget.max() > checkSafeBudget:
		return badInput("--budget %s explodes the state space: pass an explicit --max-states (e.g. --max-states 50000000), or use budgets <= %d", &f.budget, checkSafeBudget)
	}
	return nil
}

// abstractChildren replaces the child objects that --abstract names by
// their specification.
func (f *checkFlags) abstractChildren(pr *problem) error {
	for tag := range strings.SplitSeq(f.abstract, ",") {
		if f.abstract == "" {
			break
		}
		if tag == "" {
			return badInput("--abstract %q: an empty name; give mx, kmex or mx,kmex", f.abstract)
		}
		if err := pr.Abstract(tag); err != nil {
			return badInput("--%v", err)
		}
	}
	return nil
}

// createFlagFile creates the file path of flag name, or returns nil when
// path is "" (closing a nil *os.File is a harmless error).
func createFlagFile(name, path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, badInput("--%s %s: %v", name, path, err)
	}
	return f, nil
}

// tuneMemory sets the garbage collector for a run, depth-first or not,
// with a visited set sized for expected states (0: not sized) and a heap
// ceiling of maxMemory bytes (0: none).
func tuneMemory(dfs bool, expected int, maxMemory uint64) {
	// The explorer allocates many small, long-lived objects: collecting
	// half as often is about 10% faster for 25% more memory.
	debug.SetGCPercent(200)
	if dfs && expected > 0 {
		// A pre-sized depth-first table is nearly all of the live heap and
		// holds no pointers: give the garbage (clones of machines) about
		// 3 GB of room instead of twice the table's size.
		table := float64(expected) * 16 // 12-byte slots at load 3/4
		debug.SetGCPercent(int(min(200, max(25, 100*3*(1<<30)/table))))
	}
	// --max-memory is a ceiling for the whole heap: the collector works
	// harder near it, and the run stops (incomplete) when what is live
	// reaches 70 % of it, before the collector runs nearly all the time.
	if maxMemory > 0 {
		debug.SetMemoryLimit(int64(maxMemory))
	}
}

// checkFlagOf names the flag that sets each check.Config field critsec
// check sets from a flag, and what to add when the field is needed.
var checkFlagOf = map[string]struct{ name, add string }{
	"Machines":            {"--n", "--n N"},
	"Unordered":           {"--unordered", "--unordered"},
	"Detector":            {"--detector", "--detector D"},
	"Search = DepthFirst": {"--search dfs", "--search dfs"},
	"Search = Liveness":   {"--liveness", "--liveness"},
	"Budget":              {"--budget", "--budget B"},
	"Budgets":             {"--budget", "--budget B"},
	"Crashes":             {"--crashes", "--crashes C"},
	"MaxStates":           {"--max-states", "--max-states N"},
	"Workers":             {"--workers", "--workers W"},
	"DeadlockStates":      {"--deadlock-states", "--deadlock-states N"},
	"ExpectedStates":      {"--expected-states", "--expected-states N"},
	"PartialOrder":        {"--reduce por", "--reduce por"},
	"DiskDir":             {"--disk-dir", "--disk-dir DIR"},
	"Checkpoint":          {"--checkpoint", "--checkpoint DIR"},
	"CheckpointEvery":     {"--checkpoint-every", "--checkpoint-every D"},
	"LivenessStates":      {"--liveness-states", "--liveness-states N"},
	"FairBound":           {"--fair-bound", "--fair-bound B"},
}

// checkConfigError is the one-line bad-input error of err, which
// check.Config.Validate returned: a field's rule is stated by the library
// (check.FieldError) and told here with the names of the flags and their
// values as given in fs (--budget 2,1,1 sets Budget and Budgets).
func checkConfigError(err error, fs *pflag.FlagSet) error {
	var fe *check.FieldError
	if !errors.As(err, &fe) {
		return badInput("%v", err)
	}
	field, ok := checkFlagOf[fe.Field]
	if !ok {
		return badInput("%v", err)
	}
	if fe.Needs == "" && fe.Excludes == "" {
		value := fe.Value
		if fl := fs.Lookup(strings.TrimPrefix(field.name, "--")); fl != nil {
			value = fl.Value.String()
		}
		return badInput("%s %s %s", field.name, value, fe.Why)
	}
	why := ""
	if fe.Why != "" {
		why = " (" + fe.Why + ")"
	}
	if fe.Excludes != "" {
		other, ok := checkFlagOf[fe.Excludes]
		if !ok {
			return badInput("%v", err)
		}
		return badInput("%s does not combine with %s%s: leave %s out", field.name, other.name, why, field.name)
	}
	need, ok := checkFlagOf[fe.Needs]
	if !ok {
		return badInput("%v", err)
	}
	return badInput("%s needs %s%s: add %s, or leave %s out", field.name, need.name, why, need.add, field.name)
}

// config is the check.Config of the flags, for machines ms of problem pr,
// with a heap ceiling of maxMemory bytes.
func (f *checkFlags) config(cmd *cobra.Command, pr *problem, ms []cs.Machine, crashes int, det check.Detector, maxMemory uint64) check.Config {
	cfg := check.Config{
		Machines: ms, Property: pr.check, Budget: f.budget.max(), Budgets: f.budget.perBudgets(), Unordered: f.unordered,
		MaxStates: f.maxStates, Workers: f.workers, DeadlockStates: f.deadlockStates,
		Search: f.searchKind(), Progress: f.progressFunc(cmd), MaxMemory: maxMemory / 100 * 70, ExpectedStates: f.expected,
		Crashes: crashes, Detector: det, PartialOrder: f.reduce == "por", DiskDir: f.diskDir,
		FairBound: f.fairBound, Fencing: f.fencing,
	}
	// The flag's default applies to --liveness only; given without it,
	// the library refuses it.
	if f.liveness || cmd.Flags().Changed("liveness-states") {
		cfg.LivenessStates = f.livenessStates
	}
	if f.checkpoint != "" {
		cfg.Checkpoint, cfg.CheckpointEvery = f.checkpoint, f.ckEvery
	}
	return cfg
}

// searchKind is the search --search and --liveness choose.
func (f *checkFlags) searchKind() check.Search {
	switch {
	case f.liveness:
		return check.Liveness
	case f.search == "dfs":
		return check.DepthFirst
	}
	return check.BreadthFirst
}

// summary is the report of result res of a run of cfg.
func (f *checkFlags) summary(pr *problem, cfg check.Config, res check.Result, crashes int, det check.Detector) checkSummary {
	lo, hi := pr.bounds()
	s := checkSummary{
		Result: string(res.Verdict), Alg: pr.Alg.Name, N: pr.Params.N, L: pr.Params.L, K: pr.Params.K,
		Lo: lo, Hi: hi, Topology: pr.topologyName(), LocalBounds: pr.localBounds(), Budget: f.budget.max(), Budgets: f.budget.perBudgets(), FIFO: !f.unordered, Search: f.search,
		Reduce: f.reduce, Crashes: crashes, Fencing: f.fencing, Abstract: f.abstract,
		States: res.States, Transitions: res.Transitions, Depth: res.Depth, BudgetStops: res.BudgetStops,
		Seconds: res.Seconds, StatesPerS: res.StatesPerSecond(), Reason: res.Reason, Position: res.Position,
	}
	if r := res.Resumed; r != nil {
		s.Resumed = &resumedSummary{Dir: f.checkpoint, Parts: r.Parts, States: r.States, Seconds: r.Seconds}
	}
	if f.liveness {
		s.Liveness = &livenessSummary{FairBound: f.fairBound, States: res.LivenessStates, DeadEnds: res.LivenessDeadEnds}
	}
	if det != nil {
		s.Detector = det.Name()
	}
	if pr.check.ExitGuard() != nil {
		s.Property = pr.check.String()
	}
	if v := res.Violation; v != nil {
		s.Violation = &checkViolat{Kind: v.Kind, Detail: v.Detail, Path: make([]string, len(v.Path)), Cycle: v.Cycle}
		for i, st := range v.Path {
			s.Violation.Path[i] = st.String()
		}
		if v.Kind == check.KindStarvation {
			// Confirm the lasso independently of the search: it replays,
			// its cycle closes, a request stays pending, and it is fair.
			s.Violation.Lasso = "confirmed by replay, independently of the graph search: the cycle returns to its first state, the request stays pending all along it, and it is weakly fair"
			if _, err := check.CheckLasso(cfg, check.Actions(v.Path), v.Cycle); err != nil {
				s.Violation.Lasso = "NOT confirmed: " + err.Error()
			}
		}
	}
	return s
}

// checkFencing refuses --fencing (on) for algorithm alg when its machines
// ms give no fencing tokens.
func checkFencing(on bool, alg string, ms []cs.Machine) error {
	if _, ok := ms[0].(cs.Fencing); on && !ok {
		return badInput("--fencing: %s gives no fencing tokens (ftraymond, ftgcs and raymond do; docs/fencing.md): leave --fencing out, or choose one of them", alg)
	}
	return nil
}

// executable is os.Executable; a test replaces it to see --checkpoint
// refused when critsec cannot read its own file.
var executable = os.Executable

// binaryID names this executable by the SHA-256 of its file (16 hex
// digits). A checkpoint is bound to it: another build may explore another
// graph from the same initial state.
func binaryID() (string, error) {
	exe, err := executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// concretizeStates bounds the search for a concrete path matching an
// abstract counterexample (check.Concretize).
const concretizeStates = 2_000_000

// concretize replays v, a counterexample found with children abstracted
// (cfg), on the concrete system: it returns the concrete violation and
// true, or v, false and why not.
func (f *checkFlags) concretize(cmd *cobra.Command, cfg check.Config, v *check.Violation) (*check.Violation, bool, string, error) {
	pr, err := f.problem.resolve(cmd.Flags())
	if err != nil {
		return nil, false, "", err
	}
	ms, err := pr.machines()
	if err != nil {
		return nil, false, "", err
	}
	conc := cfg
	conc.Machines, conc.Progress = ms, nil
	cv, why, err := check.Concretize(conc, cfg, v, concretizeStates)
	if err != nil {
		return nil, false, "", fmt.Errorf("concretize: %w", err)
	}
	if cv == nil {
		return v, false, why, nil
	}
	return cv, true, "", nil
}

// writeTrace writes the counterexample of res to tf, the open --trace
// file; without one, the file is removed (a run that found nothing leaves
// no stale trace behind).
func (f *checkFlags) writeTrace(tf *os.File, pr problem, res check.Result) error {
	if res.Violation == nil {
		tf.Close()
		if err := os.Remove(f.tracePath); err != nil {
			return fmt.Errorf("--trace %s: %w", f.tracePath, err)
		}
		return nil
	}
	if err := check.WriteTrace(tf, f.traceHeader(pr, res), res.Violation.Path); err != nil {
		return fmt.Errorf("--trace %s: %w", f.tracePath, err)
	}
	if err := tf.Close(); err != nil {
		return fmt.Errorf("--trace %s: %w", f.tracePath, err)
	}
	return nil
}

// traceHeader is the header of the trace of res's counterexample (with
// "demonstrates" when res has one).
func (f *checkFlags) traceHeader(pr problem, res check.Result) trace.Header {
	h := pr.traceHeader()
	h.FIFO = !f.unordered
	h.Params = map[string]any{"budget": f.budget.header()}
	if f.faults.crashes > 0 {
		h.Params["crashes"], h.Params["detector"] = f.faults.crashes, f.faults.detector
	}
	if f.fencing {
		h.Params["fencing"] = true
	}
	if v := res.Violation; v != nil && slices.ContainsFunc(v.Path, func(s check.Step) bool { return s.Action.Kind == check.Grant }) {
		// An abstract counterexample: the ideal children's grants are
		// not events of the trace format.
		h.Params["abstract"] = f.abstract
	}
	if v := res.Violation; v != nil {
		h.Demonstrates = &trace.Claim{Kind: v.Kind, Detail: v.Detail}
	}
	return h
}

// progressFunc returns the Progress callback: at most a line a second on
// standard error, with --progress or when standard error is a terminal;
// else nil.
func (f *checkFlags) progressFunc(cmd *cobra.Command) func(check.Progress) {
	w := cmd.ErrOrStderr()
	if !showProgress(f.progress, w) {
		return nil
	}
	var last float64
	return func(p check.Progress) {
		if p.Seconds-last < 1 {
			return // at most one line a second
		}
		last = p.Seconds
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		more := ""
		if p.DiskStates > 0 {
			more = fmt.Sprintf(", %d states on disk, %d pages read", p.DiskStates, p.DiskReads)
		}
		if p.Position > 0 {
			more += fmt.Sprintf(", position %.4g %%", 100*p.Position)
		}
		fmt.Fprintf(w, "progress: %d states, %d transitions, depth %d, %.0f s, %.0f states/s, heap %.2f GB%s\n",
			p.States, p.Transitions, p.Depth, p.Seconds, float64(p.States-p.ResumedStates)/max(p.Seconds, 1e-9), float64(m.HeapAlloc)/(1<<30), more)
	}
}

func printCheck(w io.Writer, s checkSummary, tracePath string) {
	order := "fifo"
	if !s.FIFO {
		order = "unordered"
	}
	faults := ""
	if s.Crashes > 0 || s.Detector != "" {
		faults = fmt.Sprintf(", up to %d crashes, detector %s", s.Crashes, s.Detector)
	}
	if s.Fencing {
		faults += ", fencing tokens"
	}
	search := s.Search
	if s.Reduce == "por" {
		search += ", partial-order reduction"
	}
	if s.Abstract != "" {
		search += ", " + s.Abstract + " abstracted (ideal)"
	}
	budget := fmt.Sprint(s.Budget)
	if s.Budgets != nil {
		budget = (&budgetFlag{each: s.Budgets}).String() + " (P1 first)"
	}
	fmt.Fprintf(w, "check %s, budget %s%s, %s channels, %s\n", headline(s.Alg, s.N, s.L, s.K, s.Lo, s.Hi, s.Topology, s.LocalBounds), budget, faults, order, search)
	if s.Property != "" {
		fmt.Fprintf(w, "property: %s\n", s.Property)
	}
	fmt.Fprintf(w, "result: %s\n", s.Result)
	if s.Abstract != "" && s.Result == string(check.OK) {
		fmt.Fprintf(w, "abstracted: the bounds hold for every real %s that keeps its own bounds and exits at once; deadlock freedom is shown for the ideal object, which may grant in any order (docs/design/compositional-checking.md)\n", s.Abstract)
	}
	if s.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", s.Reason)
	}
	if s.Position > 0 {
		fmt.Fprintf(w, "position: the search stopped %.4g %% of the way through its depth-first tree, were sibling subtrees of equal size (a rough guide; later subtrees are usually smaller)\n", 100*s.Position)
	}
	if r := s.Resumed; r != nil {
		fmt.Fprintf(w, "resumed: from the checkpoint in %s of %d earlier run(s), %d states in %.1f s; the counts below include theirs, the time and rate are this run's\n", r.Dir, r.Parts, r.States, r.Seconds)
	}
	if v := s.Violation; v != nil {
		fmt.Fprintf(w, "violation: %s: %s\n", v.Kind, v.Detail)
		switch {
		case s.Concrete != nil && *s.Concrete:
			fmt.Fprintf(w, "concrete counterexample: found with %s abstracted, then replayed on the real children (their messages are in the path)\n", s.Abstract)
		case s.Concrete != nil:
			fmt.Fprintf(w, "abstract counterexample: its path uses the ideal %s's grants and was not replayed on the real children: %s (docs/design/compositional-checking.md)\n", s.Abstract, s.ConcreteWhy)
		}
		fmt.Fprintf(w, "path (%d steps):\n", len(v.Path))
		for i, p := range v.Path {
			if v.Cycle > 0 && i == v.Cycle {
				fmt.Fprintf(w, "  cycle:\n")
			}
			fmt.Fprintf(w, "  %s\n", p)
		}
		if v.Lasso != "" {
			fmt.Fprintf(w, "lasso: %s\n", v.Lasso)
		}
		if tracePath != "" {
			fmt.Fprintf(w, "trace: %s\n", tracePath)
		}
	} else if tracePath != "" {
		fmt.Fprintf(w, "trace: none written to %s (no counterexample)\n", tracePath)
	}
	if l := s.Liveness; l != nil {
		fmt.Fprintf(w, "states: %d (budget-bounded stems)  continuation states: %d (fair bound %d)  transitions: %d  seconds: %.2f\n",
			s.States, l.States, l.FairBound, s.Transitions, s.Seconds)
		if l.DeadEnds > 0 {
			fmt.Fprintf(w, "fair bound: in %d continuation states (%.0f %%) the bound cut every step; the verdict covers only the schedules it keeps (docs/design/liveness.md)\n",
				l.DeadEnds, 100*float64(l.DeadEnds)/float64(max(l.States, 1)))
		}
		return
	}
	fmt.Fprintf(w, "states: %d  transitions: %d  depth: %d  budget stops: %d  seconds: %.2f  states/s: %.0f\n",
		s.States, s.Transitions, s.Depth, s.BudgetStops, s.Seconds, s.StatesPerS)
}

// livenessSummary is the --json part of a --liveness run.
type livenessSummary struct {
	FairBound int   `json:"fair_bound"`
	States    int64 `json:"continuation_states"`
	// DeadEnds are continuation states where the bound cut every step.
	DeadEnds int64 `json:"dead_ends"`
}

// checkLivenessFlags refuses the flags --liveness does not combine with
// that set no check.Config field of their own (Config.Validate refuses
// the others).
func (f *checkFlags) checkLivenessFlags(cmd *cobra.Command) error {
	fl := cmd.Flags()
	switch {
	case !f.liveness:
		return nil
	case f.tracePath != "" || f.vizPath != "":
		return badInput("--trace and --viz do not take a starvation lasso yet (the trace format has no cycle): leave them out with --liveness; the path is printed")
	case fl.Changed("search"):
		return badInput("--liveness runs its own search: leave --search out")
	case f.reduce != "none":
		return badInput("--reduce %s reduces the depth-first safety search, not the starvation search: leave --reduce out with --liveness", f.reduce)
	}
	for _, name := range []string{"disk-dir", "expected-states", "checkpoint"} {
		if fl.Changed(name) {
			return badInput("--%s belongs to the depth-first safety search; the starvation search keeps its own states in memory: leave --%s out with --liveness", name, name)
		}
	}
	return nil
}
