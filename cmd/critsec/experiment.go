package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"critsec/experiment"
)

// experimentFlags are the flags every study takes.
type experimentFlags struct {
	out     string
	formats string
	entries int64
	seed    uint64
	workers int
	quiet   bool
}

func addExperimentFlags(cmd *cobra.Command, f *experimentFlags, entries int64) {
	fs := cmd.Flags()
	fs.StringVar(&f.out, "out", "out", "directory for the CSV tables and plots (created if missing)")
	fs.StringVar(&f.formats, "format", "svg", "plot formats, comma-separated: svg, png, pdf")
	fs.Int64Var(&f.entries, "entries", entries, "CS entries per simulation run, >= 1")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of every run: equal seeds give identical tables")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "runs simulated at once, >= 1 (results do not depend on it)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar on standard error (there is none when it is not a terminal)")
}

// check validates the shared flags and returns the plot formats.
func (f *experimentFlags) check() ([]string, error) {
	if f.entries < 1 {
		return nil, badInput("--entries %d is out of range: need entries >= 1", f.entries)
	}
	if f.workers < 1 {
		return nil, badInput("--workers %d is out of range: need workers >= 1", f.workers)
	}
	var formats []string
	for _, s := range strings.Split(f.formats, ",") {
		s = strings.TrimSpace(s)
		switch s {
		case "svg", "png", "pdf":
			formats = append(formats, s)
		case "":
		default:
			return nil, badInput("--format %q: %q is not a plot format: choose svg, png or pdf (comma-separated)", f.formats, s)
		}
	}
	if len(formats) == 0 {
		return nil, badInput("--format %q names no plot format: choose svg, png or pdf", f.formats)
	}
	return formats, nil
}

// simulate runs the study's runs with a progress bar unless quiet.
func (f *experimentFlags) simulate(cmd *cobra.Command, what string, runs []experiment.Run) ([]experiment.Outcome, error) {
	var progress func(done, total int)
	if tty, ok := cmd.ErrOrStderr().(*os.File); !f.quiet && ok && term.IsTerminal(int(tty.Fd())) {
		bar := progressbar.NewOptions(len(runs),
			progressbar.OptionSetWriter(cmd.ErrOrStderr()),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(cmd.ErrOrStderr()) }))
		progress = func(int, int) { _ = bar.Add(1) }
	}
	outs, err := experiment.SimulateAll(runs, f.workers, progress)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return outs, nil
}

// write saves t as DIR/name.csv and draws each chart in every format; it
// prints the table and the files written.
func (f *experimentFlags) write(cmd *cobra.Command, t *experiment.Table, name string, formats []string, charts map[string]experiment.Chart, order []string) error {
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return badInput("--out %s: %v", f.out, err)
	}
	w := cmd.OutOrStdout()
	if err := t.WriteText(w); err != nil {
		return err
	}
	csvPath := filepath.Join(f.out, name+".csv")
	file, err := os.Create(csvPath)
	if err != nil {
		return badInput("--out %s: %v", f.out, err)
	}
	if err := t.WriteCSV(file); err != nil {
		file.Close()
		return fmt.Errorf("%s: %w", csvPath, err)
	}
	if err := file.Close(); err != nil {
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
the study.`,
	}
	cmd.AddCommand(newMessagesCmd(), newWaitingCmd())
	return cmd
}

func newMessagesCmd() *cobra.Command {
	var f experimentFlags
	var ns string
	cmd := &cobra.Command{
		Use:   "messages",
		Short: "Messages per Exit+Entry pair versus n: (l,k)-GCS and k-mutex on grid and majority coteries, Raymond",
		Long: `messages measures the messages of one Exit+Entry pair (one CS cycle) for
n processes: (n/4, 3n/4)-GCS and k-mutex = Co(MUTIN(n/4)) on the grid and the
majority coteries (Maekawa's algorithm as mx), and Raymond's k-mutex with
k = 3n/4, in the paper's timing model (Tt = 1, Ts = Tr = 0). Two loads:
light (every process InCS half of the time, one request per 1000 time units
in the whole system: uncontended) and heavy (lambda = E = 1: saturated).
The column uncontended_formula is the count derived from the pseudo-code
(docs/experiments.md).

Writes messages-light.csv, messages-heavy.csv and their plots (log-log).`,
		Example: `  critsec experiment messages
  critsec experiment messages --n 4,16,64 --entries 200 --format svg,png --out /tmp/m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			formats, err := f.check()
			if err != nil {
				return err
			}
			sizes, err := parseSizes("n", ns, 4)
			if err != nil {
				return err
			}
			for _, load := range []experiment.Load{experiment.Light, experiment.Heavy} {
				runs := experiment.MessageRuns(sizes, load, f.entries, f.seed)
				outs, err := f.simulate(cmd, "messages, "+string(load)+" load", runs)
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
					Title: title, X: "n", Y: "messages_per_pair", LogX: true, LogY: true,
					XLabel: "n (processes)", YLabel: "messages per Exit+Entry pair",
				}}
				if err := f.write(cmd, experiment.MessageTable(outs), name, formats, charts, []string{name}); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addExperimentFlags(cmd, &f, 400)
	cmd.Flags().StringVar(&ns, "n", "4,9,16,25,36,64,100,144,225,400", "process counts to sweep, comma-separated, each >= 4")
	return cmd
}

