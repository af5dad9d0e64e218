package check_test

import (
	"os"
	"strings"
	"testing"

	"github.com/critsec/critsec/check"
)

// TestDiskDirAgrees: a depth-first run whose visited set is mostly on disk
// (a table of 16 slots, merged into the file every 12 new states; without
// -short, Raymond budget 4 with 2^18 slots and 1.7 million states) explores
// exactly what the run in memory explores: the same verdict, counts and
// path, on ok runs, a bounds violation and a deadlock; the directory is
// left empty, and progress reports the states on disk and the pages read.
func TestDiskDirAgrees(t *testing.T) {
	defer func(n int) { *check.DiskMinSlots = n }(*check.DiskMinSlots)
	*check.DiskMinSlots = 16
	// Under -short the ok runs take budget 1: 1 570 states (1 460 with the
	// reduction), not 7 310 (6 889), each merge into the file costing a write.
	ok := 2
	if testing.Short() {
		ok = 1
	}
	cases := []struct {
		name     string
		cfg      func() check.Config
		expected int // the table's capacity
		want     check.Verdict
	}{
		{"raymond n=3 k=2", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: ok}
		}, 1, check.OK},
		{"raymond n=3 k=2 assert-max 1", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 1), Budget: 2}
		}, 1, check.Violated},
		{"greedy Ricart-Agrawala", func() check.Config {
			return check.Config{Machines: newRA(3, true), Property: global(t, 3, 0, 1), Budget: 2}
		}, 1, check.Violated},
		{"raymond n=3 k=2 por", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: ok, PartialOrder: true}
		}, 1, check.OK},
		{"raymond n=3 k=2 budget 4", func() check.Config {
			return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 4}
		}, 150_000, check.OK},
	}
	for _, c := range cases {
		if testing.Short() && c.expected > 1 {
			continue
		}
		mcfg := c.cfg()
		mcfg.Search = check.DepthFirst
		mem := mustRun(t, mcfg)
		dir := t.TempDir()
		dcfg := c.cfg()
		dcfg.Search, dcfg.DiskDir, dcfg.ExpectedStates = check.DepthFirst, dir, c.expected
		var onDisk, reads int64
		dcfg.Progress = func(p check.Progress) { onDisk, reads = max(onDisk, p.DiskStates), max(reads, p.DiskReads) }
		disk := mustRun(t, dcfg)
		if mem.Verdict != c.want || disk.Verdict != c.want {
			t.Errorf("%s: in memory %s, on disk %s (%s), want %s", c.name, mem.Verdict, disk.Verdict, disk.Reason, c.want)
			continue
		}
		if disk.States != mem.States || disk.Transitions != mem.Transitions || disk.Depth != mem.Depth || disk.BudgetStops != mem.BudgetStops {
			t.Errorf("%s: on disk %d states, %d transitions, depth %d, %d budget stops; in memory %d, %d, %d, %d", c.name,
				disk.States, disk.Transitions, disk.Depth, disk.BudgetStops, mem.States, mem.Transitions, mem.Depth, mem.BudgetStops)
		}
		if c.want == check.Violated {
			if disk.Violation.Kind != mem.Violation.Kind || len(disk.Violation.Path) != len(mem.Violation.Path) {
				t.Errorf("%s: on disk %s in %d steps, in memory %s in %d", c.name, disk.Violation.Kind, len(disk.Violation.Path), mem.Violation.Kind, len(mem.Violation.Path))
			}
		}
		if mem.States > 1<<18 && onDisk == 0 {
			t.Errorf("%s: progress reported nothing on disk after %d states", c.name, mem.States)
		}
		// Pages are read for lookups of states in the file (repeats), and
		// the filter spares most new states a read.
		if mem.States > 1<<18 && (reads == 0 || reads >= onDisk) {
			t.Errorf("%s: progress reported %d pages read with %d states on disk", c.name, reads, onDisk)
		}
		if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
			t.Errorf("%s: %d entries left in DiskDir (%v)", c.name, len(ents), err)
		}
		t.Logf("%s: %s, %d states, %d on disk in the last progress report", c.name, disk.Verdict, disk.States, onDisk)
	}
}

// TestDiskDirRefused: DiskDir needs depth-first search and a writable
// directory.
func TestDiskDirRefused(t *testing.T) {
	file := t.TempDir() + "/file"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir    string
		search check.Search
		want   string
	}{
		{t.TempDir(), check.BreadthFirst, "needs Search = DepthFirst"},
		{file, check.DepthFirst, "not a writable directory"},
		{t.TempDir() + "/missing", check.DepthFirst, "not a writable directory"},
	} {
		_, err := check.Run(t.Context(), check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Search: c.search, DiskDir: c.dir})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DiskDir %s, %s: %v, want %q", c.dir, c.search, err, c.want)
		}
	}
}
