package node

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkUncontended measures an uncontended CS entry on loopback: one
// client loops Entry -> Exit on P1 while the others stay idle; one op is
// one entry and one exit. No write-ahead log yet (issue 15, item 4).
//
//	go test ./node -run '^$' -bench Uncontended -benchtime 2000x -count 3
func BenchmarkUncontended(b *testing.B) {
	for _, c := range []struct {
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
	} {
		b.Run(fmt.Sprintf("%s/n=%d", c.alg, c.n), func(b *testing.B) {
			nodes := startCluster(b, c.yml, c.n, nil)
			nd, ctx := nodes[len(nodes)-1], context.Background() // P_n starts OutCS in every problem here
			pair := func() {
				if err := nd.Enter(ctx); err != nil {
					b.Fatal(err)
				}
				if err := nd.Exit(ctx); err != nil {
					b.Fatal(err)
				}
			}
			pair() // connect
			var before int64
			for _, x := range nodes {
				before += x.Stats().Sent
			}
			b.ResetTimer()
			for range b.N {
				pair()
			}
			b.StopTimer()
			var after int64
			for _, x := range nodes {
				after += x.Stats().Sent
			}
			b.ReportMetric(float64(after-before)/float64(b.N), "msgs/entry")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/entry+exit")
		})
	}
}
