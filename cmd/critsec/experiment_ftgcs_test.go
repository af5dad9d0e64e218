package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentFTGCS: a small study writes its tables and plots, the
// crash schedule and the bounds reaching the timeline.
func TestExperimentFTGCS(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "experiment", "ftgcs", "--n", "6", "--l", "2", "--k", "3", "--crash", "2@60,3@120", "--lambda", "0.05",
		"--after", "100", "--seeds", "2", "--sweep-n", "4,5", "--sweep-l", "1", "--sweep-k", "2", "--sweep-crashes", "1", "--entries", "100", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, f := range []string{"ftgcs-timeline.csv", "ftgcs-timeline.svg", "ftgcs-messages.csv", "ftgcs-messages.svg", "ftgcs-recovery.csv", "ftgcs-recovery-summary.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil || !strings.Contains(out, f) {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "ftgcs-timeline.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "alg,t_time_units,incs_mean,incs_min,incs_max,live,l,k" || len(lines) != 23 || !strings.HasSuffix(lines[22], ",4,2,3") {
		t.Fatalf("timeline:\n%s", b)
	}
}

// TestExperimentFTGCSBadInput: each bad flag is refused with one line,
// exit status 2.
func TestExperimentFTGCSBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--n", "1"},
		{"--l", "3", "--k", "3"},
		{"--k", "21"},
		{"--crash", "21@5"},
		{"--crash", "random:20:1:2"},
		{"--crash", "2@x"},
		{"--detector", "S"},
		{"--detector", "Q"},
		{"--lambda", "0"},
		{"--E", "-1"},
		{"--detect-delay", "NaN"},
		{"--after", "0"},
		{"--seeds", "0"},
		{"--entries", "0"},
		{"--sweep-n", "2"},
		{"--sweep-n", "5,5"},
		{"--sweep-l", "3"},
		{"--sweep-crashes", "-1"},
		{"--sweep-crashes", "5", "--sweep-n", "5"},
		{"--out", " "},
	} {
		refusesOneLine(t, []string{"experiment", "ftgcs"}, args)
	}
}

// TestCrashStudyMessages: the crash studies' own refusals say what is
// wrong and what they take.
func TestCrashStudyMessages(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ftgcs", "--crash", ""}, "--crash is empty: the study needs crashes (NODE@TIME,... or random:COUNT:FROM:TO)"},
		{[]string{"ft07", "--detector", "Q"}, `--detector "Q" is not a failure-detector class the study takes: choose P (perfect) or T (trusting)`},
		{[]string{"ftgcs", "--detector", "Q"}, "choose P (perfect) or T (trusting)"},
	} {
		code, out := runCLI(t, append([]string{"experiment"}, c.args...)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, out, c.want)
		}
	}
}
