package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/trace"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const cliHeader = `{"ev":"header","alg":"raymond","n":2,"l":0,"k":1,"seed":1,"initial":[],"lo":0,"hi":1,"runtime":"sim","fifo":true}` + "\n"

func TestTraceCheckExitCodes(t *testing.T) {
	ok := writeFile(t, "ok.jsonl", cliHeader+`{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":1,"ev":"state","node":1,"state":"InCS"}
`)
	if code, out := runCLI(t, "trace", "check", ok); code != 0 || out != "ok: 2 events, max #InCS 1, min #InCS 0 (bounds 0..1), 0 messages unreceived, 0 requests pending\n"+
		"per process: entries 0..1, exits 0..0; never entered: P2; never exited: P1 P2\n" {
		t.Fatalf("exit %d: %q", code, out)
	}
	bad := writeFile(t, "bad.jsonl", cliHeader+`{"t":1,"ev":"recv","node":1,"from":2,"msg":"REPLY"}
`)
	if code, out := runCLI(t, "trace", "check", bad); code != 1 || !strings.Contains(out, "line 2 (t=1, P1 receives REPLY from P2): no message from P2 to P1 is in transit") {
		t.Fatalf("exit %d: %q", code, out)
	}
	malformed := writeFile(t, "m.jsonl", cliHeader+"{not json}\n")
	if code, _ := runCLI(t, "trace", "check", malformed); code != 2 {
		t.Fatalf("malformed: exit %d, want 2", code)
	}
	if code, _ := runCLI(t, "trace", "check", filepath.Join(t.TempDir(), "missing.jsonl")); code != 2 {
		t.Fatalf("missing file: exit %d, want 2", code)
	}
	if code, _ := runCLI(t, "trace", "check"); code != 2 {
		t.Fatalf("no file: exit %d, want 2", code)
	}
}

// TestTraceCheckReadsCheckerTraces: a model-checker counterexample (t =
// step number, runtime "check", messages still in flight) is a well-formed
// trace, and trace check finds the same bounds violation in it.
func TestTraceCheckReadsCheckerTraces(t *testing.T) {
	cx := filepath.Join(t.TempDir(), "cx.jsonl")
	if code, out := runCLI(t, "check", "--alg", "raymond", "--n", "3", "--k", "2", "--budget", "2", "--assert-max", "1", "--trace", cx); code != 1 {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	code, out := runCLI(t, "trace", "check", cx)
	if code != 1 || !strings.Contains(out, "2 processes InCS, outside the bounds 0..1") || !strings.HasPrefix(out, "confirmed: bounds (the trace's claim): line ") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

// TestTraceCheckBadInput: every family of bad input exits 2 with one line
// on standard error, no Go internals, and for a limit the flag that raises
// it.
func TestTraceCheckBadInput(t *testing.T) {
	long := cliHeader + `{"t":1,"ev":"crash","node":1,"pad":"` + strings.Repeat("x", 300) + `"}` + "\n"
	cases := []struct {
		name  string
		stdin string
		args  []string
		msg   string
	}{
		{"huge n", `{"ev":"header","n":2000000000,"l":0,"k":1}`, nil, "n = 2000000000 is more than the limit of 1048576 processes (checking n = 2000000000 needs about 160 GB); raise the limit with --max-n 2000000000"},
		{"n 2^62", `{"ev":"header","n":4611686018427387904}`, nil, "process ids are 32-bit"},
		{"negative n", `{"ev":"header","n":-1}`, nil, "n = -1: need n >= 1"},
		{"n over --max-n", cliHeader, []string{"--max-n", "1"}, "n = 2 is more than the limit of 1 processes"},
		{"long line", long, []string{"--max-line", "200"}, "line 2: the line is longer than 200 bytes, the longest a trace line may be; raise the limit with --max-line BYTES"},
		{"wrong type", cliHeader + `{"t":"1","ev":"crash","node":1}`, nil, `line 2: field "t": want a finite number, got a string`},
		{"unknown event", cliHeader + `{"t":1,"ev":"jump","node":1}`, nil, `got "jump"`},
		{"unknown verdict kind", cliHeader + `{"t":1,"ev":"verdict","node":0,"kind":"hang"}`, nil, `line 2: field "kind": want "bounds", "deadlock", "convention", "error", "fencing", "starvation" or "livelock", got "hang"`},
		{"starvation without who", cliHeader + `{"t":1,"ev":"verdict","node":0,"kind":"starvation","since":0,"bound":5}`, nil, `line 2: a verdict of kind starvation without "who": want a process id (an integer)`},
		{"truncated", cliHeader + `{"t":1,"ev":"cra`, nil, "a truncated file?"},
		{"empty", "", nil, "empty file"},
		{"bad --max-n", cliHeader, []string{"--max-n", "0"}, "--max-n 0 is out of range"},
		{"bad --max-line", cliHeader, []string{"--max-line", "-3"}, "--max-line -3 is out of range"},
		{"missing file", "", []string{"/nonexistent/x.jsonl"}, "no such file or directory"},
		{"a directory", "", []string{t.TempDir()}, "is a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"trace", "check"}, c.args...)
			if len(c.args) == 0 || strings.HasPrefix(c.args[0], "--") {
				args = append(args, "-")
			}
			code, out, errOut := runCLIErr(t, c.stdin, args...)
			if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.msg) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want 2 and one line containing %q", code, out, errOut, c.msg)
			}
			for _, s := range []string{"json:", "Go struct", "strconv", "bufio", "panic", "goroutine"} {
				if strings.Contains(errOut, s) {
					t.Errorf("stderr shows %q: %s", s, errOut)
				}
			}
		})
	}
}

