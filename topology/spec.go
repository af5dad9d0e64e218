package topology

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/critsec/critsec/cs"
)

// Spec is a parsed topology spec such as "torus:6x6" or "random:60:0.1:7".
type Spec struct {
	// Kind is ring, path, star, wheel, grid, torus, complete or random.
	Kind string
	// N is the number of processes (R*C for grid and torus).
	N int
	// R and C are the rows and columns of grid and torus.
	R, C int
	// P and Seed are random's link probability and generator seed.
	P    float64
	Seed uint64
}

// kinds lists the generators, their form and their least size.
var kinds = []struct {
	name, form string
	min        int
}{
	{"ring", "ring:N", 3},
	{"path", "path:N", 2},
	{"star", "star:N", 2},
	{"wheel", "wheel:N", 4},
	{"grid", "grid:RxC", 1},
	{"torus", "torus:RxC", 3},
	{"complete", "complete:N", 2},
	{"random", "random:N:P:SEED", 2},
}

// Forms is the list of spec forms, for help texts and errors.
func Forms() string {
	f := make([]string, len(kinds))
	for i, k := range kinds {
		f[i] = k.form
	}
	return strings.Join(f, ", ")
}

func kindIndex(name string) int {
	for i, k := range kinds {
		if k.name == name {
			return i
		}
	}
	return -1
}

// IsSpec reports whether s names a generator (its text before the first
// ':' is a known kind), as opposed to an edge-list file.
func IsSpec(s string) bool {
	kind, _, _ := strings.Cut(s, ":")
	return kindIndex(kind) >= 0
}

// ParseSpec reads a spec (see the package doc). It checks the form and the
// sizes (its errors do not repeat the spec: callers name it), and that the graph would have at most MaxN processes and MaxEdges
// links (random: in expectation), without building it.
func ParseSpec(s string) (Spec, error) {
	kind, rest, hasArgs := strings.Cut(s, ":")
	ki := kindIndex(kind)
	if ki < 0 {
		return Spec{}, fmt.Errorf("%q is not a topology: write one of %s", s, Forms())
	}
	k := kinds[ki]
	if !hasArgs {
		return Spec{}, fmt.Errorf("%s needs its size: write %s", kind, k.form)
	}
	sp := Spec{Kind: kind}
	var err error
	switch kind {
	case "grid", "torus":
		r, c, ok := strings.Cut(rest, "x")
		if !ok {
			return Spec{}, fmt.Errorf("write %s, e.g. %s:3x4", k.form, kind)
		}
		if sp.R, err = size(kind, "R", r); err != nil {
			return Spec{}, err
		}
		if sp.C, err = size(kind, "C", c); err != nil {
			return Spec{}, err
		}
		if sp.R < k.min || sp.C < k.min {
			why := ""
			if kind == "torus" {
				why = ": with fewer, the wrap-around links would repeat grid links"
			}
			return Spec{}, fmt.Errorf("need R, C >= %d%s", k.min, why)
		}
		if sp.R > MaxN/sp.C {
			return Spec{}, fmt.Errorf("more than %d processes", MaxN)
		}
		sp.N = sp.R * sp.C
		if sp.N < 2 {
			return Spec{}, fmt.Errorf("one process: a graph needs at least 2")
		}
	case "random":
		f := strings.Split(rest, ":")
		if len(f) != 3 {
			return Spec{}, fmt.Errorf("write %s, e.g. random:60:0.1:7", k.form)
		}
		if sp.N, err = size(kind, "N", f[0]); err != nil {
			return Spec{}, err
		}
		sp.P, err = strconv.ParseFloat(f[1], 64)
		if err != nil || !(sp.P >= 0 && sp.P <= 1) {
			return Spec{}, fmt.Errorf("random: P = %q is not a probability: need a number in 0..1", f[1])
		}
		if sp.Seed, err = strconv.ParseUint(f[2], 10, 64); err != nil {
			return Spec{}, fmt.Errorf("random: SEED = %q is not a seed: need an integer in 0..%d", f[2], uint64(math.MaxUint64))
		}
	default:
		if sp.N, err = size(kind, "N", rest); err != nil {
			return Spec{}, err
		}
	}
	if sp.N < k.min && kind != "grid" && kind != "torus" {
		return Spec{}, fmt.Errorf("need N >= %d", k.min)
	}
	if m := sp.edges(); m > MaxEdges {
		return Spec{}, fmt.Errorf("about %.0f links: critsec builds graphs of at most %d", m, MaxEdges)
	}
	return sp, nil
}

// size reads a size field: an integer in 1..MaxN.
func size(kind, field, s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > MaxN {
		return 0, fmt.Errorf("%s: %s = %q is not a size: need an integer in 1..%d", kind, field, s, MaxN)
	}
	return v, nil
}

