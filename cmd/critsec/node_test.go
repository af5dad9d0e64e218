package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeCheck: critsec node --check reads a configuration and the files
// critsec certs wrote, and prints the problem and the fingerprint; a
// missing key file, a bad id, a negative --compact-every and compaction
// asked for with --trace are bad input.
func TestNodeCheck(t *testing.T) {
	dir := t.TempDir()
	if code, out := runCLI(t, "certs", "--out", filepath.Join(dir, "tls"), "--n", "3"); code != 0 {
		t.Fatal(out)
	}
	cfg := filepath.Join(dir, "cluster.yaml")
	text := "alg: kmutex\nn: 3\nk: 2\nmembers:\n  1: 127.0.0.1:7101\n  2: 127.0.0.1:7102\n  3: 127.0.0.1:7103\ndata: data\ntls:\n  ca: tls/ca.crt\n  cert: tls/node-{id}.crt\n  key: tls/node-{id}.key\n"
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "node", "--config", cfg, "--id", "2", "--check")
	if code != 0 || !strings.HasPrefix(out, "ok: P2 of kmutex, n = 3, at 127.0.0.1:7102\n") || !strings.Contains(out, "  members ") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	os.Remove(filepath.Join(dir, "tls", "node-3.key"))
	for _, args := range [][]string{
		{"node", "--config", cfg, "--id", "3", "--check"},
		{"node", "--config", cfg, "--id", "4"},
		{"node", "--config", cfg, "--id", "2", "--compact-every", "-1"},
		{"node", "--config", cfg, "--id", "2", "--compact-every", "10", "--trace", filepath.Join(dir, "t.jsonl")},
	} {
		if code, out := runCLI(t, args...); code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("%v: exit %d: %s", args, code, out)
		}
	}
}
