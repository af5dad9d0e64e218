package sim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/alg/makki"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// TestFencing: ftraymond with crashes keeps the fencing properties after
// every event, at k = 1 and k = 2; its trace carries a token on every
// entry, which trace check verifies. Machines without tokens are refused.
func TestFencing(t *testing.T) {
	for _, k := range []int{1, 2} {
		ms, err := ftraymond.New(cs.Params{N: 5, K: k})
		if err != nil {
			t.Fatal(err)
		}
		prop, _ := property.Global(5, 0, k)
		// Long CS periods (E = 20), so that crashes hit holders.
		cfg := sim.Config{Machines: ms, Property: prop, Fencing: true, Lambda: 0.5, E: 20, Tt: 1, Entries: 300, Seed: 3,
			Crashes: []sim.Crash{{At: 30, Node: 1}, {At: 90, Node: 2}, {At: 200, Node: 4}}, Detector: detector.T, DetectDelay: 2}
		var buf bytes.Buffer
		cfg.Trace = trace.NewWriter(&buf, sim.TraceHeader(cfg, trace.Header{Alg: ftraymond.Name, N: 5, K: k}))
		res, err := sim.Run(cfg)
		if err != nil || res.Violation != nil {
			t.Fatalf("k=%d: %v %v", k, err, res.Violation)
		}
		if err := cfg.Trace.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := int64(strings.Count(buf.String(), `"fence":`)); got != res.Entries {
			t.Errorf("k=%d: %d tokens in the trace for %d entries", k, got, res.Entries)
		}
		rep, err := trace.Check(&buf)
		if err != nil || rep.Violation != nil {
			t.Errorf("k=%d: trace check: %v %v", k, err, rep.Violation)
		}
	}
	ms, err := makki.New(cs.Params{N: 3, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	prop, _ := property.Global(3, 0, 1)
	if _, err := sim.Run(sim.Config{Machines: ms, Property: prop, Fencing: true, Lambda: 1, Entries: 1}); err == nil || !strings.Contains(err.Error(), "gives no fencing tokens") {
		t.Errorf("makki with Fencing: %v, want a refusal", err)
	}
}
