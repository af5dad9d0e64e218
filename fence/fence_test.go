package fence_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/critsec/critsec/fence"
	"github.com/critsec/critsec/supervise"
)

// The test binary is its own watchdog: run with watchdogEnv set, it is
// `critsec watchdog -- ARGS` (TestMain).
const watchdogEnv = "CRITSEC_FENCE_TEST_WATCHDOG"

func TestMain(m *testing.M) {
	if os.Getenv(watchdogEnv) == "1" {
		os.Exit(Watch(os.Args[1:], os.NewFile(3, "deadlines"), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// syncBuffer is a buffer safe for the command's writes and the test's
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchdog is a running watchdog over a shell script, as critsec run's
// supervisor starts it: the leader of a new process group, the deadline
// pipe on file descriptor 3.
type watchdog struct {
	cmd    *exec.Cmd
	pipe   *os.File
	stderr *syncBuffer
	exited chan error
}

func start(t *testing.T, first int64, script string) *watchdog {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Write(AppendDeadline(nil, first))
	cmd := exec.Command(os.Args[0], "sh", "-c", script)
	cmd.Env = append(os.Environ(), watchdogEnv+"=1")
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	wd := &watchdog{cmd: cmd, pipe: w, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = wd.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	go func() { wd.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		w.Close()
	})
	return wd
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func (wd *watchdog) group() int { return supervise.GroupAlive(wd.cmd.Process.Pid) }

// TestDeadlineKillsGroup: the watchdog kills its whole group (itself, the
// command and the command's child, which ignore SIGTERM) with SIGKILL
// once the deadline passes, not before, and says why.
func TestDeadlineKillsGroup(t *testing.T) {
	wd := start(t, Unbounded, `trap "" TERM; sleep 60 & wait`)
	waitFor(t, "the watchdog, the command and its child", func() bool { return wd.group() == 3 })
	began := Now()
	wd.pipe.Write(AppendDeadline(nil, began+int64(300*time.Millisecond)))
	waitFor(t, "the group killed", func() bool { return wd.group() == 0 })
	if took := time.Duration(Now() - began); took < 300*time.Millisecond {
		t.Errorf("group killed %v after the lease began: before its deadline of 300ms", took)
	}
	if err := <-wd.exited; !strings.Contains(err.Error(), "killed") {
		t.Errorf("watchdog ended with %v, want killed", err)
	}
	if !strings.Contains(wd.stderr.String(), "the lease ended") {
		t.Errorf("stderr %q does not say the lease ended", wd.stderr)
	}
}

// TestRenewalsKeepItRunning: deadlines a lease ahead, renewed every 20 ms
// for two seconds, keep the command running past the first; once they stop,
// the group is killed at the last. The lease (1.5 s) is far longer than
// the renewals' period, so a test descheduled on a loaded machine still
// renews in time; a kill is a failure only before the deadline last sent.
func TestRenewalsKeepItRunning(t *testing.T) {
	const lease = 1500 * time.Millisecond
	wd := start(t, Unbounded, `sleep 60 & wait`)
	waitFor(t, "the watchdog, the command and its child", func() bool { return wd.group() == 3 })
	first := Now() + int64(lease)
	var last int64
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if wd.group() == 0 && Now() < last {
			t.Fatalf("group killed while its lease was renewed: %s", wd.stderr)
		}
		last = Now() + int64(lease)
		wd.pipe.Write(AppendDeadline(nil, last))
	}
	if wd.group() == 0 {
		t.Fatalf("group killed while its lease was renewed: %s", wd.stderr)
	}
	if Now() < first {
		t.Fatal("the renewals ended before the first deadline: the test did not run past it")
	}
	waitFor(t, "the group killed", func() bool { return wd.group() == 0 })
	if Now() < last {
		t.Error("group killed before the last deadline")
	}
}

// TestPipeEndKillsGroup: the supervisor gone (its end of the pipe
// closed, as the kernel does when it dies), the group is killed at once
// even with no deadline.
func TestPipeEndKillsGroup(t *testing.T) {
	wd := start(t, Unbounded, `sleep 60 & wait`)
	waitFor(t, "the watchdog, the command and its child", func() bool { return wd.group() == 3 })
	closed := time.Now()
	wd.pipe.Close()
	waitFor(t, "the group killed", func() bool { return wd.group() == 0 })
	if took := time.Since(closed); took > 2*time.Second {
		t.Errorf("group killed %v after the pipe ended", took)
	}
	if !strings.Contains(wd.stderr.String(), "critsec run is gone") {
		t.Errorf("stderr %q does not say why", wd.stderr)
	}
}

// TestPausedWatchdog: a watchdog stopped (SIGSTOP) across its deadline
// kills the group as soon as it resumes.
func TestPausedWatchdog(t *testing.T) {
	wd := start(t, Unbounded, `sleep 60 & wait`)
	waitFor(t, "the watchdog, the command and its child", func() bool { return wd.group() == 3 })
	wd.pipe.Write(AppendDeadline(nil, Now()+int64(200*time.Millisecond)))
	syscall.Kill(wd.cmd.Process.Pid, syscall.SIGSTOP)
	time.Sleep(400 * time.Millisecond) // the fault: a pause past the deadline
	if wd.group() != 3 {
		t.Fatal("group changed while its watchdog was stopped")
	}
	resumed := time.Now()
	syscall.Kill(wd.cmd.Process.Pid, syscall.SIGCONT)
	waitFor(t, "the group killed", func() bool { return wd.group() == 0 })
	if took := time.Since(resumed); took > time.Second {
		t.Errorf("group killed %v after the watchdog resumed", took)
	}
}

// TestPriority: the watchdog runs every thread in the real-time class
// (SCHED_FIFO), so that a machine short of processor time does not delay
// its kill, and its command and the command's child in the ordinary one
// (SCHED_OTHER); without the privilege it says so and runs on.
func TestPriority(t *testing.T) {
	wd := start(t, Unbounded, `sleep 60 & wait`)
	waitFor(t, "the watchdog, the command and its child", func() bool { return wd.group() == 3 })
	pid := wd.cmd.Process.Pid
	waitFor(t, "every thread of the watchdog real-time, or its refusal", func() bool {
		return strings.Contains(wd.stderr.String(), "normal scheduling priority") || allPolicy(t, pid, schedFIFO)
	})
	if msg := wd.stderr.String(); strings.Contains(msg, "normal scheduling priority") {
		t.Skipf("not permitted here: %s", strings.TrimSpace(msg))
	}
	procs := groupProcs(t, pid)
	if len(procs) != 3 {
		t.Fatalf("group %d: processes %v, want the watchdog, the command and its child", pid, procs)
	}
	for _, p := range procs {
		if p != pid && !allPolicy(t, p, schedOther) {
			t.Errorf("process %d of the command's group is not in the ordinary scheduling class", p)
		}
	}
}

// The scheduling policies, as /proc/PID/stat gives them.
const (
	schedOther = 0
	schedFIFO  = 1
)

// stat is the fields of a /proc stat file after the command's name: the
// process's state is stat[0], field 3 of proc(5).
func stat(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.Fields(rest)
}

// allPolicy says whether every thread of process pid has the scheduling
// policy (field 41 of proc(5)).
func allPolicy(t *testing.T, pid, policy int) bool {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(ents) == 0 {
		return false
	}
	for _, e := range ents {
		f := stat(t, fmt.Sprintf("/proc/%d/task/%s/stat", pid, e.Name()))
		if len(f) < 39 || f[38] != strconv.Itoa(policy) {
			return false
		}
	}
	return true
}

// groupProcs lists the processes of process group pgid.
func groupProcs(t *testing.T, pgid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := stat(t, fmt.Sprintf("/proc/%d/stat", p)); len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, p)
		}
	}
	return out
}

// TestExitStatus: the watchdog ends with its command's exit status, 128
// plus the signal for a command killed by one, and SIGTERM to the group
// stops the command, not the watchdog before it.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 7", 7}, {"kill -9 $$", 128 + 9}} {
		wd := start(t, Unbounded, c.script)
		err := <-wd.exited
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != c.want {
			t.Errorf("%q: watchdog exit status %d (%v), want %d", c.script, code, err, c.want)
		}
	}
	wd := start(t, Unbounded, `trap "exit 3" TERM; sleep 60 & wait`)
	waitFor(t, "the watchdog, the command and its child", func() bool { return wd.group() == 3 })
	syscall.Kill(-wd.cmd.Process.Pid, syscall.SIGTERM)
	var ee *exec.ExitError
	if err := <-wd.exited; !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("after SIGTERM to the group: watchdog ended with %v, want the command's status 3", err)
	}
}

