package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/experiment"
	"github.com/critsec/critsec/sim"
)

// ftgcsFlags are the flags of `critsec experiment ftgcs`: those of the
// crash studies, the problem of the timeline and recovery runs, and the
// message sweep's.
type ftgcsFlags struct {
	crashStudyFlags
	n, l, k        int
	sweepN         string
	sweepL, sweepK int
	sweepCrashes   int
	entries        int64
}

func newFTGCSCmd() *cobra.Command {
	var f ftgcsFlags
	d := experiment.DefaultFTGCS()
	cmd := &cobra.Command{
		Use:   "ftgcs",
		Short: "Crashes: the fault-tolerant global (l,k)-CS algorithm ftgcs against gcs and ftraymond",
		Long: `ftgcs studies the fault-tolerant global (l,k)-CS algorithm
(docs/ft-global-lk-cs.md) in the simulator (Tt = 1, Ts = Tr = 0), every run
checked against S1 (at most k live processes InCS) and S2 (every exit keeps
l, counting the crashes its detector has not reported). It writes:

  ftgcs-timeline.csv and its plot: --seeds runs (seeds --seed, --seed+1,
      ...) through the crashes: per time step of 10, the mean over the
      runs of the live processes InCS, their minimum and maximum over the
      runs (the plot's band), and the mean of the live processes, with l
      and k drawn as lines;
  ftgcs-messages.csv and its plot: messages per Entry+Exit pair of ftgcs,
      gcs and ftraymond (its bound --sweep-k alone) over --sweep-n, without
      crashes and with --sweep-crashes random crashes in the --crash window
      (gcs, which is not fault-tolerant, without only): mean and 95 %
      confidence interval over --seeds seeds (the plot's error bars), runs
      that stalled excluded;
  ftgcs-recovery.csv, ftgcs-recovery-summary.csv and the plot of their
      distribution: over --seeds runs (seeds --seed, --seed+1, ...), every
      crash of a process InCS with the deficit it left and its recovery
      time (until min(l, live) live processes are InCS again; +Inf when
      the run ended first), and their count, mean, 95 % interval and
      quantiles, with the exits that left a deficit (S2 lets an exit count
      a crash its exiter has not been told of).`,
		Example: `  critsec experiment ftgcs --out /tmp/ftgcs
  critsec experiment ftgcs --n 20 --l 2 --k 3 --crash random:10:100:1000 --detector P --seeds 50
  critsec experiment ftgcs --crash 2@100,3@200 --sweep-n 5,10 --seeds 3 --out /tmp/ftgcs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFTGCS(cmd, &f) },
	}
	fs := cmd.Flags()
	f.register(fs, crashStudyFlags{out: "out", seed: d.Seed, seeds: d.Seeds, crash: fmt.Sprintf("random:%d:%g:%g", d.Random, d.From, d.To),
		lambda: d.Lambda, e: d.E, detector: d.Detector.String(), detectDelay: d.DetectDelay, after: d.After}, crashStudyHelp{
		out:         "directory for the CSV tables and the plots (created if missing)",
		seed:        "seed of the first run of each setting (and of its random crashes): equal seeds give identical tables",
		seeds:       fmt.Sprintf("runs per setting of the message sweep and the recovery study, 1 to %d: seeds --seed, --seed+1, ...", maxSeeds),
		crash:       "crashes of the timeline and recovery runs: NODE@TIME,... (every run), or random:COUNT:FROM:TO (each run draws COUNT distinct processes crashing at times uniform in FROM..TO from its seed; the message sweep's crashes fall in FROM..TO too)",
		detector:    "failure-detector class of every process: P (perfect) or T (trusting)",
		detectDelay: "time from a crash to its detection (and T's time to trust), time units, >= 0",
		after:       "how long the runs with crashes go on after the last one, time units, > 0",
	})
	fs.IntVar(&f.n, "n", d.N, "processes of the timeline and recovery runs, >= 2")
	fs.IntVar(&f.l, "l", d.L, "lower bound l of the timeline and recovery runs, 0 <= l < k")
	fs.IntVar(&f.k, "k", d.K, "upper bound k of the timeline and recovery runs, l < k <= n")
	fs.StringVar(&f.sweepN, "sweep-n", "5,10,15,20,25,30", "process counts of the message sweep, comma-separated, each >= --sweep-k and > --sweep-crashes")
	fs.IntVar(&f.sweepL, "sweep-l", d.SweepL, "lower bound l of the message sweep, 0 <= sweep-l < sweep-k")
	fs.IntVar(&f.sweepK, "sweep-k", d.SweepK, "upper bound k of the message sweep (ftraymond's k)")
	fs.IntVar(&f.sweepCrashes, "sweep-crashes", d.SweepCrashes, "random crashes of the message sweep's runs with crashes, >= 0 (0: crash-free runs only)")
	fs.Int64Var(&f.entries, "entries", d.Entries, "CS entries per run of the message sweep, 1 to 10^9")
	return cmd
}

// runFTGCS checks the flags, runs the three parts and writes their tables
// and plots.
func runFTGCS(cmd *cobra.Command, f *ftgcsFlags) error {
	c, err := prepare(&f.crashStudyFlags, f.study)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	timeline, err := c.Timeline()
	if err != nil {
		return err
	}
	msgs, err := c.Messages()
	if err != nil {
		return err
	}
	perCrash, summary, err := c.Recovery()
	if err != nil {
		return err
	}
	cdf, err := experiment.RecoveryCDF(perCrash)
	if err != nil {
		return err
	}
	if err := writeTables(w, f.out, []namedTable{{"ftgcs-timeline", timeline, false}, {"ftgcs-messages", msgs, true},
		{"ftgcs-recovery", perCrash, false}, {"ftgcs-recovery-summary", summary, true}}); err != nil {
		return err
	}
	files := []string{"ftgcs-timeline.csv", "ftgcs-timeline.svg", "ftgcs-messages.csv", "ftgcs-messages.svg", "ftgcs-recovery.csv", "ftgcs-recovery-summary.csv"}
	if err := c.PlotTimeline(timeline, filepath.Join(f.out, "ftgcs-timeline.svg")); err != nil {
		return err
	}
	if err := msgs.Plot(experiment.Chart{Title: fmt.Sprintf("Messages per Entry+Exit pair (l = %d, k = %d)", c.SweepL, c.SweepK), X: "n", Y: "messages_per_pair_mean", CI: "messages_per_pair_ci95",
		XLabel: "n (processes)", YLabel: "messages per Entry+Exit pair"}, filepath.Join(f.out, "ftgcs-messages.svg")); err != nil {
		return err
	}
	if len(cdf.Rows) > 0 {
		if err := cdf.Plot(experiment.Chart{Title: fmt.Sprintf("Recovery time after a crash InCS (n = %d, l = %d, k = %d): every crash InCS of %d runs\nbars: 95 %% confidence band of the whole curve (Dvoretzky-Kiefer-Wolfowitz)", c.N, c.L, c.K, max(c.Seeds, 1)), X: "recovery_time_units", Y: "fraction_recovered",
			CI: "fraction_recovered_band95", Fraction: true, XLabel: "recovery time (time units)", YLabel: "fraction of the crashes InCS recovered"}, filepath.Join(f.out, "ftgcs-recovery.svg")); err != nil {
			return err
		}
		files = append(files, "ftgcs-recovery.svg")
	}
	fmt.Fprintf(w, "wrote %s\n", strings.Join(files, " "))
	return nil
}

// study checks the flags and states the study: experiment.DefaultFTGCS
// with the flags' changes.
func (f *ftgcsFlags) study() (experiment.FTGCS, error) {
	c := experiment.DefaultFTGCS()
	if err := f.checkOut(); err != nil {
		return c, err
	}
	switch {
	case f.n < 2 || f.n > sim.MaxPlanN:
		return c, badInput("--n %d is out of range: need 2 <= n <= %d", f.n, sim.MaxPlanN)
	case f.l < 0 || f.l >= f.k || f.k > f.n:
		return c, badInput("--l %d --k %d: need 0 <= l < k <= n = %d", f.l, f.k, f.n)
	}
	if err := f.checkSeeds(); err != nil {
		return c, err
	}
	if f.entries < 1 || f.entries > maxEntries {
		return c, badInput("--entries %d is out of range: need 1 <= entries <= 10^9", f.entries)
	}
	if err := f.checkLoad(); err != nil {
		return c, err
	}
	if f.after == 0 {
		return c, badInput("--after must be > 0: the runs need time after the last crash to recover")
	}
	d, err := f.parseDetector("a false suspicion of S reads as a crash and breaks the upper bound (docs/ft-global-lk-cs.md, I5)")
	if err != nil {
		return c, err
	}
	c.N, c.L, c.K, c.Seed, c.Seeds, c.Entries = f.n, f.l, f.k, f.seed, f.seeds, f.entries
	c.Lambda, c.E, c.Detector, c.DetectDelay, c.After = f.lambda, f.e, d, f.detectDelay, f.after
	crashes, err := f.parseCrashes(f.n)
	if err != nil {
		return c, err
	}
	if rest, ok := strings.CutPrefix(f.crash, "random:"); ok {
		p := strings.Split(rest, ":") // checked by parseCrashes
		c.Crashes, c.Random = nil, len(crashes)
		c.From, _ = strconv.ParseFloat(p[1], 64)
		c.To, _ = strconv.ParseFloat(p[2], 64)
	} else {
		c.Crashes, c.From, c.To = crashes, crashes[0].At, crashes[len(crashes)-1].At
	}
	if err := f.checkEnd(c.To + c.After); err != nil {
		return c, err
	}
	c.SweepL, c.SweepK, c.SweepCrashes = f.sweepL, f.sweepK, f.sweepCrashes
	if c.SweepL < 0 || c.SweepL >= c.SweepK {
		return c, badInput("--sweep-l %d --sweep-k %d: need 0 <= sweep-l < sweep-k", c.SweepL, c.SweepK)
	}
	if c.SweepCrashes < 0 {
		return c, badInput("--sweep-crashes %d is out of range: need >= 0", c.SweepCrashes)
	}
	c.Ns, err = parseList("sweep-n", f.sweepN, fmt.Sprintf("a process count in %d..%d, above --sweep-crashes %d", max(c.SweepK, 2), sim.MaxPlanN, c.SweepCrashes), func(v string) (int, bool) {
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= max(c.SweepK, 2) && n > c.SweepCrashes && n <= sim.MaxPlanN
	})
	if err != nil {
		return c, err
	}
	return c, nil
}
