package check_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
)

// checkpointCases are depth-first runs on disk (a table of 16 slots, merged
// into the file every 12 new states) that end ok, in a violation, with
// budget stops, with crashes and a detector, and with the partial-order
// reduction (a stop left undecided: TestCheckpointUndecided).
func checkpointCases(t *testing.T) []struct {
	name string
	cfg  func() check.Config
} {
	intp := func(v int) *int { return &v }
	// ftraymond: 276 821 states; under -short at k = 1 and budget 1, 69 288.
	k, budget := 2, 2
	if testing.Short() {
		k, budget = 1, 1
	}
	ft := func() check.Config {
		ms, p := resolved(t, alg.Spec{Alg: "ftraymond", N: 3, K: intp(k)})
		return check.Config{Machines: ms, Property: p, Budget: budget, Crashes: 1, Detector: check.Trusting{}, PartialOrder: true}
	}
	return []struct {
		name string
		cfg  func() check.Config
	}{
		{"raymond n=3 k=2", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2}
		}},
		{"raymond n=3 k=2 por", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, PartialOrder: true}
		}},
		{"mutin n=3 l=2 majority (budget stops)", func() check.Config {
			ms, p := resolved(t, alg.Spec{Alg: "mutin", N: 3, L: intp(2), Coterie: "majority"})
			return check.Config{Machines: ms, Property: p, Budget: 2}
		}},
		{"greedy Ricart-Agrawala", func() check.Config {
			return check.Config{Machines: newRA(3, true), Property: global(t, 3, 0, 1), Budget: 2}
		}},
		{fmt.Sprintf("ftraymond n=3 k=%d 1 crash T por", k), ft},
	}
}

// prepare makes cfg a depth-first run on disk in dir, continuing and
// saving its checkpoint in ck.
func prepare(cfg check.Config, dir, ck string) check.Config {
	cfg.Search, cfg.DiskDir, cfg.Checkpoint, cfg.CheckpointID = check.DepthFirst, dir, ck, "test"
	return cfg
}

// sameRun reports how got, a run continued from checkpoints, differs from
// want, the same run uninterrupted: "" when they agree on everything a run
// reports but its time.
func sameRun(got, want check.Result) string {
	switch {
	case got.Verdict != want.Verdict || got.Reason != want.Reason:
		return "verdict " + string(got.Verdict) + " (" + got.Reason + "), want " + string(want.Verdict) + " (" + want.Reason + ")"
	case got.States != want.States || got.Transitions != want.Transitions || got.Depth != want.Depth || got.BudgetStops != want.BudgetStops:
		return "counts differ"
	case (got.Violation == nil) != (want.Violation == nil):
		return "violation differs"
	case got.Violation != nil && (got.Violation.Kind != want.Violation.Kind || got.Violation.Detail != want.Violation.Detail || len(got.Violation.Path) != len(want.Violation.Path)):
		return "violation " + got.Violation.Detail + ", want " + want.Violation.Detail
	}
	return ""
}

// TestCheckpointResume: each case is stopped by MaxStates every few states
// and continued from its checkpoint by a fresh run until it ends; the end
// is exactly the uninterrupted run's (verdict, counts, depth, budget stops,
// violation), and the ended run leaves the checkpoint's directory empty.
func TestCheckpointResume(t *testing.T) {
	defer func(n int) { *check.DiskMinSlots = n }(*check.DiskMinSlots)
	*check.DiskMinSlots = 16
	for _, c := range checkpointCases(t) {
		ref := c.cfg()
		ref.Search = check.DepthFirst
		want := mustRun(t, ref)
		step := max(want.States/7, 3) // several parts
		ck := t.TempDir()
		var res check.Result
		parts := 0
		for limit := step; ; limit += step {
			cfg := prepare(c.cfg(), t.TempDir(), ck)
			cfg.MaxStates = int(limit)
			res = mustRun(t, cfg)
			parts++
			if parts > 1 && (res.Resumed == nil || res.Resumed.Parts != parts-1) {
				t.Fatalf("%s: part %d: resumed %+v", c.name, parts, res.Resumed)
			}
			if res.Verdict != check.Incomplete || !strings.HasPrefix(res.Reason, "max-states") {
				break
			}
			if !strings.Contains(res.Reason, "progress saved in "+ck) {
				t.Fatalf("%s: part %d: %s", c.name, parts, res.Reason)
			}
		}
		if d := sameRun(res, want); d != "" {
			t.Errorf("%s: after %d parts: %s; uninterrupted: %d states, %d transitions, depth %d, %d budget stops; continued: %d, %d, %d, %d",
				c.name, parts, d, want.States, want.Transitions, want.Depth, want.BudgetStops, res.States, res.Transitions, res.Depth, res.BudgetStops)
		}
		if parts < 3 && want.States > 100 {
			t.Errorf("%s: %d parts for %d states", c.name, parts, want.States)
		}
		if !res.CheckpointSpent {
			t.Errorf("%s: the last run did not spend its checkpoint", c.name)
		}
		if err := check.RemoveCheckpoint(ck); err != nil {
			t.Error(err)
		}
		if ents, err := os.ReadDir(ck); err != nil || len(ents) != 1 || ents[0].Name() != "lock" {
			t.Errorf("%s: %d entries left in the checkpoint's directory, want only the lock file (%v)", c.name, len(ents), err)
		}
		t.Logf("%s: %s after %d parts, %d states", c.name, res.Verdict, parts, res.States)
	}
}