// TestNotStarted: a lease already over, or a pipe that ends before its
// first deadline, starts nothing (status 125); a line that is not a
// deadline kills the group.
func TestNotStarted(t *testing.T) {
	wd := start(t, 0, `echo RAN >&2`)
	var ee *exec.ExitError
	if err := <-wd.exited; !errors.As(err, &ee) || ee.ExitCode() != 125 || strings.Contains(wd.stderr.String(), "RAN") {
		t.Errorf("expired lease: %v, stderr %q; want status 125 and no start", err, wd.stderr)
	}
	wd = start(t, Unbounded, `sleep 60 & wait`)
	waitFor(t, "the watchdog, the command and its child", func() bool { return wd.group() == 3 })
	wd.pipe.Write([]byte("deadline soon\n"))
	waitFor(t, "the group killed", func() bool { return wd.group() == 0 })
	if !strings.Contains(wd.stderr.String(), `deadline "soon" is not a time`) {
		t.Errorf("stderr %q does not name the bad line", wd.stderr)
	}
}

// TestReadDeadlines: the lines of the pipe, read back; a line that is
// not a deadline ends the reading with an error naming it.
func TestReadDeadlines(t *testing.T) {
	var b []byte
	want := []int64{0, 1, 1 << 62, Unbounded}
	for _, d := range want {
		b = AppendDeadline(b, d)
	}
	c := make(chan int64, len(want))
	if err := ReadDeadlines(bytes.NewReader(b), c); err != nil {
		t.Fatal(err)
	}
	for _, d := range want {
		if got := <-c; got != d {
			t.Errorf("read %d, want %d", got, d)
		}
	}
	for _, bad := range []string{"\n", "deadline\n", "deadline -5\n", "deadline x\n", "lease 5\n", strings.Repeat("9", 100)} {
		c := make(chan int64, 1)
		if err := ReadDeadlines(strings.NewReader(bad), c); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
