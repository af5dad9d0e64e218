package faults

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testcluster"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/trace"
)

// Config is a cluster of critsec run members for NewCluster.
type Config struct {
	// Dir holds every file: cluster.yaml, tls/, data/, the record
	// (record.txt), each member's output (member-I.log).
	Dir string
	// Problem is the cluster file's problem lines (alg, n, l, k) and N
	// the number of members.
	Problem string
	N       int
	// Detector is YAML appended to the cluster file (a detector section).
	Detector string
	// RunArgs are extra flags of critsec run, before --.
	RunArgs []string
	// Period, when positive, makes each member want the critical section
	// two periods in three, its own phase shifted by its id (critsec run
	// --policy signal); 0 keeps every member wanting it (--policy always).
	Period time.Duration
	// Critsec and Beat are the executables of critsec and of the
	// stand-in service (testdata/beat).
	Critsec, Beat string
}

// Cluster is N members, each a critsec run process in its own network
// namespace keeping a copy of the stand-in service running while it is
// InCS, every copy writing to one record.
type Cluster struct {
	cfg    Config
	Net    *Net
	Node   *node.Config // the cluster file, read back
	path   string       // of the cluster file
	Record string       // the record's path
	procs  []*exec.Cmd
	exited []<-chan struct{}
}

// NewCluster creates the namespaces and writes the files; Start starts
// the members. Close undoes both, also after a failure.
func NewCluster(cfg Config) (*Cluster, error) {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	addrs := make([]string, cfg.N)
	for i := range addrs {
		addrs[i] = MemberAddr(i + 1)
	}
	path, err := testcluster.Write(cfg.Dir, cfg.Problem, addrs, cfg.Detector)
	if err != nil {
		return nil, err
	}
	ncfg, err := node.ReadConfig(path)
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, Node: ncfg, path: path, Record: filepath.Join(cfg.Dir, "record.txt"),
		procs: make([]*exec.Cmd, cfg.N), exited: make([]<-chan struct{}, cfg.N)}
	if cfg.Period > 0 {
		for id := 1; id <= cfg.N; id++ {
			// in (0) two periods in three, out (1) in the third, shifted by id
			script := fmt.Sprintf("#!/bin/sh\nt=$(date +%%s%%3N)\n[ $(( (t / %d + %d) %% 3 )) -ne 0 ]\n", cfg.Period.Milliseconds(), id)
			if err := os.WriteFile(c.want(id), []byte(script), 0o755); err != nil {
				return nil, err
			}
		}
	}
	if c.Net, err = NewNet(cfg.N); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) want(id int) string { return filepath.Join(c.cfg.Dir, fmt.Sprintf("want-%d", id)) }

// Log is the path of member id's output (critsec run's and its copies').
func (c *Cluster) Log(id int) string {
	return filepath.Join(c.cfg.Dir, fmt.Sprintf("member-%d.log", id))
}

// Start starts member id's critsec run in its namespace (again after a
// kill: on the same data directory).
func (c *Cluster) Start(id int) error {
	args := []string{"netns", "exec", c.Net.Members[id-1], c.cfg.Critsec, "run", "--config", c.path, "--id", strconv.Itoa(id),
		"--fsync=false", "--grace", "1s", "--leave-timeout", "3s"}
	if c.cfg.Period > 0 {
		args = append(args, "--policy", "signal", "--signal-cmd", c.want(id), "--signal-every", "50ms")
	}
	args = append(args, c.cfg.RunArgs...)
	args = append(args, "--", c.cfg.Beat, c.Record, strconv.Itoa(id))
	cmd := exec.Command("ip", args...) // ip execs critsec in the namespace: the pid is critsec's
	done, err := testcluster.Start(cmd, c.Log(id))
	if err != nil {
		return err
	}
	c.procs[id-1], c.exited[id-1] = cmd, done
	return nil
}

// PID is member id's critsec run process.
func (c *Cluster) PID(id int) int { return c.procs[id-1].Process.Pid }

// Running says whether member id's critsec run has not exited.
func (c *Cluster) Running(id int) bool {
	if c.exited[id-1] == nil {
		return false
	}
	select {
	case <-c.exited[id-1]:
		return false
	default:
		return true
	}
}

