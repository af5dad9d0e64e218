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
package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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

	mu      sync.Mutex
	want    bool          // Start called, Stop not since
	loop    chan struct{} // closed when the running loop returns; nil when none
	pgid    int           // the running command's process group, 0 when none
	starts  int
	stopped chan struct{} // closed by Stop to end the loop
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
	return &Supervisor{cfg: cfg, log: log.With("cmd", cfg.Argv[0])}, nil
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
		cmd := exec.Command(s.cfg.Argv[0], s.cfg.Argv[1:]...)
		cmd.Stdout, cmd.Stderr = s.cfg.Stdout, s.cfg.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
			s.log.Info("command started", "pid", pgid)
			go func() { exited <- cmd.Wait() }()
		}
		var err error
		select {
		case err = <-exited:
			s.killGroup(cmd) // the leader is gone; its children must not outlive it
		case <-stopped:
			s.stopGroup(cmd, exited)
			return
		}
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
