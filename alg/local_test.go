package alg

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/topology"
)

// build resolves spec and builds its machines, or fails the test.
func build(t *testing.T, spec Spec) (*Problem, []cs.Machine) {
	t.Helper()
	pr, err := Resolve(spec)
	if err != nil {
		t.Fatalf("%+v: %v", spec, err)
	}
	ms, err := pr.Machines()
	if err != nil {
		t.Fatal(err)
	}
	return pr, ms
}

// smallGraphs are the connected graphs of 3 and 4 processes, one of each
// isomorphism class: P3 and K3; P4, the star K1,3, C4, the paw, the
// diamond and K4.
var smallGraphs = []string{"path:3", "complete:3", "path:4", "star:4", "ring:4", "testdata/paw.edges", "testdata/diamond.edges", "complete:4"}

// localBoundsCases returns the bounds the small-graph checks use for alg on
// g, by name: uniform ones, each process's extreme, and a mix written to a
// bounds file in dir.
func localBoundsCases(t *testing.T, alg string, g *topology.Graph, dir string) map[string]Spec {
	t.Helper()
	var mixed strings.Builder
	for i := 1; i <= g.N(); i++ {
		d := g.Degree(cs.ID(i))
		if strings.HasPrefix(alg, "lmutin") {
			fmt.Fprintf(&mixed, "%d: %d max\n", i, (i-1)%(d+1)) // l_i = 0, 1, 2, ... within 0..|N_i|
		} else {
			fmt.Fprintf(&mixed, "%d: 0 %d\n", i, 1+(i-1)%(d+1)) // k_i = 1, 2, 3, ... within 1..|N_i|+1
		}
	}
	file := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(alg+g.String())+".bounds")
	if err := os.WriteFile(file, []byte(mixed.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	big := 99
	if strings.HasPrefix(alg, "lmutin") {
		return map[string]Spec{
			"l=0":     {L: intp(0)},
			"l=1":     {L: intp(1)},
			"l=|N_i|": {L: &big, Clamp: true},
			"mixed":   {Bounds: file},
		}
	}
	return map[string]Spec{
		"k=1":       {K: intp(1)},
		"k=2":       {K: intp(2), Clamp: true},
		"k=|N_i|+1": {K: &big, Clamp: true},
		"mixed":     {Bounds: file},
	}
}

// TestLocalSmallGraphs model checks lmutin and lmutex (the corrected
// variant) on every connected graph of 3 and 4 processes, each with
// uniform, extreme and mixed bounds and the default initial
// configuration: budget 2 (one full cycle per process) on 3 processes,
// budget 1 on 4 (K4 without the mixed bounds, whose space exceeds 10^8
// states; lmutex on the diamond and K4 with k = 1 only, from P1 InCS),
// and budget 2 on P4 and the star as well. Under -short:
// P3 only. The counts are in
// docs/results.md.
func TestLocalSmallGraphs(t *testing.T) {
	dir := t.TempDir()
	type run struct {
		topo   string
		budget int
	}
	var runs []run
	for _, topo := range smallGraphs {
		budget := 1
		if strings.HasSuffix(topo, ":3") {
			budget = 2
		}
		if testing.Short() && topo != "path:3" {
			continue
		}
		runs = append(runs, run{topo, budget})
	}
	if !testing.Short() {
		runs = append(runs, run{"path:4", 2}, run{"star:4", 2})
	}
	for _, alg := range []string{"lmutin", "lmutex"} {
		for _, r := range runs {
			g, err := topology.ByName(r.topo)
			if err != nil {
				t.Fatal(err)
			}
			cases := localBoundsCases(t, alg, g, dir)
			for _, name := range []string{"l=0", "l=1", "l=|N_i|", "k=1", "k=2", "k=|N_i|+1", "mixed"} {
				spec, ok := cases[name]
				switch {
				case !ok:
					continue
				case r.budget == 2 && g.N() == 4 && name != "l=1" && name != "k=1":
					continue // budget 2 on P4 and the star: one bound each
				case r.topo == "complete:4" && name == "mixed":
					continue // more than 10^8 states at budget 1
				case alg == "lmutex" && (r.topo == "complete:4" || strings.HasSuffix(r.topo, "diamond.edges")):
					// With nobody InCS, all four entries race: K4 with k = 1
					// exceeds 2.5*10^8 states. Start with P1 InCS (the
					// complement of lmutin's l=|N_i| start), k = 1 only.
					if name != "k=1" {
						continue
					}
					spec.Initial = []cs.ID{1}
				}
				spec.Alg, spec.Topology = alg, r.topo
				pr, ms := build(t, spec)
				runtime.GC() // MaxMemory reads the heap live at the last collection
				start := time.Now()
				res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: pr.Property, Budget: r.budget, Workers: 2, MaxMemory: 8 << 30})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("| %s | %s | %s | %v | %d | %s | %d | %.1f s |", alg, r.topo, name, pr.Params.Initial, r.budget, res.Verdict, res.States, time.Since(start).Seconds())
				if res.Verdict != check.OK {
					t.Errorf("%s on %s, %s, budget %d: %s %s %v", alg, r.topo, name, r.budget, res.Verdict, res.Reason, res.Violation)
				}
			}
		}
	}
}

