package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/experiment"
	"github.com/critsec/critsec/sim"
)

// experimentFlags are the flags every study takes.
type experimentFlags struct {
	out         string
	formats     string
	entries     int64
	seed        uint64
	workers     int
	transitDist string
	maxMemoryGB float64
	quiet       bool
	progress    bool
	ns          string
	seeds       int
	starveAfter float64
}

// maxEntries bounds --entries: a run of 10^9 entries at n = 16 already takes
// hours (the simulator handles about 10^5 entries a second there).
const maxEntries = 1_000_000_000

// addExperimentFlags adds the shared flags with the study's defaults: the
// entries per run, the process counts and the seeds per point.
func addExperimentFlags(cmd *cobra.Command, f *experimentFlags, entries int64, ns string, seeds int) {
	fs := cmd.Flags()
	fs.StringVar(&f.ns, "n", ns, "process counts to sweep, comma-separated, each >= 4")
	fs.StringVar(&f.out, "out", "out", "directory for the CSV tables and plots (created if missing)")
	fs.StringVar(&f.formats, "format", "svg", "plot formats, comma-separated: svg, png, pdf")
	fs.Int64Var(&f.entries, "entries", entries, "CS entries per simulation run, 1 to 10^9")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of every run: equal seeds give identical tables")
	fs.IntVar(&f.seeds, "seeds", seeds, fmt.Sprintf("runs per point, 1 to %d, with seeds --seed, --seed+1, ...: the tables give means over them with 95 %% confidence intervals", maxSeeds))
	fs.Float64Var(&f.starveAfter, "starve-after", 0, fmt.Sprintf("starvation bound of every run, time units, >= 0 (sim --starve-after); default 0: %d times the longest waiting time completed by the run, at least %d·(Tt+Ts+Tr+E)", sim.StarveFactor, sim.StarveFloor))
	fs.StringVar(&f.transitDist, "tt-dist", "const", "distribution of the transit time, of the study's mean Tt: const (the papers' model) or exp (exponential)")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "runs simulated at once, >= 1 (results do not depend on it)")
	machineDefault(fs, "workers", "the number of CPUs")
	addMemoryFlag(fs, &f.maxMemoryGB, "refuse a study whose estimated memory (the largest runs, --workers at once) exceeds this many GB")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on standard error")
	fs.BoolVar(&f.progress, "progress", false, "print a progress line per run on standard error even when it is not a terminal (on a terminal there is a progress bar)")
}

// studyConfig is what the shared flags resolve to.
type studyConfig struct {
	common  experiment.Common
	formats []string
	sizes   []int
	seeds   int
}

// check validates the shared flags.
func (f *experimentFlags) check() (studyConfig, error) {
	var c studyConfig
	if f.entries < 1 || f.entries > maxEntries {
		return c, badInput("--entries %d is out of range: need 1 <= entries <= 10^9 (a run of 10^9 entries takes hours)", f.entries)
	}
	if f.workers < 1 {
		return c, badInput("--workers %d is out of range: need workers >= 1", f.workers)
	}
	if f.seeds < 1 || f.seeds > maxSeeds {
		return c, badInput("--seeds %d is out of range: need 1 <= seeds <= %d", f.seeds, maxSeeds)
	}
	c.seeds = f.seeds
	if err := checkMemoryFlag(f.maxMemoryGB); err != nil {
		return c, err
	}
	if strings.TrimSpace(f.out) == "" {
		return c, badInput("--out %q names no directory", f.out)
	}
	if f.quiet && f.progress {
		return c, badInput("--quiet and --progress contradict each other: give one")
	}
	transit, err := sim.ParseDist(f.transitDist)
	if err != nil {
		return c, badInput("--tt-dist: %v", err)
	}
	if err := checkTime("starve-after", f.starveAfter); err != nil {
		return c, err
	}
	c.common = experiment.Common{Entries: f.entries, Seed: f.seed, TransitDist: transit, StarveAfter: f.starveAfter}
	c.formats, err = parseList("format", f.formats, "a plot format (svg, png or pdf)", plotFormat)
	if err != nil {
		return c, err
	}
	c.sizes, err = parseList("n", f.ns, fmt.Sprintf("an integer from 4 to %d", alg.MaxN), studySize)
	return c, err
}

