package node

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// benchProblems are the problems of the benchmarks: raymond, kmutex and
// gcs at n = 3, 5, 9; P_n starts OutCS in each.
var benchProblems = []struct {
	alg string
	n   int
	yml string
}{
	{"raymond", 3, "alg: raymond\nn: 3\nk: 1\n"},
	{"raymond", 5, "alg: raymond\nn: 5\nk: 1\n"},
	{"raymond", 9, "alg: raymond\nn: 9\nk: 1\n"},
	{"kmutex", 3, "alg: kmutex\nn: 3\nk: 1\n"},
	{"kmutex", 5, "alg: kmutex\nn: 5\nk: 2\n"},
	{"kmutex", 9, "alg: kmutex\nn: 9\nk: 3\n"},
	{"gcs", 3, "alg: gcs\nn: 3\nl: 0\nk: 1\n"},
	{"gcs", 5, "alg: gcs\nn: 5\nl: 1\nk: 3\n"},
	{"gcs", 9, "alg: gcs\nn: 9\nl: 1\nk: 3\n"},
}

// BenchmarkUncontended measures an uncontended CS entry on loopback, the
// nodes' logs fsynced or not: one client loops Enter -> Exit on P_n while
// the others stay idle; one op is one entry and one exit.
//
//	go test ./node -run '^$' -bench Uncontended -benchtime 1000x -count 1
func BenchmarkUncontended(b *testing.B) {
	for _, c := range benchProblems {
		for _, fsync := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/n=%d/fsync=%v", c.alg, c.n, fsync), func(b *testing.B) {
				_, nodes := startClusterWith(b, c.yml, c.n, nil, func(o *Options) { o.NoSync = !fsync })
				nd, ctx := nodes[len(nodes)-1], context.Background()
				pair := func() {
					if err := nd.Enter(ctx); err != nil {
						b.Fatal(err)
					}
					if err := nd.Exit(ctx); err != nil {
						b.Fatal(err)
					}
				}
				pair() // connect
				before := sent(nodes)
				b.ResetTimer()
				for range b.N {
					pair()
				}
				b.StopTimer()
				b.ReportMetric(float64(sent(nodes)-before)/float64(b.N), "msgs/entry")
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/entry+exit")
			})
		}
	}
}

// BenchmarkThroughput measures the throughput of CS entries: every node's
// client loops Enter -> Exit (CS time 0) until b.N entries in all; one op
// is one entry.
//
//	go test ./node -run '^$' -bench Throughput -benchtime 2000x -count 1
func BenchmarkThroughput(b *testing.B) {
	for _, c := range benchProblems {
		for _, fsync := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/n=%d/fsync=%v", c.alg, c.n, fsync), func(b *testing.B) {
				_, nodes := startClusterWith(b, c.yml, c.n, nil, func(o *Options) { o.NoSync = !fsync })
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				before := sent(nodes)
				// The last exits may wait for another entry that never
				// comes (l >= 1): they are cancelled once b.N entries are
				// done.
				exits, stop := context.WithCancel(ctx)
				defer stop()
				var (
					mu            sync.Mutex
					claimed, done int
					wg            sync.WaitGroup
				)
				b.ResetTimer()
				for _, nd := range nodes {
					wg.Go(func() {
						if s, _ := nd.State(); s.String() == "InCS" {
							if nd.Exit(exits) != nil {
								return
							}
						}
						for {
							mu.Lock()
							if claimed >= b.N {
								mu.Unlock()
								return
							}
							claimed++
							mu.Unlock()
							if err := nd.Enter(ctx); err != nil {
								b.Error(err)
								return
							}
							mu.Lock()
							if done++; done == b.N {
								stop()
							}
							mu.Unlock()
							if nd.Exit(exits) != nil {
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(sent(nodes)-before)/float64(b.N), "msgs/entry")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
				var in, commits int64
				for _, nd := range nodes {
					in += nd.LogStats().Inputs
					commits += nd.LogStats().Commits
				}
				b.ReportMetric(float64(in)/float64(commits), "inputs/commit")
			})
		}
	}
}

func sent(nodes []*Node) (s int64) {
	for _, x := range nodes {
		s += x.Stats().Sent
	}
	return s
}

// BenchmarkCompaction measures what log compaction bounds and costs: one
// client loops Enter -> Exit on P_n of raymond with n = 3 (fsync off, so
// that the disk does not dominate), with compaction off, at the default
// and every 4096 records; it reports the nodes' log bytes and records at
// the end and the time per entry and exit.
//
//	go test ./node -run '^$' -bench Compaction -benchtime 100000x -count 1
func BenchmarkCompaction(b *testing.B) {
	for _, every := range []int{-1, DefaultCompactEvery, 4096} {
		b.Run(fmt.Sprintf("compact-every=%d", every), func(b *testing.B) {
			cfg, nodes := startClusterWith(b, "alg: raymond\nn: 3\nk: 1\n", 3, nil, func(o *Options) {
				o.NoSync, o.CompactEvery = true, every
			})
			nd, ctx := nodes[len(nodes)-1], context.Background()
			b.ResetTimer()
			for range b.N {
				if err := nd.Enter(ctx); err != nil {
					b.Fatal(err)
				}
				if err := nd.Exit(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var bytes, records, compactions int64
			for _, x := range nodes {
				st := x.LogStats()
				records, compactions = records+st.Records, compactions+st.Compactions
				fi, err := os.Stat(LogPath(cfg, x.id))
				if err != nil {
					b.Fatal(err)
				}
				bytes += fi.Size()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/entry+exit")
			b.ReportMetric(float64(bytes), "log-bytes")
			b.ReportMetric(float64(records), "log-records")
			b.ReportMetric(float64(compactions), "compactions")
		})
	}
}
