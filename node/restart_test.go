package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
	walpkg "github.com/critsec/critsec/wal"
)

// TestRestart: P_n is stopped at random moments while it requests (what
// it had not committed to its log is lost, as in a crash) and started
// again on the same log, with connections cut at random, while the others
// loop Enter and Exit all along. Each time, the restarted node comes back
// in the state its log says: its request completes if the log has it
// (else it asks again); no message is lost or delivered twice (a gap or a
// message the machine refuses stops a node: Err); at most k counted InCS.
// The merged trace of the logs passes the trace checker. The real-process
// version, with kill -9, is cmd/critsec's TestNodeKilled.
func TestRestart(t *testing.T) { testRestart(t, -1) }

// TestRestartCompacted is TestRestart with every node compacting its log
// every 16 records, so that P_n restarts from a snapshot and the records
// after it (the trace cannot be rebuilt from compacted logs: the bound is
// checked as the test counts the processes InCS).
func TestRestartCompacted(t *testing.T) { testRestart(t, 16) }

func testRestart(t *testing.T, compactEvery int) {
	rounds := 12
	if testing.Short() {
		rounds = 5
	}
	for _, c := range loopProblems[:3] { // raymond, kmutex, gcs
		t.Run(strings.SplitN(c.problem, "\n", 2)[0], func(t *testing.T) {
			cuts := &cutter{}
			compact := func(o *Options) { o.CompactEvery = compactEvery }
			cfg, nodes := startClusterWith(t, c.problem, c.n, cuts, compact)
			stop := make(chan struct{})
			go func() {
				for i := 0; ; i += 7 {
					select {
					case <-stop:
						return
					case <-time.After(25 * time.Millisecond):
						cuts.cut(i)
					}
				}
			}()
			defer close(stop)
			var in atomic.Int64
			count := func(d int64) {
				if v := in.Add(d); v > int64(c.k) {
					t.Errorf("%d processes InCS, over k = %d", v, c.k)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for _, nd := range nodes[:c.n-1] {
				wg.Go(func() {
					for range 2 * rounds {
						if s, _ := nd.State(); s == cs.InCS {
							count(-1)
							if err := nd.Exit(ctx); err != nil {
								t.Errorf("P%d exit: %v", nd.id, err)
								return
							}
							continue
						}
						if err := nd.Enter(ctx); err != nil {
							t.Errorf("P%d enter: %v", nd.id, err)
							return
						}
						count(1)
						time.Sleep(time.Millisecond)
					}
				})
			}
			const seed = 1 // of the crash times
			t.Logf("crash times drawn with seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, seed))
			v := cs.ID(c.n)
			var restored, lost int
			for r := range rounds {
				nd := nodes[v-1]
				entered := make(chan error, 1)
				go func() { entered <- nd.Enter(ctx) }()
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // the crash comes at a random time
				nd.Close()
				err := <-entered
				if err != nil && !errors.Is(err, ErrClosed) {
					t.Fatalf("round %d: enter: %v", r, err)
				}
				ln, lerr := net.Listen("tcp", cfg.Members[v-1])
				if lerr != nil {
					t.Fatal(lerr)
				}
				o := testOptions(ln, cuts)
				compact(&o)
				nd, lerr = Start(cfg, v, o)
				if lerr != nil {
					t.Fatalf("round %d: restart: %v", r, lerr)
				}
				nodes[v-1] = nd
				st := nd.Status()
				switch {
				case err == nil && st.State != cs.InCS:
					t.Fatalf("round %d: entered before the crash, %v after the restart", r, st.State)
				case st.State == cs.OutCS && st.Pending == cs.None:
					lost++ // the call never reached the log: ask again
					if err := nd.Enter(ctx); err != nil {
						t.Fatalf("round %d: enter again: %v", r, err)
					}
				default:
					restored++
					for s := range nd.Watch(ctx) {
						if s.State == cs.InCS {
							break
						}
					}
					if s, _ := nd.State(); s != cs.InCS {
						t.Fatalf("round %d: the restored request did not complete: %v", r, nd.Err())
					}
				}
				count(1)
				time.Sleep(time.Millisecond)
				count(-1)
				if err := nd.Exit(ctx); err != nil {
					t.Fatalf("round %d: exit: %v", r, err)
				}
			}
			wg.Wait()
			for _, nd := range nodes {
				if err := nd.Err(); err != nil {
					t.Errorf("P%d stopped: %v", nd.id, err)
				}
			}
			if restored == 0 {
				t.Errorf("in %d rounds the log never had the request at the crash", rounds)
			}
			if compactEvery > 0 {
				var compactions int64
				for _, nd := range nodes {
					st := nd.LogStats()
					compactions += st.Compactions
					if st.Records > int64(2*compactEvery+maxBatch+c.n) {
						t.Errorf("P%d's log holds %d records, compacting every %d", nd.id, st.Records, compactEvery)
					}
				}
				if compactions == 0 {
					t.Errorf("no node compacted its log")
				}
				snap, err := logStartsWithSnapshot(cfg, v)
				if err != nil || !snap {
					t.Errorf("P%d's log does not start with a snapshot at the end (%v): the restarts did not replay one", v, err)
				}
				return
			}
			checkClusterTrace(t, cfg, nodes)
			t.Logf("%d restarts: request restored from the log %d times, not yet logged %d times", rounds, restored, lost)
		})
	}
}

// TestLogRefused: a node refuses to start on another node's log and on a
// log damaged before its end, saying which and why.
func TestLogRefused(t *testing.T) {
	cfg, nodes := startClusterConfig(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	ctx := context.Background()
	if err := nodes[1].Enter(ctx); err != nil {
		t.Fatal(err)
	}
	nodes[0].Close()
	nodes[1].Close()
	wal := func(id int) string { return filepath.Join(cfg.Data, fmt.Sprintf("node-%d", id), "wal") }
	b1, _ := os.ReadFile(wal(1))
	b2, _ := os.ReadFile(wal(2))
	os.WriteFile(wal(2), b1, 0o600)
	if _, err := Start(cfg, 2, testOptions(nil, nil)); err == nil || !strings.Contains(err.Error(), "this is node 1's log, not node 2's") {
		t.Errorf("node 2 on node 1's log: %v", err)
	}
	b2[20] ^= 1 // in the header's fingerprint, with the call and deliveries after it
	os.WriteFile(wal(2), b2, 0o600)
	if _, err := Start(cfg, 2, testOptions(nil, nil)); !errors.Is(err, walpkg.ErrCorrupt) {
		t.Errorf("node 2 on a damaged log: %v", err)
	}
}

// checkClusterTrace closes the nodes, merges their logs into one trace
// and runs the trace checker on it: safety after every event, every recv
// matched by the oldest unmatched send of its link, requests by the
// convention.
func checkClusterTrace(t *testing.T, cfg *Config, nodes []*Node) {
	t.Helper()
	for _, nd := range nodes {
		nd.Close()
	}
	var b bytes.Buffer
	n, err := WriteClusterTrace(cfg, &b)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := trace.Check(&b)
	if err != nil {
		t.Fatalf("merged trace of %d events refused: %v", n, err)
	}
	if rep.Violation != nil {
		t.Fatalf("merged trace of %d events: %v", n, rep.Violation)
	}
	t.Logf("merged trace: %d events, #InCS in %d..%d, %d entries, %d messages in flight at the end", n, rep.MinInCS, rep.MaxInCS, sum(rep.Entries), rep.Unreceived)
}

func sum(xs []int64) (s int64) {
	for _, x := range xs {
		s += x
	}
	return s
}

// logStartsWithSnapshot reports whether node id's log's second record is a
// snapshot; the node must be closed.
func logStartsWithSnapshot(cfg *Config, id cs.ID) (bool, error) {
	var second byte
	n := 0
	_, err := walpkg.Read(LogPath(cfg, id), func(rec []byte) error {
		if n++; n == 2 {
			second = rec[0]
		}
		return nil
	})
	return second == recSnap, err
}
