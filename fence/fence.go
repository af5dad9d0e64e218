// Package fence keeps a command from outliving its right to run: the
// watchdog that critsec run puts between itself and the command it
// supervises (docs/fencing.md).
//
// critsec run starts `critsec watchdog -- CMD ARGS` as the leader of a
// new process group; the watchdog starts CMD in that group and reads, on
// a pipe from critsec run (file descriptor 3), the deadline of the node's
// lease on the machine's monotonic clock (CLOCK_MONOTONIC, one clock for
// every process of the machine). It kills the whole group with SIGKILL
//
//   - when the deadline passes: the node has gone the fence time plus the
//     grace without its peers' echoes, or stopped sending deadlines because
//     it is paused (SIGSTOP, a debugger) or starved;
//   - when the pipe reaches its end: critsec run died (kill -9 included),
//     and a command must not outlive its supervisor;
//   - when it resumes from a pause of its own past the deadline (a timer
//     on the monotonic clock fires late, not never).
//
// The watchdog is a separate process so that it keeps running while
// critsec run is frozen: a paused node cannot stop anything. Once the
// command has started, it runs in the real-time scheduling class where
// it may (Prioritize), so that a machine short of processor time does not
// hold its kill back past the slack the timing argument allows
// (node.FenceSlack). Both run on
// one machine: a freeze of the whole machine (a virtual machine stopped)
// pauses the watchdog too, and that is what fencing tokens are for.
package fence

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Now is the machine's monotonic clock (CLOCK_MONOTONIC) in nanoseconds:
// the same clock in every process, unaffected by steps of the wall clock.
// A clock that cannot be read (Linux always has this one) reads as the
// end of time, so that every deadline has passed and the watchdog kills.
func Now() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return math.MaxInt64
	}
	return ts.Nano()
}

// Mono returns time t (with Go's monotonic reading) on the machine's
// monotonic clock, never later than the true value: the clock is read
// before the time to t is measured, so a pause between the two makes the
// result earlier, not later. With the clock unreadable it returns 0, a
// deadline already passed.
func Mono(t time.Time) int64 {
	now := Now()
	if now == math.MaxInt64 {
		return 0
	}
	return now + int64(time.Until(t))
}

// Unbounded is the deadline of a lease that nothing limits.
const Unbounded = int64(-1)

// AppendDeadline appends the line that tells the watchdog a deadline (on
// the monotonic clock, in nanoseconds, or Unbounded).
func AppendDeadline(b []byte, deadline int64) []byte {
	if deadline == Unbounded {
		return append(b, "deadline none\n"...)
	}
	b = append(b, "deadline "...)
	return append(strconv.AppendInt(b, deadline, 10), '\n')
}

// maxLine bounds a line of the watchdog's pipe.
const maxLine = 64

// ReadDeadlines reads the deadline lines from r and sends each to c,
// until r ends or holds a line that is not one; then it closes c and
// returns why it stopped (nil at the end of r).
func ReadDeadlines(r io.Reader, c chan<- int64) error {
	defer close(c)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, maxLine), maxLine)
	for sc.Scan() {
		d, err := parseDeadline(sc.Text())
		if err != nil {
			return err
		}
		c <- d
	}
	return sc.Err()
}

// parseDeadline reads one line of the pipe, without its newline.
func parseDeadline(line string) (int64, error) {
	v, ok := strings.CutPrefix(line, "deadline ")
	if !ok {
		return 0, fmt.Errorf("watchdog: %q is not a deadline line", line)
	}
	if v == "none" {
		return Unbounded, nil
	}
	d, err := strconv.ParseInt(v, 10, 64)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("watchdog: deadline %q is not a time on the monotonic clock", v)
	}
	return d, nil
}

