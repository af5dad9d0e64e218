package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/supervise"
)

// runMembers starts a raymond cluster of 3 real processes, P1 and P2 as
// critsec node and P3 as critsec run with args, and returns it with a
// control-socket call and a poll of P3's status.
func runMembers(t *testing.T, args ...string) (c *procCluster, do func(cs.ID, string) node.StatusJSON, until func(cs.ID, string)) {
	t.Helper()
	runLast := func(c *procCluster, id cs.ID) error {
		if id == 3 {
			return c.startRun(id, args...)
		}
		return c.start(id)
	}
	c, ctx, do := liveCluster(t, "alg: raymond\nn: 3\nk: 1\n", 3, runLast)
	until = func(id cs.ID, state string) {
		t.Helper()
		for do(id, "status").State != state {
			select {
			case <-ctx.Done():
				t.Fatalf("P%d never %s: %v\n%s", id, state, ctx.Err(), runLog(c, id))
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return c, do, until
}

func runLog(c *procCluster, id cs.ID) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "node-"+strconv.Itoa(int(id))+".log"))
	return string(b)
}

// waitGroup waits for the command of critsec run to write its pid to
// path, and returns its process group (the watchdog's: it leads it).
func waitGroup(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
			if err != nil {
				t.Fatalf("the command is gone: %v", err)
			}
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if pgid, err := strconv.Atoi(f[2]); err == nil {
				return pgid
			}
		}
	}
	t.Fatalf("the command never wrote %s", path)
	return 0
}

// TestRunStopsBeforeExit: critsec run (manual policy) starts its command
// when the node enters; an exit asked on the control socket kills the
// command — which ignores SIGTERM, and so does its child — after the
// grace period, and completes only once the whole process group is gone;
// the CS is then free for P1. SIGTERM to critsec run while InCS stops the
// command, leaves the CS and exits 0; restarted, the member is OutCS.
func TestRunStopsBeforeExit(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `trap "" TERM; echo $$ > ` + pidFile + `; (while :; do sleep 0.05; done) & while :; do sleep 0.05; done`
	c, do, _ := runMembers(t, "--policy", "manual", "--grace", "300ms", "--", "sh", "-c", script)

	if a := do(3, "enter"); a.State != "InCS" {
		t.Fatalf("P3 after enter: %+v", a)
	}
	pgid := waitGroup(t, pidFile)
	waitFor(t, "the watchdog, the command and its child", func() bool { return supervise.GroupAlive(pgid) >= 3 })
	began := time.Now()
	if a := do(3, "exit"); a.State != "OutCS" {
		t.Fatalf("P3 after exit: %+v", a)
	}
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("the exit took %v: shorter than the grace period the command had", took)
	}
	if n := supervise.GroupAlive(pgid); n != 0 {
		t.Errorf("%d processes of the command left after the exit", n)
	}
	if a := do(1, "enter"); a.State != "InCS" {
		t.Fatalf("P1 after P3's exit: %+v", a)
	}
	do(1, "exit")

	os.Remove(pidFile)
	do(3, "enter")
	pgid = waitGroup(t, pidFile)
	c.procs[2].Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited[2]:
	case <-time.After(15 * time.Second):
		t.Fatalf("critsec run did not stop on SIGTERM:\n%s", runLog(c, 3))
	}
	if code := c.procs[2].ProcessState.ExitCode(); code != 0 {
		t.Errorf("critsec run exited %d on SIGTERM", code)
	}
	if n := supervise.GroupAlive(pgid); n != 0 {
		t.Errorf("%d processes of the command left after critsec run stopped", n)
	}
	// raymond needs every member's answer: P3 serves again as a plain
	// node, restored OutCS from its log, and P1 enters.
	if err := c.start(3); err != nil {
		t.Fatal(err)
	}
	if err := c.ready(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if a := do(3, "status"); a.State != "OutCS" || a.Pending != "none" {
		t.Errorf("P3 restarted after critsec run left: %+v", a)
	}
	if a := do(1, "enter"); a.State != "InCS" {
		t.Fatalf("P1 after critsec run stopped: %+v", a)
	}
	log := runLog(c, 3)
	for _, want := range []string{"command started", "command killed: still running after the grace period", "left the critical section"} {
		if !strings.Contains(log, want) {
			t.Errorf("critsec run's log does not say %q:\n%s", want, log)
		}
	}
}

// TestRunLeavesOnFailures: a command that crashes on start is restarted
// with backoff; after --max-failures in a row the node leaves the CS (so
// another member could run it), stays up and answers, and P1 can enter.
func TestRunLeavesOnFailures(t *testing.T) {
	c, do, until := runMembers(t, "--max-failures", "3", "--cooldown", "1h", "--min-backoff", "10ms", "--max-backoff", "2s",
		"--", "sh", "-c", "echo failing >&2; exit 7")
	until(3, "InCS") // the always policy enters
	until(3, "OutCS")
	if a := do(1, "enter"); a.State != "InCS" {
		t.Fatalf("P1 after P3 left: %+v", a)
	}
	if a := do(3, "status"); a.Pending != "none" {
		t.Errorf("P3 asks again during its cool-down: %+v", a)
	}
	log := runLog(c, 3)
	for _, want := range []string{`status="exit status 7"`, "consecutive_failures=3", "command failed too often: leaving the critical section"} {
		if !strings.Contains(log, want) {
			t.Errorf("critsec run's log does not say %q:\n%s", want, log)
		}
	}
}

// TestRunFenceEnv: the command of critsec run finds its CS period's
// fencing token in its environment, the same that critsec ctl status
// shows (raymond gives tokens; nobody is crashed, so CRITSEC_FENCE_CRASHED
// is empty).
func TestRunFenceEnv(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env")
	script := `echo "$CRITSEC_FENCE:$CRITSEC_FENCE_CRASHED" > ` + envFile + `.tmp; mv ` + envFile + `.tmp ` + envFile + `; sleep 60`
	_, do, _ := runMembers(t, "--policy", "manual", "--grace", "100ms", "--", "sh", "-c", script)
	a := do(3, "enter")
	if a.State != "InCS" || a.Fence == nil {
		t.Fatalf("P3 after enter: %+v, want InCS with a token", a)
	}
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if b, err = os.ReadFile(envFile); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if want := strconv.FormatUint(a.Fence.Seq, 10) + ":\n"; string(b) != want {
		t.Errorf("the command's CRITSEC_FENCE:CRITSEC_FENCE_CRASHED is %q, want %q (ctl status: %+v)", b, want, a.Fence)
	}
	do(3, "exit")
}
