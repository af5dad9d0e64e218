package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code != 1 || !strings.Contains(out, "2 processes InCS, outside the bounds 0..1") {
		t.Fatalf("trace check: exit %d\n%s", code, out)
	}
}
