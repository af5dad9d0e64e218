package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalRandomGraphServed runs lmutex from the command line: local
// 2-mutual exclusion on a random graph of 60 processes, every request
// served.
func TestLocalRandomGraphServed(t *testing.T) {
	code, out := runCLI(t, "sim", "--alg", "lmutex", "--topology", "random:60:0.1:7", "--k", "2", "--entries", "5000", "--seed", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var s simSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Result != "ok" || s.Entries < 5000 || s.Pending != 0 || s.InFlight != 0 || s.Config.Topology != "random:60:0.1:7" || s.Config.LocalBounds != "l_i in 0..0, k_i in 2..2" {
		t.Errorf("summary %+v", s)
	}
}

func TestLocalCheck(t *testing.T) {
	code, out := runCLI(t, "check", "--alg", "lmutex", "--topology", "path:3", "--k", "1")
	if code != 0 || !strings.Contains(out, "check lmutex: n=3 on path:3, bounds l_i..k_i of N_i+P_i: P1 0..1, P2 0..1, P3 0..1, budget 2") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "cx.jsonl")
	code, out = runCLI(t, "check", "--alg", "lmutin-paper", "--topology", "path:2", "--l", "1", "--trace", tr)
	if code != 1 || !strings.Contains(out, "undefined step") {
		t.Fatalf("lmutin-paper: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(tr); err != nil {
		t.Error(err)
	}
}

// TestLocalBadInput: bad topologies and bounds are refused with exit
// status 2 and one line naming the process or the file's line.
func TestLocalBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	loop := write("loop.edges", "1 2\n2 3\n3 3\n")
	split := write("split.edges", "1 2\n3 4\n")
	unknown := write("unknown.edges", "n 3\n1 2\n2 5\n")
	empty := write("empty.edges", "# nothing\n")
	bounds := write("b.bounds", "1: 0 1\n2: 0 1\n2: 0 2\n")
	wide := write("w.bounds", "1: 0 1\n2: 0 3\n3: 0 2\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--alg", "lmutex", "--topology", loop}, "line 3: 3 3 is a self-loop"},
		{[]string{"--alg", "lmutex", "--topology", split}, "disconnected (2 components): P3 is not reachable from P1"},
		{[]string{"--alg", "lmutex", "--topology", unknown}, "line 3: unknown process id 5"},
		{[]string{"--alg", "lmutex", "--topology", empty}, "no links"},
		{[]string{"--alg", "lmutex", "--topology", "ring:2"}, "need N >= 3"},
		{[]string{"--alg", "lmutex", "--topology", "torus:2x4"}, "need R, C >= 3"},
		{[]string{"--alg", "lmutex", "--topology", "random:10:2:1"}, "not a probability"},
		{[]string{"--alg", "lmutex", "--topology", "star:5", "--k", "3"}, "P2 (degree 1): k = 3 is out of range: need l < k <= |N_2|+1 = 2"},
		{[]string{"--alg", "lmutin", "--topology", "star:5", "--l", "2"}, "P2 (degree 1): l = 2 is out of range"},
		{[]string{"--alg", "lmutin", "--topology", "path:3", "--bounds", bounds}, "line 3: P2's bounds are given twice (first on line 2)"},
		{[]string{"--alg", "lmutin", "--topology", "path:3", "--bounds", wide}, "line 1: P1 (degree 1): k = 1: lmutin always allows"},
		{[]string{"--alg", "lmutex", "--topology", "path:3", "--initial", "1,2"}, "initial: N[1]={P1,P2}: 2 InCS, outside the bounds 0..1"},
		{[]string{"--alg", "lmutex", "--topology", "path:3", "--n", "4"}, "n = 4, but topology path:3 has 3 processes"},
		{[]string{"--alg", "gcs", "--topology", "path:3"}, "gcs solves a global problem"},
		{[]string{"--alg", "lmutex"}, "lmutex solves a local problem"},
	} {
		for _, cmd := range []string{"sim", "check"} {
			code, out := runCLI(t, append([]string{cmd}, c.args...)...)
			if code != 2 || !strings.Contains(out, c.want) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Errorf("%s %v: exit %d, want 2 and one line containing %q\n%s", cmd, c.args, code, c.want, out)
			}
		}
	}
}
