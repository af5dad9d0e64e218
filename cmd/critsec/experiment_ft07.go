package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/experiment"
)

// ft07Flags are the flags of `critsec experiment ft07`: those of the crash
// studies, the survival runs' starvation bound and algorithms.
type ft07Flags struct {
	crashStudyFlags
	starve float64
	algs   string
}

func newFT07Cmd() *cobra.Command {
	var f ft07Flags
	cmd := &cobra.Command{
		Use:   "ft07",
		Short: "Crashes: Raymond against the fault-tolerant k-mutex (Bouillaguet, Arantes, Sens 2007, section 6)",
		Long: `ft07 runs the study of section 6 of the fault-tolerant k-mutex paper: 15
processes, 5 resources, a heavy load (lambda = E = 1, Tt = 1), and 14 crashes
(P2..P15, one every 100 time units from t = 100), with Raymond's algorithm and
ftraymond (detector T, detection delay 5). The flags change the crash
schedule, the load, the detector and the seed. It writes:

  ft07-figure2.csv and its plot: the resources in use over time, per time
      step of 10 (mean and maximum), for both algorithms (the paper's Figure 2),
      up to 200 time units after the last crash;
  ft07-messages.csv: messages per CS without crashes at a light and a heavy
      load, initialization messages per process, CRASH messages per detection
      and detections per crash, next to the paper's bounds;
  ft07-survival.csv: every registered algorithm (or --algs) with the first
      crash and with the first k = 5 (the local ones on the complete graph),
      run for --after time units after the last: entries after the last
      crash, time to the next entry and until every request pending at the
      crash is served, and the verdict: deadlock, starvation or livelock
      (starvation bound --starve-after), broken bounds or another error;
      and the number of runs with each verdict.

Every part runs --seeds times (default 10: about 2 to 3 minutes of wall
time on 2 cores, docs/results.md) and writes means with their 95 %
confidence intervals (columns _ci95) over the seeds; Figure 2 also the
largest of the runs' maxima per step.

docs/fault-tolerance.md discusses the results.`,
		Example: `  critsec experiment ft07 --out /tmp/ft07
  critsec experiment ft07 --crash 2@50,3@60 --detector P --detect-delay 1 --lambda 0.5 --seed 7
  critsec experiment ft07 --crash random:5:100:500 --algs ftraymond,raymond,forest --out /tmp/ft07`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFT07(cmd, &f) },
	}
	fs := cmd.Flags()
	f.register(fs, crashStudyFlags{out: "out", seed: 1, seeds: 10, lambda: 1, e: 1, detector: "T", detectDelay: 5, after: 500}, crashStudyHelp{
		out:         "directory for the CSV tables and the plot (created if missing)",
		seed:        "seed of every run (and of a random crash schedule): equal seeds give identical tables",
		seeds:       fmt.Sprintf("runs of every part (Figure 2, the message counts, each survival row), 1 to %d: seeds --seed, --seed+1, ... (means with 95 %% confidence intervals over them)", maxSeeds),
		crash:       "crash schedule of processes 1..15: NODE@TIME,... or random:COUNT:FROM:TO (drawn from --seed); default: P2..P15, one every 100 time units from t = 100",
		detector:    "failure-detector class given to ftraymond: P (perfect) or T (trusting)",
		detectDelay: "time from a crash to its detection, time units, >= 0",
		after:       "how long the survival runs go on after their last crash, time units, > 0",
	})
	fs.Float64Var(&f.starve, "starve-after", 250, "starvation bound of the survival runs, time units, > 0 (sim --starve-after)")
	fs.StringVar(&f.algs, "algs", "", "algorithms of the survival table, comma-separated; default: every registered one")
	return cmd
}

// runFT07 checks the flags, runs the three parts and writes their tables
// and the plot.
func runFT07(cmd *cobra.Command, f *ft07Flags) error {
	c, err := prepare(&f.crashStudyFlags, f.study)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fig, err := c.Figure2()
	if err != nil {
		return err
	}
	msgs, err := c.Messages()
	if err != nil {
		return err
	}
	counts := []int{1}
	if k := min(c.K, len(c.Crashes)); k > 1 {
		counts = append(counts, k)
	}
	surv, err := c.Survival(counts)
	if err != nil {
		return err
	}
	if err := writeTables(w, f.out, []namedTable{{"ft07-figure2", fig, false}, {"ft07-messages", msgs, true}, {"ft07-survival", surv, true}}); err != nil {
		return err
	}
	if err := experiment.PlotFigure2(fig, c.Crashes, filepath.Join(f.out, "ft07-figure2.svg")); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", strings.Join([]string{"ft07-figure2.csv", "ft07-figure2.svg", "ft07-messages.csv", "ft07-survival.csv"}, " "))
	return nil
}

// namedTable is a study's table, saved as name.csv and, when show, also
// printed.
type namedTable struct {
	name  string
	table *experiment.Table
	show  bool
}

// writeTables prints the tables to show on w and saves every one as CSV in
// directory out.
func writeTables(w io.Writer, out string, tables []namedTable) error {
	for _, t := range tables {
		if t.show {
			fmt.Fprintf(w, "%s\n", t.name)
			if err := t.table.WriteText(w); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		if err := t.table.SaveCSV(filepath.Join(out, t.name+".csv")); err != nil {
			return err
		}
	}
	return nil
}

// study checks the flags and states the study: the paper's setting
// (experiment.DefaultFT07) with the flags' changes.
func (f *ft07Flags) study() (experiment.FT07, error) {
	c := experiment.DefaultFT07()
	if err := f.checkOut(); err != nil {
		return c, err
	}
	if err := f.checkLoad(namedTime{"starve-after", f.starve}); err != nil {
		return c, err
	}
	if err := f.checkSeeds(); err != nil {
		return c, err
	}
	c.Seeds = f.seeds
	if f.after == 0 || f.starve == 0 {
		return c, badInput("--after and --starve-after must be > 0: the survival runs need time after the last crash to tell")
	}
	d, err := f.parseDetector("ftraymond breaks its bounds with S (a false suspicion reads as a crash, docs/fault-tolerance.md)")
	if err != nil {
		return c, err
	}
	c.Seed, c.Lambda, c.E, c.Detector, c.DetectDelay, c.After, c.StarveAfter = f.seed, f.lambda, f.e, d, f.detectDelay, f.after, f.starve
	if f.crash != "" {
		crashes, err := f.parseCrashes(c.N)
		if err != nil {
			return c, err
		}
		c.Crashes = crashes
		c.MaxTime = crashes[len(crashes)-1].At + 200
	}
	if f.algs != "" {
		names := make([]string, 0, len(alg.All()))
		for _, a := range alg.All() {
			names = append(names, a.Name)
		}
		c.Algs, err = parseList("algs", f.algs, "a registered algorithm ("+strings.Join(names, ", ")+")", func(v string) (string, bool) {
			_, err := alg.Lookup(v)
			return v, err == nil
		})
		if err != nil {
			return c, err
		}
	}
	return c, f.checkEnd(c.MaxTime + c.After)
}
