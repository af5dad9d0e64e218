package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentFT07Flags: the crash schedule, the algorithms and the seed
// reach the survival table, whose verdict columns say that forest starves
// the request P2's crash holds up while ftraymond serves every one.
func TestExperimentFT07Flags(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "experiment", "ft07", "--crash", "2@100", "--algs", "forest,ftraymond", "--seeds", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ft07-survival.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"alg,crashes,runs,entries_before_mean,entries_after_mean,entries_after_ci95,first_entry_after_mean_time_units,first_entry_after_ci95_time_units,recovered_runs,recovery_mean_time_units,recovery_ci95_time_units,deadlock_runs,starvation_runs,livelock_runs,bounds_broken_runs,error_runs",
		"forest,1,1,251,999,",
		"ftraymond,1,1,228,1241,",
	}
	if len(lines) != len(want) {
		t.Fatalf("survival table:\n%s", b)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[1], ",0,1,0,0,0") || !strings.HasSuffix(lines[2], ",0,0,0,0,0") {
		t.Errorf("verdicts:\n%s", b)
	}
}

// TestExperimentFT07BadInput: each bad flag is refused with one line,
// exit status 2.
func TestExperimentFT07BadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--crash", "16@5"},
		{"--crash", "random:15:1:2"},
		{"--crash", "2@x"},
		{"--detector", "S"},
		{"--detector", "Q"},
		{"--lambda", "0"},
		{"--E", "-1"},
		{"--detect-delay", "NaN"},
		{"--after", "0"},
		{"--starve-after", "0"},
		{"--algs", "nope"},
		{"--algs", "forest,forest"},
		{"--out", " "},
		{"--seeds", "0"},
	} {
		refusesOneLine(t, []string{"experiment", "ft07"}, args)
	}
}

// refusesOneLine runs the command cmd with args and fails unless it is
// refused with one line and exit status 2.
func refusesOneLine(t *testing.T, cmd, args []string) {
	t.Helper()
	code, out := runCLI(t, append(cmd, args...)...)
	if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.HasPrefix(out, "critsec: ") {
		t.Errorf("%v %v: exit %d, want 2 and one line\n%s", cmd, args, code, out)
	}
}
