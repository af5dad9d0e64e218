package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/experiment"
	"github.com/critsec/critsec/topology"
)

// maxSeeds bounds --seeds: every seed repeats the whole study.
const maxSeeds = 1000

// topologyFamilies are the --topologies entries sized by --n.
var topologyFamilies = []string{"ring", "path", "star", "wheel", "grid", "torus", "complete", "random"}

// defaultLocalAlgs is the local study's --algs: the corrected LMUTIN and
// LMUTEX, LKCS as published, and the corrected LKCS once it is registered.
func defaultLocalAlgs() string {
	algs := []string{"lmutin", "lmutex", "lkcs-paper"}
	if _, err := alg.Lookup("lkcs"); err == nil {
		algs = append(algs, "lkcs")
	}
	return strings.Join(algs, ",")
}

func newLocalCmd() *cobra.Command {
	var f experimentFlags
	var algs, topologies, loads string
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Messages per Exit+Entry pair per process versus |N_i|+1, waiting times and LKCS's triggers: the local (l_i,k_i)-CS family",
		Long: `local measures the generalized local (l_i,k_i)-CS algorithms (Kamei and
Kakugawa 2017) on several topologies and loads: the messages of one
Exit+Entry pair of P_i against |N_i|+1, next to Lemma 3 (LMUTIN and
LMUTEX = Co(LMUTIN): 3(|N_i|+1)..6(|N_i|+1)) and Lemma 6 (LKCS:
6(|N_i|+1)..12(|N_i|+1)); the waiting times of Entry and Exit; and how
often LKCS's leader sends a Trigger (the sidetrack), per 1000 entries. A message is attributed to the
process whose Entry or Exit started the chain of handlers that sent it.

Bounds, clamped to each neighborhood: lmutin l = 1, lmutex k = 2, LKCS
l = 1, k = 5. Every process is InCS half of the time (E = 1/lambda); Tt = 1,
Ts = Tr = 0. A --topologies entry that is a family (ring, path, star, wheel,
grid, torus, complete, random) is built at each --n (docs/local-lk-cs.md
says how); a spec (complete:16, torus:6x6) or an edge-list file is used as
it is. An algorithm that cannot run on a topology (LKCS needs a leader) is
skipped with a note. A run that breaks (lkcs-paper deadlocks) is a row with
its stop reason, left out of the message and waiting statistics.

Writes local-runs.csv (one row per run), local-messages.csv (per algorithm,
load and |N_i|+1), local-waiting.csv (per algorithm, topology and load), the
plots messages-LOAD and per-member-LOAD (messages per pair against |N_i|+1,
with the bounds) and waiting-ALG-entry/exit (against lambda). Every mean
has its 95 % confidence half-width over the seeds (--seeds, 3 by default) in
a _ci95 column after the others, drawn as an error bar.`,
		Example: `  critsec experiment local --out docs/experiments/local
  critsec experiment local --algs lmutin --topologies ring,torus:6x6 --n 16 --loads light,heavy --seeds 2 --entries 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.check()
			if err != nil {
				return err
			}
			study, err := localStudy(c, f.entries, algs, topologies, loads)
			if err != nil {
				return err
			}
			runs, err := experiment.LocalRuns(study)
			if err != nil {
				return badInput("%v", err)
			}
			if err := f.admit(runs); err != nil {
				return err
			}
			runs, skips := experiment.Applicable(runs)
			w := cmd.OutOrStdout()
			for _, s := range skips {
				fmt.Fprintf(w, "skipped: %s on %s: %s\n", s.Alg, s.Topology, s.Reason)
			}
			if len(runs) == 0 {
				return badInput("nothing to run: every algorithm was skipped on every topology (see above); choose topologies the algorithms can run on")
			}
			outs, err := f.simulate(cmd, "local", runs)
			if err != nil {
				return err
			}
			runsPath := filepath.Join(f.out, "local-runs.csv")
			if err := experiment.LocalRunTable(outs).SaveCSV(runsPath); err != nil {
				return fmt.Errorf("%s: %w", runsPath, err)
			}
			fmt.Fprintf(w, "wrote %s (one row per run, %d in all)\n\n", runsPath, len(runs))
			fmt.Fprintf(w, "Messages per Exit+Entry pair of P_i by |N_i|+1 (whole runs), with the paper's bounds\n")
			if err := f.write(cmd, experiment.LocalSizeTable(outs), "local-messages", c.formats, nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(w, "Waiting times (mean over seeds, 95 %% CI) and LKCS's triggers per 1000 entries\n")
			if err := f.write(cmd, experiment.LocalWaitTable(outs), "local-waiting", c.formats, nil, nil); err != nil {
				return err
			}
			var written []string
			for _, p := range experiment.LocalPlots(outs, study.Loads) {
				for _, ext := range c.formats {
					path := filepath.Join(f.out, p.Name+"."+ext)
					if err := p.Table.Plot(p.Chart, path); err != nil {
						return fmt.Errorf("%s: %w", path, err)
					}
					written = append(written, path)
				}
			}
			if len(written) == 0 {
				fmt.Fprintln(w, "no plots: no run reached its entries with no violation")
				return nil
			}
			fmt.Fprintf(w, "wrote %s\n", strings.Join(written, " "))
			return nil
		},
	}
	addExperimentFlags(cmd, &f, 100, "100,400", 3)
	cmd.Flags().Lookup("entries").Usage = "CS entries per process in each run (a run on n processes stops after entries·n), 1 to 10^9 in all"
	cmd.Flags().StringVar(&algs, "algs", defaultLocalAlgs(), "local algorithms to measure, comma-separated (lkcs-paper deadlocks: its runs are reported, not fatal)")
	cmd.Flags().StringVar(&topologies, "topologies", "ring,torus,wheel,random,complete:16", "topologies, comma-separated: a family (ring, path, star, wheel, grid, torus, complete, random) built at each --n, or a spec or edge-list file used as it is")
	cmd.Flags().StringVar(&loads, "loads", "light,0.01,0.1,heavy", "loads, comma-separated: light (lambda = 1/(1000 n)), heavy (lambda = 1) or a rate lambda > 0; E = 1/lambda")
	return cmd
}

// localStudy checks the local study's own flags and states the study.
func localStudy(c studyConfig, entries int64, algs, topologies, loads string) (experiment.LocalStudy, error) {
	s := experiment.LocalStudy{TransitDist: c.common.TransitDist, EntriesPerProcess: entries, StarveAfter: c.common.StarveAfter}
	for i := range c.seeds {
		s.Seeds = append(s.Seeds, c.common.Seed+uint64(i))
	}
	var local []string
	for _, a := range alg.All() {
		if a.Local {
			local = append(local, a.Name)
		}
	}
	var err error
	s.Algs, err = parseList("algs", algs, "a local algorithm ("+strings.Join(local, ", ")+")", func(v string) (string, bool) {
		return v, slices.Contains(local, v)
	})
	if err != nil {
		return s, err
	}
	s.Loads, err = parseList("loads", loads, "a load (light, heavy or a rate lambda in (0, 10^12])", experiment.ParseLocalLoad)
	if err != nil {
		return s, err
	}
	// A rate of 1 reads as heavy, so "heavy,1" is refused as a repeat.
	list, err := parseList("topologies", topologies, "a topology family, spec or edge-list file", func(v string) (string, bool) { return v, true })
	if err != nil {
		return s, err
	}
	for _, e := range list {
		specs := []string{e}
		if slices.Contains(topologyFamilies, e) {
			specs = nil
			for _, n := range c.sizes {
				spec, err := experiment.LocalTopology(e, n)
				if err != nil {
					return s, badInput("--topologies %s with --n %d: %v", e, n, err)
				}
				specs = append(specs, spec)
			}
		}
		for _, spec := range specs {
			g, err := topology.ByName(spec)
			if err != nil {
				return s, badInput("--topologies %s: %v", spec, err)
			}
			if slices.Contains(s.Topologies, spec) {
				return s, badInput("--topologies %q gives %s twice: give each graph once", topologies, spec)
			}
			if total := float64(entries) * float64(g.N()); total > maxEntries {
				return s, badInput("--entries %d on %s (n = %d) makes %.3g entries a run, more than 10^9: use fewer entries", entries, spec, g.N(), total)
			}
			s.Topologies = append(s.Topologies, spec)
		}
	}
	return s, nil
}