// plotFormat accepts an entry of --format.
func plotFormat(s string) (string, bool) { return s, s == "svg" || s == "png" || s == "pdf" }

// studySize accepts an entry of --n: 4 <= n <= alg.MaxN (the largest n
// any command runs).
func studySize(s string) (int, bool) {
	v, err := strconv.Atoi(s)
	return v, err == nil && v >= 4 && v <= alg.MaxN
}

// studyRate accepts an entry of --lambda: a finite rate in (0, 10^12].
func studyRate(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && v > 0 && v <= 1e12
}

// maxSimTime bounds the simulated time of a run (sim.MaxTime).
const maxSimTime = sim.MaxTime

// admit refuses, before anything runs, a study that could not give sound
// numbers or would not fit in memory: each run's simulated time (at least
// Entries/n cycles of 1/lambda + E) must stay within maxSimTime, its
// coterie within coterie.MaxIDs, and the estimated memory of the workers
// largest runs simulated at once (experiment.PeakBytes) within
// --max-memory.
func (f *experimentFlags) admit(runs []experiment.Run) error {
	for _, r := range runs {
		if t := r.MinDuration(); !(t <= maxSimTime) {
			return badInput("lambda %g with --entries %d and n = %d would simulate at least %.3g time units: beyond 10^12 the simulator's clock cannot resolve a transit time; use a larger lambda or fewer entries", r.Lambda, r.Entries, r.N, t)
		}
	}
	need, worst := experiment.PeakBytes(runs, f.workers)
	if limit := f.maxMemoryGB * (1 << 30); limit > 0 && need > limit {
		return badInput("this study needs about %s of memory (%d runs at once, the largest %s at n = %d, about %s; docs/experiments.md gives the model), more than --max-memory %g GB: use a smaller --n or fewer --workers",
			size(int64(need)), min(f.workers, len(runs)), worst.Label, worst.N, size(int64(worst.EstimateBytes())), f.maxMemoryGB)
	}
	for _, r := range runs {
		if ids, _, err := coterie.Size(r.Coterie, r.N); err == nil && ids > coterie.MaxIDs {
			return badInput("--n %d: the %s coterie would hold %.3g process ids, more than the %d critsec builds (1 GiB); use a smaller --n", r.N, r.Coterie, ids, coterie.MaxIDs)
		}
	}
	// The output directory is made once the study is admitted, so that one
	// that cannot be is refused before the study runs, not after.
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return badInput("--out %s: %v", f.out, err)
	}
	return nil
}

// simulate runs the study's runs, with progress on standard error: a bar on
// a terminal, one line per run with --progress, nothing with --quiet.
func (f *experimentFlags) simulate(cmd *cobra.Command, what string, runs []experiment.Run) ([]experiment.Outcome, error) {
	w := cmd.ErrOrStderr()
	tty, isFile := w.(*os.File)
	var progress func(done, total int)
	switch {
	case f.quiet:
	case isFile && term.IsTerminal(int(tty.Fd())):
		bar := progressbar.NewOptions(len(runs),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		progress = func(int, int) { _ = bar.Add(1) }
	case f.progress:
		start := time.Now()
		progress = func(done, total int) {
			fmt.Fprintf(w, "progress: %s: %d of %d runs, %.1f s\n", what, done, total, time.Since(start).Seconds())
		}
	}
	outs, err := experiment.SimulateAll(runs, f.workers, progress)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return outs, nil
}

// write saves t as DIR/name.csv and draws each chart in every format; it
// prints the table and the files written. Every file is written whole or
// not at all.
func (f *experimentFlags) write(cmd *cobra.Command, t *experiment.Table, name string, formats []string, charts map[string]experiment.Chart, order []string) error {
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return badInput("--out %s: %v", f.out, err)
	}
	w := cmd.OutOrStdout()
	if err := t.WriteText(w); err != nil {
		return err
	}
	csvPath := filepath.Join(f.out, name+".csv")
	if err := t.SaveCSV(csvPath); err != nil {
		return fmt.Errorf("%s: %w", csvPath, err)
	}
	written := []string{csvPath}
	for _, plotName := range order {
		for _, ext := range formats {
			p := filepath.Join(f.out, plotName+"."+ext)
			if err := t.Plot(charts[plotName], p); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			written = append(written, p)
		}
	}
	fmt.Fprintf(w, "wrote %s\n\n", strings.Join(written, " "))
	return nil
}

func newExperimentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "experiment",
		Short: "Run a study: parameter sweeps over the simulator, written as CSV tables and plots",
		Long: `experiment runs the studies recorded in docs/experiments.md. Each one sweeps
the simulator over a parameter, prints the table, and writes it as CSV with
its plots (SVG by default) into --out. Equal seeds give identical tables.
Every run is checked after every event like critsec sim; a violation fails
the study. A study whose estimated memory exceeds --max-memory is refused
before it starts.`,
		// Runnable, so that an unknown study is an error (exit 2), not help.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMessagesCmd(), newWaitingCmd(), newLocalCmd(), newFT07Cmd(), newFTGCSCmd(), newBV95Cmd())
	return cmd
}

func newMessagesCmd() *cobra.Command {
	var f experimentFlags
	cmd := &cobra.Command{
		Use:   "messages",
		Short: "Messages per Exit+Entry pair versus n: (l,k)-GCS and k-mutex on grid and majority coteries, Raymond",
		Long: `messages measures the messages of one Exit+Entry pair (one CS cycle) for
n processes: (n/4, 3n/4)-GCS and k-mutex = Co(MUTIN(n/4)) on the grid and the
majority coteries (the study compares them; Maekawa's algorithm as mx), and
Raymond's k-mutex with k = 3n/4, in the paper's timing model (Tt = 1,
Ts = Tr = 0). Two loads: light (every process InCS half of the time, one
request per 1000 time units in the whole system: uncontended) and heavy
(lambda = E = 1: saturated). The column uncontended_formula is the count
derived from the pseudo-code (docs/experiments.md).

With --seeds N every point runs N times (seeds --seed, --seed+1, ...): the
tables give means over them and 95 % confidence half-widths, drawn as error
bars. Writes messages-light.csv, messages-heavy.csv and their plots
(log-log).`,
		Example: `  critsec experiment messages
  critsec experiment messages --n 4,16,64 --entries 200 --format svg,png --out /tmp/m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.check()
			if err != nil {
				return err
			}
			loads := []experiment.Load{experiment.Light, experiment.Heavy}
			runs := map[experiment.Load][]experiment.Run{}
			for _, load := range loads { // the loads run one after the other
				runs[load] = experiment.MessageRuns(c.sizes, load, c.common, c.seeds)
				if err := f.admit(runs[load]); err != nil {
					return err
				}
			}
			for _, load := range loads {
				outs, err := f.simulate(cmd, "messages, "+string(load)+" load", runs[load])
				if err != nil {
					return err
				}
				name := "messages-" + string(load)
				title := map[experiment.Load]string{
					experiment.Light: "Messages per Exit+Entry pair, light load (uncontended)",
					experiment.Heavy: "Messages per Exit+Entry pair, heavy load (lambda = E = 1)",
				}[load]
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n", title)
				charts := map[string]experiment.Chart{name: {
					Title: title, X: "n", Y: "messages_per_pair", CI: "messages_per_pair_ci95", LogX: true, LogY: true,
					XLabel: "n (processes)", YLabel: "messages per Exit+Entry pair",
				}}
				if err := f.write(cmd, experiment.MessageTable(outs), name, c.formats, charts, []string{name}); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addExperimentFlags(cmd, &f, 400, "4,9,16,25,36,64,100,144,225,400", 5)
	return cmd
}

func newWaitingCmd() *cobra.Command {
	var f experimentFlags
	var lambdas string
	cmd := &cobra.Command{
		Use:   "waiting",
		Short: "Waiting times for entry and exit versus load: (l,k)-GCS, MUTIN, k-mutex, Raymond",
		Long: `waiting measures the waiting time of Entry and Exit (request to state
change) with unit transit delay and no local cost (Tt = 1, Ts = Tr = 0), the
model of the paper's Lemma 4 and Theorem 4 (7 time units for MUTIN's exit,
9 for (l,k)-GCS), for n processes on the grid coterie (sim's default):
(n/4, 3n/4)-GCS, MUTIN(n/4), k-mutex and Raymond with k = 3n/4. Each process
is InCS half of the time (E = 1/lambda); small lambda is uncontended,
lambda = 1 saturated. With several n, each algorithm has one line per n.

With --seeds N every point runs N times (seeds --seed, --seed+1, ...): the
table gives means over them and 95 % confidence half-widths, drawn as error
bars. Writes waiting.csv, waiting-entry and waiting-exit plots (mean, log x).`,
		Example: `  critsec experiment waiting
  critsec experiment waiting --n 9,16 --lambda 0.0001,0.01,1 --entries 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.check()
			if err != nil {
				return err
			}
			ls, err := parseList("lambda", lambdas, "a finite rate > 0 (at most 10^12)", studyRate)
			if err != nil {
				return err
			}
			runs := experiment.WaitingRuns(c.sizes, ls, c.common, c.seeds)
			if err := f.admit(runs); err != nil {
				return err
			}
			outs, err := f.simulate(cmd, "waiting", runs)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Waiting times, n = %s, grid coterie, Tt = 1 (%s), Ts = Tr = 0, E = 1/lambda\n", joinInts(c.sizes), c.common.TransitDist)
			charts := map[string]experiment.Chart{
				"waiting-entry": {Title: "Entry waiting time (mean, 95 % CI), E = 1/lambda", X: "lambda_requests_per_time_unit", Y: "entry_wait_mean_time_units", CI: "entry_wait_ci95_time_units", LogX: true,
					XLabel: "lambda (requests per time unit OutCS)", YLabel: "time units"},
				"waiting-exit": {Title: "Exit waiting time (mean, 95 % CI), E = 1/lambda", X: "lambda_requests_per_time_unit", Y: "exit_wait_mean_time_units", CI: "exit_wait_ci95_time_units", LogX: true,
					XLabel: "lambda (requests per time unit OutCS)", YLabel: "time units"},
			}
			return f.write(cmd, experiment.WaitingTable(outs), "waiting", c.formats, charts, []string{"waiting-entry", "waiting-exit"})
		},
	}
	addExperimentFlags(cmd, &f, 2000, "16", 10)
	cmd.Flags().StringVar(&lambdas, "lambda", "0.0001,0.001,0.003,0.01,0.03,0.1,0.3,1", "request rates to sweep, comma-separated, each > 0")
	return cmd
}

func init() { rootCmd.AddCommand(newExperimentCmd()) }

// parseList reads the comma-separated list given to --name: every entry
// must be accepted by parse (want says what it should be), none may be
// empty or repeated. An error is one line naming the flag and the entry.
func parseList[T comparable](name, s, want string, parse func(string) (T, bool)) ([]T, error) {
	var out []T
	seen := map[T]bool{}
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			return nil, badInput("--%s %q has an empty entry: give one or more, each %s, separated by commas", name, s, want)
		}
		v, ok := parse(field)
		if !ok {
			return nil, badInput("--%s %q: %q is not %s", name, s, field, want)
		}
		if seen[v] {
			return nil, badInput("--%s %q lists %s twice: give each value once", name, s, field)
		}
		seen[v] = true
		out = append(out, v)
	}
	return out, nil
}

// joinInts formats 4,9,16 as "4, 9, 16".
func joinInts(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ", ")
}
