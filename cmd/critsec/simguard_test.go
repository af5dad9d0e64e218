package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimExitGuard: ftgcs through random crashes keeps S1 and S2, and the
// summary gives each crash's deficit and, for a crash InCS, its recovery
// time; its trace checks.
func TestSimExitGuard(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	code, out := runCLI(t, "sim", "--alg", "ftgcs", "--n", "8", "--l", "2", "--k", "3", "--seed", "3", "--crash", "random:4:50:300",
		"--detector", "T", "--detect-delay", "5", "--lambda", "0.5", "--entries", "1500", "--trace", tr, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var s simSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	f := s.Faults
	if f == nil || f.MaxDeficit == nil || f.DeficitExits == nil || len(f.Crashes) != 4 {
		t.Fatalf("faults %+v", f)
	}
	incs := 0
	for _, c := range f.Crashes {
		if c.InCS == nil || c.Deficit == nil {
			t.Fatalf("crash %+v has no deficit", c)
		}
		if *c.InCS {
			incs++
			if c.Recovery == nil && !c.Unrecovered {
				t.Errorf("crash InCS %+v: neither a recovery time nor unrecovered", c)
			}
		} else if c.Recovery != nil || c.Unrecovered {
			t.Errorf("crash OutCS %+v has a recovery", c)
		}
	}
	if incs == 0 {
		t.Errorf("no crash InCS in %+v: choose another seed", f.Crashes)
	}
	if code, out := runCLI(t, "trace", "check", tr); code != 0 || !strings.Contains(out, "every exit keeping 2") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

// TestSimExitGuardViolation: a design of ftgcs dropped because its lower
// bound decays by one per crash (--lside complement: the complement of
// ftraymond with K = n - l) breaks S2 in the simulator, and trace check
// confirms it from the trace.
func TestSimExitGuardViolation(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	code, out := runCLI(t, "sim", "--alg", "ftgcs", "--lside", "complement", "--n", "8", "--l", "2", "--k", "4", "--seed", "1",
		"--crash", "random:4:50:300", "--detector", "T", "--detect-delay", "5", "--lambda", "0.5", "--entries", "2000", "--trace", tr)
	if code != 1 || !strings.Contains(out, "violation: bounds") || !strings.Contains(out, "unreported crashes InCS, below the lower bound 2") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out = runCLI(t, "trace", "check", tr)
	if code != 1 || !strings.HasPrefix(out, "confirmed: bounds") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}
