package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/experiment"
)

// bv95Plot is one plot of the bv95 study: a chart of the rows under one
// setting.
type bv95Plot struct {
	name    string
	setting experiment.BV95Setting
	chart   experiment.Chart
}

// bv95Plots are the paper's Figures 3(a), 3(b), 4 and 5, words per entry
// (which the paper left out), and Figures 3(a) and 4 with E = 1.
func bv95Plots() []bv95Plot {
	a, e1, b := experiment.BV95Settings[0], experiment.BV95Settings[1], experiment.BV95Settings[2]
	const x = "lambda (requests per time unit OutCS)"
	delay := func(title string) experiment.Chart {
		return experiment.Chart{Title: title, X: "lambda_requests_per_time_unit", Y: "avg_delay_time_units", CI: "delay_ci95_time_units", LogX: true, LogY: true, XLabel: x, YLabel: "mean time to enter the CS (time units)"}
	}
	msgs := func(title string) experiment.Chart {
		return experiment.Chart{Title: title, X: "lambda_requests_per_time_unit", Y: "msgs_per_entry", CI: "msgs_per_entry_ci95", LogX: true, LogY: true, XLabel: x, YLabel: "messages per CS entry"}
	}
	return []bv95Plot{
		{"bv95-fig3a", a, delay("Fig. 3(a): time to enter the CS, Ts = Tr = 0.1, Tt = 0.8, E = 0.0002")},
		{"bv95-fig3b", b, delay("Fig. 3(b): time to enter the CS, Ts = Tr = 0, Tt = 1, E = 0.0002")},
		{"bv95-fig4", a, msgs("Fig. 4: messages per CS entry, Ts = Tr = 0.1, Tt = 0.8, E = 0.0002")},
		{"bv95-fig5", a, experiment.Chart{Title: "Fig. 5: words per message, Ts = Tr = 0.1, Tt = 0.8, E = 0.0002",
			X: "lambda_requests_per_time_unit", Y: "words_per_msg", CI: "words_per_msg_ci95", LogX: true, XLabel: x, YLabel: "words per message"}},
		{"bv95-words-per-entry", a, experiment.Chart{Title: "Words per CS entry, Ts = Tr = 0.1, Tt = 0.8, E = 0.0002",
			X: "lambda_requests_per_time_unit", Y: "words_per_entry", CI: "words_per_entry_ci95", LogX: true, LogY: true, XLabel: x, YLabel: "words per CS entry"}},
		{"bv95-fig3a-e1", e1, delay("Time to enter the CS, Ts = Tr = 0.1, Tt = 0.8, E = 1")},
		{"bv95-fig4-e1", e1, msgs("Messages per CS entry, Ts = Tr = 0.1, Tt = 0.8, E = 1")},
	}
}

func newBV95Cmd() *cobra.Command {
	var f experimentFlags
	var k, nu int
	var lambdas string
	cmd := &cobra.Command{
		Use:   "bv95",
		Short: "The token K-mutex study of Bulgannawar and Vaidya 1995 (sections 4 and 5): forest against Raymond, Srimani-Reddy, Makki, partitioning",
		Long: `bv95 runs the study of section 4 of Bulgannawar and Vaidya, "A distributed
K-mutual exclusion algorithm" (ICDCS 1995), with the partitioning scheme
that section 5 compares against: N = 30 nodes, K = 3 tokens, nu = 2, over
the request rate lambda, in the paper's cost model (Ts per message copy
sent, Tr per message received, Tt in transit), with the settings
Ts = Tr = 0.1, Tt = 0.8 and E = 0.0002 or 1, and Ts = Tr = 0, Tt = 1,
E = 0.0002. Lines: forest with the last seen token (the paper's heuristic)
and with a random token, raymond, srimani-reddy, makki; the partitioning
scheme (K clusters of about N/K nodes, each running a 1-mutex) over forest
(partition), raymond (partition-raymond) and srimani-reddy
(partition-srimani-reddy); and forest-paper.

Writes bv95.csv (one row per algorithm, setting and lambda: the mean time to
enter the CS over the seeds, messages per entry, words per message and per
entry, each with its 95 % confidence half-width over the seeds, drawn as
error bars) and the plots bv95-fig3a (delay), bv95-fig3b (delay,
Ts = Tr = 0), bv95-fig4 (messages per entry), bv95-fig5 (words per
message), bv95-words-per-entry, bv95-fig3a-e1 and bv95-fig4-e1 (E = 1).
docs/token-k-mutex.md discusses the results.`,
		Example: `  critsec experiment bv95 --out docs/experiments/bv95
  critsec experiment bv95 --lambda 0.01,1 --seeds 2 --entries 500 --out /tmp/bv95`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.check()
			if err != nil {
				return err
			}
			if len(c.sizes) != 1 {
				return badInput("--n %q gives %d process counts: the study runs one (the paper's is 30)", f.ns, len(c.sizes))
			}
			n := c.sizes[0]
			if k < 1 || k >= n {
				return badInput("--k %d is out of range: need 1 <= k < n = %d (the paper's is 3)", k, n)
			}
			if nu < 0 || nu >= n {
				return badInput("--nu %d is out of range: need 0 <= nu < n = %d (the paper's is 2)", nu, n)
			}
			ls, err := parseList("lambda", lambdas, "a finite rate > 0 (at most 10^12)", studyRate)
			if err != nil {
				return err
			}
			s := experiment.BV95Study{N: n, K: k, Nu: nu, Lambdas: ls, Settings: experiment.BV95Settings,
				Entries: c.common.Entries, TransitDist: c.common.TransitDist, StarveAfter: c.common.StarveAfter}
			for i := range c.seeds {
				s.Seeds = append(s.Seeds, c.common.Seed+uint64(i))
			}
			runs := experiment.BV95Runs(s)
			if err := f.admit(runs); err != nil {
				return err
			}
			outs, err := f.simulate(cmd, "bv95", runs)
			if err != nil {
				return err
			}
			t := experiment.BV95Table(outs)
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Bulgannawar-Vaidya 1995, section 4: n = %d, k = %d, nu = %d, %d seeds of %d entries, transit %s\n", n, k, nu, c.seeds, c.common.Entries, c.common.TransitDist)
			if err := f.write(cmd, t, "bv95", nil, nil, nil); err != nil {
				return err
			}
			var written []string
			for _, p := range bv95Plots() {
				for _, ext := range c.formats {
					path := filepath.Join(f.out, p.name+"."+ext)
					if err := experiment.BV95Rows(t, p.setting).Plot(p.chart, path); err != nil {
						return fmt.Errorf("%s: %w", path, err)
					}
					written = append(written, path)
				}
			}
			fmt.Fprintf(w, "wrote %s\n", strings.Join(written, " "))
			return nil
		},
	}
	addExperimentFlags(cmd, &f, 5000, "30", 10)
	cmd.Flags().IntVar(&k, "k", 3, "tokens: at most k processes InCS, 1 <= k < n")
	cmd.Flags().IntVar(&nu, "nu", 2, "forest's INFORM messages per exit that keeps the token, 0 <= nu < n")
	cmd.Flags().StringVar(&lambdas, "lambda", "0.001,0.003,0.01,0.03,0.1,0.3,1,3,10", "request rates to sweep, comma-separated, each > 0")
	return cmd
}
