package check_test

import (
	"testing"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
)

// BenchmarkRaymond explores Raymond's algorithm, n = 4, k = 2, one
// entry/exit cycle per process (budget 2), and reports distinct states per
// second (docs/results.md, "Breadth-first speed", records the numbers).
func BenchmarkRaymond(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[workers], func(b *testing.B) {
			var states int64
			var secs float64
			for b.Loop() {
				ms, err := raymond.New(cs.Params{N: 4, K: 2})
				if err != nil {
					b.Fatal(err)
				}
				res, err := check.Run(b.Context(), check.Config{Machines: ms, Property: global(b, len(ms), 0, 2), Budget: 2, Workers: workers})
				if err != nil || res.Verdict != check.OK {
					b.Fatalf("%v %v", res.Verdict, err)
				}
				states += res.States
				secs += res.Seconds
			}
			b.ReportMetric(float64(states)/secs, "states/s")
		})
	}
}
