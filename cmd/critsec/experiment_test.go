package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExperimentMessagesWritesTablesAndPlots(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "experiment", "messages", "--n", "4,9", "--entries", "40", "--out", dir, "--format", "svg,png")
	if code != 0 || !strings.Contains(out, "gcs grid") || !strings.Contains(out, "messages_per_pair") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, f := range []string{"messages-light.csv", "messages-light.svg", "messages-light.png", "messages-heavy.csv", "messages-heavy.svg", "messages-heavy.png"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v (%d bytes)", f, err, len(b))
		}
		if strings.HasSuffix(f, ".csv") && !strings.HasPrefix(string(b), "alg,n,lo,hi,mean_q,messages_per_pair,") {
			t.Errorf("%s header: %q", f, strings.SplitN(string(b), "\n", 2)[0])
		}
	}
}

func TestExperimentWaitingWritesTablesAndPlots(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "experiment", "waiting", "--n", "9", "--lambda", "0.01,1", "--entries", "40", "--out", dir)
	if code != 0 || !strings.Contains(out, "Waiting times, n = 9") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, f := range []string{"waiting.csv", "waiting-entry.svg", "waiting-exit.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExperimentBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"messages", "--n", "3"},
		{"messages", "--n", "4,x"},
		{"messages", "--n", ","},
		{"messages", "--entries", "0"},
		{"messages", "--format", "gif"},
		{"messages", "--workers", "0"},
		{"waiting", "--n", "3"},
		{"waiting", "--lambda", "0"},
		{"waiting", "--lambda", "NaN"},
		{"waiting", "--lambda", "-1,1"},
	} {
		if code, out := runCLI(t, append([]string{"experiment"}, args...)...); code != 2 {
			t.Errorf("experiment %v: exit %d, want 2\n%s", args, code, out)
		}
	}
}