// TestLocalSimulation runs lmutin and lmutex in the simulator on many
// topologies and seeds, up to n = 400, with exponential transit times
// (so requests race), under heavy and light load: every neighborhood's bound, the invocation
// convention and deadlock freedom are checked after every event, and every
// request completes (after the drain, only exits held by a lower bound
// may be left: no new entry comes to release them).
func TestLocalSimulation(t *testing.T) {
	type run struct {
		alg, topo string
		spec      Spec
	}
	topos := []string{"ring:12", "star:9", "wheel:10", "grid:4x5", "torus:5x5", "complete:8", "random:40:0.1:1", "random:60:0.1:7"}
	seeds := uint64(2)
	if !testing.Short() {
		topos = append(topos, "torus:20x20", "random:400:0.02:3", "grid:10x40", "wheel:100", "random:200:0.05:9")
		seeds = 5
	}
	var runs []run
	for _, topo := range topos {
		runs = append(runs,
			run{"lmutin", topo, Spec{L: intp(1)}},
			run{"lmutin", topo, Spec{L: intp(2), Clamp: true}},
			run{"lmutex", topo, Spec{K: intp(1)}},
			run{"lmutex", topo, Spec{K: intp(2), Clamp: true}},
		)
	}
	for _, r := range runs {
		for seed := uint64(1); seed <= seeds; seed++ {
			spec := r.spec
			spec.Alg, spec.Topology = r.alg, r.topo
			pr, ms := build(t, spec)
			entries := int64(30 * pr.Params.N)
			lambda := 1.0 // heavy load on odd seeds, light on even ones
			if seed%2 == 0 {
				lambda = 0.1
			}
			res, err := sim.Run(sim.Config{
				Machines: ms, Property: pr.Property, Lambda: lambda, E: 1,
				Tt: 1, TransitDist: sim.Exp, Entries: entries, Drain: true, Seed: seed,
			})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case res.Violation != nil:
				t.Errorf("%s %s %+v seed %d: %v", r.alg, r.topo, r.spec, seed, res.Violation)
			case res.Entries < entries:
				t.Errorf("%s %s seed %d: %d entries, want %d", r.alg, r.topo, seed, res.Entries, entries)
			case res.Pending != res.PendingExits || (r.alg == "lmutex" && res.Pending != 0):
				t.Errorf("%s %s seed %d: %d requests pending (%d exits) after the drain", r.alg, r.topo, seed, res.Pending, res.PendingExits)
			}
		}
	}
}

