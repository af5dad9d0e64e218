package supervise

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer is a concurrency-safe log destination.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newTest(t *testing.T, script string, grace time.Duration, failed func(int)) (*Supervisor, *logBuffer) {
	t.Helper()
	var lb logBuffer
	s, err := New(Config{Argv: []string{"sh", "-c", script}, Grace: grace, MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 80 * time.Millisecond, Healthy: time.Second, Failed: failed,
		Logger: slog.New(slog.NewTextHandler(&lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s, &lb
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestStopsGroup: a command and its child stop on SIGTERM at Stop, well
// before the grace period, and none of the group is left.
func TestStopsGroup(t *testing.T) {
	s, lb := newTest(t, "sleep 60 & wait", 5*time.Second, nil)
	s.Start()
	var pgid int
	waitFor(t, "the command and its child", func() bool { _, pgid = s.Running(); return pgid != 0 && GroupAlive(pgid) == 2 })
	began := time.Now()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("Stop took %v for a command that ends on SIGTERM", took)
	}
	if n := GroupAlive(pgid); n != 0 {
		t.Errorf("%d processes of the group left after Stop", n)
	}
	if !strings.Contains(lb.String(), "command stopped") {
		t.Errorf("log does not say the command stopped:\n%s", lb)
	}
}

// TestKillsAfterGrace: a command whose processes (a grandchild included)
// ignore SIGTERM is killed with SIGKILL once the grace period has passed,
// and Stop returns only when the whole group is gone.
func TestKillsAfterGrace(t *testing.T) {
	script := `trap "" TERM; (while :; do sleep 0.05; done) & while :; do sleep 0.05; done`
	s, lb := newTest(t, script, 300*time.Millisecond, nil)
	s.Start()
	var pgid int
	waitFor(t, "the command and its grandchild", func() bool { _, pgid = s.Running(); return pgid != 0 && GroupAlive(pgid) >= 2 })
	began := time.Now()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("Stop returned after %v, before the grace period", took)
	}
	if n := GroupAlive(pgid); n != 0 {
		t.Errorf("%d processes of the group left after Stop", n)
	}
	if !strings.Contains(lb.String(), "command killed: still running after the grace period") {
		t.Errorf("log does not say the command was killed:\n%s", lb)
	}
}

// TestRestartsWithBackoff: a command that exits at once is restarted
// with a doubling backoff, each failure counted, until Stop.
func TestRestartsWithBackoff(t *testing.T) {
	var mu sync.Mutex
	var counts []int
	var at []time.Time
	s, lb := newTest(t, "exit 3", time.Second, func(c int) {
		mu.Lock()
		counts, at = append(counts, c), append(at, time.Now())
		mu.Unlock()
	})
	s.Start()
	waitFor(t, "five failures", func() bool { mu.Lock(); defer mu.Unlock(); return len(counts) >= 5 })
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, c := range counts[:5] {
		if c != i+1 {
			t.Fatalf("consecutive failures reported %v, want 1, 2, 3, ...", counts)
		}
	}
	// Backoffs 10, 20, 40, 80 ms, as the log says; each gap between two
	// failures lasts at least the backoff between them (a loaded machine
	// only makes it longer).
	backoffs := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}
	said := regexp.MustCompile(`restart_in=(\S+)`).FindAllStringSubmatch(lb.String(), 4)
	for i, b := range backoffs {
		if i >= len(said) || said[i][1] != b.String() {
			t.Fatalf("restart %d: the log says %v, want the backoffs %v:\n%s", i+1, said, backoffs, lb)
		}
		if g := at[i+1].Sub(at[i]); g < b {
			t.Errorf("gap %d between failures %v: shorter than the backoff %v", i+1, g, b)
		}
	}
	if !strings.Contains(lb.String(), "status=\"exit status 3\"") {
		t.Errorf("log does not give the exit status:\n%s", lb)
	}
	if s.Starts() < 5 {
		t.Errorf("%d starts for %d failures", s.Starts(), len(counts))
	}
}

// TestLeftoverKilled: a command that exits leaving a child behind has the
// child killed before it is restarted, so runs never pile up.
func TestLeftoverKilled(t *testing.T) {
	s, lb := newTest(t, "sleep 60 & sleep 0.2; exit 0", time.Second, nil)
	s.Start()
	var first int
	waitFor(t, "the first run", func() bool { _, first = s.Running(); return first != 0 })
	waitFor(t, "a restart", func() bool { return s.Starts() >= 2 })
	if n := GroupAlive(first); n != 0 {
		t.Errorf("the first run left %d processes behind", n)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lb.String(), "command's leftover processes killed") {
		t.Errorf("log does not say the leftover child was killed:\n%s", lb)
	}
}

// TestNewRefuses: a missing command and bad durations are refused.
func TestNewRefuses(t *testing.T) {
	for _, c := range []Config{
		{},
		{Argv: []string{"/no/such/command"}},
		{Argv: []string{"sh"}, Grace: -time.Second},
		{Argv: []string{"sh"}, MinBackoff: time.Second, MaxBackoff: time.Millisecond},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestKillLeftover: a group recorded by a supervisor that died (its file
// written by Config.PIDFile) is killed, children included, and the file
// removed; a missing file is no leftover; a record whose leader id now
// belongs to another process kills nothing; a damaged record is refused
// with one line.
func TestKillLeftover(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Config{Argv: []string{"sh", "-c", "sleep 60 & wait"}, PIDFile: filepath.Join(dir, "pgid")})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	var pgid int
	waitFor(t, "the command and its child", func() bool { _, pgid = s.Running(); return pgid != 0 && GroupAlive(pgid) == 2 })
	record, err := os.ReadFile(s.cfg.PIDFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "left")
	os.WriteFile(path, record, 0o600) // as a supervisor killed with -9 leaves it
	if n, err := KillLeftover(path); err != nil || n != 2 || GroupAlive(pgid) != 0 {
		t.Errorf("KillLeftover: %d killed, %v; group now %d processes; want 2 killed and none left", n, err, GroupAlive(pgid))
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the record is still there")
	}
	s.Stop(context.Background())
	if n, err := KillLeftover(path); n != 0 || err != nil {
		t.Errorf("no record: %d, %v", n, err)
	}
	os.WriteFile(path, fmt.Appendf(nil, "%d 1\n", os.Getpid()), 0o600) // this process, another start time
	if n, err := KillLeftover(path); n != 0 || err != nil {
		t.Errorf("a reused id: %d killed, %v", n, err)
	}
	os.WriteFile(path, []byte("garbage"), 0o600)
	if _, err := KillLeftover(path); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a damaged record: %v, want one line", err)
	}
}