// TestCheckpointPeriodic: a checkpoint saved on the way (every 4096 states,
// as if the process were killed right after) continues to the same end.
func TestCheckpointPeriodic(t *testing.T) {
	defer func(n int) { *check.DiskMinSlots = n }(*check.DiskMinSlots)
	*check.DiskMinSlots = 1 << 10
	defer func(f func(string)) { *check.CheckpointSaved = f }(*check.CheckpointSaved)
	cfg := checkpointCases(t)[4].cfg // ftraymond: 16 saves or more
	ref := cfg()
	ref.Search = check.DepthFirst
	want := mustRun(t, ref)
	ck, kept := t.TempDir(), t.TempDir()
	saves := 0
	*check.CheckpointSaved = func(dir string) {
		if saves++; saves == 2 { // the second save, mid-run
			copyDir(t, dir, kept)
		}
	}
	run := prepare(cfg(), t.TempDir(), ck)
	run.CheckpointEvery = time.Nanosecond
	if got := mustRun(t, run); sameRun(got, want) != "" || saves < 3 {
		t.Fatalf("with periodic saves: %s, %d saves", sameRun(got, want), saves)
	}
	*check.CheckpointSaved = func(string) {}
	got := mustRun(t, prepare(cfg(), t.TempDir(), kept))
	if d := sameRun(got, want); d != "" || got.Resumed == nil || got.Resumed.States >= want.States {
		t.Fatalf("continued from the second save: %s (resumed %+v, %d states in all)", d, got.Resumed, want.States)
	}
	t.Logf("%d states; continued from a save at %d", want.States, got.Resumed.States)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckpointRefused: a checkpoint of another check, or a damaged one,
// is refused with an error (ErrConfig) that says so, before any search;
// and a checkpoint needs a visited set on disk.
func TestCheckpointRefused(t *testing.T) {
	cfg := func() check.Config {
		return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, MaxStates: 500}
	}
	saved := func() string {
		ck := t.TempDir()
		if res := mustRun(t, prepare(cfg(), t.TempDir(), ck)); res.Verdict != check.Incomplete {
			t.Fatalf("first part: %s", res.Verdict)
		}
		return ck
	}
	fpsOf := func(ck string) string {
		m, _ := filepath.Glob(filepath.Join(ck, "fps-*"))
		if len(m) != 1 {
			t.Fatalf("%d fingerprint files in %s", len(m), ck)
		}
		return m[0]
	}
	for _, c := range []struct {
		name, want string
		spoil      func(ck string, cfg *check.Config)
	}{
		{"another algorithm", "the checkpoint of another check", func(_ string, cfg *check.Config) { cfg.CheckpointID = "other" }},
		{"another budget", "the checkpoint of another check", func(_ string, cfg *check.Config) { cfg.Budget = 4; cfg.MaxStates = 1000 }},
		{"another k", "the checkpoint of another check", func(_ string, cfg *check.Config) {
			cfg.Machines, cfg.Property = raymondMachines(t, 3, 1), global(t, 3, 0, 1)
		}},
		{"not JSON", "checkpoint.json", func(ck string, _ *check.Config) {
			os.WriteFile(filepath.Join(ck, "checkpoint.json"), []byte("{"), 0o600)
		}},
		{"file cut short", "fingerprints expected", func(ck string, _ *check.Config) {
			f := fpsOf(ck)
			fi, _ := os.Stat(f)
			os.Truncate(f, fi.Size()-12)
		}},
		{"file too long", "more than", func(ck string, _ *check.Config) {
			f, _ := os.OpenFile(fpsOf(ck), os.O_WRONLY|os.O_APPEND, 0)
			f.Write(make([]byte, 12))
			f.Close()
		}},
		{"file missing", "missing or not a regular file", func(ck string, _ *check.Config) { os.Remove(fpsOf(ck)) }},
		{"fingerprint changed, order kept", "checksum", func(ck string, _ *check.Config) {
			f := fpsOf(ck)
			b, _ := os.ReadFile(f)
			b[len(b)-1]++ // the last fingerprint's highest byte: still the largest
			os.WriteFile(f, b, 0o600)
		}},
		{"table key changed", "checksum", func(ck string, _ *check.Config) {
			f := filepath.Join(ck, "machines")
			b, _ := os.ReadFile(f)
			b[len(b)-1]++
			os.WriteFile(f, b, 0o600)
		}},
		{"table cut short", "shorter than", func(ck string, _ *check.Config) {
			f := filepath.Join(ck, "machines")
			fi, _ := os.Stat(f)
			os.Truncate(f, fi.Size()-1)
		}},
		{"not a directory of its own", "holds notes and no checkpoint", func(ck string, _ *check.Config) {
			os.Remove(filepath.Join(ck, "checkpoint.json"))
			os.WriteFile(filepath.Join(ck, "notes"), nil, 0o600)
		}},
		{"path of another run", "does not fit this check", func(ck string, _ *check.Config) {
			name := filepath.Join(ck, "checkpoint.json")
			b, _ := os.ReadFile(name)
			os.WriteFile(name, []byte(strings.Replace(string(b), "\"next\": ", "\"next\": 9", 1)), 0o600)
		}},
	} {
		ck := saved()
		run := prepare(cfg(), t.TempDir(), ck)
		run.MaxStates = 1000
		c.spoil(ck, &run)
		_, err := check.Run(t.Context(), run)
		if !errors.Is(err, check.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an ErrConfig saying %q", c.name, err, c.want)
		}
	}
	bad := cfg()
	bad.Search, bad.Checkpoint = check.DepthFirst, t.TempDir()
	if _, err := check.Run(t.Context(), bad); !errors.Is(err, check.ErrConfig) || !strings.Contains(err.Error(), "needs DiskDir") {
		t.Errorf("a checkpoint without DiskDir: %v", err)
	}
}
