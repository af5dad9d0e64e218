package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/trace"
)

var clusterFlags struct {
	n        int
	alg      string
	l, k     int
	duration time.Duration
	chaos    bool
	kills    int
	cut      time.Duration
	fsync    bool
	dir      string
	seed     uint64
	timeout  time.Duration
}

var clusterCmd = &cobra.Command{
	Use:   "cluster --n N --alg ALG [--l L] --k K [--duration 20s] [--chaos]",
	Short: "Run a cluster of real critsec node processes on loopback, with a workload, and check it",
	Long: `cluster starts N critsec node processes on loopback (TLS files and the
configuration generated in --dir), and drives a workload through their
control sockets: one client per node loops enter -> exit (CS time 0) for
--duration. With --chaos, each node closes one of its connections at random
every --cut, and --kills times (at random moments of the run's first 70 %)
a random node is killed with SIGKILL and started again 100-300 ms later; its
client then waits for the request its node restored from its log. An
algorithm with a failure detector (ftraymond, ftgcs) gets a timeout of
--detector-timeout, by default 2 s with --chaos: a killed node must be back
before its peers declare it crashed, since a member declared crashed cannot
rejoin, and on a loaded machine a restart can take most of a second.

At the end the nodes are stopped, their write-ahead logs merged into one
trace (DIR/cluster.jsonl, runtime node, t wall-clock seconds), and the
trace checker runs on it: safety after every event, every message received
once and in order. It prints the entry and exit latency (p50, p99, as the
clients saw them through the control socket), the throughput of entries,
and the messages per entry (sends in the trace / entries in the trace).

Exit status: 0 the trace checks; 1 the trace checker found a violation; 2
bad input; 3 the cluster could not run.`,
	Args: cobra.NoArgs,
	RunE: runCluster,
}

func init() {
	f := clusterCmd.Flags()
	f.IntVar(&clusterFlags.n, "n", 5, "number of nodes")
	f.StringVar(&clusterFlags.alg, "alg", "gcs", "algorithm (critsec algorithms)")
	f.IntVar(&clusterFlags.l, "l", 0, "at least l processes InCS (global (l,k)-CS; default: the algorithm's, as in sim)")
	f.IntVar(&clusterFlags.k, "k", 0, "at most k processes InCS (default: the algorithm's, as in sim)")
	f.DurationVar(&clusterFlags.duration, "duration", 20*time.Second, "how long the clients loop")
	f.BoolVar(&clusterFlags.chaos, "chaos", false, "cut connections and kill and restart nodes")
	f.IntVar(&clusterFlags.kills, "kills", 3, "with --chaos: how many times a node is killed (0..20)")
	f.DurationVar(&clusterFlags.cut, "cut", 200*time.Millisecond, "with --chaos: each node cuts a connection this often")
	f.BoolVar(&clusterFlags.fsync, "fsync", true, "fsync the nodes' logs")
	f.StringVar(&clusterFlags.dir, "dir", "", "directory for the files (default: a new temporary directory, kept)")
	f.Uint64Var(&clusterFlags.seed, "seed", 1, "seed of the chaos's choices")
	f.DurationVar(&clusterFlags.timeout, "detector-timeout", 0, "an algorithm with a failure detector: the detector's timeout (default: 2s with --chaos, else the node's 500ms)")
	rootCmd.AddCommand(clusterCmd)
}