// TestTraceCheckStdin: "-" reads the trace from standard input.
func TestTraceCheckStdin(t *testing.T) {
	code, out, _ := runCLIErr(t, cliHeader+`{"t":1,"ev":"request","node":1,"op":"entry"}`, "trace", "check", "-")
	if code != 0 || !strings.HasPrefix(out, "ok: 1 event,") {
		t.Fatalf("exit %d: %q", code, out)
	}
	code, out, _ = runCLIErr(t, cliHeader+`{"t":1,"ev":"recv","node":1,"from":2,"msg":"A"}`, "trace", "check", "-")
	if code != 1 || !strings.HasPrefix(out, "violation: standard input line 2") {
		t.Fatalf("exit %d: %q", code, out)
	}
	// Long lists of processes are cut to ten and a count.
	code, out, _ = runCLIErr(t, strings.Replace(cliHeader, `"n":2`, `"n":20`, 1), "trace", "check", "-")
	if code != 0 || !strings.Contains(out, "never entered: P1 P2 P3 P4 P5 P6 P7 P8 P9 P10 ... (20 processes); never exited:") {
		t.Fatalf("exit %d: %q", code, out)
	}
}

// TestUnknownSubcommand: an unknown subcommand of a command group is bad
// input (exit 2, one line), not the group's help with exit 0.
func TestUnknownSubcommand(t *testing.T) {
	for _, group := range []string{"trace", "experiment"} {
		code, _, errOut := runCLIErr(t, "", group, "nosuch")
		if code != 2 || errOut != "critsec: unknown command \"nosuch\" for \"critsec "+group+"\"\n" {
			t.Errorf("%s nosuch: exit %d, stderr %q", group, code, errOut)
		}
	}
	if code, out, _ := runCLIErr(t, "", "trace"); code != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("trace: exit %d, %q: want its help", code, out)
	}
}

