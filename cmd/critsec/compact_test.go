package main

import (
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/wal"
)

// TestNodeKilledCompacted: real critsec node processes compacting their
// logs every 4 records (node.TestRestartCompacted does it in process).
// After rounds of entries (so every node has compacted several times),
// P3's request waits on P1, P3 is killed with SIGKILL and restarted from
// its compacted log: its request is pending again and completes when P1
// exits. P1 killed InCS comes back InCS. Every node's log stays within
// the threshold plus one group (at most 12 records; without compaction
// each would hold 26).
func TestNodeKilledCompacted(t *testing.T) {
	c, ctx, do := liveCluster(t, "alg: raymond\nn: 3\nk: 1\n", 3, nil, "--compact-every", "4")
	restart := func(id cs.ID) {
		t.Helper()
		c.kill(id)
		if err := c.start(id); err != nil {
			t.Fatal(err)
		}
		if err := c.ready(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		for id := cs.ID(1); id <= 3; id++ {
			do(id, "enter")
			do(id, "exit")
		}
	}
	do(1, "enter")
	go func() { // its answer is lost with the process
		ctl := c.ctl(3)
		defer ctl.Close()
		ctl.Do(ctx, "enter", 10*time.Second)
	}()
	waitFor(t, "P3's request sent", func() bool { a := do(3, "status"); return a.Pending == "entry" && len(a.WaitingOn) > 0 })
	restart(3)
	if a := do(3, "status"); a.State != "OutCS" || a.Pending != "entry" {
		t.Fatalf("P3 restarted: %+v, want its entry pending", a)
	}
	do(1, "exit")
	waitFor(t, "P3 InCS", func() bool { return do(3, "status").State == "InCS" })
	do(3, "exit")
	do(1, "enter")
	restart(1)
	if a := do(1, "status"); a.State != "InCS" || a.Pending != "none" {
		t.Fatalf("P1 killed InCS, restarted: %+v", a)
	}
	do(1, "exit")
	do(2, "enter")
	do(2, "exit")
	c.stop()
	for id := cs.ID(1); id <= 3; id++ {
		rc, err := wal.Read(node.LogPath(c.cfg, id), func([]byte) error { return nil })
		if err != nil || rc.Records > 4+8 { // the threshold and the group that crossed it; 26 uncompacted
			t.Errorf("P%d's log: %d records, %v", id, rc.Records, err)
		}
	}
}
