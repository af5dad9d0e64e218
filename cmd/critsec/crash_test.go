package main

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/sim"
)

// TestCrashSummary runs docs/fault-tolerance.md's crash scenario at a smaller scale:
// ftraymond keeps entering after every crash, and plain Raymond stalls
// once k processes have crashed, which the summary says plainly.
func TestCrashSummary(t *testing.T) {
	args := []string{"sim", "--n", "8", "--k", "3", "--crash", "2@50,4@100,6@150,8@200", "--entries", "1500", "--seed", "3"}
	code, out := runCLI(t, append(args, "--alg", "ftraymond")...)
	if code != 0 || !strings.Contains(out, "crashes                4 of 4 happened (P2@50, P4@100, P6@150, P8@200); detector P, delay 1") || strings.Contains(out, "stalled") {
		t.Fatalf("ftraymond: exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "entries after the last 0\n") {
		t.Errorf("ftraymond stopped entering after the last crash:\n%s", out)
	}
	code, out = runCLI(t, append(args, "--alg", "raymond")...)
	if code != 1 || !strings.Contains(out, "stalled: ") || !strings.Contains(out, "live processes wait forever after the ") {
		t.Fatalf("raymond: exit %d, want 1 and a stall:\n%s", code, out)
	}
}

// TestCheckCrashes: the checker's fault flags reach the checker.
func TestCheckCrashes(t *testing.T) {
	code, out := runCLI(t, "check", "--alg", "raymond", "--n", "3", "--k", "2", "--crashes", "2")
	if code != 1 || !strings.Contains(out, "up to 2 crashes, detector P") || !strings.Contains(out, "violation: deadlock") {
		t.Fatalf("raymond: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "check", "--alg", "ftraymond", "--n", "3", "--k", "2", "--crashes", "1", "--detector", "T")
	if code != 0 || !strings.Contains(out, "result: ok") {
		t.Fatalf("ftraymond: exit %d:\n%s", code, out)
	}
}

func TestParseCrashes(t *testing.T) {
	got, err := parseCrashes("7@80,3@50,2@50", 10, 1)
	want := []sim.Crash{{At: 50, Node: 2}, {At: 50, Node: 3}, {At: 80, Node: 7}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("crash %d: %v, want %v", i, got[i], want[i])
		}
	}
	a, err := parseCrashes("random:5:10:20", 8, 4)
	b, _ := parseCrashes("random:5:10:20", 8, 4)
	if err != nil || len(a) != 5 {
		t.Fatalf("random: %v, %v", a, err)
	}
	seen := map[cs.ID]bool{}
	for i, c := range a {
		if c != b[i] || c.At < 10 || c.At > 20 || seen[c.Node] || c.Node < 1 || c.Node > 8 || (i > 0 && c.At < a[i-1].At) {
			t.Errorf("random crash %d: %v (other draw %v)", i, c, b[i])
		}
		seen[c.Node] = true
	}
}

// FuzzParseCrashes: any input is refused with an error or gives distinct
// processes in 1..n at times in 0..sim.MaxTime, in time order.
func FuzzParseCrashes(f *testing.F) {
	for _, s := range []string{"3@50,7@80", "random:3:1:9", "1@0", "2@1e12", "random:1:0:0", "@", "3@", "random::", ",", "3@5,3@6"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cr, err := parseCrashes(s, 10, 1)
		if err != nil {
			return
		}
		seen := map[cs.ID]bool{}
		for i, c := range cr {
			if c.Node < 1 || c.Node > 10 || seen[c.Node] || !(c.At >= 0) || c.At > sim.MaxTime || (i > 0 && c.At < cr[i-1].At) {
				t.Fatalf("%q: crash %d = %v", s, i, c)
			}
			seen[c.Node] = true
		}
	})
}