func runCluster(c *cobra.Command, _ []string) error {
	f := clusterFlags
	switch {
	case f.n < 2 || f.n > 32:
		return badInput("cluster: --n %d: run 2 to 32 nodes on one host", f.n)
	case f.duration <= 0 || f.duration > time.Hour:
		return badInput("cluster: --duration %s: give a positive duration up to 1h", f.duration)
	case f.kills < 0 || f.kills > 20:
		return badInput("cluster: --kills %d: give 0 to 20", f.kills)
	case f.cut < 10*time.Millisecond:
		return badInput("cluster: --cut %s: give at least 10ms", f.cut)
	}
	problem := fmt.Sprintf("alg: %s\nn: %d\n", f.alg, f.n)
	for _, b := range []struct {
		name string
		v    int
	}{{"l", f.l}, {"k", f.k}} {
		if c.Flags().Changed(b.name) { // otherwise the algorithm's default, as in sim
			problem += fmt.Sprintf("%s: %d\n", b.name, b.v)
		}
	}
	probe, err := node.ParseConfig("--alg", []byte(problem+"members:\n"+membersYAML(f.n)+"data: d\ntls:\n  ca: a\n  cert: b\n  key: c\n"))
	if err != nil {
		return badInput("cluster: %v", err)
	}
	l, k := probe.Problem.Params.L, probe.Problem.Params.K
	if timeout := f.timeout; probe.Detector.Heartbeat > 0 && (timeout > 0 || f.chaos) {
		if timeout == 0 {
			timeout = chaosTimeout
		}
		problem += fmt.Sprintf("detector:\n  timeout: %s\n", timeout)
		if _, err := node.ParseConfig("--detector-timeout", []byte(problem+"members:\n"+membersYAML(f.n)+"data: d\ntls:\n  ca: a\n  cert: b\n  key: c\n")); err != nil {
			return badInput("cluster: %v", err)
		}
	} else if timeout > 0 {
		return badInput("cluster: --detector-timeout: %s takes no failure-detector input: leave the flag out", f.alg)
	}
	dir := f.dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "critsec-cluster-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var args []string
	if !f.fsync {
		args = append(args, "--fsync=false")
	}
	if f.chaos {
		args = append(args, "--cut-every", f.cut.String())
	}
	pc, err := newProcCluster(dir, problem, f.n, args...)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer pc.stop()
	out := c.OutOrStdout()
	fmt.Fprintf(out, "cluster: %s n=%d l=%d k=%d, %s, fsync %v, chaos %v, files in %s\n", f.alg, f.n, l, k, f.duration, f.fsync, f.chaos, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for id := cs.ID(1); int(id) <= f.n; id++ {
		if err := pc.start(id); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	for id := cs.ID(1); int(id) <= f.n; id++ {
		if err := pc.ready(ctx, id); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	res := drive(pc, f.n, f.duration, f.chaos, f.kills, f.seed)
	pc.stop()
	if res.err != nil {
		return fmt.Errorf("cluster: %w", res.err)
	}

	path := filepath.Join(dir, "cluster.jsonl")
	tf, err := os.Create(path)
	if err != nil {
		return err
	}
	events, err := node.WriteClusterTrace(pc.cfg, tf)
	if cerr := tf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cluster: merging the logs: %w", err)
	}
	tb, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	rep, err := trace.Check(bytes.NewReader(tb))
	if err != nil {
		return fmt.Errorf("cluster: the merged trace %s is refused: %w", path, err)
	}
	var entries int64
	for _, e := range rep.Entries {
		entries += e
	}
	sends := int64(bytes.Count(tb, []byte(`"ev":"send"`)))
	fmt.Fprintf(out, "clients: %d entries, %d exits in %s (%.1f entries/s); %d kills, %d requests restored from a log\n",
		len(res.enter), len(res.exit), f.duration, float64(len(res.enter))/f.duration.Seconds(), res.kills, res.restored)
	fmt.Fprintf(out, "enter latency: p50 %s, p99 %s; exit latency: p50 %s, p99 %s\n",
		pct(res.enter, 50), pct(res.enter, 99), pct(res.exit, 50), pct(res.exit, 99))
	fmt.Fprintf(out, "trace %s: %d events, %d entries, %d messages, %.2f messages per entry, %d in flight at the end, %d requests pending\n",
		path, events, entries, sends, float64(sends)/float64(max(entries, 1)), rep.Unreceived, rep.Pending)
	if rep.Violation != nil {
		fmt.Fprintf(out, "trace check: VIOLATION: %v\n", rep.Violation)
		return errFailure
	}
	fmt.Fprintf(out, "trace check: ok, #InCS stayed in %d..%d (bounds %d..%d)\n", rep.MinInCS, rep.MaxInCS, rep.Lo, rep.Hi)
	return nil
}

// chaosTimeout is the detector's timeout with --chaos: well above a killed
// node's restart (100-300 ms, then the process's start) on a loaded machine.
const chaosTimeout = 2 * time.Second

// membersYAML lists n members with placeholder addresses, to validate a
// problem before any file is written.
func membersYAML(n int) string {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  %d: 127.0.0.1:%d\n", i, 1000+i)
	}
	return b.String()
}

// pct is the p-th percentile of ds (nearest rank), rounded.
func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Round(10 * time.Microsecond).String()
}

