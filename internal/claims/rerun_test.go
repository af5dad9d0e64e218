package claims

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/critsec/critsec/experiment"
)

// short is where the short re-runs' tables are committed, laid out as
// under the repository's root (docs/experiments/...), so that Render and
// the rows read them as they read the full ones.
const short = "testdata/short"

// study is one study re-run at short settings, with the command that
// regenerates its committed full-setting tables.
type study struct {
	name, command string
	// run returns the study's tables by their paths under
	// docs/experiments.
	run func() (map[string]*experiment.Table, error)
}

// studies are the studies whose tables docs/claims.md reads, at short
// settings: the full settings' sweeps (rates, settings, loads, topology
// families) with fewer entries, seeds and processes, so that each row
// computes over the same points and the whole re-run stays short.
//
// They also re-run the tables the other docs cite that no row reads
// (messages-heavy.csv, ft07-survival.csv, local-waiting.csv): those are
// only compared byte for byte, at a representative subset of their
// points where the full set is expensive. Not re-run: the ftgcs study
// (docs/experiments/ftgcs), which no row reads (the fault-tolerant (l,k)-CS
// is the global paper's future work, not one of its claims) and which
// docs/ft-global-lk-cs.md reads alone.
var studies = []study{
	{"bv95", bvCmd, func() (map[string]*experiment.Table, error) {
		s := experiment.BV95Study{N: 30, K: 3, Nu: 2, Lambdas: []float64{0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10},
			Settings: experiment.BV95Settings, Seeds: []uint64{1}, Entries: 1000}
		// Only setting A has rows about lines beyond the four compared.
		runs := slices.DeleteFunc(experiment.BV95Runs(s), func(r experiment.Run) bool {
			a := experiment.BV95Settings[0]
			return (r.E != a.E || r.Ts != a.Ts) && !slices.Contains(compared, r.Label)
		})
		return simulate("bv95/bv95.csv", runs, experiment.BV95Table)
	}},
	{"messages", messagesCmd, func() (map[string]*experiment.Table, error) {
		c := experiment.Common{Entries: 400, Seed: 1}
		runs := slices.DeleteFunc(experiment.MessageRuns([]int{4, 9, 16, 25, 36, 64, 100, 144, 225, 400}, experiment.Light, c, 1), func(r experiment.Run) bool {
			return r.Coterie == "majority" && r.N > 64
		})
		return simulate("messages-light.csv", runs, experiment.MessageTable)
	}},
	{"messages, heavy load", messagesCmd, func() (map[string]*experiment.Table, error) {
		// The sizes where docs/experiments.md finds the saturated
		// throughput changing (the mix of handovers at n = 4, majority's
		// few short ones at 9 and 16, none from 25 on; the grid's none
		// from 9 on) and Raymond's growing; larger n only repeat n = 25.
		c := experiment.Common{Entries: 400, Seed: 1}
		return simulate("messages-heavy.csv", experiment.MessageRuns([]int{4, 9, 16, 25}, experiment.Heavy, c, 1), experiment.MessageTable)
	}},
	{"waiting", waitingCmd, func() (map[string]*experiment.Table, error) {
		c := experiment.Common{Entries: 200, Seed: 1}
		ls := []float64{0.0001, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1}
		return simulate("waiting.csv", experiment.WaitingRuns([]int{16}, ls, c, 1), experiment.WaitingTable)
	}},
	{"ft07", ftCmd, func() (map[string]*experiment.Table, error) {
		c := experiment.DefaultFT07()
		c.Entries = 100
		// Figure 2's runs and the message counts' are a run each after
		// another: side by side they end with the other studies.
		var fig *experiment.Table
		var figErr error
		var wg sync.WaitGroup
		wg.Go(func() { fig, figErr = c.Figure2() })
		msgs, err := c.Messages()
		wg.Wait()
		if err == nil {
			err = figErr
		}
		return map[string]*experiment.Table{"ft07/ft07-figure2.csv": fig, "ft07/ft07-messages.csv": msgs}, err
	}},
	{"ft07 survival", ftCmd, func() (map[string]*experiment.Table, error) {
		t, err := survival(experiment.DefaultFT07(), survivors)
		return map[string]*experiment.Table{"ft07/ft07-survival.csv": t}, err
	}},
	{"local", localCmd, func() (map[string]*experiment.Table, error) {
		s := experiment.LocalStudy{Algs: []string{"lmutin", "lmutex", "lkcs-paper", "lkcs"}, Seeds: []uint64{1}, EntriesPerProcess: 50}
		for _, l := range []string{"light", "0.01", "0.1", "heavy"} {
			load, _ := experiment.ParseLocalLoad(l)
			s.Loads = append(s.Loads, load)
		}
		for _, fam := range []string{"ring", "torus", "wheel", "random"} {
			spec, err := experiment.LocalTopology(fam, 16)
			if err != nil {
				return nil, err
			}
			s.Topologies = append(s.Topologies, spec)
		}
		s.Topologies = append(s.Topologies, "complete:16")
		runs, err := experiment.LocalRuns(s)
		if err != nil {
			return nil, err
		}
		runs, _ = experiment.Applicable(runs)
		outs, err := experiment.SimulateAll(runs, runtime.GOMAXPROCS(0), nil)
		if err != nil {
			return nil, err
		}
		return map[string]*experiment.Table{"local/local-runs.csv": experiment.LocalRunTable(outs), "local/local-messages.csv": experiment.LocalSizeTable(outs),
			"local/local-waiting.csv": experiment.LocalWaitTable(outs)}, nil
	}},
}

