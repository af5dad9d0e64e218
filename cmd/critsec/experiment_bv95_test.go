package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentBV95WritesTableAndPlots: a small bv95 study writes its CSV
// with the study's columns and every plot.
func TestExperimentBV95WritesTableAndPlots(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCLIErr(t, "", "experiment", "bv95", "--lambda", "0.01,1", "--seeds", "2", "--entries", "50", "--out", dir)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "bv95.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(csv), "algorithm,lambda_requests_per_time_unit,ts_time_units,tr_time_units,tt_time_units,e_time_units,seeds,avg_delay_time_units,delay_ci95_time_units,msgs_per_entry,words_per_msg,words_per_entry,entries,msgs_per_entry_ci95,words_per_msg_ci95,words_per_entry_ci95\n") {
		t.Errorf("bv95.csv:\n%s", csv)
	}
	for _, f := range []string{"bv95-fig3a.svg", "bv95-fig3b.svg", "bv95-fig4.svg", "bv95-fig5.svg", "bv95-words-per-entry.svg", "bv95-fig3a-e1.svg", "bv95-fig4-e1.svg"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", f, err, len(b))
		}
	}
}

// TestExperimentBV95BadInput: the study's own flags are refused with exit
// status 2, one line on standard error, and no file written.
func TestExperimentBV95BadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "1"}, `"1" is not an integer from 4 to`},
		{[]string{"--n", "30,40"}, "gives 2 process counts: the study runs one"},
		{[]string{"--k", "0"}, "--k 0 is out of range: need 1 <= k < n = 30"},
		{[]string{"--k", "30"}, "--k 30 is out of range"},
		{[]string{"--nu", "-1"}, "--nu -1 is out of range: need 0 <= nu < n = 30"},
		{[]string{"--nu", "30"}, "--nu 30 is out of range"},
		{[]string{"--seeds", "0"}, "--seeds 0 is out of range: need 1 <= seeds <= 1000"},
		{[]string{"--lambda", "0"}, `"0" is not a finite rate > 0`},
		{[]string{"--lambda", "1,1"}, "lists 1 twice"},
		{[]string{"--entries", "0"}, "--entries 0 is out of range"},
		{[]string{"--lambda", "1e-12", "--entries", "1000000"}, "would simulate at least"},
	} {
		args := append([]string{"experiment", "bv95", "--out", out}, c.args...)
		code, stdout, stderr := runCLIErr(t, "", args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "goroutine") {
			t.Errorf("critsec %s: exit %d, stderr %q; want exit 2 and one line containing %q\n%s", strings.Join(args, " "), code, stderr, c.want, stdout)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused studies wrote %d files", len(ents))
	}
}
