// Package supervise keeps a command running while a critsec node is in
// the critical section (critsec run; docs/run.md): started on
// Start, restarted with exponential backoff when it dies, and stopped on
// Stop — SIGTERM to its whole process group, SIGKILL after a grace
// period — before Stop returns, so that no process of the command
// outlives the CS.
//
// The command runs in a process group of its own (Setpgid), so that its
// children are stopped with it. The group's members are found in /proc
// (Linux): a process whose parent died is no longer the supervisor's
// child, and only its group id still ties it to the command.
//
// With Config.Watchdog the command runs under a watchdog (package fence)
// that leads its group: the supervisor hands it the lease's deadline on a
// pipe (SetDeadline), and it kills the group when the deadline passes or
// when the supervisor dies. Config.PIDFile records the running group, so
// that a supervisor started again after a kill -9 ends what its
// predecessor left (KillLeftover).
package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/critsec/critsec/fence"
)

// Config is a supervisor's settings.
type Config struct {
	// Argv is the command and its arguments.
	Argv []string
	// Grace is how long Stop waits after SIGTERM before SIGKILL; 0 means
	// DefaultGrace.
	Grace time.Duration
	// MinBackoff and MaxBackoff bound the wait before a restart, doubled
	// after each failure; 0 means DefaultMinBackoff, DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Healthy is how long a run must last for the backoff to start again
	// from MinBackoff and the failure count from 0; 0 means MaxBackoff.
	Healthy time.Duration
	// Failed, when not nil, is called (from the supervisor's goroutine)
	// with the number of consecutive failures after each one: a run that
	// ended, however, before Healthy.
	Failed func(consecutive int)
	// Stdout and Stderr receive the command's output; nil discards it.
	Stdout, Stderr io.Writer
	// Logger receives what happens to the command; nil means
	// slog.Default().
	Logger *slog.Logger
	// Watchdog, when not empty, is the command line that runs the
	// watchdog (critsec watchdog --): each run is Watchdog followed by
	// Argv, with the deadline pipe as file descriptor 3 (package fence).
	Watchdog []string
	// Env, when not nil, returns variables added to the command's
	// environment at each start (critsec run: the fencing token).
	Env func() []string
	// PIDFile, when not empty, is the file that holds the running
	// group's id and its leader's start time, removed once the group is
	// gone.
	PIDFile string
}

// The defaults of Config.
const (
	DefaultGrace      = 5 * time.Second
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
)

// Supervisor runs one command on demand. Its methods are safe for
// concurrent use.
type Supervisor struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	deadline int64         // the lease's deadline for the watchdog (fence.Unbounded: none)
	pipe     *os.File      // the current run's deadline pipe, or nil
	want     bool          // Start called, Stop not since
	loop     chan struct{} // closed when the running loop returns; nil when none
	pgid     int           // the running command's process group, 0 when none
	starts   int
	stopped  chan struct{} // closed by Stop to end the loop
}

// New returns a supervisor of cfg's command, not running it yet.
func New(cfg Config) (*Supervisor, error) {
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return nil, errors.New("no command to run: give it after --")
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.Healthy == 0 {
		cfg.Healthy = cfg.MaxBackoff
	}
	switch {
	case cfg.Grace < 0, cfg.MinBackoff < 0, cfg.Healthy < 0:
		return nil, errors.New("grace, backoff and healthy durations must not be negative")
	case cfg.MaxBackoff < cfg.MinBackoff:
		return nil, fmt.Errorf("maximum backoff %v is below the minimum %v", cfg.MaxBackoff, cfg.MinBackoff)
	}
	if _, err := exec.LookPath(cfg.Argv[0]); err != nil {
		return nil, fmt.Errorf("command %q: %w", cfg.Argv[0], err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Supervisor{cfg: cfg, log: log.With("cmd", cfg.Argv[0]), deadline: fence.Unbounded}, nil
}

// SetDeadline sets the lease's deadline on the monotonic clock
// (fence.Now; fence.Unbounded for none) and hands it to the running
// watchdog. Deadlines only grow (a lease is only renewed), so one that
// cannot be written at once, because the watchdog is not reading, is
// dropped: the watchdog then kills at the earlier one.
func (s *Supervisor) SetDeadline(d int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d == s.deadline {
		return
	}
	s.deadline = d
	if s.pipe != nil {
		s.pipe.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
		s.pipe.Write(fence.AppendDeadline(nil, d))
	}
}

// Start makes the supervisor keep the command running until Stop; it
// returns at once. Calling it while running does nothing.
func (s *Supervisor) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.want {
		return
	}
	s.want = true
	s.stopped = make(chan struct{})
	s.loop = make(chan struct{})
	go s.run(s.stopped, s.loop)
}

// Running reports whether the command should be running (Start called,
// Stop not since) and the process group of its current run (0 between
// runs).
func (s *Supervisor) Running() (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.want, s.pgid
}

// Starts returns how many times the command has been started.
func (s *Supervisor) Starts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts
}

