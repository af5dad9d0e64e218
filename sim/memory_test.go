package sim

import (
	"runtime"
	"testing"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// heapAfter runs Raymond with n = 1000, k = 100 until simulated time T and
// returns the live heap at the end of the run, with the run's state (the
// machines, the queues, the histograms) still reachable.
func heapAfter(t *testing.T, T float64) (uint64, *Result) {
	ms, err := raymond.New(cs.Params{N: 1000, K: 100})
	if err != nil {
		t.Fatal(err)
	}
	prop, err := property.Global(len(ms), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Machines: ms, Property: prop, Lambda: 0.01, E: 1, Ts: 0.001, Tr: 0.001, Tt: 1, MaxTime: T, Seed: 1}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEngine(&cfg)
	e.loop()
	res := e.finish()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	runtime.KeepAlive(e)
	return m.HeapAlloc, res
}

// TestMemoryFlatInSimulatedTime checks that memory does not grow with
// simulated time: the live heap after a run 4 times as long is about the
// same (docs/performance.md records the numbers).
func TestMemoryFlatInSimulatedTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs n = 1000 for 250 time units (a few seconds)")
	}
	const T = 50
	h1, r1 := heapAfter(t, T)
	h4, r4 := heapAfter(t, 4*T)
	for _, r := range []*Result{r1, r4} {
		if r.Violation != nil {
			t.Fatal(r.Violation)
		}
	}
	t.Logf("T=%d: %d delivered, %d in flight, heap %.1f MiB; 4T=%d: %d delivered, %d in flight, heap %.1f MiB",
		T, r1.Delivered, r1.InFlight, float64(h1)/(1<<20), 4*T, r4.Delivered, r4.InFlight, float64(h4)/(1<<20))
	if r4.Delivered < 3*r1.Delivered {
		t.Fatalf("the 4T run delivered %d messages, the T run %d: not 4 times the work", r4.Delivered, r1.Delivered)
	}
	if float64(h4) > 1.1*float64(h1) {
		t.Fatalf("heap grew with simulated time: %d bytes after T, %d after 4T", h1, h4)
	}
}
