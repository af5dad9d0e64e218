package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExperimentMessagesWritesTablesAndPlots(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "experiment", "messages", "--n", "4,9", "--entries", "40", "--seeds", "2", "--out", dir, "--format", "svg,png")
	if code != 0 || !strings.Contains(out, "gcs grid") || !strings.Contains(out, "messages_per_pair") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, f := range []string{"messages-light.csv", "messages-light.svg", "messages-light.png", "messages-heavy.csv", "messages-heavy.svg", "messages-heavy.png"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v (%d bytes)", f, err, len(b))
		}
		// The columns of one run per point come first, as they were; the
		// seeds and the half-widths follow.
		if head := "alg,n,lo,hi,mean_q,messages_per_pair,uncontended_formula,entry_wait_mean_time_units,exit_wait_mean_time_units,throughput_entries_per_time_unit,entries," +
			"seeds,messages_per_pair_ci95,entry_wait_ci95_time_units,exit_wait_ci95_time_units,throughput_ci95_entries_per_time_unit\n"; strings.HasSuffix(f, ".csv") && !strings.HasPrefix(string(b), head) {
			t.Errorf("%s header: %q", f, strings.SplitN(string(b), "\n", 2)[0])
		}
	}
}

func TestExperimentWaitingWritesTablesAndPlots(t *testing.T) {
	dir := t.TempDir()
	code, out := runCLI(t, "experiment", "waiting", "--n", "9", "--lambda", "0.01,1", "--entries", "40", "--seeds", "2", "--out", dir)
	if code != 0 || !strings.Contains(out, "Waiting times, n = 9,") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "waiting.csv"))
	head := "alg,n,lo,hi,lambda_requests_per_time_unit,entry_wait_mean_time_units,entry_wait_p50_time_units,entry_wait_p99_time_units," +
		"exit_wait_mean_time_units,exit_wait_p50_time_units,exit_wait_p99_time_units,messages_per_pair,mean_incs,throughput_entries_per_time_unit," +
		"seeds,entry_wait_ci95_time_units,exit_wait_ci95_time_units,messages_per_pair_ci95,throughput_ci95_entries_per_time_unit\n"
	if err != nil || !strings.HasPrefix(string(b), head) || strings.Count(string(b), "\n") != 1+4*2 {
		t.Errorf("waiting.csv (%v): want the header %q and one row per algorithm and lambda:\n%s", err, head, b)
	}
	for _, f := range []string{"waiting.csv", "waiting-entry.svg", "waiting-exit.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExperimentBadInput runs every experiment subcommand with degenerate
// values (empty, repeated, zero, negative, the largest ints, NaN, Inf,
// sizes that do not fit in memory): each is refused before anything runs
// with exit status 2 and one line on standard error that says why, and
// writes no file.
func TestExperimentBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"messages", "extra"}, `unknown command "extra"`},
		{[]string{"messages", "--seeds", "0"}, "--seeds 0 is out of range: need 1 <= seeds <= 1000"},
		{[]string{"waiting", "--seeds", "1001"}, "--seeds 1001 is out of range"},
		{[]string{"messages", "--n", "3"}, `"3" is not an integer from 4 to 100000`},
		{[]string{"messages", "--n", "0"}, "is not an integer from 4 to 100000"},
		{[]string{"messages", "--n", "-4"}, "is not an integer from 4 to 100000"},
		{[]string{"messages", "--n", "4,x"}, `"x" is not an integer from 4 to 100000`},
		{[]string{"messages", "--n", ","}, "has an empty entry"},
		{[]string{"messages", "--n", "4,,9"}, "has an empty entry"},
		{[]string{"messages", "--n", ""}, "has an empty entry"},
		{[]string{"messages", "--n", "9,4,9"}, "lists 9 twice"},
		{[]string{"messages", "--n", "9223372036854775807"}, "is not an integer from 4 to 100000"},
		{[]string{"messages", "--n", "99999999999999999999"}, "is not an integer from 4 to 100000"},
		{[]string{"messages", "--n", "100000", "--max-memory", "16"}, "more than --max-memory"},
		{[]string{"messages", "--n", "4,2000", "--max-memory", "0.5"}, "this study needs about"},
		{[]string{"messages", "--n", "30000", "--max-memory", "1e9"}, "the majority coterie would hold 4.5e+08 process ids"},
		{[]string{"messages", "--entries", "0"}, "--entries 0 is out of range"},
		{[]string{"messages", "--entries", "-1"}, "--entries -1 is out of range"},
		{[]string{"messages", "--entries", "9223372036854775807"}, "out of range: need 1 <= entries <= 10^9"},
		{[]string{"messages", "--format", "gif"}, `"gif" is not a plot format`},
		{[]string{"messages", "--format", "svg,svg"}, "lists svg twice"},
		{[]string{"messages", "--format", ""}, "has an empty entry"},
		{[]string{"messages", "--workers", "0"}, "--workers 0 is out of range"},
		{[]string{"messages", "--workers", "-9223372036854775808"}, "is out of range"},
		{[]string{"messages", "--tt-dist", "uniform"}, `--tt-dist: "uniform" is not a distribution`},
		{[]string{"local", "--starve-after", "-1"}, "--starve-after -1 is out of range: need a time in 0.."},
		{[]string{"bv95", "--starve-after", "NaN"}, "--starve-after NaN is out of range"},
		{[]string{"messages", "--max-memory", "NaN"}, "--max-memory NaN is out of range"},
		{[]string{"messages", "--max-memory", "+Inf"}, "--max-memory +Inf is out of range"},
		{[]string{"messages", "--max-memory", "-1"}, "--max-memory -1 is out of range"},
		{[]string{"messages", "--out", ""}, "--out \"\" names no directory"},
		{[]string{"messages", "--quiet", "--progress"}, "contradict"},
		{[]string{"messages", "--seed", "-1"}, `--seed "-1": want an integer >= 0`},
		{[]string{"waiting", "--n", "3"}, "is not an integer from 4 to 100000"},
		{[]string{"waiting", "--n", "16,16"}, "lists 16 twice"},
		{[]string{"waiting", "--lambda", "0"}, `"0" is not a finite rate > 0`},
		{[]string{"waiting", "--lambda", "NaN"}, `"NaN" is not a finite rate > 0`},
		{[]string{"waiting", "--lambda", "Inf"}, `"Inf" is not a finite rate > 0`},
		{[]string{"waiting", "--lambda", "-1,1"}, `"-1" is not a finite rate > 0`},
		{[]string{"waiting", "--lambda", "1e13"}, "is not a finite rate > 0 (at most 10^12)"},
		{[]string{"waiting", "--lambda", "0.1,0.1"}, "lists 0.1 twice"},
		{[]string{"waiting", "--lambda", "0.1,1e-1"}, "lists 1e-1 twice"},
		{[]string{"waiting", "--lambda", ""}, "has an empty entry"},
		{[]string{"waiting", "--lambda", "1e-300"}, "would simulate at least 2.5e+302 time units"},
		{[]string{"waiting", "--lambda", "5e-324"}, "would simulate at least"},
		{[]string{"waiting", "--lambda", "0.0001", "--entries", "1000000000"}, "would simulate at least 1.25e+12 time units"},
		{[]string{"waiting", "--n", "2147483647"}, `"2147483647" is not an integer from 4 to 100000`},
		{[]string{"waiting", "--n", "100001"}, `"100001" is not an integer from 4 to 100000`},
	} {
		args := append([]string{"experiment"}, c.args...)
		if c.args[0] != "nope" && !slices.Contains(c.args, "--out") {
			args = append(args, "--out", filepath.Join(dir, "out"))
		}
		code, stdout, stderr := runCLIErr(t, "", args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "goroutine") {
			t.Errorf("critsec %s: exit %d, stderr %q; want exit 2 and one line containing %q\n%s", strings.Join(args, " "), code, stderr, c.want, stdout)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused studies wrote %d files", len(ents))
	}
}

