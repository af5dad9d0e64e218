package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/trace"
)

// TestNodeKilled: real critsec node processes on loopback. P3 asks to
// enter while P1 holds the critical section, and is killed with SIGKILL
// while its request waits on its peers; its log's tail is then torn (a
// partial record appended, as a crash in the middle of a write leaves
// it). Restarted, P3 cuts the tail off, finds its request pending and
// enters once P1 leaves. P1 is then killed while InCS and comes back
// InCS. The merged trace of the three logs passes the trace checker.
func TestNodeKilled(t *testing.T) {
	for _, problem := range []string{"alg: raymond\nn: 3\nk: 1\n", "alg: kmutex\nn: 3\nk: 1\n"} {
		t.Run(strings.SplitN(problem, "\n", 2)[0], func(t *testing.T) {
			c, ctx, do := liveCluster(t, problem, 3, nil)
			// until polls P_id's status until ok says it is what is awaited.
			until := func(id cs.ID, ok func(node.StatusJSON) bool) node.StatusJSON {
				t.Helper()
				for {
					if a := do(id, "status"); ok(a) {
						return a
					}
					select {
					case <-ctx.Done():
						t.Fatalf("P%d: %v", id, ctx.Err())
					case <-time.After(5 * time.Millisecond):
					}
				}
			}
			if a := do(1, "enter"); a.State != "InCS" {
				t.Fatalf("P1 after enter: %+v", a)
			}
			go func() { // its answer is lost with the process
				ctl := c.ctl(3)
				defer ctl.Close()
				ctl.Do(ctx, "enter", 10*time.Second)
			}()
			// Pending is shown once the call is in the log; the request is
			// under way once P3 has sent a message (before it, P3 sent
			// none). WaitingOn alone would not do: a permission-based
			// request whose replies all came back waits on nobody.
			a := until(3, func(a node.StatusJSON) bool {
				return a.Pending == "entry" && strings.Contains(metricsOf(ctx, c, 3), "critsec_messages_sent_total{")
			})
			t.Logf("P3 before the kill: %+v", a)
			c.kill(3)
			f, err := os.OpenFile(node.LogPath(c.cfg, 3), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte{200, 0, 0, 0, 1, 2, 3}) // a record of 200 bytes, cut short
			f.Close()
			if err := c.start(3); err != nil {
				t.Fatal(err)
			}
			if err := c.ready(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if a := do(3, "status"); a.State != "OutCS" || a.Pending != "entry" {
				t.Fatalf("P3 restarted: %+v, want its entry pending", a)
			}
			do(1, "exit")
			until(3, func(a node.StatusJSON) bool { return a.State == "InCS" })
			do(3, "exit")
			do(1, "enter")
			c.kill(1)
			if err := c.start(1); err != nil {
				t.Fatal(err)
			}
			if err := c.ready(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if a := do(1, "status"); a.State != "InCS" || a.Pending != "none" {
				t.Fatalf("P1 killed InCS, restarted: %+v", a)
			}
			do(1, "exit")
			do(2, "enter")
			do(2, "exit")
			c.stop()
			logs, _ := os.ReadFile(c.dir + "/node-3.log")
			if !bytes.Contains(logs, []byte("torn_bytes=7")) {
				t.Errorf("P3's log does not say it cut off a torn tail of 7 bytes:\n%s", logs)
			}
			var b bytes.Buffer
			if _, err := node.WriteClusterTrace(c.cfg, &b); err != nil {
				t.Fatal(err)
			}
			rep, err := trace.Check(&b)
			if err != nil || rep.Violation != nil {
				t.Fatalf("merged trace: %v %v", err, rep.Violation)
			}
			if rep.Entries[1] != 2 || rep.Entries[2] != 1 || rep.Entries[3] != 1 || rep.Pending != 0 {
				t.Errorf("merged trace: entries %v, %d pending", rep.Entries, rep.Pending)
			}
		})
	}
}

// TestFaultTolerantKilled: ftraymond (n = 4, k = 2) as four real
// processes with the network failure detector (heartbeat 50 ms, timeout
// 250 ms). P1 and P2 are InCS and P3 waits when P1 is killed with
// SIGKILL: P3 enters within the detection time, and the live members go
// on entering and exiting. The merged trace, with P1's crash at the kill
// time, passes the trace checker and holds the detectors' suspicions.
func TestFaultTolerantKilled(t *testing.T) {
	c, ctx, do := liveCluster(t, "alg: ftraymond\nn: 4\nk: 2\ndetector:\n  heartbeat: 50ms\n  timeout: 250ms\n", 4, nil)
	do(1, "enter")
	do(2, "enter")
	for id := cs.ID(1); id <= 4; id++ {
		waitFor(t, fmt.Sprintf("P%d's detector trusting its 3 peers", id), func() bool {
			return strings.Contains(metricsOf(ctx, c, id), "critsec_detector_trusts_total 3\n")
		})
	}
	entered := make(chan time.Time, 1)
	go func() {
		do(3, "enter")
		entered <- time.Now()
	}()
	waitFor(t, "P3's request sent", func() bool {
		a := do(3, "status")
		return a.State == "InCS" || a.Pending == "entry" && len(a.WaitingOn) > 0
	})
	if a := do(3, "status"); a.State != "OutCS" {
		t.Fatalf("P3 entered with P1 and P2 InCS and k = 2: %+v", a)
	}
	c.kill(1)
	killed := time.Now()
	at := <-entered
	recovery := at.Sub(killed)
	if recovery > time.Second {
		t.Errorf("P3 entered %v after P1 was killed: over a second", recovery)
	}
	t.Logf("P3 entered %v after P1 was killed", recovery)
	for range 3 {
		do(2, "exit")
		do(4, "enter")
		do(3, "exit")
		do(2, "enter")
		do(4, "exit")
		do(3, "enter")
	}
	rep := killedTrace(t, c, killed, 2)
	if rep.MaxInCS > 2 || rep.Entries[3] < 4 || rep.Entries[4] < 3 {
		t.Errorf("merged trace: max %d InCS, entries %v", rep.MaxInCS, rep.Entries)
	}
}

// killedTrace stops cluster c whose P1 was killed at killed, merges its
// logs with P1's crash at that time, and checks the trace: no violation,
// and P1's crash and a suspicion of P1 by P(suspecter) in it.
func killedTrace(t *testing.T, c *procCluster, killed time.Time, suspecter cs.ID) *trace.Report {
	t.Helper()
	c.stop()
	var b bytes.Buffer
	crash := trace.Event{T: float64(killed.UnixNano()) / 1e9, Ev: trace.EvCrash, Node: 1}
	if _, err := node.WriteClusterTrace(c.cfg, &b, crash); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	rep, err := trace.Check(&b)
	if err != nil || rep.Violation != nil {
		t.Fatalf("merged trace: %v %v", err, rep.Violation)
	}
	for _, want := range []string{`"ev":"crash","node":1`, fmt.Sprintf(`"ev":"suspect","node":%d,"who":1`, suspecter)} {
		if !strings.Contains(text, want) {
			t.Errorf("merged trace has no %s", want)
		}
	}
	return rep
}

// liveCluster starts a cluster of n real processes for problem on
// loopback, extra arguments args for every node: member id started by
// start (nil: as a plain node), each waited for on its control socket. It
// returns the cluster (stopped at the end of the test), a context of the
// test's 30 s, and a control-socket call that fails the test on error.
func liveCluster(t *testing.T, problem string, n int, start func(*procCluster, cs.ID) error, args ...string) (*procCluster, context.Context, func(cs.ID, string) node.StatusJSON) {
	t.Helper()
	c, err := newProcCluster(t.TempDir(), problem, n, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if start == nil {
		start = (*procCluster).start
	}
	for id := cs.ID(1); int(id) <= n; id++ {
		if err := start(c, id); err != nil {
			t.Fatal(err)
		}
	}
	for id := cs.ID(1); int(id) <= n; id++ {
		if err := c.ready(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	do := func(id cs.ID, op string) node.StatusJSON {
		t.Helper()
		ctl := c.ctl(id)
		defer ctl.Close()
		a, err := ctl.Do(ctx, op, 10*time.Second)
		if err != nil {
			t.Fatalf("P%d %s: %v", id, op, err)
		}
		return a
	}
	return c, ctx, do
}

// waitFor polls cond every 5 ms until it holds, for up to 30 s (a loaded
// machine is slow, a broken cluster never gets there).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// metricsOf returns node id's Prometheus metrics, read on its control
// socket ("" while it does not answer).
func metricsOf(ctx context.Context, c *procCluster, id cs.ID) string {
	var d net.Dialer
	sock := node.ControlSocket(c.cfg, id)
	cl := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", sock) },
	}}
	defer cl.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://node/metrics", nil)
	if err != nil {
		return ""
	}
	resp, err := cl.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(b)
}

// TestFaultTolerantGlobalKilled: ftgcs (n = 3, l = 1, k = 2) as three
// real processes with the network failure detector, in each mode. P1 and
// P2 are InCS and P3's entry waits when P1 is killed with SIGKILL: P2
// stays InCS while the detectors find the crash, P3 then enters, and P2
// and P3 go on taking turns, each exit granted by the other. The merged
// trace, with P1's crash at the kill time, keeps 1..2 members InCS.
func TestFaultTolerantGlobalKilled(t *testing.T) {
	for _, mode := range []string{node.ModeCrashStop, node.ModeMajority} {
		t.Run(mode, func(t *testing.T) {
			problem := "alg: ftgcs\nn: 3\nl: 1\nk: 2\ndetector:\n  heartbeat: 100ms\n  timeout: 2s\n  mode: " + mode + "\n"
			c, ctx, do := liveCluster(t, problem, 3, nil)
			if a := do(1, "status"); a.State != "InCS" {
				t.Fatalf("P1 does not start InCS (processes 1..l do): %+v", a)
			}
			do(2, "enter")
			// P1's exit waits for its initialization, over once P2 and P3
			// trust it: their detectors then report its crash.
			do(1, "exit")
			do(1, "enter")
			entered := make(chan time.Time, 1)
			go func() {
				ctl := c.ctl(3)
				defer ctl.Close()
				if a, err := ctl.Do(ctx, "enter", 20*time.Second); err == nil && a.State == "InCS" {
					entered <- time.Now()
				}
				close(entered)
			}()
			for do(3, "status").Pending != "entry" {
				select {
				case <-ctx.Done():
					t.Fatal("P3's entry never became pending")
				case <-time.After(10 * time.Millisecond):
				}
			}
			c.kill(1)
			killed := time.Now()
			at, ok := <-entered
			if !ok {
				t.Fatalf("P3 never entered after P1 was killed:\n%s", runLog(c, 3))
			}
			if a := do(2, "status"); a.State != "InCS" {
				t.Fatalf("P2 left the CS by itself: %+v", a)
			}
			t.Logf("P3 entered %v after P1 was killed", at.Sub(killed))
			for range 3 {
				do(2, "exit")
				do(2, "enter")
				do(3, "exit")
				do(3, "enter")
			}
			rep := killedTrace(t, c, killed, 3)
			if rep.MinInCS < 1 || rep.MaxInCS > 2 || rep.Entries[2] < 4 || rep.Entries[3] < 4 {
				t.Errorf("merged trace: %d..%d InCS, entries %v", rep.MinInCS, rep.MaxInCS, rep.Entries)
			}
		})
	}
}
