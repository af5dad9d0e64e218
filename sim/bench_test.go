package sim_test

import (
	"testing"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/sim"
)

// benchRaymond runs Raymond's algorithm on n processes under the token
// K-mutex paper's heavy-load parameters (section 4: Ts = Tr = 0.1,
// Tt = 0.8, E = 0.0002, here with lambda = 1) for entries CS entries per
// iteration, and reports delivered messages per second of wall time.
func benchRaymond(b *testing.B, n, k int, entries int64) {
	var delivered, events int64
	for b.Loop() {
		b.StopTimer()
		ms, err := raymond.New(cs.Params{N: n, K: k})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := sim.Run(sim.Config{
			Machines: ms, Property: global(b, len(ms), 0, k), Lambda: 1, E: 0.0002,
			Ts: 0.1, Tr: 0.1, Tt: 0.8, Entries: entries, Seed: 1,
		})
		if err != nil {
			b.Fatal(err)
		}
		if res.Violation != nil {
			b.Fatal(res.Violation)
		}
		delivered += res.Delivered
		events += res.Events
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(delivered)/s, "msgs/s")
	b.ReportMetric(float64(events)/s, "events/s")
}

// BenchmarkSimRaymond100 measures the simulator's performance target: at least two
// million delivered messages per second on one core for n = 100.
func BenchmarkSimRaymond100(b *testing.B) { benchRaymond(b, 100, 10, 2000) }

// BenchmarkSimRaymond1000 shows the cost per message for n = 1000.
func BenchmarkSimRaymond1000(b *testing.B) { benchRaymond(b, 1000, 100, 200) }
