package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentLocalWritesTablesAndPlots: a small local study writes its
// three tables and plots, notes the pairs it skips, keeps lkcs-paper's
// broken runs as rows, and gives the same tables twice.
func TestExperimentLocalWritesTablesAndPlots(t *testing.T) {
	var tables [2]string
	for i := range tables {
		dir := t.TempDir()
		code, out, stderr := runCLIErr(t, "", "experiment", "local", "--topologies", "ring,torus,complete:6", "--n", "16",
			"--loads", "light,heavy", "--seeds", "2", "--entries", "10", "--out", dir)
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
		}
		if !strings.Contains(out, "skipped: lkcs-paper on ring:16: ") || !strings.Contains(out, "messages_per_pair") {
			t.Fatalf("output:\n%s", out)
		}
		for _, f := range []string{"local-runs.csv", "local-messages.csv", "local-waiting.csv", "messages-light.svg", "messages-heavy.svg",
			"per-member-light.svg", "waiting-lmutin-exit.svg", "waiting-lmutex-entry.svg"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil || len(b) == 0 {
				t.Fatalf("%s: %v (%d bytes)", f, err, len(b))
			}
			if strings.HasSuffix(f, ".csv") {
				tables[i] += string(b)
			}
		}
		runs, _ := os.ReadFile(filepath.Join(dir, "local-runs.csv"))
		if !strings.HasPrefix(string(runs), "alg,topology,load,stop,violation,n,") || !strings.Contains(string(runs), "lkcs-paper,torus:4x4,heavy,violation,") {
			t.Errorf("local-runs.csv:\n%s", runs)
		}
	}
	if tables[0] != tables[1] {
		t.Errorf("two runs of the study differ")
	}
}

// TestExperimentLocalNoPlots: a study none of whose runs is whole
// (lkcs-paper breaks on the torus at heavy load) writes its tables, no
// plot, and says why.
func TestExperimentLocalNoPlots(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "experiment", "local", "--algs", "lkcs-paper", "--topologies", "torus", "--n", "16",
		"--loads", "heavy", "--seeds", "1", "--entries", "10", "--out", dir)
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), "no plots: no run reached its entries with no violation") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg")); len(svgs) != 0 {
		t.Errorf("plots written: %v", svgs)
	}
}

// TestExperimentLocalBadInput: the local study's own flags are refused
// with exit status 2, one line on standard error, and no file written.
func TestExperimentLocalBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "empty.edges")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--seeds", "0"}, "--seeds 0 is out of range: need 1 <= seeds <= 1000"},
		{[]string{"--seeds", "1001"}, "--seeds 1001 is out of range"},
		{[]string{"--algs", "gcs"}, `"gcs" is not a local algorithm (lkcs, lkcs-paper, lmutex`},
		{[]string{"--algs", "lmutin,lmutin"}, "lists lmutin twice"},
		{[]string{"--algs", ""}, "has an empty entry"},
		{[]string{"--loads", "0"}, `"0" is not a load`},
		{[]string{"--loads", "medium"}, `"medium" is not a load`},
		{[]string{"--loads", "heavy,1"}, "lists 1 twice"},
		{[]string{"--loads", "NaN"}, `"NaN" is not a load`},
		{[]string{"--topologies", "torus", "--n", "7"}, "--topologies torus with --n 7: torus needs n = R×C with 3 <= R <= C"},
		{[]string{"--topologies", "hypercube:4"}, "--topologies hypercube:4:"},
		{[]string{"--topologies", "ring:2"}, "--topologies ring:2:"},
		{[]string{"--topologies", file}, "--topologies " + file + ":"},
		{[]string{"--topologies", filepath.Join(dir, "missing.edges")}, "missing.edges"},
		{[]string{"--topologies", "ring,ring:16", "--n", "16"}, "gives ring:16 twice"},
		{[]string{"--topologies", "ring,,torus"}, "has an empty entry"},
		{[]string{"--algs", "lkcs-paper", "--topologies", "ring:10"}, "nothing to run: every algorithm was skipped"},
		{[]string{"--entries", "10000000", "--n", "400"}, "makes 4e+09 entries a run, more than 10^9"},
		{[]string{"--entries", "0"}, "--entries 0 is out of range"},
		{[]string{"--n", "3"}, `"3" is not an integer from 4 to 100000`},
		{[]string{"--topologies", "complete:2000", "--max-memory", "0.1"}, "this study needs about"},
	} {
		args := append([]string{"experiment", "local", "--out", out}, c.args...)
		code, stdout, stderr := runCLIErr(t, "", args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "goroutine") {
			t.Errorf("critsec %s: exit %d, stderr %q; want exit 2 and one line containing %q\n%s", strings.Join(args, " "), code, stderr, c.want, stdout)
		}
	}
	// A study refused after its admission leaves the directory it made,
	// empty.
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused studies wrote %d files", len(ents))
	}
}