func TestResolveLocal(t *testing.T) {
	pr, err := Resolve(Spec{Alg: "lmutex", Topology: "star:4", K: intp(2)})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Params.N != 4 || pr.Topology.String() != "star:4" || len(pr.Params.Initial) != 0 || pr.Property.IsGlobal() {
		t.Errorf("lmutex on star:4: %+v", pr.Params)
	}
	pr, err = Resolve(Spec{Alg: "lmutin", Topology: "path:4"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pr.Params.Li, pr.Params.Ki) != "[1 1 1 1] [2 3 3 2]" || fmt.Sprint(pr.Params.Initial) != "[2 4]" {
		t.Errorf("lmutin on path:4: l %v k %v initial %v", pr.Params.Li, pr.Params.Ki, pr.Params.Initial)
	}
	dir := t.TempDir()
	bounds := filepath.Join(dir, "b")
	if err := os.WriteFile(bounds, []byte("1: 0 1\n2: 1 2\n3: 0 2\n4: 0 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Alg: "lmutin"}, "lmutin solves a local problem and needs a communication graph"},
		{Spec{Alg: "mutin", N: 4, Topology: "ring:4"}, "mutin solves a global problem"},
		{Spec{Alg: "lmutin", Topology: "ring:2"}, "topology ring:2: need N >= 3"},
		{Spec{Alg: "lmutin", Topology: "ring:4", N: 5}, "n = 5, but topology ring:4 has 4 processes"},
		{Spec{Alg: "lmutin", Topology: "ring:4", K: intp(2)}, "lmutin always allows all of N_i ∪ {P_i} InCS"},
		{Spec{Alg: "lmutex", Topology: "ring:4", L: intp(1)}, "lmutex guarantees no lower bound"},
		{Spec{Alg: "lmutin", Topology: "star:4", L: intp(2)}, "P2 (degree 1): l = 2 is out of range: need 0 <= l < k = 2"},
		{Spec{Alg: "lmutex", Topology: "star:4", K: intp(3)}, "P2 (degree 1): k = 3 is out of range: need l < k <= |N_2|+1 = 2; give per-process bounds"},
		{Spec{Alg: "lmutex", Topology: "star:4", K: intp(0)}, "l = 0 is out of range: need l < k (k = 0)"},
		{Spec{Alg: "lmutex", Topology: "ring:4", Coterie: "grid"}, "lmutex uses no coterie"},
		{Spec{Alg: "lmutex", Topology: "star:4", Bounds: bounds}, "line 2: P2: l = 1: lmutex guarantees no lower bound"},
		{Spec{Alg: "lmutin", Topology: "star:4", Bounds: bounds}, "line 1: P1 (degree 3): k = 1: lmutin always allows 4 processes of N_1 ∪ {P1} InCS, so k must be 4"},
		{Spec{Alg: "lmutin", Topology: "star:4", Bounds: bounds, L: intp(1)}, "not both"},
		{Spec{Alg: "lmutex", Topology: "star:4", K: intp(1), Initial: []cs.ID{1, 2}}, "initial: N[1]={P1,P2,P3,P4}: 2 InCS, outside the bounds 0..1"},
		{Spec{Alg: "lmutex", Topology: "star:4", Bounds: filepath.Join(dir, "none")}, "no such file"},
	} {
		_, err := Resolve(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got %v, want one line containing %q", c.spec, err, c.want)
		}
	}
}

// TestLocalNeighbors: every local algorithm's machine declares N_i
// (cs.Local), which the model checker enforces and its partial-order
// reduction relies on, and N_i is the topology's.
func TestLocalNeighbors(t *testing.T) {
	for _, a := range All() {
		if !a.Local {
			continue
		}
		spec := Spec{Alg: a.Name, Topology: "testdata/bowtie.edges"}
		switch {
		case strings.HasPrefix(a.Name, "lmutin"):
			spec.L = intp(1)
		case strings.HasPrefix(a.Name, "lmutex"):
			spec.K = intp(2)
		default:
			spec.L, spec.K = intp(0), intp(3)
		}
		pr, ms := build(t, spec)
		for i, m := range ms {
			l, ok := m.(cs.Local)
			if !ok {
				t.Errorf("%s: P%d's machine %T does not implement cs.Local", a.Name, i+1, m)
				continue
			}
			if got, want := fmt.Sprint(l.Neighbors()), fmt.Sprint(pr.Params.Neighbors[i]); got != want {
				t.Errorf("%s: P%d declares neighbors %s, the topology gives %s", a.Name, i+1, got, want)
			}
			if c, ok := m.Clone().(cs.Local); !ok || fmt.Sprint(c.Neighbors()) != fmt.Sprint(l.Neighbors()) {
				t.Errorf("%s: P%d's clone lost its neighbors", a.Name, i+1)
			}
		}
	}
}
