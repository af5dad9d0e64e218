package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runCheckCLI runs `critsec check args...` and returns the exit status and
// standard output.
func runCheckCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return runCLI(t, append([]string{"check"}, args...)...)
}

// TestCheckFlagsThatDoNotApply: a flag of the other search is refused, not
// ignored.
func TestCheckFlagsThatDoNotApply(t *testing.T) {
	for _, args := range [][]string{
		{"--expected-states", "1000"},
		{"--search", "dfs", "--workers", "2"},
		{"--alg", "raymond", "--coterie", "majority"},
		{"--reduce", "por"}, // breadth-first: no cycle proviso
	} {
		code, out := runCheckCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("check %v: exit %d, want 2 and one line\n%s", args, code, out)
		}
	}
}

func TestCheckOK(t *testing.T) {
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--budget", "2")
	if code != 0 || !strings.Contains(out, "result: ok") || !strings.Contains(out, "states: 7310 ") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	// With no flags: (1,2)-GCS on three processes, Maekawa as mx, on the
	// grid coterie (the default of every command). On majority(3) the
	// space has the 87 407 states measured before the grid became the
	// default.
	code, out = runCheckCLI(t)
	if code != 0 || !strings.HasPrefix(out, "check gcs: n=3 l=1 k=2, bounds 1..2") || !strings.Contains(out, "states: 134357 ") {
		t.Fatalf("default check: exit %d, output:\n%s", code, out)
	}
	code, out = runCheckCLI(t, "--coterie", "majority")
	if code != 0 || !strings.Contains(out, "states: 87407 ") {
		t.Fatalf("check on majority(3): exit %d, output:\n%s", code, out)
	}
}

// TestCheckBudgetPerProcess: --budget takes one budget per process; the
// same budget for all is the uniform run, and the list reaches the output,
// the JSON summary and the counterexample's trace header.
func TestCheckBudgetPerProcess(t *testing.T) {
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--budget", "2,2,2")
	if code != 0 || !strings.Contains(out, "budget 2,2,2 (P1 first)") || !strings.Contains(out, "states: 7310 ") {
		t.Fatalf("--budget 2,2,2: exit %d, want ok with budget 2's 7310 states, output:\n%s", code, out)
	}
	cx := filepath.Join(t.TempDir(), "cx.jsonl")
	code, out = runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--budget", "0,2,0", "--assert-max", "0", "--trace", cx, "--json")
	var s struct {
		Result    string `json:"result"`
		Budget    int    `json:"budget"`
		Budgets   []int  `json:"budgets"`
		Violation struct {
			Path []string `json:"path"`
		} `json:"violation"`
	}
	if err := json.Unmarshal([]byte(out), &s); code != 1 || err != nil || s.Result != "violation" || s.Budget != 2 || !slices.Equal(s.Budgets, []int{0, 2, 0}) {
		t.Fatalf("--budget 0,2,0 --assert-max 0: exit %d, %v, summary %+v, output:\n%s", code, err, s, out)
	}
	calls := 0
	for _, step := range s.Violation.Path {
		if strings.HasSuffix(step, " entry") || strings.HasSuffix(step, " exit") {
			calls++
			if !strings.Contains(step, ": P2 ") {
				t.Errorf("step %q: only P2 has calls", step)
			}
		}
	}
	if calls == 0 {
		t.Errorf("path %q: want P2's entry", s.Violation.Path)
	}
	b, err := os.ReadFile(cx)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if !strings.Contains(first, `"budget":[0,2,0]`) {
		t.Errorf("trace header %s: want the budgets [0,2,0]", first)
	}
}