// survivors are the algorithms of the short survival table, one seed
// each: every verdict docs/fault-tolerance.md gives and the algorithms it
// names (srimani-reddy serves every request after one crash, partition
// and forest starve, the quorum-based ones, makki and lkcs block,
// lkcs-paper fails before any crash). Left out, for time (together they
// would cost twice the rest): ftraymond and raymond, whose runs through
// the same crashes are Figure 2's (rows F8 and F9, computed from the
// short re-run); ftgcs, as costly as ftraymond, whose study is its own;
// and the algorithms whose verdicts repeat one kept: forest-paper and
// the partitions of raymond and srimani-reddy (they starve as forest and
// partition do), lmutin and lmutex (blocking as lkcs does), the -paper
// variants that behave as their corrected ones.
var survivors = []string{"forest", "gcs", "kmutex", "lkcs", "lkcs-paper", "maekawa", "makki", "mutin", "partition", "srimani-reddy"}

// survival is c's survival table (the first crash and the first k) of
// algs, in that order. experiment.FT07.Survival runs its algorithms one
// after another; here each runs on its own, side by side with the others.
func survival(c experiment.FT07, algs []string) (*experiment.Table, error) {
	parts := make([]*experiment.Table, len(algs))
	errs := make([]error, len(algs))
	var wg sync.WaitGroup
	for i, a := range algs {
		wg.Go(func() {
			one := c
			one.Algs = []string{a}
			parts[i], errs[i] = one.Survival([]int{1, min(c.K, len(c.Crashes))})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	t := parts[0]
	for _, p := range parts[1:] {
		t.Labels = append(t.Labels, p.Labels...)
		t.Rows = append(t.Rows, p.Rows...)
		t.Tags = append(t.Tags, p.Tags...)
	}
	return t, nil
}

// simulate runs runs and returns the table they make as name.
func simulate(name string, runs []experiment.Run, table func([]experiment.Outcome) *experiment.Table) (map[string]*experiment.Table, error) {
	outs, err := experiment.SimulateAll(runs, runtime.GOMAXPROCS(0), nil)
	if err != nil {
		return nil, err
	}
	return map[string]*experiment.Table{name: table(outs)}, nil
}

// save writes t as dir/docs/experiments/name.
func save(dir, name string, t *experiment.Table) error {
	path := filepath.Join(dir, "docs", "experiments", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return t.SaveCSV(path)
}

// rows computes every paper's rows from the tables under root.
func rows(t *testing.T, root string) [][]row {
	t.Helper()
	d := &data{root: root, tables: map[string]*table{}}
	var out [][]row
	for _, p := range papers {
		rs, err := p.read(d)
		if err != nil {
			t.Fatalf("%s: %v", root, err)
		}
		out = append(out, rs)
	}
	return out
}

// TestStudiesKeepVerdicts re-runs every study docs/claims.md reads (and
// the tables only the other docs read) at short settings and checks that each claim keeps the verdict the
// committed full-setting tables give it, and that the short tables are
// those committed under testdata/short: a change to an algorithm or the
// simulator that moves the studies' numbers fails here, naming the claim
// or the table, until the studies are re-run.
func TestStudiesKeepVerdicts(t *testing.T) {
	fresh := t.TempDir()
	var wg sync.WaitGroup
	tables := make([]map[string]*experiment.Table, len(studies))
	errs := make([]error, len(studies))
	for i, s := range studies {
		wg.Go(func() {
			start := time.Now()
			tables[i], errs[i] = s.run()
			t.Logf("%s: %.1f s", s.name, time.Since(start).Seconds())
		})
	}
	wg.Wait()
	for i, s := range studies {
		if errs[i] != nil {
			t.Fatalf("critsec experiment %s at short settings: %v", s.name, errs[i])
		}
		for name, table := range tables[i] {
			if err := save(fresh, name, table); err != nil {
				t.Fatal(err)
			}
		}
	}
	committed, now := rows(t, root), rows(t, fresh)
	computed := 0
	for i, p := range papers {
		for j, r := range committed[i] {
			if strings.Contains(r.command, "critsec experiment ") {
				computed++
			}
			if n := now[i][j]; n.verdict != r.verdict {
				t.Errorf("%s, %s (row %c%d, %q): %s on the short re-run, %s in the committed tables\n  re-run: %s\n  committed: %s\n  the code no longer gives the committed verdict: find why, then regenerate the tables (%s) and the page (go test ./internal/claims -update)",
					p.title, r.where, p.title[0], j+1, r.claim, n.verdict, r.verdict, n.result, r.result, r.command)
			}
		}
	}
	t.Logf("%d claims computed from the studies' tables", computed)
	if *update {
		if err := os.RemoveAll(short); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range studies {
		for name, table := range tables[i] {
			if *update {
				if err := save(short, name, table); err != nil {
					t.Fatal(err)
				}
				continue
			}
			file := filepath.Join(short, "docs", "experiments", name)
			got, err := os.ReadFile(filepath.Join(fresh, "docs", "experiments", name))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%v: create it with go test ./internal/claims -update", err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the short re-run differs from the committed table (- committed, + re-run):\n%s\nthe study's numbers moved: re-run it at its full settings (%s), then regenerate the page and this table: go test ./internal/claims -update",
					file, firstLines(diff(string(want), string(got)), 20), s.command)
			}
		}
	}
}

// firstLines is the first n lines of s, with a count of those left out.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... and %d more lines\n", len(lines)-n)
}