// Watch is the watchdog: it reads deadlines from pipe, starts argv in
// this process's group once it has the first one (if that has not passed
// already), and returns the command's exit code when it ends (128 plus
// the signal's number for a signal). It kills the whole group, itself
// included, with SIGKILL when the latest deadline passes, or when pipe
// ends or holds a line that is not a deadline; it then does not return. It returns 125 when the command could
// not start, with the reason on stderr.
//
// SIGTERM, SIGINT and SIGHUP, sent to the group to stop the command, do
// not stop the watchdog: it ends with the command.
func Watch(argv []string, pipe io.Reader, stdin io.Reader, stdout, stderr io.Writer) int {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	deadlines := make(chan int64, 16)
	ended := make(chan error, 1)
	go func() { ended <- ReadDeadlines(pipe, deadlines) }()
	kill := func(why string) {
		fmt.Fprintf(stderr, "critsec watchdog: %s: killing the command's process group\n", why)
		syscall.Kill(-syscall.Getpgrp(), syscall.SIGKILL)
		select {} // the kill includes this process
	}
	deadline, ok := <-deadlines
	if !ok {
		fmt.Fprintf(stderr, "critsec watchdog: no deadline before the pipe ended (%v): the command was not started\n", <-ended)
		return 125
	}
	if deadline != Unbounded && Now() >= deadline {
		fmt.Fprintln(stderr, "critsec watchdog: the lease had already ended: the command was not started")
		return 125
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "critsec watchdog: %v\n", err)
		return 125
	}
	if err := Prioritize(); err != nil {
		fmt.Fprintf(stderr, "critsec watchdog: at normal scheduling priority (%v): on a machine short of processor time its kill may come late (docs/fencing.md, \"The timing argument\")\n", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(time.Hour)
	for {
		if deadline != Unbounded {
			left := time.Duration(deadline - Now())
			if left <= 0 {
				// Renewals this process was too slow to read (it was
				// paused, or starved of the processor) count: the node
				// sent them with its lease.
				time.Sleep(time.Millisecond)
				deadline = latest(deadline, deadlines)
				left = time.Duration(deadline - Now())
			}
			if deadline != Unbounded && left <= 0 {
				kill(fmt.Sprintf("the lease ended %v ago", (-left).Round(time.Millisecond)))
			}
			timer.Reset(min(left, pollEvery))
		} else {
			timer.Reset(pollEvery)
		}
		select {
		case d, ok := <-deadlines:
			if !ok {
				if err := <-ended; err != nil {
					kill(err.Error())
				}
				kill("critsec run is gone (its pipe ended)")
			}
			deadline = d
		case err := <-exited:
			return exitCode(err)
		case <-timer.C:
		}
	}
}

// Prioritize puts every thread of this process in the real-time
// scheduling class (SCHED_FIFO, its lowest priority), so that a timer
// that fires runs its thread at once, ahead of every process of the
// ordinary class: on two cores with fifteen busy processes, a timer of
// the ordinary class has fired over half a second late. Threads the Go
// runtime starts later inherit the class from the thread that starts
// them; processes started before the call keep theirs. It needs the
// privilege to do so (CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least 1)
// and returns the refusal otherwise.
func Prioritize() error {
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 1}
	done := map[int]bool{}
	// A thread started while the others are set may have been started by
	// one not set yet: look again until a pass finds no new thread.
	for range 10 {
		tids, err := threads()
		if err != nil {
			return err
		}
		fresh := false
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("sched_setattr SCHED_FIFO: %w", err)
			}
			done[tid], fresh = true, true
		}
		if !fresh {
			return nil
		}
	}
	return nil
}

// threads lists the ids of this process's threads.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// latest returns the last deadline waiting in c, or d if none (c
// closed included: the loop sees that next).
func latest(d int64, c <-chan int64) int64 {
	for {
		select {
		case v, ok := <-c:
			if !ok {
				return d
			}
			d = v
		default:
			return d
		}
	}
}

// pollEvery is the longest the watchdog sleeps between two looks at the
// clock.
const pollEvery = 50 * time.Millisecond

// exitCode is the exit code of a command that ended with err (Wait's).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 125
}