// TestCheckViolationTrace: --assert-max 1 on
// Raymond with k = 2 must fail, and the trace must end with two processes
// InCS.
func TestCheckViolationTrace(t *testing.T) {
	cx := filepath.Join(t.TempDir(), "cx.jsonl")
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--budget", "2", "--assert-max", "1", "--trace", cx)
	if code != 1 || !strings.Contains(out, "result: violation") || !strings.Contains(out, "violation: bounds:") || !strings.Contains(out, "  6: deliver P3->P2 REPLY") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	f, err := os.Open(cx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := map[float64]int{}
	var header map[string]any
	inCS, last := 0, 0.0
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		switch ev["ev"] {
		case "header":
			header = ev
		case "state":
			if ev["state"] == "InCS" {
				inCS++
			} else {
				inCS--
			}
			in[ev["t"].(float64)] = inCS
			last = ev["t"].(float64)
		}
	}
	if header["runtime"] != "check" || header["hi"] != 1.0 || header["budget"] != 2.0 {
		t.Errorf("header %v", header)
	}
	if last != 6 || in[last] != 2 {
		t.Errorf("trace ends at step %v with %d InCS, want step 6 with 2", last, in[last])
	}
}

func TestCheckJSON(t *testing.T) {
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--json", "--max-states", "50")
	if code != 1 {
		t.Fatalf("incomplete run: exit %d, want 1", code)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if s["result"] != "incomplete" || s["states"] != 50.0 {
		t.Errorf("summary %v", s)
	}
	keys := []string{`"result"`, `"alg"`, `"n"`, `"states"`, `"transitions"`, `"depth"`, `"seconds"`, `"reason"`}
	for i := 1; i < len(keys); i++ {
		if strings.Index(out, keys[i-1]) > strings.Index(out, keys[i]) {
			t.Errorf("key %s after %s in:\n%s", keys[i-1], keys[i], out)
		}
	}
}

func TestCheckBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--n", "9"},      // explodes without --max-states
		{"--budget", "6"}, // likewise
		{"--budget", "-1"},
		{"--alg", "nope"},
		{"--k", "0"},
		{"--assert-max", "7"},
		{"--assert-min", "2", "--assert-max", "1"},
		{"--workers", "0"},
		{"--search", "astar"},
		{"--reduce", "symmetry", "--search", "dfs"},
		{"--max-memory", "-1"},
		{"--expected-states", "-1"},
		{"--max-memory", "NaN"},
		{"--bogus"},
	} {
		if code, out := runCheckCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; output %s", args, code, out)
		}
	}
	// With an explicit --max-states a large n is accepted (and stops).
	if code, out := runCheckCLI(t, "--alg", "raymond", "--n", "9", "--k", "3", "--max-states", "1000"); code != 1 || !strings.Contains(out, "result: incomplete") {
		t.Errorf("n=9 with --max-states: exit %d, output %s", code, out)
	}
}

// TestCheckConfigMessages: the rules check.Config.Validate states for the
// fields the flags set are told with the flags' names and values as given.
func TestCheckConfigMessages(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--budget", "2,2"}, "critsec: --budget 2,2 gives 2 budgets for 3 processes: give one budget, or one per process (P1 first)\n"},
		{[]string{"--budget", "2,101,2"}, "critsec: --budget 2,101,2 is out of range: need 0 <= budget <= 100\n"},
		{[]string{"--budget", "101"}, "critsec: --budget 101 is out of range: need 0 <= budget <= 100\n"},
		{[]string{"--alg", "ftraymond", "--crashes", "4"}, "critsec: --crashes 4 is out of range: need 0 <= crashes <= n = 3\n"},
		{[]string{"--timeout", "-3s"}, "critsec: --timeout -3s is out of range: need >= 0 (0: none)\n"},
		{[]string{"--reduce", "por"}, "critsec: --reduce por needs --search dfs (its cycle proviso uses the depth-first stack): add --search dfs, or leave --reduce por out\n"},
		{[]string{"--n", "65", "--max-states", "10"}, "critsec: --n 65 is out of range: need 1 <= n <= 64\n"},
		{[]string{"--expected-states", "5"}, "critsec: --expected-states needs --search dfs (it sizes the depth-first visited set): add --search dfs, or leave --expected-states out\n"},
		{[]string{"--fair-bound", "2"}, "critsec: --fair-bound needs --liveness (it bounds the starvation search): add --liveness, or leave --fair-bound out\n"},
		{[]string{"--liveness-states", "10"}, "critsec: --liveness-states needs --liveness (it bounds the starvation search): add --liveness, or leave --liveness-states out\n"},
		{[]string{"--liveness", "--unordered"}, "critsec: --unordered does not combine with --liveness (the starvation search needs FIFO channels: its fairness units are channel heads): leave --unordered out\n"},
		{[]string{"--alg", "ftraymond", "--liveness", "--crashes", "1"}, "critsec: --crashes does not combine with --liveness (the starvation search is defined without crashes): leave --crashes out\n"},
		{[]string{"--alg", "ftraymond", "--liveness", "--detector", "P"}, "critsec: --detector does not combine with --liveness (the starvation search is defined without failure detectors): leave --detector out\n"},
		{[]string{"--liveness", "--disk-dir", "d"}, "critsec: --disk-dir belongs to the depth-first safety search; the starvation search keeps its own states in memory: leave --disk-dir out with --liveness\n"},
		{[]string{"--liveness", "--reduce", "por"}, "critsec: --reduce por reduces the depth-first safety search, not the starvation search: leave --reduce out with --liveness\n"},
	} {
		if code, out := runCheckCLI(t, c.args...); code != 2 || out != c.want {
			t.Errorf("%v: exit %d, %q; want 2, %q", c.args, code, out, c.want)
		}
	}
}

