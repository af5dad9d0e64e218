package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
)

// The crash comparison: a holder of the critical
// section, a separate OS process, is killed with SIGKILL while another
// client waits; the measure is the time from the kill to the waiter's
// entry. etcd: a concurrency.Mutex holder whose session lease has a TTL
// (the waiter gets the lock once the lease expires); critsec: ftraymond
// nodes with the network failure detector (the waiter enters once the
// detectors declare the holder crashed). Both sides run in this binary,
// re-executed as the holder (-holder etcd|critsec).

// crashRounds is the number of kills per row.
const crashRounds = 5

// runCrash prints the crash comparison.
func runCrash() error {
	fmt.Printf("crash: a holder (its own process) killed with SIGKILL while one client waits; time from the kill to the waiter's entry, %d kills per row\n", crashRounds)
	const row = "%-44s %10s %10s %10s\n"
	fmt.Printf(row, "system, setting", "min", "median", "max")
	for _, ttl := range []int{1, 2, 5} {
		ds, eff, err := crashEtcd(ttl)
		if err != nil {
			return fmt.Errorf("etcd, TTL %d s: %w", ttl, err)
		}
		fmt.Printf(row, fmt.Sprintf("etcd Mutex, session TTL %d s (lease TTL %d s)", ttl, eff), ds[0].Round(time.Millisecond),
			ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}
	for _, d := range []struct{ heartbeat, timeout string }{{"100ms", "500ms"}, {"50ms", "250ms"}} {
		ds, err := crashCritsec(d.heartbeat, d.timeout)
		if err != nil {
			return fmt.Errorf("critsec, timeout %s: %w", d.timeout, err)
		}
		fmt.Printf(row, fmt.Sprintf("critsec ftraymond n=3 k=1, heartbeat %s timeout %s", d.heartbeat, d.timeout), ds[0].Round(time.Millisecond),
			ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}
	return nil
}

// holder starts this binary as a holder with args and waits for it to
// print "held".
func holder(args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("holder %v: %q, %v", args, line, err)
	}
	return cmd, nil
}

// killed kills h, then waits for wait to return, and returns the time
// from the kill to wait's return.
func killed(h *exec.Cmd, wait <-chan error) (time.Duration, error) {
	time.Sleep(300 * time.Millisecond) // the waiter is waiting
	select {
	case err := <-wait:
		h.Process.Kill()
		h.Wait()
		return 0, fmt.Errorf("the waiter entered while the holder held: %v", err)
	default:
	}
	began := time.Now()
	h.Process.Kill()
	h.Wait()
	if err := <-wait; err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

// crashEtcd measures etcd with a holder session of ttl seconds; it also
// returns the lease TTL etcd granted.
func crashEtcd(ttl int) ([]time.Duration, int64, error) {
	dir, err := os.MkdirTemp("", "etcdbench-crash-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	ec, err := startEtcd(dir, 1, false)
	if err != nil {
		return nil, 0, err
	}
	defer ec.close()
	var ds []time.Duration
	var granted int64
	for r := range crashRounds {
		h, err := holder("-holder", "etcd", "-endpoint", ec.endpoints[0], "-ttl", fmt.Sprint(ttl))
		if err != nil {
			return nil, 0, err
		}
		c, err := clientv3.New(clientv3.Config{Endpoints: ec.endpoints, DialTimeout: 10 * time.Second})
		if err != nil {
			return nil, 0, err
		}
		if r == 0 { // the holder's lease, as etcd granted it
			leases, err := c.Leases(context.Background())
			if err == nil && len(leases.Leases) > 0 {
				if ttlResp, err := c.TimeToLive(context.Background(), leases.Leases[0].ID); err == nil {
					granted = ttlResp.GrantedTTL
				}
			}
		}
		s, err := concurrency.NewSession(c)
		if err != nil {
			return nil, 0, err
		}
		m := concurrency.NewMutex(s, "/crash-mutex")
		wait := make(chan error, 1)
		go func() { wait <- m.Lock(context.Background()) }()
		d, err := killed(h, wait)
		if err != nil {
			return nil, 0, err
		}
		ds = append(ds, d)
		m.Unlock(context.Background())
		s.Close()
		c.Close()
	}
	slices.Sort(ds)
	return ds, granted, nil
}

// crashCritsec measures ftraymond on three node processes: P1 holds, P2
// waits, P1 is killed; each round on a new cluster (a member declared
// crashed does not rejoin).
func crashCritsec(heartbeat, timeout string) ([]time.Duration, error) {
	var ds []time.Duration
	for range crashRounds {
		d, err := crashCritsecOnce(heartbeat, timeout)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return ds, nil
}

func crashCritsecOnce(heartbeat, timeout string) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "etcdbench-crash-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	problem := fmt.Sprintf("alg: ftraymond\nn: 3\nk: 1\ndetector:\n  heartbeat: %s\n  timeout: %s\n", heartbeat, timeout)
	cfg, lns, err := writeCritsec(dir, problem, 3)
	if err != nil {
		return 0, err
	}
	for _, ln := range lns {
		ln.Close() // the nodes listen in their own processes
	}
	path := filepath.Join(dir, "cluster.yaml")
	// P1 is the holder (it enters before printing "held"); P2 and P3 are
	// plain nodes in processes of their own too, so that the holder's
	// kill is the only thing that changes.
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
	}()
	for id := 2; id <= 3; id++ {
		cmd := exec.Command(os.Args[0], "-holder", "critsec-node", "-config", path, "-id", fmt.Sprint(id))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		procs = append(procs, cmd)
	}
	h, err := holder("-holder", "critsec", "-config", path, "-id", "1")
	if err != nil {
		return 0, err
	}
	ctl := node.DialControl(node.ControlSocket(cfg, 2))
	defer ctl.Close()
	for {
		if _, err := ctl.Do(context.Background(), "status", 0); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	wait := make(chan error, 1)
	go func() {
		a, err := ctl.Do(context.Background(), "enter", time.Minute)
		if err == nil && a.State != "InCS" {
			err = fmt.Errorf("P2 after enter: %+v", a)
		}
		wait <- err
	}()
	return killed(h, wait)
}

// runHolder is the holder process: it enters and prints "held" (or, as
// critsec-node, only serves), then waits to be killed.
func runHolder(kind, endpoint string, ttl int, config string, id int) error {
	switch kind {
	case "etcd":
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second})
		if err != nil {
			return err
		}
		s, err := concurrency.NewSession(c, concurrency.WithTTL(ttl))
		if err != nil {
			return err
		}
		if err := concurrency.NewMutex(s, "/crash-mutex").Lock(context.Background()); err != nil {
			return err
		}
	case "critsec", "critsec-node":
		cfg, err := node.ReadConfig(config)
		if err != nil {
			return err
		}
		nd, err := node.Start(cfg, cs.ID(id), node.Options{
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		})
		if err != nil {
			return err
		}
		go nd.ServeControl(context.Background(), node.ControlSocket(cfg, cs.ID(id)))
		if kind == "critsec-node" {
			select {}
		}
		// Enter once every peer is trusted: the detectors' first outputs.
		time.Sleep(time.Second)
		if err := nd.Enter(context.Background()); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-holder %q: want etcd, critsec or critsec-node", kind)
	}
	fmt.Println("held")
	select {}
}
