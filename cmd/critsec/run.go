package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/fence"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/supervise"
)

var runFlags struct {
	config, policy, signalCmd, ctl, metr string
	id, maxFailures                      int
	every, grace, minBackoff, maxBackoff time.Duration
	cooldown, leaveTimeout               time.Duration
	fsync, rejoin                        bool
}

var runCmd = &cobra.Command{
	Use:   "run --config FILE --id I [--policy always|signal|manual] -- CMD [ARGS...]",
	Short: "Keep a command running exactly while this member is in the critical section (docs/run.md)",
	Long: `run is critsec node (same FILE, same flags) that keeps CMD running exactly while
the node is InCS: it starts CMD when the node enters, stops it before the node's
exit completes (SIGTERM to CMD's process group, SIGKILL after --grace), and
restarts it with exponential backoff (--min-backoff doubling to --max-backoff)
if it dies while InCS. With the (l,k)-GCS algorithm and --policy always, the
cluster runs between l and k copies of CMD, never fewer, never more
(docs/run.md).

When to ask for entry and exit is the policy:
  always   enter at start and stay in (the l-minimum is kept: gcs's exit waits
           while leaving would leave fewer than l InCS)
  signal   run --signal-cmd every --signal-every: exit status 0 asks to be in,
           1 to be out, anything else keeps the current wish (a load signal)
  manual   only critsec ctl enter|exit, or POST /enter, /exit on the control
           socket (an HTTP call from any program)

After --max-failures consecutive failures of CMD (a run shorter than
--max-backoff counts as one), the node leaves the CS so another member can run
a copy, and asks again after --cooldown (always, signal); 0 never leaves.

CMD runs under a watchdog (critsec watchdog, the leader of CMD's process
group) that kills the whole group with SIGKILL when this process dies, and,
with an algorithm that acts on failure suspicions (ftraymond, ftgcs), when
the node's lease lapses: the detector's fence time without every needed
peer's echo, plus its grace. The cluster file's detector section sets them
and the mode (crash-stop or majority); docs/fencing.md has the argument. In
crash-stop mode a crash of any member stops every copy until it is
declared, so ftgcs with l > 0 is refused there: it needs majority mode. A
copy of CMD left by an earlier run of this member is killed before it may
enter.

SIGINT or SIGTERM stops CMD, leaves the CS (waiting up to --leave-timeout),
and stops the node. Exit status: 0 stopped by a signal; 2 bad input; 3 the
node stopped on an error (a member declared crashed stops with 3).`,
	Args: func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return badInput("run: no command: give it after --, as in critsec run --config FILE --id I -- CMD ARGS")
		}
		return nil
	},
	RunE: runRun,
}

