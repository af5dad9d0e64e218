package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runCLI runs critsec with args and returns its exit status and what it
// wrote to standard output followed by standard error. Afterwards every
// flag of every command is back at its default, as in a fresh process
// (cobra keeps flag values between Execute calls, --help included).
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errOut := runCLIErr(t, "", args...)
	return code, out + errOut
}

// runCLIErr runs critsec with args and standard input in, and returns its
// exit status, standard output and standard error apart.
func runCLIErr(t *testing.T, in string, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	rootCmd.SetOut(&o)
	rootCmd.SetErr(&e)
	rootCmd.SetIn(strings.NewReader(in))
	defer rootCmd.SetOut(nil)
	defer rootCmd.SetErr(nil)
	defer rootCmd.SetIn(nil)
	defer resetFlags(rootCmd)
	code = run(args)
	return code, o.String(), e.String()
}

func resetFlags(c *cobra.Command) {
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		_ = fl.Value.Set(fl.DefValue)
		fl.Changed = false
	})
	for _, sub := range c.Commands() {
		resetFlags(sub)
	}
}

// TestSimCheckedAndReproducible: sim and trace check both
// report no violation, and two runs with the same seed write identical
// traces.
func TestSimCheckedAndReproducible(t *testing.T) {
	dir := t.TempDir()
	t1, t2 := filepath.Join(dir, "t1.jsonl"), filepath.Join(dir, "t2.jsonl")
	args := []string{"sim", "--alg", "raymond", "--n", "10", "--k", "3", "--lambda", "0.1", "--entries", "3000", "--seed", "1", "--trace"}
	code, out := runCLI(t, append(args, t1)...)
	if code != 0 || !strings.Contains(out, "result: ok") || !strings.Contains(out, "#InCS over time") {
		t.Fatalf("sim: exit %d\n%s", code, out)
	}
	code, out2 := runCLI(t, append(args, t2)...)
	if code != 0 || out2 != strings.Replace(out, t1, t2, 1) {
		t.Fatalf("second sim run: exit %d, output differs:\n%s", code, out2)
	}
	b1, err := os.ReadFile(t1)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(t2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatal("two runs with seed 1 wrote different traces")
	}
	code, out = runCLI(t, "trace", "check", t1)
	if code != 0 || !strings.HasPrefix(out, "ok: ") || !strings.Contains(out, "max #InCS 3") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

func TestSimJSON(t *testing.T) {
	code, out := runCLI(t, "sim", "--alg", "raymond", "--n", "5", "--k", "2", "--entries", "200", "--json", "--cs-dist", "const", "--tt-dist", "exp", "--Ts", "0.1", "--Tr", "0.1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	cfg := s["config"].(map[string]any)
	if s["result"] != "ok" || cfg["cs_dist"] != "const" || cfg["tt_dist"] != "exp" || cfg["n"] != 5.0 || s["stop"] != "entries" {
		t.Fatalf("summary %v", s)
	}
	mpe := s["messages_per_entry"].(float64)
	if mpe < 2*5-2-1 || mpe > 2*(5-1) {
		t.Fatalf("messages per entry %v outside [7, 8]", mpe)
	}
	// Keys come in a stable order: result first, violation absent.
	if !strings.HasPrefix(out, "{\n  \"result\": \"ok\",\n  \"config\": {") || strings.Contains(out, "violation") {
		t.Fatalf("key order:\n%s", out)
	}
}

func TestSimViolationExit1(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "v.jsonl")
	code, out := runCLI(t, "sim", "--alg", "raymond", "--k", "3", "--assert-max", "2", "--trace", tr)
	if code != 1 || !strings.Contains(out, "result: violation") || !strings.Contains(out, "violation: bounds at t=") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// The trace ends at the violation, which trace check finds too.
	code, out = runCLI(t, "trace", "check", tr)
	if code != 1 || !strings.Contains(out, "3 processes InCS, outside the bounds 0..2") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

// TestSimLivelockEnds: LKCS on complete:15 keeps a message circulating
// after P3's crash; the drain is cut and the run ends with a livelock
// (exit 1); with --drain=false and a starvation bound of 40, P11's
// request, pending since t = 1.2 while others entered until t = 98, is a
// starvation.
func TestSimLivelockEnds(t *testing.T) {
	args := []string{"sim", "--alg", "lkcs", "--topology", "complete:15", "--l", "1", "--k", "4", "--crash", "3@100", "--max-time", "150"}
	code, out := runCLI(t, args...)
	if code != 1 || !strings.Contains(out, "violation: livelock at t=") || !strings.Contains(out, "drain cut: the drain reached its time limit") ||
		!strings.Contains(out, "stalled: 14 live processes wait while messages circulate with no state change") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out = runCLI(t, append(args, "--drain=false", "--starve-after", "40")...)
	if code != 1 || !strings.Contains(out, "violation: starvation at t=150, end of the run: P11's entry request, made at t=1.20185, was still pending 148.798 time units later") {
		t.Fatalf("--drain=false: exit %d\n%s", code, out)
	}
}

// TestSimStarvation: forest loses P7's request to P2's crash while the
// others go on: a starvation, exit 1, naming the request, how long it
// waited and what the others did meanwhile.
func TestSimStarvation(t *testing.T) {
	code, out := runCLI(t, "sim", "--alg", "forest", "--n", "15", "--k", "5", "--lambda", "1", "--crash", "2@100", "--detector", "T", "--detect-delay", "5", "--max-time", "600", "--drain=false")
	if code != 1 || !strings.Contains(out, "violation: starvation at t=600, end of the run: P7's entry request, made at t=97.7118, was still pending 502.288 time units later") ||
		!strings.Contains(out, "while the other processes completed 1005 CS entries") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestSimBadInput(t *testing.T) {
	bad := [][]string{
		{"--lambda", "0"},
		{"--lambda", "-1"},
		{"--lambda", "NaN"},
		{"--E", "-1"},
		{"--E", "NaN"},
		{"--Ts", "-0.1"},
		{"--Tr", "Inf"},
		{"--Tt", "-1"},
		{"--max-time", "-3"},
		{"--entries", "-1"},
		{"--entries", "0"},
		{"--cs-dist", "normal"},
		{"--tt-dist", "uniform"},
		{"--assert-max", "11"},
		{"--assert-min", "3", "--assert-max", "2"},
		{"--alg", "nope"},
		{"--n", "0"},
		{"--k", "11"},
		{"--alg", "raymond", "--l", "1"}, // raymond has no lower bound
		{"--alg", "kmutex", "--l", "1"},
		{"--alg", "mutin", "--k", "5"}, // MUTIN's k is n
		{"--alg", "mutin", "--l", "10"},
		{"--alg", "maekawa", "--k", "2"}, // Maekawa's k is 1
		{"--l", "7", "--k", "7"},         // l = k
		{"--l", "-1"},
		{"--coterie", "nope"},
		{"--initial", "1,2"},             // below l = 3
		{"--initial", "1,2,3,4,5,6,7,8"}, // above k = 7
		{"--initial", "1,2,11"},          // unknown id
		{"--initial", "1,1,2"},           // repeated id
		{"--seed", "-1"},
		{"--trace", "/nonexistent-dir/t.jsonl"},
		{"extra-arg"},
		{"--initial", ""},                         // empty: say none
		{"--initial", "1,,2"},                     // an empty item
		{"--initial", "1,x"},                      // not an id
		{"--initial", "0"},                        // ids start at 1
		{"--initial", "99999999999"},              // not an int32
		{"--alg", "raymond", "--coterie", "grid"}, // raymond uses none
		{"--alg", "raymond", "--mx", "ra"},        // an option of MUTIN's
		{"--mx", "nope"},
		{"--kmex", "nope"},
		{"--alg", "mutin", "--kmex", "raymond"}, // gcs only
		{"--problem", "/nonexistent-file.json"},
		{"--n", "100001"},
		{"--fifo=false"}, // constant transit keeps links in order
		{"--alg", "raymond", "--n", "100000", "--k", "3", "--max-memory", "16"}, // 84 GB of machines
		{"--max-memory", "-1"},
		{"--drain-time", "-1"},
		{"--drain-events", "-1"},
		{"--starve-after", "NaN"},
	}
	for _, args := range bad {
		code, out := runCLI(t, append([]string{"sim"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.HasPrefix(out, "critsec: ") {
			t.Errorf("sim %v: exit %d, want 2 and one line\n%s", args, code, out)
		}
	}
}

// TestSimProblemFile: a problem file states the problem; flags given as
// well override its fields; algorithm options come from it or from their
// flags.
func TestSimProblemFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(p, []byte(`{"alg":"gcs","n":6,"l":1,"k":4,"coterie":"majority","options":{"kmex":"raymond"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "sim", "--problem", p, "--entries", "200")
	if code != 0 || !strings.HasPrefix(out, "sim gcs: n=6 l=1 k=4, bounds 1..4") || !strings.Contains(out, "result: ok") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out = runCLI(t, "sim", "--problem", p, "--k", "3", "--mx", "ra", "--entries", "200", "--json")
	if code != 0 || !strings.Contains(out, `"k": 3`) || !strings.Contains(out, `"coterie": "majority"`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if err := os.WriteFile(p, []byte(`{"alg":"gcs","n":6,"colony":"majority"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := runCLI(t, "sim", "--problem", p); code != 2 || !strings.Contains(out, `unknown field "colony"`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestSimHelpNamesUnits(t *testing.T) {
	code, out := runCLI(t, "sim", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--lambda", "--E", "--cs-dist", "--Ts", "--Tr", "--Tt", "--tt-dist", "--entries", "--max-time", "--seed", "--fifo", "--drain", "--trace", "--json", "time units", "(default 3000)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// TestSimMainJob: the README's main command, `critsec sim` with no flags,
// runs (l,k)-GCS on the grid coterie and stays within its bounds.
func TestSimMainJob(t *testing.T) {
	code, out := runCLI(t, "sim", "--entries", "300")
	if code != 0 || !strings.HasPrefix(out, "sim gcs: n=10 l=3 k=7, bounds 3..7") || !strings.Contains(out, "result: ok") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// After the drain, the exits still pending are the ones the lower
	// bound holds (no new entry comes), and the summary says so.
	if !strings.Contains(out, "exits held by the lower bound l") {
		t.Errorf("the summary does not explain the pending exits:\n%s", out)
	}
	// Without --l and --k the bounds follow n: l = n/3, k = n - l.
	for n, want := range map[string]string{"3": "n=3 l=1 k=2", "16": "n=16 l=5 k=11", "1": "n=1 l=0 k=1"} {
		code, out := runCLI(t, "sim", "--n", n, "--entries", "50")
		if code != 0 || !strings.HasPrefix(out, "sim gcs: "+want+",") {
			t.Errorf("sim --n %s: exit %d\n%s", n, code, out)
		}
	}
}

// TestSimGCSReachesBothBounds simulates (3,8)-GCS on grid(16),
// checked again from its trace, every process enters and exits; under a
// load of long critical sections (mean demand 8 = k) #InCS reaches both
// bounds.
func TestSimGCSReachesBothBounds(t *testing.T) {
	entries := "5000"
	if testing.Short() {
		entries = "800"
	}
	for _, load := range [][]string{nil, {"--E", "50", "--lambda", "0.02"}} {
		tr := filepath.Join(t.TempDir(), "g.jsonl")
		args := append([]string{"sim", "--alg", "gcs", "--n", "16", "--l", "3", "--k", "8", "--coterie", "grid",
			"--entries", entries, "--seed", "3", "--trace", tr}, load...)
		code, out := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "result: ok") {
			t.Fatalf("sim %v: exit %d\n%s", load, code, out)
		}
		code, out = runCLI(t, "trace", "check", tr)
		if code != 0 || !strings.Contains(out, "(bounds 3..8)") || !strings.Contains(out, "never entered: none; never exited: none") {
			t.Fatalf("trace check %v: exit %d\n%s", load, code, out)
		}
		if load != nil && !strings.Contains(out, "max #InCS 8, min #InCS 3") {
			t.Fatalf("trace check %v: #InCS did not reach both bounds\n%s", load, out)
		}
	}
}

// TestIOErrorStatus: an I/O error is neither a violation (1) nor bad input
// (2): writing a trace to a full device exits 3 with one line on standard
// error, after the summary.
func TestIOErrorStatus(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	code, out, errOut := runCLIErr(t, "", "sim", "--entries", "3000", "--trace", "/dev/full")
	if code != 3 || !strings.Contains(out, "result: ok") || !strings.Contains(errOut, "no space left on device") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestVersion: `critsec version` and `critsec --version` print the same
// line: the module version and what is known of the commit.
func TestVersion(t *testing.T) {
	c1, v1 := runCLI(t, "version")
	c2, v2 := runCLI(t, "--version")
	if c1 != 0 || c2 != 0 || v1 != v2 || !strings.HasPrefix(v1, "critsec ") || !strings.Contains(v1, "commit") {
		t.Fatalf("version: %d %q; --version: %d %q", c1, v1, c2, v2)
	}
}

// TestTraceErrorsLoseNoVerdict: the report comes before the trace is
// written, so a trace that cannot be written loses no verdict; a
// violation's status wins over the I/O error's; check refuses a trace path
// it cannot create before it runs, and leaves no trace when it finds no
// counterexample.
func TestTraceErrorsLoseNoVerdict(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	code, out := runCLI(t, "sim", "--assert-max", "3", "--entries", "300", "--trace", "/dev/full")
	if code != 1 || !strings.Contains(out, "result: violation") || !strings.Contains(out, "critsec: --trace /dev/full: ") {
		t.Fatalf("sim: exit %d\n%s", code, out)
	}
	code, out = runCLI(t, "check", "--alg", "raymond", "--n", "3", "--k", "2", "--assert-max", "1", "--trace", "/dev/full")
	if code != 1 || !strings.Contains(out, "result: violation") || !strings.Contains(out, "critsec: --trace /dev/full: ") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	if code, out = runCLI(t, "check", "--trace", "/nonexistent-dir/cx.jsonl"); code != 2 || strings.Contains(out, "result:") {
		t.Fatalf("check, unwritable path: exit %d\n%s", code, out)
	}
	p := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(p, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, "check", "--alg", "raymond", "--n", "3", "--k", "2", "--trace", p)
	if _, err := os.Stat(p); code != 0 || !os.IsNotExist(err) || !strings.Contains(out, "trace: none written") {
		t.Fatalf("check, no counterexample: exit %d, stat %v\n%s", code, err, out)
	}
}

// TestCheckedWriter: output lost on the way out is not success.
func TestCheckedWriter(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full on this system")
	}
	defer f.Close()
	w := &checkedWriter{w: f}
	fmt.Fprintf(w, "a line\n")
	fmt.Fprintf(w, "another\n")
	if w.err == nil {
		t.Fatal("a write to /dev/full succeeded")
	}
}

// TestSimProgress: --progress reports on standard error (the first report
// at once, then at most one a second), and leaves standard output alone.
func TestSimProgress(t *testing.T) {
	code, out, errOut := runCLIErr(t, "", "sim", "--entries", "1000", "--progress")
	if code != 0 || !strings.HasPrefix(errOut, "progress: ") || !strings.Contains(errOut, " entries of 1000, ") || strings.Contains(out, "progress:") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