// TestExperimentDegenerateSweeps: one point, a single lambda, the smallest
// n and exponential transit times all run and draw their plots (one lambda
// used to panic in the log-scale plot and leave a 0-byte SVG).
func TestExperimentDegenerateSweeps(t *testing.T) {
	for _, args := range [][]string{
		{"waiting", "--lambda", "0.1", "--entries", "40"},
		{"waiting", "--lambda", "1", "--n", "4", "--entries", "20", "--tt-dist", "exp"},
		{"waiting", "--lambda", "1e-6", "--n", "4", "--entries", "8"},
		{"waiting", "--lambda", "0.1,1", "--n", "4", "--entries", "8", "--seeds", "1"},
		{"waiting", "--lambda", "1000", "--n", "4", "--entries", "8", "--format", "svg,png,pdf"},
		{"messages", "--n", "4", "--entries", "20", "--tt-dist", "exp"},
	} {
		dir := t.TempDir()
		code, out, stderr := runCLIErr(t, "", append([]string{"experiment"}, append(args, "--out", dir)...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q\n%s", args, code, stderr, out)
		}
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) < 2 {
			t.Fatalf("%v: %d files, %v", args, len(ents), err)
		}
		for _, e := range ents {
			if fi, err := e.Info(); err != nil || fi.Size() == 0 || strings.HasPrefix(e.Name(), ".") {
				t.Errorf("%v: %s: %v, %v", args, e.Name(), fi, err)
			}
		}
	}
}

// TestExperimentProgressLines: --progress prints one line per run on
// standard error when it is not a terminal; without it nothing.
func TestExperimentProgressLines(t *testing.T) {
	args := []string{"experiment", "waiting", "--n", "4", "--lambda", "0.5,1", "--seeds", "2", "--entries", "8", "--out", t.TempDir()}
	code, _, stderr := runCLIErr(t, "", append(args, "--progress")...)
	if code != 0 || strings.Count(stderr, "progress: waiting: ") != 16 || !strings.Contains(stderr, "16 of 16 runs") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if code, _, stderr := runCLIErr(t, "", args...); code != 0 || stderr != "" {
		t.Fatalf("without --progress: exit %d, stderr %q", code, stderr)
	}
}