// TestTraceCheckConfirmsCheckerVerdicts: a counterexample written by check
// --trace says what it demonstrates, and trace check confirms it: the
// published Maekawa's global deadlock on grid(4) (exit 1, "confirmed"); a
// deadlock under a budget that only the checker's search decides is said
// to be unconfirmable (exit 2), not ok.
func TestTraceCheckConfirmsCheckerVerdicts(t *testing.T) {
	if trace.KindBounds != check.KindBounds || trace.KindDeadlock != check.KindDeadlock || trace.KindConvention != check.KindConvention || trace.KindError != check.KindError {
		t.Fatal("trace.Kind* and check.Kind* differ")
	}
	cx := filepath.Join(t.TempDir(), "dl.jsonl")
	if code, out := runCLI(t, "check", "--alg", "maekawa-paper", "--n", "4", "--coterie", "grid", "--trace", cx); code != 1 || !strings.Contains(out, "violation: deadlock") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	code, out := runCLI(t, "trace", "check", cx)
	if code != 1 || !strings.HasPrefix(out, "confirmed: deadlock (the trace's claim): at the end no message is in transit to a live process and every live process waits in a request (P1 entry, P2 entry, P3 entry, P4 entry)\n") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
	budget := writeFile(t, "budget.jsonl", strings.Replace(cliHeader, `"fifo":true`, `"fifo":true,"demonstrates":{"kind":"deadlock"}`, 1)+
		`{"t":1,"ev":"request","node":1,"op":"entry"}`+"\n")
	code, out, errOut := runCLIErr(t, "", "trace", "check", budget)
	if code != 2 || !strings.HasPrefix(out, "cannot confirm: deadlock (the trace's claim): at the end P1 entry is waiting but P2 could still call") ||
		!strings.Contains(out, "\nreplayed: 1 event,") || !strings.HasSuffix(errOut, "cannot confirm: the deadlock the trace claims\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestSimTraceClaimsItsVerdict: the simulator writes its header before the
// run, so a run that finds a violation ends its trace with a verdict event,
// and trace check confirms it instead of answering ok. The published
// Maekawa deadlocks on grid(4) with this seed.
func TestSimTraceClaimsItsVerdict(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.jsonl")
	if code, out := runCLI(t, "sim", "--alg", "maekawa-paper", "--n", "4", "--coterie", "grid", "--entries", "5", "--lambda", "10", "--E", "0.5", "--tt-dist", "exp", "--seed", "51", "--trace", p); code != 1 || !strings.Contains(out, "violation: deadlock") {
		t.Fatalf("sim: exit %d\n%s", code, out)
	}
	code, out := runCLI(t, "trace", "check", p)
	if code != 1 || !strings.HasPrefix(out, "confirmed: deadlock (the trace's claim)") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}

// TestSimTraceClaimsStarvationAndLivelock: a starved run's trace and a
// livelocked run's end with their verdicts, which trace check confirms
// (exit 1); with an entry of the starved process added, or a state change
// after the livelock's last one, it refutes them (exit 2) and says why.
func TestSimTraceClaimsStarvationAndLivelock(t *testing.T) {
	for _, c := range []struct {
		name, kind, confirmed, tamper, refuted string
		sim                                    []string
	}{
		{"starvation", "starvation", "P7's entry request, made at t=97.71181640629362, is still pending at the end of the trace (t=300)",
			`{"t":299.9,"ev":"state","node":7,"state":"InCS"}`, "P7 has no request pending at the end of the trace",
			[]string{"sim", "--alg", "forest", "--n", "15", "--k", "5", "--lambda", "1", "--crash", "2@100", "--detector", "T", "--detect-delay", "5", "--max-time", "300", "--drain=false"}},
		{"livelock", "livelock", "no state change from t=98.0158604289664 to the end of the trace at t=350",
			`{"t":349.5,"ev":"state","node":11,"state":"InCS"}`, "P11 changed state at t=349.5, after the claimed last state change at t=98.0158604289664",
			[]string{"sim", "--alg", "lkcs", "--topology", "complete:15", "--l", "1", "--k", "4", "--crash", "3@100", "--max-time", "150"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if code, out := runCLI(t, append(c.sim, "--trace", p)...); code != 1 || !strings.Contains(out, "violation: "+c.kind) {
				t.Fatalf("sim: exit %d\n%s", code, out)
			}
			code, out := runCLI(t, "trace", "check", p)
			if code != 1 || !strings.HasPrefix(out, "confirmed: "+c.kind+" (the trace's claim): "+c.confirmed) {
				t.Fatalf("trace check: exit %d\n%s", code, out)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s := strings.TrimSuffix(string(b), "\n")
			i := strings.LastIndexByte(s, '\n')
			tampered := writeFile(t, "tampered.jsonl", s[:i+1]+c.tamper+s[i:]+"\n")
			code, out, errOut := runCLIErr(t, "", "trace", "check", tampered)
			if code != 2 || !strings.HasPrefix(out, "not confirmed: "+c.kind+" (the trace's claim): "+c.refuted) ||
				!strings.HasSuffix(errOut, "not confirmed: the "+c.kind+" the trace claims\n") {
				t.Fatalf("tampered: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}
