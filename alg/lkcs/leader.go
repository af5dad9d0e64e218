package lkcs

import (
	"errors"
	"fmt"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/topology"
)

// ErrAssumptions is wrapped by every error saying that a problem breaks
// the assumptions of section 5.1 (no process can lead, or the leader named
// cannot), so that callers sweeping many problems can tell them apart.
var ErrAssumptions = errors.New("LKCS's assumptions (section 5.1) do not hold")

// assumption is an error that also wraps ErrAssumptions, without adding
// its text.
type assumption struct{ error }

func (a assumption) Unwrap() []error { return []error{a.error, ErrAssumptions} }

// MinLeaderDegree is the least |N_LDR| of section 5.1.
const MinLeaderDegree = 4

// Problem is what LKCS adds to a local problem: the leader, each process's
// distance from it, and the bounds L_i and K_i of Algorithm 3's macros.
type Problem struct {
	Graph  *topology.Graph
	Leader cs.ID
	// Near[i-1] reports dist(P_LDR, P_i) <= 2.
	Near []bool
	// L[i-1] and K[i-1] are the macros L_i and K_i: l_i+1 and k_i-1 within
	// two hops of the leader, l_i and k_i elsewhere.
	L, K []int
}

// Resolve finds the leader of p (the option "leader": a process id, or 0
// to choose) and checks the paper's assumptions for it (section 5.1):
// |N_LDR| >= 4, and k_q - l_q >= 3 for every P_q within two hops of the
// leader. The paper states the second for P_LDR and its neighbors; the
// macros L_q and K_q tighten the bounds of every process within two hops,
// which is possible only with k_q - l_q >= 3 there too (otherwise L_q >= K_q
// and P_q's neighborhood could not change state without the sidetrack),
// so critsec asks it of all of them.
//
// The leader chosen is the process of largest degree that satisfies the
// assumptions, the lowest id on ties. Each error names the process at
// fault.
func Resolve(p cs.Params) (*Problem, error) {
	g, err := topology.FromLists("", p.Neighbors)
	if err != nil {
		return nil, err
	}
	if len(p.Li) != p.N || len(p.Ki) != p.N {
		return nil, fmt.Errorf("%d lower and %d upper bounds for n = %d: need l_i and k_i for every process", len(p.Li), len(p.Ki), p.N)
	}
	leader := cs.ID(p.Options.Int("leader"))
	if leader != 0 {
		if leader < 1 || int(leader) > p.N {
			return nil, fmt.Errorf("leader = %d: no such process: ids run from 1 to n = %d", leader, p.N)
		}
		if err := canLead(g, p, leader); err != nil {
			return nil, assumption{fmt.Errorf("leader P%d: %w", leader, err)}
		}
	} else {
		var first error
		for id := cs.ID(1); int(id) <= p.N; id++ {
			if g.Degree(id) < MinLeaderDegree || (leader != 0 && g.Degree(id) <= g.Degree(leader)) {
				continue
			}
			if err := canLead(g, p, id); err != nil {
				if first == nil {
					first = fmt.Errorf("P%d (degree %d) cannot: %w", id, g.Degree(id), err)
				}
				continue
			}
			leader = id
		}
		if leader == 0 {
			if first == nil {
				first = fmt.Errorf("no process has %d neighbors (the largest degree is %d)", MinLeaderDegree, g.MaxDegree())
			}
			return nil, assumption{fmt.Errorf("no process can be LKCS's leader, which needs |N_LDR| >= %d and k_q - l_q >= 3 within two hops (section 5.1): %w", MinLeaderDegree, first)}
		}
	}
	pr := &Problem{Graph: g, Leader: leader, Near: make([]bool, p.N), L: make([]int, p.N), K: make([]int, p.N)}
	for i, d := range g.Distances(leader) {
		pr.Near[i] = d <= 2
		pr.L[i], pr.K[i] = p.Li[i], p.Ki[i]
		if pr.Near[i] {
			pr.L[i]++
			pr.K[i]--
		}
	}
	return pr, nil
}

// canLead checks the assumptions of section 5.1 for leader q.
func canLead(g *topology.Graph, p cs.Params, q cs.ID) error {
	if d := g.Degree(q); d < MinLeaderDegree {
		return fmt.Errorf("|N_%d| = %d: the leader needs at least %d neighbors (section 5.1)", q, d, MinLeaderDegree)
	}
	for i, d := range g.Distances(q) {
		if d <= 2 && p.Ki[i]-p.Li[i] < 3 {
			return fmt.Errorf("P%d is within two hops and has l_%d = %d, k_%d = %d: LKCS needs k_q - l_q >= 3 there (section 5.1)", i+1, i+1, p.Li[i], i+1, p.Ki[i])
		}
	}
	return nil
}

// Initial returns LKCS's default initial configuration: a configuration
// safe for the tightened bounds L_i..K_i (topology.SafeInitial), so that
// the processes near the leader start within their normal bounds and the
// sidetrack starts unused. Any configuration safe for l_i..k_i may be given
// instead.
func Initial(p cs.Params) ([]cs.ID, error) {
	pr, err := Resolve(p)
	if err != nil {
		return nil, err
	}
	return topology.SafeInitial(pr.Graph, topology.Bounds{L: pr.L, K: pr.K})
}