// Stop stops the command and every process of its group: SIGTERM, then
// SIGKILL once Grace has passed, and returns once none is left or ctx
// ends (an error: processes may remain). Calling it when not running
// returns nil.
func (s *Supervisor) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.want {
		s.mu.Unlock()
		return nil
	}
	s.want = false
	close(s.stopped)
	loop := s.loop
	s.mu.Unlock()
	select {
	case <-loop:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stopping %s: %w", s.cfg.Argv[0], ctx.Err())
	}
}

// run starts the command, waits for it, and restarts it after a backoff
// until stopped is closed; then it stops the current run's group.
func (s *Supervisor) run(stopped <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	backoff, failures := s.cfg.MinBackoff, 0
	for {
		began := time.Now()
		argv := append(slices.Clone(s.cfg.Watchdog), s.cfg.Argv...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = s.cfg.Stdout, s.cfg.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if s.cfg.Env != nil {
			cmd.Env = append(os.Environ(), s.cfg.Env()...)
		}
		pipe, err := s.openPipe(cmd)
		if err != nil {
			s.log.Error("command not started: no pipe to its watchdog", "err", err)
			return
		}
		// With writers that are not files, Wait would also wait for every
		// process holding the output pipes (a leftover child) to close them.
		cmd.WaitDelay = 100 * time.Millisecond
		exited := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			s.log.Error("command did not start", "err", err)
			exited <- err
		} else {
			pgid := cmd.Process.Pid
			s.mu.Lock()
			s.pgid = pgid
			s.starts++
			s.mu.Unlock()
			s.record(pgid)
			s.log.Info("command started", "pid", pgid)
			go func() { exited <- cmd.Wait() }()
		}
		if pipe != nil {
			cmd.ExtraFiles[0].Close() // the watchdog's end
		}
		select {
		case err = <-exited:
			s.killGroup(cmd) // the leader is gone; its children must not outlive it
		case <-stopped:
			s.stopGroup(cmd, exited)
			s.closePipe()
			return
		}
		s.closePipe()
		s.mu.Lock()
		s.pgid = 0
		s.mu.Unlock()
		if time.Since(began) >= s.cfg.Healthy {
			backoff, failures = s.cfg.MinBackoff, 0
		}
		failures++
		s.log.Warn("command exited while in the critical section", "status", exitStatus(err),
			"ran", time.Since(began).Round(time.Millisecond).String(), "consecutive_failures", failures, "restart_in", backoff.String())
		if s.cfg.Failed != nil {
			s.cfg.Failed(failures)
		}
		select {
		case <-time.After(backoff):
		case <-stopped:
			return
		}
		backoff = min(2*backoff, s.cfg.MaxBackoff)
	}
}