// Status asks member id's control socket (a unix socket in its data
// directory, reachable from any namespace) for its status.
func (c *Cluster) Status(ctx context.Context, id int) (node.StatusJSON, error) {
	ctl := node.DialControl(node.ControlSocket(c.Node, cs.ID(id)))
	defer ctl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return ctl.Do(ctx, "status", 0)
}

// Until polls member id's status every 20 ms until ok holds, the member
// exits or ctx ends.
func (c *Cluster) Until(ctx context.Context, id int, what string, ok func(node.StatusJSON) bool) error {
	for {
		if a, err := c.Status(ctx, id); err == nil && ok(a) {
			return nil
		}
		if !c.Running(id) {
			return fmt.Errorf("P%d exited while waiting until %s: see %s", id, what, c.Log(id))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("P%d never %s: %w", id, what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ready waits until member id answers on its control socket.
func (c *Cluster) Ready(ctx context.Context, id int) error {
	return c.Until(ctx, id, "answered on its control socket", func(node.StatusJSON) bool { return true })
}

// Signal sends sig to process pid (SIGSTOP, SIGCONT: a pause).
func Signal(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// Descendants lists the processes below pid (children, theirs, ...), from
// /proc.
func Descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses
		if i := bytes.LastIndexByte(b, ')'); i > 0 {
			if f := strings.Fields(string(b[i+1:])); len(f) > 1 {
				parent[p], _ = strconv.Atoi(f[1])
			}
		}
	}
	var out []int
	for frontier := []int{pid}; len(frontier) > 0; {
		var next []int
		for p, pp := range parent {
			if slices.Contains(frontier, pp) {
				next = append(next, p)
			}
		}
		out = append(out, next...)
		frontier = next
	}
	slices.Sort(out)
	return out
}

// Kill kills member id's critsec run with SIGKILL and waits for it; its
// command, in a process group of its own, is left to itself.
func (c *Cluster) Kill(id int) {
	if c.Running(id) {
		c.procs[id-1].Process.Signal(syscall.SIGKILL)
	}
	<-c.exited[id-1]
}

// KillUnit kills member id's critsec run and every process below it, the
// command's process group included, with SIGKILL, as a service manager
// that kills a unit's processes together does.
func (c *Cluster) KillUnit(id int) {
	Signal(c.PID(id), syscall.SIGSTOP) // frozen, it starts nothing while its processes are listed
	below := Descendants(c.PID(id))
	c.Kill(id)
	for _, p := range below {
		syscall.Kill(-p, syscall.SIGKILL) // the command's group: its pid
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// Holders asks every member's status and returns those InCS, with no
// exit pending.
func (c *Cluster) Holders(ctx context.Context) []int {
	var in []int
	for id := 1; id <= c.cfg.N; id++ {
		if a, err := c.Status(ctx, id); err == nil && a.State == "InCS" && a.Pending == "none" {
			in = append(in, id)
		}
	}
	return in
}

// ReadRecord reads the record so far.
func (c *Cluster) ReadRecord() ([]Line, error) {
	f, err := os.Open(c.Record)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadRecord(f)
}

// Stop resumes any paused process, asks every member to stop (SIGTERM),
// waits (SIGKILL after 10 s), then kills every copy of the service the
// record names that is still alive (an orphan of a killed member).
func (c *Cluster) Stop() {
	for id := 1; id <= c.cfg.N; id++ {
		if c.Running(id) {
			for _, p := range append(Descendants(c.PID(id)), c.PID(id)) {
				syscall.Kill(p, syscall.SIGCONT)
			}
			c.procs[id-1].Process.Signal(syscall.SIGTERM)
		}
	}
	for id := 1; id <= c.cfg.N; id++ {
		if c.exited[id-1] == nil {
			continue
		}
		select {
		case <-c.exited[id-1]:
		case <-time.After(10 * time.Second):
			c.Kill(id)
		}
	}
	lines, _ := c.ReadRecord()
	seen := map[int]bool{}
	for _, l := range lines {
		if !seen[l.PID] {
			seen[l.PID] = true
			if c.isCopy(l.PID) {
				syscall.Kill(-l.PID, syscall.SIGKILL)
				syscall.Kill(l.PID, syscall.SIGKILL)
			}
		}
	}
}

// Close stops the cluster and removes its namespaces.
func (c *Cluster) Close() error {
	c.Stop()
	return c.Net.Close()
}

// CheckTrace merges the members' logs into one trace (DIR/cluster.jsonl),
// with a crash event for each of crashes, and runs the trace checker on
// it. Call it once the members stopped.
func (c *Cluster) CheckTrace(crashes ...trace.Event) (*trace.Report, error) {
	path := filepath.Join(c.cfg.Dir, "cluster.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	_, err = node.WriteClusterTrace(c.Node, f, crashes...)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("merging the logs: %w", err)
	}
	f, err = os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return trace.Check(f)
}

// readCmdline is process p's command line, its arguments separated by NUL.
func readCmdline(p int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
	return string(b), err
}

// Notes is what member id's log says of its lease, its peers and its
// failures: its warnings and errors, its leases renewed and its
// watchdogs' kills, one line each, at most max of them (the last).
func (c *Cluster) Notes(id, max int) string {
	b, err := os.ReadFile(c.Log(id))
	if err != nil {
		return err.Error()
	}
	var notes []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "lease renewed") ||
			strings.HasPrefix(l, "critsec watchdog:") {
			notes = append(notes, l)
		}
	}
	if len(notes) > max {
		notes = append([]string{fmt.Sprintf("(%d earlier lines)", len(notes)-max)}, notes[len(notes)-max:]...)
	}
	return strings.Join(notes, "\n")
}

// silentRe finds, in a line of a member's log, its time and the peers it
// voted against (majority mode: "votes=[1 3]") or declared crashed ("peer
// declared crashed ... peer=2").
var silentRe = regexp.MustCompile(`^time=(\S+) .*(?:msg="voted against a silent peer[^"]*".* votes="?\[([0-9 ]*)\]|msg="peer declared crashed" .*peer=([0-9]+))`)

// Silence is a member, By, that heard nothing from another, Of, for the
// detector's timeout: it voted against it or declared it crashed.
type Silence struct{ By, Of int }

// Silences lists, from the members' logs, every member that voted against
// or declared crashed another before time before (not while the members
// stop one after the other), once each pair, in order.
func (c *Cluster) Silences(before time.Time) []Silence {
	var out []Silence
	for id := 1; id <= c.cfg.N; id++ {
		b, _ := os.ReadFile(c.Log(id))
		for _, l := range strings.Split(string(b), "\n") {
			m := silentRe.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			if at, err := time.Parse(time.RFC3339Nano, m[1]); err != nil || !at.Before(before) {
				continue
			}
			for _, f := range strings.Fields(m[2] + " " + m[3]) {
				if j, err := strconv.Atoi(f); err == nil && !slices.Contains(out, Silence{id, j}) {
					out = append(out, Silence{id, j})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Silence) int { return cmp.Or(a.By-b.By, a.Of-b.Of) })
	return out
}

// lateRe finds, in a line of a member's log, a watchdog's kill at its
// deadline and how long after the deadline it came (fence.Watch).
var lateRe = regexp.MustCompile(`^critsec watchdog: the lease ended (\S+) ago`)

// LateKill is a kill by member Member's watchdog that came Late after
// its deadline.
type LateKill struct {
	Member int
	Late   time.Duration
}

// LateKills lists, from the members' logs, the kills of their watchdogs
// that came more than slack after their deadline, in member order.
func (c *Cluster) LateKills(slack time.Duration) []LateKill {
	var out []LateKill
	for id := 1; id <= c.cfg.N; id++ {
		b, _ := os.ReadFile(c.Log(id))
		out = append(out, lateKills(id, string(b), slack)...)
	}
	return out
}

// lateKills is LateKills for member id's log.
func lateKills(id int, log string, slack time.Duration) []LateKill {
	var out []LateKill
	for _, l := range strings.Split(log, "\n") {
		m := lateRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if d, err := time.ParseDuration(m[1]); err == nil && d > slack {
			out = append(out, LateKill{Member: id, Late: d})
		}
	}
	return out
}