// grace is how long after the run's end a client waits for its last
// request (an exit while l >= 1 waits for another process to enter, which
// may never come once the clients stop).
const grace = 2 * time.Second

// workload is what drive measured.
type workload struct {
	enter, exit     []time.Duration
	kills, restored int
	err             error
}

// drive runs one client per node, each looping enter -> exit through the
// control socket until d has passed, and with chaos kills and restarts
// nodes. A client whose node dies waits for it to come back and then
// for the request its node restored (or asks again if the log did not
// have it).
func drive(pc *procCluster, n int, d time.Duration, chaos bool, kills int, seed uint64) workload {
	var (
		mu  sync.Mutex
		res workload
		wg  sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if res.err == nil {
			res.err = err
		}
		mu.Unlock()
	}
	deadline := time.Now().Add(d)
	stop, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	hard, cancelHard := context.WithTimeout(context.Background(), d+20*time.Second)
	defer cancelHard()
	for i := range n {
		id := cs.ID(i + 1)
		wg.Go(func() {
			ctl := pc.ctl(id)
			defer ctl.Close()
			// call makes op; on a lost node, it waits until the node is
			// back and the op's outcome is known.
			call := func(op string) (time.Duration, error) {
				start := time.Now()
				want := "InCS"
				if op == "exit" {
					want = "OutCS"
				}
				timeout := time.Until(deadline) + grace
				a, err := ctl.Do(hard, op, max(timeout, time.Second))
				for err != nil || a.State != want {
					if hard.Err() != nil || time.Now().After(deadline.Add(grace)) {
						return 0, context.DeadlineExceeded
					}
					time.Sleep(10 * time.Millisecond)
					a, err = ctl.Do(hard, "status", 0)
					if err == nil && a.State != want && a.Pending == "none" {
						// the node came back without the request: ask again
						a, err = ctl.Do(hard, op, max(time.Until(deadline)+grace, time.Second))
					}
				}
				return time.Since(start), nil
			}
			a, err := ctl.Do(hard, "status", 0)
			if err != nil {
				fail(fmt.Errorf("P%d: %w", id, err))
				return
			}
			inCS := a.State == "InCS"
			for stop.Err() == nil || inCS && time.Now().Before(deadline.Add(grace)) {
				op := "enter"
				if inCS {
					op = "exit"
				}
				dt, err := call(op)
				if err != nil {
					return // the run ends with this request pending (e.g. the last one InCS while l >= 1)
				}
				mu.Lock()
				if inCS {
					res.exit = append(res.exit, dt)
				} else {
					res.enter = append(res.enter, dt)
				}
				mu.Unlock()
				inCS = !inCS
			}
		})
	}
	if chaos && kills > 0 {
		rng := rand.New(rand.NewPCG(seed, 0x6b696c6c))
		times := make([]time.Duration, kills)
		for j := range times {
			times[j] = time.Duration(float64(d) * (0.1 + 0.6*rng.Float64()))
		}
		slices.Sort(times)
		begin := time.Now()
		for _, at := range times {
			time.Sleep(time.Until(begin.Add(at)))
			i := rng.IntN(n)
			id := cs.ID(i + 1)
			pc.kill(id)
			time.Sleep(time.Duration(100+rng.IntN(200)) * time.Millisecond)
			err := pc.start(id)
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				err = pc.ready(ctx, id)
				cancel()
			}
			if err == nil {
				ctl := pc.ctl(id)
				if a, err := ctl.Do(hard, "status", 0); err == nil && a.Pending != "none" {
					mu.Lock()
					res.restored++
					mu.Unlock()
				}
				ctl.Close()
			}
			mu.Lock()
			res.kills++
			mu.Unlock()
			if err != nil {
				fail(err)
				break
			}
		}
	}
	wg.Wait()
	return res
}
