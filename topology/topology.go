// Package topology builds and checks the communication graphs of the
// generalized local (l_i,k_i)-CS problem of Kamei and Kakugawa, "An
// asynchronous message-passing distributed algorithm for the generalized
// local critical section problem" (Algorithms 10(2):38, 2017), section 2.1:
// an undirected graph G = (V, E) of n processes with FIFO links, where N_i
// is the set of P_i's neighbors. It also holds what the problem adds per
// process (section 2.2, Definition 1): the bounds l_i and k_i with
// 0 <= l_i < k_i <= |N_i|+1 (Bounds), and a safe initial configuration
// (SafeInitial), which the paper assumes and does not construct except in
// two special cases.
//
// Graphs come from a spec (Parse, ByName) or an edge-list file (Read):
//
//	ring:N       the cycle P1-P2-...-PN-P1, N >= 3
//	path:N       the path P1-P2-...-PN, N >= 2
//	star:N       the centre P1 and N-1 leaves P2..PN, N >= 2
//	wheel:N      the hub P1 joined to the cycle P2-...-PN-P2, N >= 4
//	grid:RxC     R rows of C processes, row-major ids, 4-neighbor links
//	torus:RxC    the grid with wrap-around links, R, C >= 3
//	complete:N   every pair linked, N >= 2
//	random:N:P:SEED  G(N, P): each pair linked with probability P, drawn
//	             from a PCG generator seeded with SEED, then made connected
//
// A random graph is repaired, not resampled: resampling at small P may
// never end, while the repair always does and changes little. Components
// are taken in the order of their smallest id; each one after the first is
// joined to the part already connected by one edge between a member of it
// and a node of that part, both drawn from the same generator. Exactly
// (components - 1) edges are added, so at P >= ln(N)/N, where G(N,P) is
// almost always connected, the graph is almost always G(N,P) itself.
//
// Every graph is checked the same way (New): ids run from 1 to n, no
// self-loops, no edge twice, and connected. Errors are one line and name
// the process (and, for files, the line) at fault.
package topology

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/cs"
)

// Limits on the graphs critsec builds: MaxN processes (the registry's
// limit) and MaxEdges links, so that a spec such as complete:100000 is
// refused at once instead of exhausting memory.
const (
	MaxN     = 100_000
	MaxEdges = 2_000_000
)

// Graph is a connected undirected graph on processes 1..n. It is read-only
// once built and safe to share.
type Graph struct {
	name string
	adj  [][]cs.ID // adj[i-1] is N_i in increasing id order
	m    int       // number of edges
}

// Edge is an undirected link between two processes.
type Edge [2]cs.ID

// New builds the graph on processes 1..n with the given edges and checks
// it: n >= 2, ids in 1..n, no self-loop, no edge given twice (in either
// direction), at most MaxEdges edges, and connected. name is what String
// reports (a spec or a file name).
func New(name string, n int, edges []Edge) (*Graph, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if len(edges) > MaxEdges {
		return nil, fmt.Errorf("%d edges: critsec builds graphs of at most %d edges", len(edges), MaxEdges)
	}
	g := &Graph{name: name, adj: make([][]cs.ID, n), m: len(edges)}
	for _, e := range edges {
		a, b := e[0], e[1]
		for _, id := range e {
			if id < 1 || int(id) > n {
				return nil, fmt.Errorf("edge %d-%d: unknown process id %d: ids run from 1 to n = %d", a, b, id, n)
			}
		}
		if a == b {
			return nil, fmt.Errorf("edge %d-%d is a self-loop: a process is not its own neighbor", a, b)
		}
		g.adj[a-1] = append(g.adj[a-1], b)
		g.adj[b-1] = append(g.adj[b-1], a)
	}
	for i, ns := range g.adj {
		slices.Sort(ns)
		for j := 1; j < len(ns); j++ {
			if ns[j] == ns[j-1] {
				return nil, fmt.Errorf("edge %d-%d is given twice", i+1, ns[j])
			}
		}
	}
	if err := g.connected(); err != nil {
		return nil, err
	}
	return g, nil
}