// edges is the number of links the spec gives (random: the expected
// number before the repair).
func (s Spec) edges() float64 {
	n := float64(s.N)
	switch s.Kind {
	case "ring":
		return n
	case "path", "star":
		return n - 1
	case "wheel":
		return 2 * (n - 1)
	case "grid":
		return float64(s.R*(s.C-1) + s.C*(s.R-1))
	case "torus":
		return 2 * n
	case "complete":
		return n * (n - 1) / 2
	case "random":
		return s.P * n * (n - 1) / 2
	}
	return 0
}

// String is the canonical form of the spec, which ParseSpec reads back.
func (s Spec) String() string {
	switch s.Kind {
	case "grid", "torus":
		return fmt.Sprintf("%s:%dx%d", s.Kind, s.R, s.C)
	case "random":
		return fmt.Sprintf("random:%d:%s:%d", s.N, strconv.FormatFloat(s.P, 'g', -1, 64), s.Seed)
	}
	return fmt.Sprintf("%s:%d", s.Kind, s.N)
}

// Parse reads a spec and builds its graph.
func Parse(s string) (*Graph, error) {
	sp, err := ParseSpec(s)
	if err != nil {
		return nil, err
	}
	return sp.Build()
}

// ByName resolves the CLI's --topology: a spec (Parse), or else the path
// of an edge-list file (ReadFile); "file:PATH" forces a file.
func ByName(s string) (*Graph, error) {
	if IsSpec(s) {
		return Parse(s)
	}
	if s == "" {
		return nil, fmt.Errorf("no topology given: write one of %s, or the path of an edge-list file", Forms())
	}
	return ReadFile(strings.TrimPrefix(s, "file:"))
}

// Build makes the graph of the spec (see the package doc for each kind).
func (s Spec) Build() (*Graph, error) {
	n := s.N
	var es []Edge
	link := func(a, b int) { es = append(es, Edge{cs.ID(a), cs.ID(b)}) }
	switch s.Kind {
	case "ring":
		for i := 1; i <= n; i++ {
			link(i, i%n+1)
		}
	case "path":
		for i := 1; i < n; i++ {
			link(i, i+1)
		}
	case "star":
		for i := 2; i <= n; i++ {
			link(1, i)
		}
	case "wheel":
		for i := 2; i <= n; i++ {
			link(1, i)
			link(i, 2+(i-1)%(n-1))
		}
	case "grid", "torus":
		at := func(r, c int) int { return r*s.C + c + 1 }
		for r := range s.R {
			for c := range s.C {
				if c+1 < s.C || s.Kind == "torus" {
					link(at(r, c), at(r, (c+1)%s.C))
				}
				if r+1 < s.R || s.Kind == "torus" {
					link(at(r, c), at((r+1)%s.R, c))
				}
			}
		}
	case "complete":
		for i := 1; i <= n; i++ {
			for j := i + 1; j <= n; j++ {
				link(i, j)
			}
		}
	case "random":
		return s.random()
	default:
		return nil, fmt.Errorf("%q is not a topology: write one of %s", s.Kind, Forms())
	}
	return New(s.String(), n, es)
}

// random draws G(N, P) with geometric skips over the pairs (Batagelj and
// Brandes, "Efficient generation of large random networks", 2005), so the
// cost is O(N + links), then repairs it into a connected graph (package
// doc).
func (s Spec) random() (*Graph, error) {
	n, p := s.N, s.P
	rng := rand.New(rand.NewPCG(s.Seed, 0x70b0))
	var es []Edge
	if p > 0 {
		logq := math.Log1p(-p) // -Inf when p = 1: every skip is 0
		limit := float64(n) * float64(n)
		v, w := 1, -1
		for v < n {
			skip := math.Floor(math.Log1p(-rng.Float64()) / logq)
			if !(skip < limit) {
				skip = limit
			}
			w += 1 + int(skip)
			for w >= v && v < n {
				w -= v
				v++
			}
			if v < n {
				es = append(es, Edge{cs.ID(v + 1), cs.ID(w + 1)})
			}
			if len(es) > MaxEdges {
				return nil, fmt.Errorf("%s drew more than %d links", s, MaxEdges)
			}
		}
	}
	g := &Graph{adj: make([][]cs.ID, n)}
	for _, e := range es {
		g.adj[e[0]-1] = append(g.adj[e[0]-1], e[1])
		g.adj[e[1]-1] = append(g.adj[e[1]-1], e[0])
	}
	comp, count := g.components()
	members := make([][]int, count)
	for i, c := range comp {
		members[c] = append(members[c], i+1)
	}
	connected := members[0]
	for c := 1; c < count; c++ {
		a := members[c][rng.IntN(len(members[c]))]
		b := connected[rng.IntN(len(connected))]
		es = append(es, Edge{cs.ID(a), cs.ID(b)})
		connected = append(connected, members[c]...)
	}
	return New(s.String(), n, es)
}
