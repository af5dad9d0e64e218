package claims

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// TestLargestToken re-runs `section4.sh tokens` in process (row T19):
// `critsec sim --alg A --n N --k 3 --Ts 0.1 --Tr 0.1 --Tt 0.8 --E 0.0002
// --lambda 10 --entries 3000 --seed 1`, drained, and the largest words of
// a TOKEN send in its trace, which must be the row's typed figure. Under
// -short only N = 30.
func TestLargestToken(t *testing.T) {
	ns := tokenNs
	if testing.Short() {
		ns = ns[:1]
	}
	for name, want := range largestToken {
		for i, n := range ns {
			a, err := alg.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := alg.Resolve(a.SpecFor(n, 0, 3))
			if err != nil {
				t.Fatal(err)
			}
			ms, err := pr.Machines()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			cfg := sim.Config{Machines: ms, Property: pr.Property, Lambda: 10, E: 0.0002, Ts: 0.1, Tr: 0.1, Tt: 0.8,
				Entries: 3000, Drain: true, Seed: 1}
			cfg.Trace = trace.NewWriter(&buf, sim.TraceHeader(cfg, trace.Header{Alg: name, N: n, K: 3, Seed: 1, Initial: pr.Params.Initial}))
			res, err := sim.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Trace.Flush(); err != nil {
				t.Fatal(err)
			}
			if res.Violation != nil {
				t.Fatalf("%s, N = %d: %s: %s", name, n, res.Violation.Kind, res.Violation.Detail)
			}
			largest := 0
			sc := bufio.NewScanner(&buf)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var ev struct {
					Ev, Msg string
					Words   int
				}
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Ev == "send" && ev.Msg == "TOKEN" {
					largest = max(largest, ev.Words)
				}
			}
			if float64(largest) != want[i] {
				t.Errorf("%s, N = %d: largest TOKEN %d words, row T19 says %v: re-run %s tokens and update largestToken", name, n, largest, want[i], section4Cmd)
			}
		}
	}
}