// FromLists rebuilds a graph from its neighbor lists (lists[i-1] = N_i,
// the form Lists returns and cs.Params carries), checking it as New does
// and that every link is listed at both ends.
func FromLists(name string, lists [][]cs.ID) (*Graph, error) {
	var es []Edge
	for i, ns := range lists {
		a := cs.ID(i + 1)
		for _, b := range ns {
			if b == a {
				return nil, fmt.Errorf("P%d lists itself as a neighbor (a self-loop)", a)
			}
			if b < 1 || int(b) > len(lists) || !slices.Contains(lists[b-1], a) {
				return nil, fmt.Errorf("P%d lists P%d as a neighbor, but not the other way round", a, b)
			}
			if a < b {
				es = append(es, Edge{a, b})
			}
		}
	}
	return New(name, len(lists), es)
}

func checkN(n int) error {
	switch {
	case n < 2:
		return fmt.Errorf("n = %d is out of range: a graph needs at least 2 processes", n)
	case n > MaxN:
		return fmt.Errorf("n = %d is out of range: critsec builds graphs of at most %d processes", n, MaxN)
	}
	return nil
}

// connected returns an error naming a process P1 cannot reach, if any.
func (g *Graph) connected() error {
	comp, count := g.components()
	if count == 1 {
		return nil
	}
	for i, c := range comp {
		if c != 0 {
			what := "is not reachable from P1"
			if len(g.adj[i]) == 0 {
				what = "has no link"
			}
			return fmt.Errorf("the graph is disconnected (%d components): P%d %s", count, i+1, what)
		}
	}
	return nil
}

// components labels each process with its component, numbered 0, 1, ...
// in the order of their smallest id, and returns the count.
func (g *Graph) components() ([]int, int) {
	comp := make([]int, len(g.adj))
	for i := range comp {
		comp[i] = -1
	}
	count := 0
	var queue []int
	for s := range comp {
		if comp[s] >= 0 {
			continue
		}
		comp[s] = count
		queue = append(queue[:0], s)
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, w := range g.adj[v] {
				if comp[w-1] < 0 {
					comp[w-1] = count
					queue = append(queue, int(w-1))
				}
			}
		}
		count++
	}
	return comp, count
}

// N is the number of processes.
func (g *Graph) N() int { return len(g.adj) }

// Edges is the number of links.
func (g *Graph) Edges() int { return g.m }

// String is the spec or file the graph was built from.
func (g *Graph) String() string { return g.name }

// Neighbors returns N_i in increasing id order (nil for an unknown id).
// The caller must not modify it.
func (g *Graph) Neighbors(i cs.ID) []cs.ID {
	if i < 1 || int(i) > len(g.adj) {
		return nil
	}
	return g.adj[i-1]
}

// Degree is |N_i|.
func (g *Graph) Degree(i cs.ID) int { return len(g.Neighbors(i)) }

// Lists returns N_1..N_n (lists[i-1] = N_i), the form cs.Params and
// property.Local take. The caller must not modify them.
func (g *Graph) Lists() [][]cs.ID { return g.adj }

// MaxDegree is Δ, the largest |N_i|.
func (g *Graph) MaxDegree() int {
	d := 0
	for _, ns := range g.adj {
		d = max(d, len(ns))
	}
	return d
}

// Distances returns dist(P_from, P_i) for i = 1..n (index i-1): the number
// of links on a shortest path.
func (g *Graph) Distances(from cs.ID) []int {
	d := make([]int, len(g.adj))
	for i := range d {
		d[i] = -1
	}
	d[from-1] = 0
	queue := []cs.ID{from}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.adj[v-1] {
			if d[w-1] < 0 {
				d[w-1] = d[v-1] + 1
				queue = append(queue, w)
			}
		}
	}
	return d
}

// EdgeList returns every link once, as (a, b) with a < b, in increasing
// order: the form Write writes.
func (g *Graph) EdgeList() []Edge {
	es := make([]Edge, 0, g.m)
	for i, ns := range g.adj {
		for _, j := range ns {
			if cs.ID(i+1) < j {
				es = append(es, Edge{cs.ID(i + 1), j})
			}
		}
	}
	return es
}

// Equal reports whether g and h have the same processes and links.
func (g *Graph) Equal(h *Graph) bool {
	if len(g.adj) != len(h.adj) {
		return false
	}
	for i := range g.adj {
		if !slices.Equal(g.adj[i], h.adj[i]) {
			return false
		}
	}
	return true
}
