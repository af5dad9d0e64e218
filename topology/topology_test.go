package topology

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
)

// degrees returns the sorted degree sequence of g.
func degrees(g *Graph) []int {
	d := make([]int, g.N())
	for i := range d {
		d[i] = g.Degree(cs.ID(i + 1))
	}
	slices.Sort(d)
	return d
}

// repeat returns c copies of v.
func repeat(v, c int) []int { return slices.Repeat([]int{v}, c) }

func TestGenerators(t *testing.T) {
	for _, c := range []struct {
		spec    string
		n, m    int
		degrees []int
	}{
		{"ring:5", 5, 5, repeat(2, 5)},
		{"path:4", 4, 3, []int{1, 1, 2, 2}},
		{"star:5", 5, 4, append(repeat(1, 4), 4)},
		{"star:2", 2, 1, []int{1, 1}},
		{"wheel:5", 5, 8, append(repeat(3, 4), 4)},
		{"wheel:4", 4, 6, repeat(3, 4)}, // wheel:4 is K4
		{"grid:2x3", 6, 7, []int{2, 2, 2, 2, 3, 3}},
		{"grid:1x4", 4, 3, []int{1, 1, 2, 2}},
		{"torus:3x4", 12, 24, repeat(4, 12)},
		{"torus:6x6", 36, 72, repeat(4, 36)},
		{"complete:4", 4, 6, repeat(3, 4)},
		{"random:10:1:3", 10, 45, repeat(9, 10)},
		{"random:10:0:3", 10, 9, nil}, // a random tree by the repair
	} {
		g, err := Parse(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if g.N() != c.n || g.Edges() != c.m || g.String() != c.spec {
			t.Errorf("%s: n=%d m=%d name %q, want n=%d m=%d", c.spec, g.N(), g.Edges(), g, c.n, c.m)
		}
		if c.degrees != nil && !slices.Equal(degrees(g), c.degrees) {
			t.Errorf("%s: degrees %v, want %v", c.spec, degrees(g), c.degrees)
		}
		checkGraph(t, c.spec, g)
	}
}

// checkGraph checks the invariants of a built graph: sorted, symmetric
// neighbor lists without self-loops or repeats, the edge count, and
// connectivity.
func checkGraph(t *testing.T, name string, g *Graph) {
	t.Helper()
	m := 0
	for i := cs.ID(1); int(i) <= g.N(); i++ {
		ns := g.Neighbors(i)
		m += len(ns)
		for j, x := range ns {
			if x == i || (j > 0 && ns[j-1] >= x) || !slices.Contains(g.Neighbors(x), i) {
				t.Fatalf("%s: N_%d = %v is not sorted, symmetric and loop-free", name, i, ns)
			}
		}
	}
	if m != 2*g.Edges() || len(g.EdgeList()) != g.Edges() {
		t.Fatalf("%s: %d edges, but the lists hold %d ends and EdgeList %d", name, g.Edges(), m, len(g.EdgeList()))
	}
	for i, d := range g.Distances(1) {
		if d < 0 {
			t.Fatalf("%s: P%d is unreachable", name, i+1)
		}
	}
}

func TestTorusWraps(t *testing.T) {
	g, err := Parse("torus:3x3")
	if err != nil {
		t.Fatal(err)
	}
	// P1 at (0,0): right P2, down P4, left (wrap) P3, up (wrap) P7.
	if got := g.Neighbors(1); !slices.Equal(got, []cs.ID{2, 3, 4, 7}) {
		t.Errorf("torus:3x3 N_1 = %v", got)
	}
}

func TestRandomIsSeededAndConnected(t *testing.T) {
	a, err := Parse("random:60:0.1:7")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Parse("random:60:0.1:7")
	c, _ := Parse("random:60:0.1:8")
	if !a.Equal(b) || a.Equal(c) {
		t.Error("random: equal seeds must give equal graphs and different seeds different ones")
	}
	for seed := range uint64(50) {
		for _, p := range []float64{0, 0.01, 0.05, 0.3} {
			sp := Spec{Kind: "random", N: 40, P: p, Seed: seed}
			g, err := sp.Build()
			if err != nil {
				t.Fatalf("%s: %v", sp, err)
			}
			checkGraph(t, sp.String(), g)
		}
	}
	// At p = 0 the repair alone builds the graph: a tree.
	g, _ := Parse("random:30:0:1")
	if g.Edges() != 29 {
		t.Errorf("random:30:0:1 has %d edges, want a tree (29)", g.Edges())
	}
}

func TestBadSpecs(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"ring", "ring needs its size: write ring:N"},
		{"ring:2", "need N >= 3"},
		{"ring:x", `ring: N = "x" is not a size`},
		{"ring:0", `ring: N = "0" is not a size`},
		{"wheel:3", "need N >= 4"},
		{"grid:3", "write grid:RxC"},
		{"grid:1x1", "one process"},
		{"torus:2x5", "need R, C >= 3"},
		{"grid:1000x1000", "more than 100000 processes"},
		{"complete:5000", "links: critsec builds graphs of at most"},
		{"random:10:0.5", "write random:N:P:SEED"},
		{"random:10:1.5:1", `P = "1.5" is not a probability`},
		{"random:10:NaN:1", `P = "NaN" is not a probability`},
		{"random:10:0.5:-1", `SEED = "-1" is not a seed`},
		{"hypercube:3", "is not a topology"},
	} {
		_, err := Parse(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line containing %q", c.spec, err, c.want)
		}
	}
}

