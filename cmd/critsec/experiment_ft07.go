package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/experiment"
)

func newFT07Cmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "ft07",
		Short: "Crashes: Raymond against the fault-tolerant k-mutex (Bouillaguet, Arantes, Sens 2007, section 6)",
		Long: `ft07 runs the study of section 6 of the fault-tolerant k-mutex paper: 15
processes, 5 resources, a heavy load (lambda = E = 1, Tt = 1), and 14 crashes
(P2..P15, one every 100 time units from t = 100), with Raymond's algorithm and
ftraymond (detector T, detection delay 5). It writes:

  ft07-figure2.csv and its plot: the resources in use over time, per time
      step of 10 (mean and maximum), for both algorithms (the paper's Figure 2);
  ft07-messages.csv: messages per CS without crashes at a light and a heavy
      load, initialization messages per process, CRASH messages per detection
      and detections per crash, next to the paper's bounds;
  ft07-survival.csv: every registered algorithm with 1 and with 5
      crashes (the local ones on the complete graph): entries after the last
      crash, time to the next entry and until every request pending at the crash
      is served,
      deadlock or broken bounds.

docs/fault-tolerance.md discusses the results.`,
		Example: `  critsec experiment ft07 --out /tmp/ft07`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(out) == "" {
				return badInput("--out %q names no directory", out)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return badInput("--out %s: %v", out, err)
			}
			c := experiment.DefaultFT07()
			w := cmd.OutOrStdout()
			fig, err := c.Figure2()
			if err != nil {
				return err
			}
			msgs, err := c.Messages()
			if err != nil {
				return err
			}
			surv, err := c.Survival([]int{1, c.K})
			if err != nil {
				return err
			}
			for _, t := range []struct {
				name  string
				table *experiment.Table
				show  bool
			}{{"ft07-figure2", fig, false}, {"ft07-messages", msgs, true}, {"ft07-survival", surv, true}} {
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
			if err := experiment.PlotFigure2(fig, c.Crashes, filepath.Join(out, "ft07-figure2.svg")); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s\n", strings.Join([]string{"ft07-figure2.csv", "ft07-figure2.svg", "ft07-messages.csv", "ft07-survival.csv"}, " "))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "out", "directory for the CSV tables and the plot (created if missing)")
	return cmd
}
