package alg

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/causal"
	"github.com/critsec/critsec/sim"
)

// TestLocalMessages measures the messages per Exit+Entry pair of lmutin and
// lmutex against the paper's bounds, 3(|N_i|+1) in the best case and
// 6(|N_i|+1) in the worst (Lemma 3; k_i-LMUTEX exchanges the same messages
// as the LMUTIN inside it). Every pair sends |N_i|+1 Requests and |N_i|+1
// Releases and gets at least |N_i|+1 Grants, and each Request costs at
// most one Preempt, one Relinquish and one more Grant, so over a whole run
// the messages divided by Σ pairs·(|N_i|+1) must lie in 3..6; the test
// asserts that. Per process, messages are attributed to the pair that
// caused them (internal/causal), and the log shows them grouped by
// |N_i|+1 with the bounds (go test ./alg -run TestLocalMessages -v); the
// study's table of the same measure is in docs/results.md.
func TestLocalMessages(t *testing.T) {
	topos := []string{"ring:30", "star:30", "wheel:30", "torus:6x6", "random:60:0.1:7"}
	if !testing.Short() {
		topos = append(topos, "complete:20", "grid:20x20", "torus:20x20", "random:400:0.02:3")
	}
	t.Log(`| alg | topology | load | pairs | messages / Σ pairs·(\|N_i\|+1) | per process: min..max | Preempts per pair |`)
	type group struct{ msgs, pairs int64 }
	byDeg := map[string]map[int]*group{}
	for _, alg := range []string{"lmutin", "lmutex"} {
		byDeg[alg] = map[int]*group{}
		for _, topo := range topos {
			for _, load := range []struct {
				name   string
				lambda float64
			}{{"heavy", 1}, {"light", 0.05}} {
				spec := Spec{Alg: alg, Topology: topo, L: intp(1), Clamp: true}
				if alg == "lmutex" {
					spec = Spec{Alg: alg, Topology: topo, K: intp(2), Clamp: true}
				}
				pr, ms := build(t, spec)
				ms, c := causal.Wrap(ms)
				res, err := sim.Run(sim.Config{
					Machines: ms, Property: pr.Property, Lambda: load.lambda, E: 1,
					Tt: 1, TransitDist: sim.Exp, Entries: int64(40 * pr.Params.N), Drain: true, Seed: 1,
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Violation != nil {
					t.Fatalf("%s %s: %v", alg, topo, res.Violation)
				}
				var weighted, pairs, total, preempts int64
				lo, hi := 1e9, 0.0
				for i := range pr.Params.N {
					id := cs.ID(i + 1)
					size := len(pr.Params.Neighbors[i]) + 1
					p := c.Pairs(id)
					pairs += p
					weighted += p * int64(size)
					total += c.Messages[i]
					preempts += c.ByKind[i]["Preempt"]
					if p > 0 {
						r := float64(c.Messages[i]) / float64(p*int64(size))
						lo, hi = min(lo, r), max(hi, r)
						g := byDeg[alg][size]
						if g == nil {
							g = &group{}
							byDeg[alg][size] = g
						}
						g.msgs += c.Messages[i]
						g.pairs += p
					}
				}
				if total != res.Messages {
					t.Fatalf("%s %s: %d messages attributed of %d", alg, topo, total, res.Messages)
				}
				ratio := float64(total) / float64(weighted)
				t.Logf("| %s | %s | %s | %d | %.3f | %.2f..%.2f | %.3f |", alg, topo, load.name, pairs, ratio, lo, hi, float64(preempts)/float64(pairs))
				if ratio < 3 || ratio > 6 {
					t.Errorf("%s %s %s: %.3f messages per pair and neighborhood member, outside Lemma 3's 3..6", alg, topo, load.name, ratio)
				}
			}
		}
	}
	for _, alg := range []string{"lmutin", "lmutex"} {
		var rows []string
		for _, size := range slices.Sorted(maps.Keys(byDeg[alg])) {
			g := byDeg[alg][size]
			rows = append(rows, fmt.Sprintf("| %s | %d | %d | %.2f | %d..%d |", alg, size, g.pairs, float64(g.msgs)/float64(g.pairs), 3*size, 6*size))
		}
		t.Logf("| alg | \\|N_i\\|+1 | pairs | messages per pair | Lemma 3 |\n%s", strings.Join(rows, "\n"))
	}
}