// TestCheckDepthFirst: --search dfs reaches the same verdict and state count
// as the default breadth-first search, and its counterexample trace is one
// trace check confirms.
func TestCheckDepthFirst(t *testing.T) {
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs")
	if code != 0 || !strings.Contains(out, "fifo channels, dfs") || !strings.Contains(out, "states: 7310 ") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	// --progress writes to standard error only: the report is unchanged.
	// (The last line holds the wall-clock seconds.)
	withoutTime := func(s string) string { return s[:strings.Index(s, "states: ")] }
	if code2, out2 := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs", "--progress"); code2 != 0 || withoutTime(out2) != withoutTime(out) {
		t.Fatalf("--progress changed the report: exit %d\n%s", code2, out2)
	}
	cx := filepath.Join(t.TempDir(), "cx.jsonl")
	code, out = runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--assert-max", "1", "--search", "dfs", "--trace", cx)
	if code != 1 || !strings.Contains(out, "result: violation") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	code, out = runCLI(t, "trace", "check", cx)
	if code != 1 || !strings.Contains(out, "2 processes InCS, outside the bounds 0..1") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

// TestCheckReduce: --reduce por explores fewer states with the same
// verdicts, and its counterexample trace is one trace check confirms.
func TestCheckReduce(t *testing.T) {
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs", "--reduce", "por", "--json")
	if code != 0 || !strings.Contains(out, `"result": "ok"`) || !strings.Contains(out, `"reduce": "por"`) || !strings.Contains(out, `"states": 6889,`) {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	cx := filepath.Join(t.TempDir(), "cx.jsonl")
	code, out = runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--crashes", "2", "--search", "dfs", "--reduce", "por", "--trace", cx)
	if code != 1 || !strings.Contains(out, "partial-order reduction") || !strings.Contains(out, "violation: deadlock") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	if code, out = runCLI(t, "trace", "check", cx); code != 1 || !strings.Contains(out, "confirmed: deadlock") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

// TestCheckAbstract: --abstract mx checks MUTIN against the ideal mutual
// exclusion object (ok, fewer states than with Maekawa), and the published
// MUTIN's deadlock is found with it and replayed on the real mx (Maekawa's
// messages in the path, no ideal grant), its trace confirmed by trace check.
func TestCheckAbstract(t *testing.T) {
	states := func(out string) int {
		var s struct{ States int }
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%v in\n%s", err, out)
		}
		return s.States
	}
	code, out := runCheckCLI(t, "--alg", "mutin", "--n", "3", "--l", "1", "--abstract", "mx", "--json")
	if code != 0 || !strings.Contains(out, `"result": "ok"`) || !strings.Contains(out, `"abstract": "mx"`) {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	code, concrete := runCheckCLI(t, "--alg", "mutin", "--n", "3", "--l", "1", "--json")
	if code != 0 || states(out) >= states(concrete) {
		t.Fatalf("%d states abstract, %d with Maekawa (exit %d)", states(out), states(concrete), code)
	}
	cx := filepath.Join(t.TempDir(), "cx.jsonl")
	code, out = runCheckCLI(t, "--alg", "mutin-paper", "--n", "4", "--l", "2", "--coterie", "majority", "--abstract", "mx", "--trace", cx)
	if code != 1 || !strings.Contains(out, "violation: deadlock") || !strings.Contains(out, "concrete counterexample") || !strings.Contains(out, "mx.REQUEST") || strings.Contains(out, "ideal mx grants") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	if code, out = runCLI(t, "trace", "check", cx); code != 1 || !strings.Contains(out, "confirmed: deadlock") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

// TestFencingCLI: check --fencing and sim --fencing run ftraymond with
// crashes and its tokens; the simulator's trace carries them and trace
// check verifies it.
func TestFencingCLI(t *testing.T) {
	code, out := runCLI(t, "check", "--alg", "ftraymond", "--n", "3", "--k", "1", "--crashes", "1", "--detector", "P", "--fencing")
	if code != 0 || !strings.Contains(out, "detector P, fencing tokens") || !strings.Contains(out, "result: ok") {
		t.Fatalf("check --fencing: exit %d\n%s", code, out)
	}
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	code, out = runCLI(t, "sim", "--alg", "ftraymond", "--n", "4", "--k", "2", "--crash", "1@20,3@60", "--detector", "T",
		"--E", "10", "--entries", "200", "--seed", "2", "--fencing", "--trace", tr)
	if code != 0 {
		t.Fatalf("sim --fencing: exit %d\n%s", code, out)
	}
	b, err := os.ReadFile(tr)
	if err != nil || !strings.Contains(string(b), `"fence":{"seq":`) || !strings.Contains(string(b), `"fencing":true`) {
		t.Fatalf("sim trace without tokens: %v", err)
	}
	if code, out = runCLI(t, "trace", "check", tr); code != 0 || !strings.HasPrefix(out, "ok:") || !strings.Contains(out, "with tokens, both fencing properties hold (k = 2; docs/fencing.md)") {
		t.Errorf("trace check: exit %d\n%s", code, out)
	}
}

// TestCheckFaultTolerantGlobal: ftgcs's property has the state bounds
// 0..k and an exit guard l, printed on a line of its own; a dropped design
// of its l side breaks the guard, and the counterexample's trace claims
// it; with --fencing the tokens are checked too.
func TestCheckFaultTolerantGlobal(t *testing.T) {
	code, out := runCheckCLI(t, "--alg", "ftgcs", "--n", "3", "--l", "1", "--k", "2", "--crashes", "2", "--detector", "P", "--budget", "1")
	if code != 0 || !strings.HasPrefix(out, "check ftgcs: n=3 l=1 k=2, bounds 0..2, budget 1, up to 2 crashes, detector P") ||
		!strings.Contains(out, "\nproperty: #live InCS <= 2; every exit leaves >= 1 InCS, counting unreported crashes (crash-stop)\nresult: ok\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	code, out = runCheckCLI(t, "--alg", "ftgcs", "--lside", "complement", "--n", "3", "--l", "1", "--k", "2", "--crashes", "1", "--detector", "P", "--trace", tr)
	const detail = "after P1 became OutCS: P1's exit left 0 live processes InCS and 0 unreported crashes InCS, below the lower bound 1"
	if code != 1 || !strings.Contains(out, "violation: bounds: "+detail) || !strings.Contains(out, "path (27 steps):") {
		t.Fatalf("--lside complement: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(tr); err != nil || !strings.Contains(string(b), `"demonstrates":{"kind":"bounds","detail":"`+detail+`"}`) {
		t.Fatalf("the trace does not claim the violation: %v", err)
	}
	// The k side's tokens: the fencing properties and the exit guard
	// together, both reading the processes that crashed InCS.
	code, out = runCheckCLI(t, "--alg", "ftgcs", "--n", "3", "--l", "1", "--k", "2", "--crashes", "2", "--detector", "P", "--budget", "1", "--fencing")
	if code != 0 || !strings.Contains(out, "detector P, fencing tokens") || !strings.Contains(out, "result: ok") {
		t.Fatalf("--fencing: exit %d\n%s", code, out)
	}
}
