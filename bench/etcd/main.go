// Command etcdbench measures critsec against etcd side by side in one
// run: the same n clients, k permits and workload (CS time
// 0, every client loops enter -> exit) on an embedded etcd cluster, with
// etcd's concurrency.Mutex for k = 1 and the k-permit Semaphore recipe
// for k > 1, and on an in-process critsec cluster (raymond, forest, and
// for k > 1 also kmutex), fsync on and off on both sides; it prints a
// table.
//
//	cd bench/etcd && go run . -duration 5s -entries 300
//	cd bench/etcd && go run . -crash     # recovery from a holder killed with SIGKILL
//
// It is its own module so that critsec's module does not depend on etcd.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/critsec/critsec/node"
)

// locker is one client of a critical section, etcd's or critsec's.
type locker interface {
	Enter(ctx context.Context) error
	Exit(ctx context.Context) error
}

// etcdLocker is a client of etcd with its own connection and session: a
// Mutex when k = 1, a Semaphore otherwise.
type etcdLocker struct {
	c     *clientv3.Client
	s     *concurrency.Session
	enter func(context.Context) error
	exit  func(context.Context) error
}

func (l *etcdLocker) Enter(ctx context.Context) error { return l.enter(ctx) }
func (l *etcdLocker) Exit(ctx context.Context) error  { return l.exit(ctx) }

func (l *etcdLocker) close() {
	l.s.Close()
	l.c.Close()
}

