package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVizSimAndCheck: critsec viz draws a simulator's trace, and check
// --viz writes a counterexample's page, the same page critsec viz makes
// from the trace check --trace writes (same title given), byte for byte;
// a run that finds nothing leaves no page.
func TestVizSimAndCheck(t *testing.T) {
	dir := t.TempDir()
	tr, page := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "s.html")
	if code, out := runCLI(t, "sim", "--alg", "raymond", "--n", "5", "--k", "2", "--entries", "50", "--trace", tr); code != 0 {
		t.Fatalf("sim: exit %d\n%s", code, out)
	}
	code, out := runCLI(t, "viz", tr)
	if code != 0 || !strings.Contains(out, "-> "+page) {
		t.Fatalf("viz: exit %d\n%s", code, out)
	}
	b, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(b, []byte(`"alg":"raymond","n":5`)) || !bytes.HasSuffix(b, []byte("</html>\n")) {
		t.Fatalf("page: %v, %d bytes", err, len(b))
	}
	// Standard input to standard output.
	code, stdout, _ := runCLIErr(t, string(mustRead(t, tr)), "viz", "-")
	if code != 0 || !strings.Contains(stdout, `"title":"standard input"`) {
		t.Fatalf("viz -: exit %d, %d bytes", code, len(stdout))
	}

	ctr, cpage := filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "c.html")
	code, out = runCLI(t, "check", "--alg", "maekawa-paper", "--n", "4", "--coterie", "grid", "--trace", ctr, "--viz", cpage)
	if code != 1 {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	got := mustRead(t, cpage)
	if !bytes.Contains(got, []byte(`"kind":"deadlock"`)) || !bytes.Contains(got, []byte(`"step":true`)) {
		t.Error("check --viz: the page lacks the deadlock or the step-through")
	}
	again := filepath.Join(dir, "again.html")
	if code, out := runCLI(t, "viz", ctr, "--out", again); code != 0 {
		t.Fatalf("viz: exit %d\n%s", code, out)
	}
	// The titles differ: the file name against "maekawa-paper
	// counterexample: deadlock"; the rest is the same.
	a := bytes.ReplaceAll(mustRead(t, again), []byte("c.jsonl"), []byte("maekawa-paper counterexample: deadlock"))
	if !bytes.Equal(a, got) {
		t.Error("check --viz and viz on check --trace's file give different pages")
	}

	none := filepath.Join(dir, "none.html")
	if code, out := runCLI(t, "check", "--alg", "maekawa", "--n", "3", "--viz", none); code != 0 {
		t.Fatalf("check maekawa: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a run without a counterexample left %s: %v", none, err)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVizServe: the page is served at every path until the context ends.
func TestVizServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- servePage(ctx, ln, []byte("<html>page</html>")) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/any")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "<html>page</html>" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("served %q as %q", body, resp.Header.Get("Content-Type"))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve ended with %v", err)
	}
}