// stopGroup stops a running command's group: SIGTERM, and SIGKILL to
// whatever is left of it after Grace.
func (s *Supervisor) stopGroup(cmd *exec.Cmd, exited <-chan error) {
	if cmd.Process == nil { // never started
		return
	}
	pgid := cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.After(s.cfg.Grace)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var status error
	leaderGone := false
	for {
		select {
		case status = <-exited:
			leaderGone = true
			if GroupAlive(pgid) == 0 {
				s.log.Info("command stopped", "pid", pgid, "status", exitStatus(status))
				s.clear()
				return
			}
		case <-tick.C:
			if leaderGone && GroupAlive(pgid) == 0 {
				s.log.Info("command stopped", "pid", pgid, "status", exitStatus(status))
				s.clear()
				return
			}
		case <-deadline:
			left := GroupAlive(pgid)
			syscall.Kill(-pgid, syscall.SIGKILL)
			if !leaderGone {
				status = <-exited
			}
			s.waitGroup(pgid)
			s.log.Warn("command killed: still running after the grace period", "pid", pgid,
				"grace", s.cfg.Grace.String(), "processes", left, "status", exitStatus(status))
			s.clear()
			return
		}
	}
}

// killGroup kills what is left of a command's group once its leader has
// exited.
func (s *Supervisor) killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	if n := GroupAlive(pgid); n > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
		s.waitGroup(pgid)
		s.log.Warn("command's leftover processes killed", "pid", pgid, "processes", n)
	}
}

// waitGroup waits, briefly, for a killed group's processes to be gone.
func (s *Supervisor) waitGroup(pgid int) {
	for range 100 {
		if GroupAlive(pgid) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Supervisor) clear() {
	s.mu.Lock()
	s.pgid = 0
	s.mu.Unlock()
	if s.cfg.PIDFile != "" {
		os.Remove(s.cfg.PIDFile)
	}
}

// openPipe gives cmd the watchdog's deadline pipe as its file descriptor
// 3, with the current deadline written in it, when the command runs under
// a watchdog; it returns the supervisor's end (nil without a watchdog).
func (s *Supervisor) openPipe(cmd *exec.Cmd) (*os.File, error) {
	if len(s.cfg.Watchdog) == 0 {
		return nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{r}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := w.Write(fence.AppendDeadline(nil, s.deadline)); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	s.pipe = w
	return w, nil
}

// closePipe closes the current run's deadline pipe, once its group is
// gone.
func (s *Supervisor) closePipe() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pipe != nil {
		s.pipe.Close()
		s.pipe = nil
	}
}

// record writes the running group's id and its leader's start time to
// the PID file.
func (s *Supervisor) record(pgid int) {
	if s.cfg.PIDFile == "" {
		return
	}
	start, _ := procStart(pgid)
	if err := os.WriteFile(s.cfg.PIDFile, fmt.Appendf(nil, "%d %d\n", pgid, start), 0o600); err != nil {
		s.log.Warn("could not record the command's process group", "file", s.cfg.PIDFile, "err", err)
	}
}

// KillLeftover ends the process group recorded in the PID file at path by
// an earlier supervisor that died without stopping it (kill -9): SIGKILL
// to the group, once /proc shows it is the same group (its leader, with
// the recorded start time, or, the leader gone, members still in the
// group: a group id is not reused while a member lives). It returns the
// number of processes killed; a missing file is no leftover.
func KillLeftover(path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var pgid int
	var start uint64
	if _, err := fmt.Sscan(string(b), &pgid, &start); err != nil || pgid < 2 {
		return 0, fmt.Errorf("%s: not a process group record (%q): remove the file if no copy of the command is left", path, b)
	}
	n := GroupAlive(pgid)
	if leader, alive := procStart(pgid); alive && leader != start {
		n = 0 // the id now belongs to another process
	}
	if n > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
		for range 200 {
			if GroupAlive(pgid) == 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return n, os.Remove(path)
}

// procStart returns the start time of process pid (field 22 of
// /proc/pid/stat, in clock ticks since boot) and whether it is alive.
func procStart(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	return v, err == nil
}

// exitStatus describes a run's end.
func exitStatus(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.String()
	}
	return err.Error()
}

// GroupAlive returns the number of live (not zombie) processes in process
// group pgid, read from /proc.
func GroupAlive(pgid int) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	n := 0
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and
		// parentheses, so read after the last ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			n++
		}
	}
	return n
}
