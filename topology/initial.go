package topology

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// SafeInitial returns a safe initial configuration for g and b: the
// processes InCS, in increasing id order, such that every P_i has between
// l_i and k_i processes InCS in N_i ∪ {P_i}. The paper assumes C_0 is safe
// (section 2.2) and constructs one only for (0,1) (nobody InCS), (1,|N_i|+1)
// (everybody) and (1,|N_i|) (OutCS exactly on a maximal independent set).
//
// SafeInitial searches instead, which covers every (l_i,k_i): a
// depth-first search over the processes in breadth-first order from P1,
// trying OutCS before InCS, with forward checking (a bound that can no
// longer be met cuts the branch) and propagation (a bound at its limit
// fixes the undecided members of its neighborhood). The result therefore
// has few processes InCS: none when every l_i = 0, and with only lower
// bounds (k_i = |N_i|+1) a minimal set, found without backtracking. With
// both kinds of bound the problem is NP-complete in general (it contains
// perfect domination), so the search stops after searchSteps assignments.
//
// When no configuration exists the error says so and names the process
// whose bound failed at the deepest dead end of the search; when the step
// limit is hit first it says that instead and asks for --initial.
func SafeInitial(g *Graph, b Bounds) ([]cs.ID, error) {
	if err := g.Check(b); err != nil {
		return nil, err
	}
	s := newSearch(g, b)
	if s.solve(0) {
		var in []cs.ID
		for v, x := range s.val {
			if x == valIn {
				in = append(in, cs.ID(v+1))
			}
		}
		return in, nil
	}
	i := s.deepFail
	bound := property.Bound{Name: fmt.Sprintf("N[%d]", i), Members: s.closed(i), Lo: b.L[i-1], Hi: b.K[i-1]}
	what := fmt.Sprintf("P%d's bound %s", i, bound)
	if s.steps > s.limit {
		return nil, fmt.Errorf("no safe initial configuration found within %d search steps (the deepest dead end: %s): give one with --initial", s.limit, what)
	}
	return nil, fmt.Errorf("no safe initial configuration exists: every choice of processes InCS breaks a bound; the search got furthest before %s failed", what)
}

const (
	valUnset int8 = iota
	valOut
	valIn
)

type search struct {
	g        *Graph
	b        Bounds
	order    []cs.ID // the processes in breadth-first order from P1
	val      []int8  // val[v-1]
	in, und  []int   // per bound i: members InCS, members undecided
	trail    []cs.ID // assignments, in order, for undoing
	steps    int
	limit    int
	deepFail cs.ID // the bound that failed with the most processes decided
	deepAt   int
}

// searchSteps bounds the assignments SafeInitial makes (beyond 30 per
// process, which a search without backtracking never needs).
const searchSteps = 4_000_000

func newSearch(g *Graph, b Bounds) *search {
	n := g.N()
	s := &search{g: g, b: b, val: make([]int8, n), in: make([]int, n), und: make([]int, n), limit: searchSteps + 30*n, deepAt: -1}
	for i := range s.und {
		s.und[i] = len(g.adj[i]) + 1
	}
	dist := g.Distances(1)
	s.order = make([]cs.ID, n)
	for i := range s.order {
		s.order[i] = cs.ID(i + 1)
	}
	slices.SortStableFunc(s.order, func(a, b cs.ID) int { return dist[a-1] - dist[b-1] })
	return s
}

// closed returns N_i ∪ {P_i} in increasing order.
func (s *search) closed(i cs.ID) []cs.ID { return Closed(i, s.g.Neighbors(i)) }

// Closed returns N_i ∪ {P_i} in increasing order, for process i with
// neighbors ns.
func Closed(i cs.ID, ns []cs.ID) []cs.ID {
	c := append([]cs.ID{i}, ns...)
	slices.Sort(c)
	return c
}

// Open returns N_i from closed = N_i ∪ {P_i}: closed without i, in the
// same order.
func Open(i cs.ID, closed []cs.ID) []cs.ID {
	return slices.DeleteFunc(slices.Clone(closed), func(j cs.ID) bool { return j == i })
}

// CheckInitial returns nil if the configuration in which the processes
// initial are InCS is safe for the bounds l and k on the graph lists
// (lists[i-1] = N_i), and otherwise an error naming the first
// neighborhood whose bound it breaks. Ids must be in 1..n.
func CheckInitial(lists [][]cs.ID, l, k []int, initial []cs.ID) error {
	prop, err := property.Local(lists, l, k)
	if err != nil {
		return err
	}
	if f := prop.Check(inView(cs.NewSet(initial...))); f != nil {
		return fmt.Errorf("initial: %v: the initial configuration must be safe", f)
	}
	return nil
}

type inView cs.Set

func (v inView) InCS(id cs.ID) bool { return cs.Set(v).Has(id) }

// solve decides the processes from order[at] on; it returns true with
// every process decided, or false with the assignments it made undone.
func (s *search) solve(at int) bool {
	for at < len(s.order) && s.val[s.order[at]-1] != valUnset {
		at++
	}
	if at == len(s.order) {
		return true
	}
	v := s.order[at]
	for _, x := range []int8{valOut, valIn} {
		mark := len(s.trail)
		if s.assign(v, x) && s.solve(at+1) {
			return true
		}
		s.undo(mark)
		if s.steps > s.limit {
			return false
		}
	}
	return false
}

// assign sets v to x and propagates; it returns false when a bound fails.
func (s *search) assign(v cs.ID, x int8) bool {
	queue := []cs.ID{v}
	s.set(v, x)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		s.steps++
		if s.steps > s.limit {
			return false
		}
		for _, i := range s.closed(u) {
			in, und := s.in[i-1], s.und[i-1]
			lo, hi := s.b.L[i-1], s.b.K[i-1]
			if in > hi || in+und < lo {
				if len(s.trail) > s.deepAt {
					s.deepAt, s.deepFail = len(s.trail), i
				}
				return false
			}
			var forced int8
			switch {
			case und > 0 && in == hi:
				forced = valOut
			case und > 0 && in+und == lo:
				forced = valIn
			default:
				continue
			}
			for _, w := range s.closed(i) {
				if s.val[w-1] == valUnset {
					s.set(w, forced)
					queue = append(queue, w)
				}
			}
		}
	}
	return true
}

func (s *search) set(v cs.ID, x int8) {
	s.val[v-1] = x
	s.trail = append(s.trail, v)
	for _, i := range s.closed(v) {
		s.und[i-1]--
		if x == valIn {
			s.in[i-1]++
		}
	}
}

func (s *search) undo(mark int) {
	for len(s.trail) > mark {
		v := s.trail[len(s.trail)-1]
		s.trail = s.trail[:len(s.trail)-1]
		for _, i := range s.closed(v) {
			s.und[i-1]++
			if s.val[v-1] == valIn {
				s.in[i-1]--
			}
		}
		s.val[v-1] = valUnset
	}
}
