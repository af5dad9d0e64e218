package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
)

// TestLostLogProcesses: real critsec node processes with --fsync=false.
// P2, after entries on every member, is killed and its log deleted (as a
// power loss can leave a log written without fsync). Started again it
// exits with status 3 and one line naming the peer that remembers it and
// how to recover, instead of looping; started on its empty log with
// --rejoin-with-empty-log it enters and exits.
func TestLostLogProcesses(t *testing.T) {
	c, ctx, do := liveCluster(t, "alg: raymond\nn: 3\nk: 1\n", 3, nil, "--fsync=false")
	for _, id := range []cs.ID{1, 2, 3, 1} {
		do(id, "enter")
		do(id, "exit")
	}
	waitQuiet(t, ctx, c)
	c.kill(2)
	if err := os.Remove(node.LogPath(c.cfg, 2)); err != nil {
		t.Fatal(err)
	}
	if err := c.start(2); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited[1]:
	case <-ctx.Done():
		t.Fatalf("P2 on a deleted log still runs:\n%s", runLog(c, 2))
	}
	recovery := "restore the log, or start the member on an empty log with --rejoin-with-empty-log"
	if code := c.procs[1].ProcessState.ExitCode(); code != 3 || !strings.Contains(runLog(c, 2), recovery) {
		t.Errorf("P2 on a deleted log: exit status %d, log:\n%s", code, runLog(c, 2))
	}
	os.Remove(node.LogPath(c.cfg, 2))
	if err := c.startAs(2, []string{"node", "--config", c.cfgPath, "--id", "2", "--fsync=false", "--rejoin-with-empty-log"}); err != nil {
		t.Fatal(err)
	}
	if err := c.ready(ctx, 2); err != nil {
		t.Fatal(err)
	}
	do(2, "enter")
	do(2, "exit")
}

// waitQuiet waits until the cluster is idle as a rejoin on an empty log
// needs it (docs/network.md, "A lost log"): no member has a message its
// receiver has not logged and acknowledged, seen on two rounds of looks in
// a row, so that no answer was sent in between.
func waitQuiet(t *testing.T, ctx context.Context, c *procCluster) {
	t.Helper()
	const idle = "critsec_messages_unacknowledged 0\n"
	quiet := func() bool {
		for id := range c.procs {
			if !strings.Contains(metricsOf(ctx, c, cs.ID(id+1)), idle) {
				return false
			}
		}
		return true
	}
	for looks := 0; looks < 2; {
		if quiet() {
			looks++
			continue
		}
		looks = 0
		select {
		case <-ctx.Done():
			t.Fatalf("the members' messages were never all acknowledged: %v", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
