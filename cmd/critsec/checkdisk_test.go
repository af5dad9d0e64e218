package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDiskDir: --disk-dir gives the depth-first run's report (its
// fingerprints merged into a file every 1536 states with --expected-states
// 1000) and leaves the directory empty; it is refused, with one line and
// exit status 2, without --search dfs or when it is not a writable
// directory.
func TestCheckDiskDir(t *testing.T) {
	dir := t.TempDir()
	withoutTime := func(s string) string { return s[:strings.Index(s, "seconds: ")] }
	_, mem := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs")
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs", "--disk-dir", dir, "--expected-states", "1000")
	if code != 0 || withoutTime(out) != withoutTime(mem) {
		t.Fatalf("exit %d, output:\n%s\nin memory:\n%s", code, out, mem)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("%d entries left in %s (%v)", len(ents), dir, err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--disk-dir", dir},
		{"--search", "dfs", "--disk-dir", file},
		{"--search", "dfs", "--disk-dir", filepath.Join(dir, "missing")},
	} {
		code, out := runCheckCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "--disk-dir") {
			t.Errorf("check %v: exit %d, want 2 and one line naming --disk-dir\n%s", args, code, out)
		}
	}
}
