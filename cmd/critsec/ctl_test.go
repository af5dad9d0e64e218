package main

import (
	"strings"
	"testing"
	"time"
)

// TestCtlTimeout: critsec ctl enter on a node whose peer holds the
// critical section times out with exit status 3, saying that the request
// stays pending ("request":"pending" and the error line); the node enters
// once the holder leaves.
func TestCtlTimeout(t *testing.T) {
	c, ctx, do := liveCluster(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	if a := do(1, "enter"); a.State != "InCS" {
		t.Fatalf("P1 after enter: %+v", a)
	}
	code, out := runCLI(t, "ctl", "--config", c.cfgPath, "--id", "2", "enter", "--timeout", "100ms")
	if code != 3 || !strings.Contains(out, `"request":"pending"`) || !strings.Contains(out, "the enter request stays pending") ||
		!strings.Contains(out, "exit once the node is InCS") {
		t.Errorf("ctl enter that times out: status %d, output:\n%s", code, out)
	}
	do(1, "exit")
	for a := do(2, "status"); a.State != "InCS"; a = do(2, "status") {
		select {
		case <-ctx.Done():
			t.Fatalf("P2's pending request never completed: %+v", a)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