func newWaitingCmd() *cobra.Command {
	var f experimentFlags
	var n int
	var lambdas string
	cmd := &cobra.Command{
		Use:   "waiting",
		Short: "Waiting times for entry and exit versus load: (l,k)-GCS, MUTIN, k-mutex, Raymond",
		Long: `waiting measures the waiting time of Entry and Exit (request to state
change) with unit transit delay and no local cost (Tt = 1, Ts = Tr = 0), the
model of the paper's Lemma 4 and Theorem 4 (7 time units for MUTIN's exit,
9 for (l,k)-GCS), for n processes on the grid coterie: (n/4, 3n/4)-GCS,
MUTIN(n/4), k-mutex and Raymond with k = 3n/4. Each process is InCS half of
the time (E = 1/lambda); small lambda is uncontended, lambda = 1 saturated.

Writes waiting.csv, waiting-entry and waiting-exit plots (mean, log x).`,
		Example: `  critsec experiment waiting
  critsec experiment waiting --n 9 --lambda 0.0001,0.01,1 --entries 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			formats, err := f.check()
			if err != nil {
				return err
			}
			if n < 4 {
				return badInput("--n %d is out of range: need n >= 4 (so that 1 <= n/4 < 3n/4)", n)
			}
			ls, err := parseRates(lambdas)
			if err != nil {
				return err
			}
			outs, err := f.simulate(cmd, "waiting", experiment.WaitingRuns(n, ls, f.entries, f.seed))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Waiting times, n = %d, grid coterie, Tt = 1, Ts = Tr = 0, E = 1/lambda\n", n)
			charts := map[string]experiment.Chart{
				"waiting-entry": {Title: "Entry waiting time (mean), E = 1/lambda", X: "lambda", Y: "entry_wait_mean", LogX: true,
					XLabel: "lambda (requests per time unit OutCS)", YLabel: "time units"},
				"waiting-exit": {Title: "Exit waiting time (mean), E = 1/lambda", X: "lambda", Y: "exit_wait_mean", LogX: true,
					XLabel: "lambda (requests per time unit OutCS)", YLabel: "time units"},
			}
			return f.write(cmd, experiment.WaitingTable(outs), "waiting", formats, charts, []string{"waiting-entry", "waiting-exit"})
		},
	}
	addExperimentFlags(cmd, &f, 2000)
	cmd.Flags().IntVar(&n, "n", 16, "number of processes, >= 4")
	cmd.Flags().StringVar(&lambdas, "lambda", "0.0001,0.001,0.003,0.01,0.03,0.1,0.3,1", "request rates to sweep, comma-separated, each > 0")
	return cmd
}

func init() { rootCmd.AddCommand(newExperimentCmd()) }

// parseSizes reads a comma-separated list of integers >= least.
func parseSizes(flag, s string, least int) ([]int, error) {
	var out []int
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		v, err := strconv.Atoi(field)
		if err != nil || v < least {
			return nil, badInput("--%s %q: %q is not an integer >= %d", flag, s, field, least)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, badInput("--%s %q names no value: give comma-separated integers >= %d", flag, s, least)
	}
	return out, nil
}

// parseRates reads a comma-separated list of finite rates > 0.
func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		v, err := strconv.ParseFloat(field, 64)
		if err != nil || !(v > 0) || v > 1e12 {
			return nil, badInput("--lambda %q: %q is not a finite rate > 0", s, field)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, badInput("--lambda %q names no rate: give comma-separated rates > 0", s)
	}
	return out, nil
}