func newEtcdLocker(endpoints []string, k int) (*etcdLocker, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	s, err := concurrency.NewSession(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	l := &etcdLocker{c: c, s: s}
	if k == 1 {
		m := concurrency.NewMutex(s, "/bench-mutex")
		l.enter, l.exit = m.Lock, m.Unlock
	} else {
		m := NewSemaphore(s, "/bench-sem", k)
		l.enter, l.exit = m.Acquire, m.Release
	}
	return l, nil
}

// result is one measurement.
type result struct {
	entries   int
	perSecond float64
	p50       time.Duration // median entry latency
}

// loop runs every client's enter -> exit loop for d (after one warm-up
// pair each) and fails if more than k clients are ever between the
// return of Enter and the call of Exit.
func loop(clients []locker, k int, d time.Duration) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	for _, c := range clients {
		if err := c.Enter(ctx); err != nil {
			return result{}, err
		}
		if err := c.Exit(ctx); err != nil {
			return result{}, err
		}
	}
	var (
		in       atomic.Int64
		over     atomic.Bool
		mu       sync.Mutex
		lat      []time.Duration
		wg       sync.WaitGroup
		firstErr error
	)
	start := time.Now()
	end := start.Add(d)
	for _, c := range clients {
		wg.Go(func() {
			var mine []time.Duration
			var err error
			for time.Now().Before(end) {
				t := time.Now()
				if err = c.Enter(ctx); err != nil {
					break
				}
				mine = append(mine, time.Since(t))
				if in.Add(1) > int64(k) {
					over.Store(true)
				}
				in.Add(-1)
				if err = c.Exit(ctx); err != nil {
					break
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return result{}, firstErr
	}
	if over.Load() {
		return result{}, fmt.Errorf("more than %d clients in the critical section", k)
	}
	if len(lat) == 0 {
		return result{}, fmt.Errorf("no entry in %v", d)
	}
	slices.Sort(lat)
	return result{entries: len(lat), perSecond: float64(len(lat)) / elapsed.Seconds(), p50: lat[len(lat)/2]}, nil
}

// runEtcd measures clients etcd clients (k permits) on a fresh cluster
// of members members.
func runEtcd(members, clients, k int, noFsync bool, d time.Duration) (result, error) {
	dir, err := os.MkdirTemp("", "etcdbench-etcd")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	ec, err := startEtcd(dir, members, noFsync)
	if err != nil {
		return result{}, err
	}
	defer ec.close()
	var ls []locker
	for range clients {
		l, err := newEtcdLocker(ec.endpoints, k)
		if err != nil {
			return result{}, err
		}
		defer l.close()
		ls = append(ls, l)
	}
	return loop(ls, k, d)
}

// runCritsec measures clients critsec clients (k permits, algorithm alg)
// on a fresh cluster of n nodes, clients on the last nodes (the others
// idle).
func runCritsec(alg string, n, clients, k int, noSync bool, d time.Duration) (result, error) {
	dir, err := os.MkdirTemp("", "etcdbench-critsec")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	nodes, err := startCritsec(dir, fmt.Sprintf("alg: %s\nn: %d\nk: %d\n", alg, n, k), n, noSync)
	if err != nil {
		return result{}, err
	}
	defer closeAll(nodes)
	var ls []locker
	for _, nd := range nodes[n-clients:] {
		ls = append(ls, locker(nd))
	}
	return loop(ls, k, d)
}

var _ locker = (*node.Node)(nil)

func main() {
	n := flag.Int("n", 5, "clients contending (and critsec nodes)")
	members := flag.Int("members", 1, "etcd members")
	d := flag.Duration("duration", 5*time.Second, "duration of each measurement")
	crash := flag.Bool("crash", false, "measure recovery from a holder killed with SIGKILL instead (crash.go)")
	holderKind := flag.String("holder", "", "internal: run as the holder process of -crash (etcd, critsec, critsec-node)")
	endpoint := flag.String("endpoint", "", "internal: the holder's etcd endpoint")
	ttl := flag.Int("ttl", 1, "internal: the holder's etcd session TTL in seconds")
	config := flag.String("config", "", "internal: the holder's critsec cluster configuration")
	id := flag.Int("id", 0, "internal: the holder's critsec node id")
	flag.Parse()
	if *holderKind != "" {
		if err := runHolder(*holderKind, *endpoint, *ttl, *config, *id); err != nil {
			fmt.Fprintln(os.Stderr, "etcdbench: holder:", err)
			os.Exit(1)
		}
		return
	}
	if *crash {
		if err := runCrash(); err != nil {
			fmt.Fprintln(os.Stderr, "etcdbench: crash:", err)
			os.Exit(1)
		}
		return
	}
	if *n < 2 || *members < 1 || *d <= 0 {
		fmt.Fprintln(os.Stderr, "etcdbench: need -n >= 2, -members >= 1 and -duration > 0")
		os.Exit(2)
	}
	fmt.Printf("etcd: %d member(s), concurrency.Mutex (k=1) or Semaphore (k>1); critsec: %d nodes; %v per measurement\n", *members, *n, *d)
	const row = "%-11s %-6s %15s %15s %-8s %18s %18s %12s %12s\n"
	fmt.Printf(row, "clients, k", "fsync", "etcd entries/s", "etcd p50 entry", "critsec", "critsec entries/s", "critsec p50 entry", "critsec/etcd", "critsec/etcd")
	fmt.Printf(row, "", "", "", "", "", "", "", "entries/s", "p50 entry")
	for _, fsync := range []bool{true, false} {
		for _, c := range []struct{ clients, k int }{{*n, 2}, {*n, 1}, {1, 2}, {1, 1}} {
			e, err := runEtcd(*members, c.clients, c.k, !fsync, *d)
			if err != nil {
				fmt.Fprintln(os.Stderr, "etcdbench: etcd:", err)
				os.Exit(1)
			}
			// raymond is Raymond's permission-based k-mutex (n - k
			// permissions, two message delays uncontended); kmutex the
			// quorum k-mutex of the (l,k)-GCS paper (six delays); forest
			// the token k-mutex of Bulgannawar and Vaidya (k tokens; k = 1
			// is Naimi-Trehel), where a client that holds a token and asks
			// again enters with no message.
			algs := []string{"raymond", "kmutex", "forest"}
			if c.k == 1 {
				algs = []string{"raymond", "forest"}
			}
			for _, alg := range algs {
				r, err := runCritsec(alg, *n, c.clients, c.k, !fsync, *d)
				if err != nil {
					fmt.Fprintln(os.Stderr, "etcdbench: critsec:", err)
					os.Exit(1)
				}
				fmt.Printf(row, fmt.Sprintf("%d, k=%d", c.clients, c.k), fmt.Sprint(fsync),
					fmt.Sprintf("%.0f", e.perSecond), e.p50.Round(time.Microsecond), alg, fmt.Sprintf("%.0f", r.perSecond), r.p50.Round(time.Microsecond),
					fmt.Sprintf("%.1f", r.perSecond/e.perSecond), fmt.Sprintf("%.2f", float64(r.p50)/float64(e.p50)))
			}
		}
	}
}