func init() {
	f := runCmd.Flags()
	f.StringVar(&runFlags.config, "config", "", "the cluster's configuration file (YAML)")
	f.IntVar(&runFlags.id, "id", 0, "this node's process id, 1..n")
	f.StringVar(&runFlags.policy, "policy", "always", "when to ask for entry and exit: always, signal or manual")
	f.StringVar(&runFlags.signalCmd, "signal-cmd", "", "with --policy signal: a command whose exit status says whether to be in (0) or out (1)")
	f.DurationVar(&runFlags.every, "signal-every", time.Second, "with --policy signal: how often to run --signal-cmd")
	f.DurationVar(&runFlags.grace, "grace", supervise.DefaultGrace, "how long CMD has to stop after SIGTERM before SIGKILL")
	f.DurationVar(&runFlags.minBackoff, "min-backoff", supervise.DefaultMinBackoff, "the first wait before restarting CMD after it dies")
	f.DurationVar(&runFlags.maxBackoff, "max-backoff", supervise.DefaultMaxBackoff, "the longest wait before a restart; a run this long resets the backoff")
	f.IntVar(&runFlags.maxFailures, "max-failures", 5, "leave the CS after this many consecutive failures of CMD (0: never)")
	f.DurationVar(&runFlags.cooldown, "cooldown", 30*time.Second, "after leaving for failures, wait this long before asking again")
	f.DurationVar(&runFlags.leaveTimeout, "leave-timeout", 30*time.Second, "on SIGINT or SIGTERM, how long to wait for the exit from the CS")
	f.BoolVar(&runFlags.fsync, "fsync", true, "fsync the write-ahead log at each group commit")
	f.BoolVar(&runFlags.rejoin, "rejoin-with-empty-log", false, "start on an empty log although the peers remember this member (unsafe unless it was OutCS and held nothing: docs/network.md)")
	f.StringVar(&runFlags.ctl, "ctl", "", "the control socket's path (default DATA/node-I/ctl.sock)")
	f.StringVar(&runFlags.metr, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics")
	rootCmd.AddCommand(runCmd)
}

// runPolicies are the values of --policy.
var runPolicies = []string{"always", "signal", "manual"}

func runRun(c *cobra.Command, args []string) error {
	f := runFlags
	switch {
	case !slices.Contains(runPolicies, f.policy):
		return badInput("run: --policy %q is not one of always, signal, manual", f.policy)
	case f.policy == "signal" && f.signalCmd == "":
		return badInput("run: --policy signal needs --signal-cmd: the command whose exit status says in (0) or out (1)")
	case f.policy != "signal" && f.signalCmd != "":
		return badInput("run: --signal-cmd is only read with --policy signal")
	case f.every <= 0:
		return badInput("run: --signal-every %v must be positive", f.every)
	case f.maxFailures < 0:
		return badInput("run: --max-failures %d is negative: give a count, or 0 never to leave", f.maxFailures)
	case f.cooldown < 0 || f.leaveTimeout < 0:
		return badInput("run: --cooldown and --leave-timeout must not be negative")
	}
	if f.signalCmd != "" {
		if _, err := exec.LookPath(f.signalCmd); err != nil {
			return badInput("run: --signal-cmd %q: %v", f.signalCmd, err)
		}
	}
	cfg, id, err := loadMember("run", f.config, f.id)
	if err != nil {
		return err
	}
	if err := lowerBoundMode(cfg, f.config); err != nil {
		return err
	}
	nodeLog := slog.New(slog.NewTextHandler(c.ErrOrStderr(), nil))
	log := nodeLog.With("node", int(id)) // the node adds its id to its own lines
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("run: cannot find critsec's own binary for the watchdog: %w", err)
	}
	r := &runner{policy: f.policy, log: log, maxFailures: f.maxFailures, cooldown: f.cooldown}
	pidFile := filepath.Join(node.NodeDir(cfg, id), "command.pgid")
	r.sup, err = supervise.New(supervise.Config{Argv: args, Grace: f.grace, MinBackoff: f.minBackoff, MaxBackoff: f.maxBackoff,
		Failed: r.failed, Stdout: os.Stdout, Stderr: os.Stderr, Logger: log, // files: CMD writes to them directly
		Watchdog: []string{exe, "watchdog", "--"}, PIDFile: pidFile, Env: r.fenceEnv})
	if err != nil {
		return badInput("run: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(pidFile), 0o700); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	// A copy left by an earlier run of this member (killed with -9 before
	// it could stop it) goes before this one may enter.
	if killed, err := supervise.KillLeftover(pidFile); err != nil {
		return fmt.Errorf("run: %w", err)
	} else if killed > 0 {
		log.Warn("killed the command left running by an earlier run of this member", "processes", killed)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	nd, err := node.Start(cfg, id, node.Options{Logger: nodeLog, NoSync: !f.fsync, BeforeExit: r.beforeExit,
		RejoinWithEmptyLog: f.rejoin})
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	r.nd = nd
	sock, srvErr, err := serveMember(ctx, "run", nd, cfg, f.ctl, f.metr)
	if err != nil {
		return err
	}
	log.Info("run started", "alg", cfg.Problem.Alg.Name, "policy", f.policy, "cmd", args[0], "ctl", sock)
	go r.follow(ctx)
	go r.guard(ctx)
	switch f.policy {
	case "always":
		r.setWant(true)
	case "signal":
		go r.poll(ctx, f.signalCmd, f.every)
	}
	select {
	case <-ctx.Done():
	case <-nd.Done():
	case err = <-srvErr:
	}
	return r.shutdown(err, f.leaveTimeout)
}

// lowerBoundMode refuses a cluster whose lower bound fencing would break
// at every crash: an algorithm that acts on suspicions with l > 0 in
// crash-stop mode, where a crash of any peer stops every holder's command
// until the peer is declared crashed (docs/fencing.md, "Two modes"). In
// majority mode the lease needs only a majority's echoes, so the copies of
// the live holders run on through the crash of a minority.
func lowerBoundMode(cfg *node.Config, path string) error {
	l := cfg.Problem.Params.L
	if cfg.Detector.Heartbeat == 0 || l == 0 || cfg.Detector.Mode == node.ModeMajority {
		return nil
	}
	return badInput("run: %s: %s with l = %d needs the detector's majority mode (detector: mode: majority): "+
		"in crash-stop mode a crash of any member stops every copy for about timeout - fence (%v), below l (docs/fencing.md)",
		path, cfg.Problem.Alg.Name, l, cfg.Detector.Timeout-cfg.Detector.Fence)
}

// runner drives a node and a supervisor for critsec run: the command runs
// while the node is InCS with no exit under way.
type runner struct {
	nd          *node.Node
	sup         *supervise.Supervisor
	policy      string
	log         *slog.Logger
	maxFailures int
	cooldown    time.Duration

	mu       sync.Mutex
	fenced   bool      // the node's lease has lapsed: the command must not run
	stopping bool      // shutting down: the runner makes no more calls
	want     bool      // the policy's wish: to be InCS
	leaving  bool      // an exit is under way: the command must not start
	leaveAt  uint64    // the node's Status.Changes when it began
	cooling  time.Time // no entry asked before this (after failures)
	inFlight bool      // an Enter or Exit call of the runner is under way
}

// beforeExit is the node's BeforeExit: every exit, the runner's or the
// control socket's, stops the command first. The stop is not cut short
// by the caller's context: it is bounded by the grace period anyway, and
// a half-stopped command must not stay behind.
func (r *runner) beforeExit(ctx context.Context) error {
	changes := r.nd.Status().Changes
	r.mu.Lock()
	r.leaving, r.leaveAt = true, changes
	r.mu.Unlock()
	return r.sup.Stop(context.WithoutCancel(ctx))
}

// follow starts the command whenever the node is InCS with nothing
// pending, no exit under way and no shutdown, and asks for what the
// policy wants at each change. The decision and Start are made under mu,
// where beforeExit and shutdown mark an exit or the shutdown before they
// stop the command: a start can come before their stop, never after.
func (r *runner) follow(ctx context.Context) {
	for st := range r.nd.Watch(ctx) {
		r.mu.Lock()
		if r.leaving && st.Changes > r.leaveAt { // the exit completed (statuses coalesce: maybe entered again)
			r.leaving = false
		}
		r.startIf(st)
		r.mu.Unlock()
		r.act(ctx)
	}
}

// startIf starts the command if the node is InCS with nothing pending,
// no exit under way, no shutdown and a valid lease; r.mu is held.
func (r *runner) startIf(st node.Status) {
	if st.State == cs.InCS && st.Pending == cs.None && !r.leaving && !r.stopping && !r.fenced {
		r.sup.Start()
	}
}

// fenceEnv is the command's environment at each start: its CS period's
// fencing token (docs/fencing.md, "Fencing tokens"), when the algorithm
// gives one.
func (r *runner) fenceEnv() []string {
	f := r.nd.Status().Fence
	if f == nil {
		return nil
	}
	ids := make([]string, 0, f.Crashed.Len())
	for _, j := range f.Crashed.Members() {
		ids = append(ids, strconv.Itoa(int(j)))
	}
	return []string{"CRITSEC_FENCE=" + strconv.FormatUint(f.Seq, 10), "CRITSEC_FENCE_CRASHED=" + strings.Join(ids, ",")}
}

// guard keeps the watchdog's deadline at the node's lease (plus the
// grace) and the command stopped while the lease has lapsed
// (docs/fencing.md): it stops it (SIGTERM) when the lease ends, the
// watchdog kills what is left at the deadline, and it starts it again if
// the lease is renewed.
func (r *runner) guard(ctx context.Context) {
	grace := r.nd.Detector().Grace
	tick := time.NewTicker(guardEvery)
	defer tick.Stop()
	for {
		l := r.nd.Lease()
		switch {
		case !l.Bounded:
			r.sup.SetDeadline(fence.Unbounded)
		case l.Until.IsZero():
			r.sup.SetDeadline(0) // no lease yet
		default:
			r.sup.SetDeadline(fence.Mono(l.Until.Add(grace)))
		}
		fenced := !l.Valid(time.Now())
		r.mu.Lock()
		changed := fenced != r.fenced
		r.fenced = fenced
		if changed && !fenced {
			r.startIf(r.nd.Status())
		}
		r.mu.Unlock()
		if changed && fenced {
			if running, _ := r.sup.Running(); running {
				r.log.Warn("lease lapsed: stopping the command (the peers may declare this member crashed)",
					"until", l.Until.Format(time.StampMilli))
			}
			go r.sup.Stop(context.Background()) // SIGTERM now; the watchdog's SIGKILL at the deadline
		} else if changed {
			r.log.Info("lease renewed", "until", l.Until.Format(time.StampMilli))
		}
		select {
		case <-ctx.Done():
			return
		case <-r.nd.Done():
			return
		case <-tick.C:
		}
	}
}

// guardEvery is how often guard looks at the lease.
const guardEvery = 10 * time.Millisecond

// setWant records the policy's wish and acts on it.
func (r *runner) setWant(in bool) {
	r.mu.Lock()
	changed := r.want != in
	r.want = in
	r.mu.Unlock()
	if changed {
		r.log.Info("policy", "want", map[bool]string{true: "in", false: "out"}[in])
	}
	r.act(context.Background())
}

// act makes one Enter or Exit call if the node's state differs from the
// wish (manual: never), unless one is under way or the node cools down.
func (r *runner) act(ctx context.Context) {
	s, p := r.nd.State()
	r.mu.Lock()
	var op cs.Op
	switch {
	case r.policy == "manual" || r.stopping || r.inFlight || p != cs.None:
	case r.want && s == cs.OutCS && time.Now().After(r.cooling):
		op = cs.Entry
	case !r.want && s == cs.InCS:
		op = cs.Exit
	}
	if op == cs.None {
		r.mu.Unlock()
		return
	}
	r.inFlight = true
	r.mu.Unlock()
	go func() {
		var err error
		if op == cs.Entry {
			err = r.nd.Enter(ctx)
		} else {
			err = r.nd.Exit(ctx)
		}
		r.mu.Lock()
		r.inFlight = false
		r.mu.Unlock()
		if err != nil && !errors.Is(err, node.ErrClosed) && ctx.Err() == nil {
			r.log.Warn("call failed", "op", op.String(), "err", err)
		}
		r.act(ctx)
	}()
}

// failed is the supervisor's failure count: at maxFailures in a row the
// node leaves the CS so another member can run a copy, and asks again
// after the cool-down.
func (r *runner) failed(consecutive int) {
	if r.maxFailures == 0 || consecutive < r.maxFailures {
		return
	}
	r.log.Error("command failed too often: leaving the critical section so another member can run it",
		"consecutive_failures", consecutive, "ask_again_in", r.cooldown.String())
	r.mu.Lock()
	r.cooling = time.Now().Add(r.cooldown)
	r.mu.Unlock()
	go func() {
		if err := r.nd.Exit(context.Background()); err != nil && !errors.Is(err, node.ErrClosed) {
			r.log.Warn("leaving after failures", "err", err)
		}
		if r.policy != "manual" {
			time.Sleep(r.cooldown)
			r.act(context.Background())
		}
	}()
}

// poll runs the signal command every interval and sets the wish from
// its exit status.
func (r *runner) poll(ctx context.Context, cmd string, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, max(every, time.Second))
		err := exec.CommandContext(cctx, cmd).Run()
		cancel()
		var ee *exec.ExitError
		switch {
		case err == nil:
			r.setWant(true)
		case errors.As(err, &ee) && ee.ExitCode() == 1:
			r.setWant(false)
		case ctx.Err() == nil:
			r.log.Warn("signal command: keeping the current wish", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// shutdown stops the command, leaves the CS if in it, and closes the
// node; cause is why the run ends (nil for a signal).
func (r *runner) shutdown(cause error, leave time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), leave)
	defer cancel()
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	if err := r.sup.Stop(context.Background()); err != nil {
		r.log.Error("stopping the command", "err", err)
	}
	if s, p := r.nd.State(); s == cs.InCS || p == cs.Entry {
		if p == cs.Entry {
			r.log.Warn("stopping with an entry pending: the node is left to complete and exit it on restart")
		} else if err := r.nd.Exit(ctx); err != nil {
			r.log.Warn("could not leave the critical section before stopping", "err", err)
		} else {
			r.log.Info("left the critical section")
		}
	}
	err := r.nd.Err()
	r.nd.Close()
	if cause == nil && err != nil && !errors.Is(err, node.ErrClosed) {
		cause = err
	}
	if cause != nil {
		return fmt.Errorf("run: %w", cause)
	}
	return nil
}
