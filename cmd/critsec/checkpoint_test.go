package main

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestCheckCheckpoint: a run stopped by --max-states saves its progress in
// --checkpoint; the same command without the limit continues it, says so,
// and reports what the uninterrupted run reports (states, transitions,
// depth, budget stops, verdict), leaving the directory empty. A checkpoint
// of another algorithm is refused with exit status 2 (mutin and
// mutin-paper start in equal states), and so are --checkpoint without
// --disk-dir and a bad interval.
func TestCheckCheckpoint(t *testing.T) {
	base := []string{"--alg", "mutin", "--n", "3", "--l", "2", "--coterie", "majority", "--search", "dfs", "--reduce", "por"}
	counts := func(s string) string { // the states line, up to the time
		i := strings.Index(s, "states: ")
		return s[i : i+strings.Index(s[i:], "seconds: ")]
	}
	_, want := runCheckCLI(t, base...)
	ck, disk := t.TempDir(), t.TempDir()
	with := append(base[:len(base):len(base)], "--disk-dir", disk, "--checkpoint", ck)
	code, out := runCheckCLI(t, append(with, "--max-states", "2000")...)
	if code != 1 || !strings.Contains(out, "result: incomplete") || !strings.Contains(out, "progress saved in "+ck+": the same command continues it") {
		t.Fatalf("first part: exit %d\n%s", code, out)
	}
	code, out = runCheckCLI(t, append(append(base[:len(base):len(base)], "--alg", "mutin-paper"), "--disk-dir", disk, "--checkpoint", ck)...)
	if code != 2 || !strings.Contains(out, "checkpoint of another check") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("mutin-paper on mutin's checkpoint: exit %d, want 2 and one line\n%s", code, out)
	}
	code, out = runCheckCLI(t, with...)
	if code != 0 || counts(out) != counts(want) || !strings.Contains(out, "resumed: from the checkpoint in "+ck+" of 1 earlier run(s), 2000 states") {
		t.Fatalf("continued: exit %d\n%s\nuninterrupted:\n%s", code, out, want)
	}
	if ents, err := os.ReadDir(ck); err != nil || len(ents) != 1 || ents[0].Name() != "lock" {
		t.Fatalf("%d entries left in %s, want only the lock file (%v)", len(ents), ck, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(base[:len(base):len(base)], "--checkpoint", ck), "add --disk-dir"},
		{append(with[:len(with):len(with)], "--checkpoint-every", "500ms"), "--checkpoint-every 500ms is out of range"},
		{append(base[:len(base):len(base)], "--checkpoint-every", "1m"), "add --checkpoint DIR"},
		{append(base[:len(base):len(base)], "--disk-dir", disk, "--checkpoint", ck+"/missing"), "--checkpoint " + ck + "/missing is not a writable directory"},
	} {
		code, out := runCheckCLI(t, c.args...)
		if code != 2 || !strings.Contains(out, c.want) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("check %v: exit %d, want 2 and one line saying %q\n%s", c.args, code, c.want, out)
		}
	}
}

// TestCheckPosition: a depth-first run stopped by a limit reports where its
// path stood in the search tree, in the text and the JSON report; a run
// that ends does not.
func TestCheckPosition(t *testing.T) {
	base := []string{"--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs"}
	code, out := runCheckCLI(t, append(base, "--max-states", "3000")...)
	if code != 1 || !strings.Contains(out, "\nposition: the search stopped ") {
		t.Fatalf("stopped: exit %d\n%s", code, out)
	}
	code, out = runCheckCLI(t, append(base, "--max-states", "3000", "--json")...)
	var s checkSummary
	if err := json.Unmarshal([]byte(out), &s); code != 1 || err != nil || s.Position <= 0 || s.Position >= 1 {
		t.Fatalf("stopped, JSON: exit %d, %v, position %v\n%s", code, err, s.Position, out)
	}
	if code, out = runCheckCLI(t, base...); code != 0 || strings.Contains(out, "position:") {
		t.Fatalf("ended: exit %d\n%s", code, out)
	}
}

// TestCheckCheckpointUnknownBinary: when critsec cannot read its own file,
// a checkpoint could not be bound to the build that saved it, so
// --checkpoint is refused with one line and exit status 2, before any
// search, and the directory stays empty.
func TestCheckCheckpointUnknownBinary(t *testing.T) {
	saved := executable
	t.Cleanup(func() { executable = saved })
	executable = func() (string, error) { return "", errors.New("no /proc here") }
	ck, disk := t.TempDir(), t.TempDir()
	code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs", "--disk-dir", disk, "--checkpoint", ck)
	if code != 2 || !strings.Contains(out, "cannot be read (no /proc here)") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("exit %d, want 2 and one line\n%s", code, out)
	}
	if ents, err := os.ReadDir(ck); err != nil || len(ents) != 0 {
		t.Fatalf("%d entries in %s, want none (%v)", len(ents), ck, err)
	}
	executable = saved
	if code, out := runCheckCLI(t, "--alg", "raymond", "--n", "3", "--k", "2", "--search", "dfs", "--disk-dir", disk, "--checkpoint", ck); code != 0 {
		t.Fatalf("with the binary readable: exit %d\n%s", code, out)
	}
}
