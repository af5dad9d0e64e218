package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckLiveness: --liveness finds the published forest algorithm's lost
// request as a starvation lasso, prints the cycle after "cycle:" and
// confirms it by replay; Raymond with k = 1 has no starvation under exact
// weak fairness.
func TestCheckLiveness(t *testing.T) {
	code, out := runCheckCLI(t, "--alg", "forest-paper", "--n", "3", "--k", "1", "--budget", "3", "--liveness", "--fair-bound", "1")
	if code != 1 || !strings.Contains(out, "violation: starvation: P1's entry request stays pending forever") ||
		!strings.Contains(out, "\n  cycle:\n") || !strings.Contains(out, "lasso: confirmed by replay") {
		t.Fatalf("forest-paper: exit %d, output:\n%s", code, out)
	}
	code, out = runCheckCLI(t, "--alg", "forest-paper", "--n", "3", "--k", "1", "--budget", "3", "--liveness", "--fair-bound", "1", "--json")
	var s checkSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != 1 {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	if v := s.Violation; v == nil || v.Kind != "starvation" || v.Cycle < 1 || v.Cycle >= len(v.Path) || !strings.HasPrefix(v.Lasso, "confirmed") || s.Liveness == nil || s.Liveness.FairBound != 1 {
		t.Errorf("--json: %+v %+v", s.Violation, s.Liveness)
	}
	code, out = runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "1", "--liveness")
	if code != 0 || !strings.Contains(out, "result: ok") || !strings.Contains(out, "continuation states: 14720 (fair bound 0)") {
		t.Fatalf("raymond: exit %d, output:\n%s", code, out)
	}
}

// TestCheckLivenessRefuses: the flags --liveness does not combine with,
// and its own flags without it, are refused with one line (exit 2).
func TestCheckLivenessRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"--fair-bound", "2"},
		{"--liveness-states", "10"},
		{"--liveness", "--trace", "x.jsonl"},
		{"--liveness", "--viz", "x.html"},
		{"--liveness", "--search", "dfs"},
		{"--liveness", "--unordered"},
		{"--liveness", "--crashes", "1"},
		{"--liveness", "--fair-bound", "-1"},
		{"--liveness", "--liveness-states", "0"},
	} {
		code, out := runCheckCLI(t, append([]string{"--alg", "raymond", "--n", "3", "--k", "1"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("check %v: exit %d, want 2 and one line\n%s", args, code, out)
		}
	}
}
