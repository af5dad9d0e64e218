package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
)

// writeTLS writes a CA and n node certificates to dir, as critsec certs
// does.
func writeTLS(t testing.TB, dir string, n int) {
	t.Helper()
	ca, err := transport.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.crt", ca.PEM)
	for i := 1; i <= n; i++ {
		crt, key, err := ca.Issue(cs.ID(i))
		if err != nil {
			t.Fatal(err)
		}
		write(fmt.Sprintf("node-%d.crt", i), crt)
		write(fmt.Sprintf("node-%d.key", i), key)
	}
}

// cutter records the connections nodes dial, to cut them at random.
type cutter struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (c *cutter) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
	}
	return conn, err
}

// cut closes the i-th connection (mod their number) of those dialed and
// not cut yet.
func (c *cutter) cut(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.conns) > 0 {
		i %= len(c.conns)
		c.conns[i].Close()
		c.conns = slices.Delete(c.conns, i, i+1)
	}
}

// startCluster writes a configuration with problem (YAML lines) for n
// loopback members and starts them all; cuts, when not nil, records their
// connections.
func startCluster(t testing.TB, problem string, n int, cuts *cutter) []*Node {
	t.Helper()
	_, nodes := startClusterConfig(t, problem, n, cuts)
	return nodes
}

// testOptions are the nodes' options in tests: errors logged only, fast
// reconnections, connections recorded by cuts if not nil.
func testOptions(ln net.Listener, cuts *cutter) Options {
	return Options{
		Listener: ln,
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Transport: func(c *transport.Config) {
			c.MinBackoff, c.MaxBackoff = time.Millisecond, 20*time.Millisecond
			if cuts != nil {
				c.Dial = cuts.dial
			}
		},
	}
}

// startClusterConfig is startCluster, also returning the configuration.
// The caller may replace a node of the slice (a restart): the cleanup
// closes those in it at the end.
func startClusterConfig(t testing.TB, problem string, n int, cuts *cutter) (*Config, []*Node) {
	t.Helper()
	return startClusterWith(t, problem, n, cuts, nil)
}

// startClusterWith is startClusterConfig with adjust, if not nil, called
// on each node's options.
func startClusterWith(t testing.TB, problem string, n int, cuts *cutter, adjust func(*Options)) (*Config, []*Node) {
	t.Helper()
	dir := t.TempDir()
	writeTLS(t, dir, n)
	lns := make([]net.Listener, n)
	var members strings.Builder
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
		fmt.Fprintf(&members, "  %d: %s\n", i+1, ln.Addr())
	}
	text := problem + "members:\n" + members.String() + "data: data\ntls:\n  ca: ca.crt\n  cert: node-{id}.crt\n  key: node-{id}.key\n"
	path := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]*Node, n)
	for i := range nodes {
		o := testOptions(lns[i], cuts)
		if adjust != nil {
			adjust(&o)
		}
		nodes[i], err = Start(cfg, cs.ID(i+1), o)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.Close()
		}
	})
	return cfg, nodes
}

// TestClusterLoops runs raymond, kmutex, gcs and lmutex on real loopback
// TCP: every node alternates Entry and Exit; the processes counted InCS
// (from Entry's return to Exit's call, a subset of those really InCS)
// never exceed k, and every request completes. With chaos, connections
// are cut at random all along: the channels hide it.
func TestClusterLoops(t *testing.T)      { testClusterLoops(t, false) }
func TestClusterLoopsChaos(t *testing.T) { testClusterLoops(t, true) }

// loopProblems are the clusters of the loop and restart tests, with the
// most processes InCS at once.
var loopProblems = []struct {
	problem string
	n, k    int
}{
	{"alg: raymond\nn: 3\nk: 1\n", 3, 1},
	{"alg: kmutex\nn: 5\nk: 2\n", 5, 2},
	{"alg: gcs\nn: 5\nl: 1\nk: 3\n", 5, 3},
	{"alg: lmutex\ntopology: ring:5\nk: 1\n", 5, 2}, // k_i = 1 on a ring: at most 2 of 5 InCS
}