func TestReadFile(t *testing.T) {
	g, err := Read(strings.NewReader("# a square\nn 4\n1 2\n2,3 # comma\n\n3\t4\n4 1\n"), "sq")
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := Parse("ring:4")
	if !g.Equal(ring) {
		t.Errorf("the square is not ring:4: %v", g.Lists())
	}
	var sb strings.Builder
	if err := Write(&sb, g); err != nil {
		t.Fatal(err)
	}
	back, err := Read(strings.NewReader(sb.String()), "back")
	if err != nil || !back.Equal(g) {
		t.Errorf("Write then Read: %v, %v", back, err)
	}
	for _, c := range []struct{ text, want string }{
		{"", "no links"},
		{"# only a comment\n\n", "no links"},
		{"1 2\n2 2\n", "line 2: 2 2 is a self-loop"},
		{"1 2\n2 1\n", "line 2: link 2 1 is given twice (first on line 1)"},
		{"n 3\n1 2\n2 4\n", "line 3: unknown process id 4: n = 3 (line 1)"},
		{"1 2\n0 1\n", `line 2: "0" is not a process id`},
		{"1 2\n1 x\n", `line 2: "x" is not a process id`},
		{"1 2 3\n", "line 1: \"1 2 3\": want one link"},
		{"1 2\nn 1\n", `line 2: n = "1" is out of range`},
		{"1 5\nn 4\n", "line 2: n = 4, but an earlier line names process 5"},
		{"n 3\nn 3\n1 2\n", "line 2: n is declared twice"},
		{"1 2\n3 4\n", "disconnected (2 components): P3 is not reachable from P1"},
		{"n 3\n1 2\n", "disconnected (2 components): P3 has no link"},
		{"1 2\n2 4\n", "P3 has no link"},
	} {
		_, err := Read(strings.NewReader(c.text), "f")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line containing %q", c.text, err, c.want)
		}
	}
	if _, err := ByName("/nonexistent/graph"); err == nil || !strings.Contains(err.Error(), "not a topology spec") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestBounds(t *testing.T) {
	g, _ := Parse("star:4") // P1 degree 3, leaves degree 1
	b, err := Uniform(g, 0, 2, false)
	if err != nil || !slices.Equal(b.K, []int{2, 2, 2, 2}) {
		t.Fatalf("star:4 (0,2): %v %v", b, err)
	}
	_, err = Uniform(g, 1, 3, false)
	if err == nil || !strings.Contains(err.Error(), "P2 (degree 1): k = 3 is out of range: need l < k <= |N_2|+1 = 2") || !strings.Contains(err.Error(), "clamp") {
		t.Errorf("star:4 (1,3) unclamped: %v", err)
	}
	b, err = Uniform(g, 2, 3, true)
	if err != nil || !slices.Equal(b.L, []int{2, 1, 1, 1}) || !slices.Equal(b.K, []int{3, 2, 2, 2}) {
		t.Errorf("star:4 (2,3) clamped: %+v %v", b, err)
	}
	for _, c := range []struct {
		l, k int
		want string
	}{
		{-1, 2, "P1 (degree 3): l = -1 is out of range: need 0 <= l < k = 2"},
		{2, 2, "P1 (degree 3): l = 2 is out of range: need 0 <= l < k = 2"},
		{0, 5, "P1 (degree 3): k = 5 is out of range: need l < k <= |N_1|+1 = 4"},
	} {
		if _, err := Uniform(g, c.l, c.k, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("(%d,%d): %v, want %q", c.l, c.k, err, c.want)
		}
	}
	b, err = ReadBounds(strings.NewReader("# i: l k\n1: 1 max\n2: 0 1\n3:0 2\n 4 : 1 2\n"), g)
	if err != nil || !slices.Equal(b.L, []int{1, 0, 0, 1}) || !slices.Equal(b.K, []int{4, 1, 2, 2}) {
		t.Errorf("bounds file: %+v %v", b, err)
	}
	for _, c := range []struct{ text, want string }{
		{"1: 0 1\n", "no bounds for process(es) 2, 3, 4"},
		{"1: 0 1\n1: 0 2\n", "line 2: P1's bounds are given twice (first on line 1)"},
		{"5: 0 1\n", `line 1: "5" is not a process`},
		{"1 0 1\n", `line 1: "1 0 1": write "i: l k"`},
		{"1: 0\n", `write "i: l k"`},
		{"2: 0 3\n", "line 1: P2 (degree 1): k = 3 is out of range: need l < k <= |N_2|+1 = 2"},
		{"2: x 1\n", `line 1: P2: l = "x" is not an integer`},
		{"2: 0 y\n", `line 1: P2: k = "y" is not an integer or max`},
	} {
		_, err := ReadBounds(strings.NewReader(c.text), g)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line containing %q", c.text, err, c.want)
		}
	}
}

// safe reports whether the processes in are InCS safely under b on g.
func safe(g *Graph, b Bounds, in []bool) bool {
	for i := range g.N() {
		c := 0
		if in[i] {
			c++
		}
		for _, j := range g.Neighbors(cs.ID(i + 1)) {
			if in[j-1] {
				c++
			}
		}
		if c < b.L[i] || c > b.K[i] {
			return false
		}
	}
	return true
}

// TestSafeInitialAgainstBruteForce compares the search with a naive
// enumeration of every configuration on small graphs with random bounds:
// it must find a safe configuration exactly when one exists.
func TestSafeInitialAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	specs := []string{"path:5", "ring:6", "star:5", "wheel:6", "grid:2x4", "complete:5", "random:8:0.3:1", "random:9:0.5:2", "torus:3x3"}
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	exist, none := 0, 0
	for _, spec := range specs {
		g, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		for range rounds {
			b := Bounds{L: make([]int, g.N()), K: make([]int, g.N())}
			for i := range b.L {
				d := g.Degree(cs.ID(i + 1))
				b.K[i] = 1 + rng.IntN(d+1)
				b.L[i] = rng.IntN(b.K[i])
			}
			want := false
			in := make([]bool, g.N())
			for mask := range 1 << g.N() {
				for i := range in {
					in[i] = mask>>i&1 == 1
				}
				if safe(g, b, in) {
					want = true
					break
				}
			}
			got, err := SafeInitial(g, b)
			if want {
				exist++
				clear(in)
				for _, id := range got {
					in[id-1] = true
				}
				if err != nil || !safe(g, b, in) {
					t.Fatalf("%s %+v: search gave %v, %v; a safe configuration exists", spec, b, got, err)
				}
			} else {
				none++
				if err == nil || !strings.Contains(err.Error(), "no safe initial configuration exists") {
					t.Fatalf("%s %+v: search gave %v, %v; none exists", spec, b, got, err)
				}
			}
		}
	}
	if exist == 0 || none == 0 {
		t.Errorf("the random bounds gave %d feasible and %d infeasible cases: want both", exist, none)
	}
}

func TestSafeInitialSpecialCases(t *testing.T) {
	g, _ := Parse("torus:20x20")
	for _, c := range []struct {
		l, k, lo, hi int // want between lo and hi processes InCS
	}{
		{0, 1, 0, 0},    // local mutual exclusion: nobody
		{0, 3, 0, 0},    // local k-mutex: nobody
		{1, 5, 80, 200}, // local mutual inclusion: a dominating set
		{1, 4, 1, 399},  // the paper's (1,|N_i|)
		{2, 3, 1, 399},
	} {
		b, err := Uniform(g, c.l, c.k, false)
		if err != nil {
			t.Fatal(err)
		}
		in, err := SafeInitial(g, b)
		if err != nil {
			t.Fatalf("(%d,%d): %v", c.l, c.k, err)
		}
		v := make([]bool, g.N())
		for _, id := range in {
			v[id-1] = true
		}
		if !safe(g, b, v) || len(in) < c.lo || len(in) > c.hi {
			t.Errorf("(%d,%d): %d InCS (safe %v), want %d..%d", c.l, c.k, len(in), safe(g, b, v), c.lo, c.hi)
		}
	}
	// K3 with l_1 = 2 and k_2 = 1: both bounds are on the same three.
	k3, _ := Parse("complete:3")
	_, err := SafeInitial(k3, Bounds{L: []int{2, 0, 0}, K: []int{3, 1, 3}})
	if err == nil || !strings.Contains(err.Error(), "no safe initial configuration exists") || !strings.Contains(err.Error(), "N[") {
		t.Errorf("K3 infeasible: %v", err)
	}
}