func testClusterLoops(t *testing.T, chaos bool) {
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for _, c := range loopProblems {
		t.Run(strings.SplitN(c.problem, "\n", 2)[0], func(t *testing.T) {
			var cuts *cutter
			if chaos {
				cuts = &cutter{}
			}
			cfg, nodes := startClusterConfig(t, c.problem, c.n, cuts)
			stop := make(chan struct{})
			defer close(stop)
			if chaos {
				every := 3 * time.Millisecond
				if testing.Short() {
					every = 20 * time.Millisecond // a TLS handshake is slow under -race
				}
				go func() {
					for i := 0; ; i += 7 {
						select {
						case <-stop:
							return
						case <-time.After(every):
							cuts.cut(i)
						}
					}
				}()
			}
			var in, most atomic.Int64
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for _, nd := range nodes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 2 * rounds {
						if s, _ := nd.State(); s == cs.InCS {
							in.Add(-1)
							if err := nd.Exit(ctx); err != nil {
								t.Errorf("P%d exit: %v", nd.id, err)
								return
							}
							continue
						}
						if err := nd.Enter(ctx); err != nil {
							t.Errorf("P%d entry: %v", nd.id, err)
							return
						}
						v := in.Add(1)
						for m := most.Load(); v > m && !most.CompareAndSwap(m, v); m = most.Load() {
						}
						if v > int64(c.k) {
							t.Errorf("%d processes InCS, over k = %d", v, c.k)
						}
						time.Sleep(time.Millisecond) // stay a little, so others overlap
					}
				}()
			}
			wg.Wait()
			var sent, reconnects int64
			for _, nd := range nodes {
				if err := nd.Err(); err != nil {
					t.Errorf("P%d stopped: %v", nd.id, err)
				}
				sent += nd.Stats().Sent
				reconnects += nd.Stats().Reconnects
			}
			if chaos && reconnects == 0 {
				t.Error("no connection was cut")
			}
			t.Logf("%d messages, %d reconnects, at most %d counted InCS at once", sent, reconnects, most.Load())
			checkClusterTrace(t, cfg, nodes)
		})
	}
}

// TestEntryConvention: a call that breaks the invocation convention fails
// at once with cs.ErrConvention; a closed node says ErrClosed.
func TestEntryConvention(t *testing.T) {
	nodes := startCluster(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	ctx := context.Background()
	if err := nodes[0].Exit(ctx); !errors.Is(err, ErrInvalid) || !errors.Is(err, cs.ErrConvention) {
		t.Errorf("exit while OutCS: %v", err)
	}
	if err := nodes[0].Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if s, p := nodes[0].State(); s != cs.InCS || p != cs.None {
		t.Errorf("after entry: %v, pending %v", s, p)
	}
	nodes[1].Close()
	if err := nodes[1].Enter(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("entry on a closed node: %v", err)
	}
}

// TestStatusFence: while InCS, the status of a node whose algorithm gives
// fencing tokens has the CS period's token, and the control endpoint
// shows it; outside the CS it has none. Each entry's Seq exceeds the
// other member's earlier one.
func TestStatusFence(t *testing.T) {
	nodes := startCluster(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	ctx := context.Background()
	var last uint64
	for _, nd := range []*Node{nodes[0], nodes[1], nodes[0]} {
		if err := nd.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		f := nd.Status().Fence
		if f == nil || f.Seq <= last || f.Crashed.Len() != 0 {
			t.Fatalf("P%d InCS: fence %+v, want seq above %d and no crashed", nd.id, f, last)
		}
		last = f.Seq
		rec := httptest.NewRecorder()
		nd.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/status", nil))
		if want := fmt.Sprintf(`"fence":{"seq":%d,"crashed":[]}`, f.Seq); !strings.Contains(rec.Body.String(), want) {
			t.Errorf("P%d status: %s, want %s", nd.id, rec.Body.String(), want)
		}
		if err := nd.Exit(ctx); err != nil {
			t.Fatal(err)
		}
		if f := nd.Status().Fence; f != nil {
			t.Errorf("P%d OutCS: fence %+v, want none", nd.id, f)
		}
	}
}
