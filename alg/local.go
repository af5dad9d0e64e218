package alg

import (
	"fmt"

	"github.com/critsec/critsec/alg/lkcs"
	"github.com/critsec/critsec/alg/lmutex"
	"github.com/critsec/critsec/alg/lmutin"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/topology"
)

// The generalized local (l_i,k_i)-CS family of Kamei and Kakugawa (2017):
// l_i-LMUTIN (Algorithms 1-2) and k_i-LMUTEX = Co(LMUTIN) (Theorem 2),
// on a topology (package topology) with bounds per process. The plain
// names run lmutin.Fixed; the "-paper" names run Algorithms 1-2 as
// published, which the model checker breaks (docs/design/lmutin-fix.md).
//
// Bounds: uniform l and k (the defaults are l = 1 for lmutin, local mutual
// inclusion, and k = 1 for lmutex, local mutual exclusion), or a bounds
// file. lmutin's k_i is always |N_i|+1 and lmutex's l_i always 0. The
// default initial configuration is found by topology.SafeInitial: nobody
// InCS for lmutex, a minimal set InCS for lmutin.
func init() {
	for _, v := range []lmutin.Variant{lmutin.Fixed, lmutin.Paper} {
		suffix, note := variant(v == lmutin.Paper, "an undefined step")
		registry = append(registry,
			Algorithm{
				Name:           lmutin.Name + suffix,
				Summary:        "generalized local l_i-mutual inclusion l_i-LMUTIN" + note + ", at least l_i of N_i+P_i InCS, 3(|N_i|+1)..6(|N_i|+1) messages (Kamei-Kakugawa 2017, Algorithms 1-2)",
				Local:          true,
				UsesL:          true,
				FixedK:         func(n int) int { return n },
				Property:       localProperty,
				DefaultInitial: safeInitial,
				New:            func(p cs.Params) ([]cs.Machine, error) { return lmutin.New(p, v) },
				Decoder:        func(cs.Params) cs.Decoder { return lmutin.Decode },
				ProcessBytes:   localBytes,
			},
			Algorithm{
				Name:           lmutex.Name + suffix,
				Summary:        "generalized local k_i-mutual exclusion k_i-LMUTEX = Co(LMUTIN)" + note + ", at most k_i of N_i+P_i InCS (Kamei-Kakugawa 2017, Theorem 2)",
				Local:          true,
				Property:       localProperty,
				DefaultInitial: safeInitial,
				New:            func(p cs.Params) ([]cs.Machine, error) { return lmutex.New(p, v) },
				// Co(LMUTIN) sends LMUTIN's messages.
				Decoder: func(cs.Params) cs.Decoder { return lmutin.Decode },
				// At the start Co(LMUTIN) holds few timestamps (every inner
				// process InCS); they come as the run goes, under the
				// simulator's heap limit.
				ProcessBytes: func(p cs.Params) int64 { return 1200 + 5*int64(meanDegree(p)+1) },
			},
		)
	}
}

// LKCS (Algorithms 3-7), with a leader (option leader; 0 chooses one,
// lkcs.Resolve) that must satisfy section 5.1's assumptions; its default
// initial configuration is safe for the tightened bounds L_i..K_i
// (lkcs.Initial). The plain name runs lkcs.Fixed, the correction (ordered
// acquisition with rollback, one returned sidetrack of each type);
// lkcs-paper runs Algorithms 3-7 as published, which the model checker
// deadlocks (docs/design/lkcs-fix.md).
func init() {
	for _, v := range []lkcs.Variant{lkcs.Fixed, lkcs.Paper} {
		suffix, note := variant(v == lkcs.Paper, "deadlocks")
		cost := ", 6(|N_i|+1)..12(|N_i|+1) messages"
		if v == lkcs.Fixed {
			note, cost = " corrected (ordered requests with rollback, returned sidetracks)", ""
		}
		registry = append(registry, Algorithm{
			Name:    lkcs.Name + suffix,
			Summary: "generalized local (l_i,k_i)-CS, LKCS" + note + ", with a leader's sidetrack" + cost + " (Kamei-Kakugawa 2017, Algorithms 3-7)",
			Local:   true,
			UsesL:   true,
			Property: func(p cs.Params) (*property.Property, error) {
				if _, err := lkcs.Resolve(p); err != nil {
					return nil, err
				}
				return localProperty(p)
			},
			DefaultInitial: lkcs.Initial,
			Options:        []Option{leaderOption},
			New:            func(p cs.Params) ([]cs.Machine, error) { return lkcs.New(p, v) },
			Decoder:        func(cs.Params) cs.Decoder { return lkcs.Decode },
			ProcessBytes:   func(p cs.Params) int64 { return 2 * localBytes(p) }, // measured: 26 320 bytes a process on complete:1000
		})
	}
}

// leaderOption names LKCS's leader P_LDR.
var leaderOption = Option{
	Name:    "leader",
	Help:    "LKCS's leader P_LDR, which needs |N_LDR| >= 4 and k_q - l_q >= 3 within two hops (Kamei-Kakugawa 2017, section 5.1); 0 chooses the process of largest degree that can lead",
	Kind:    Int,
	Default: 0,
	Min:     0,
	Max:     MaxN,
}

// localProperty is the Property of the local algorithms: l_i <= #InCS in
// N_i ∪ {P_i} <= k_i for every process.
func localProperty(p cs.Params) (*property.Property, error) {
	return property.Local(p.Neighbors, p.Li, p.Ki)
}

// safeInitial is the DefaultInitial of the local algorithms: a safe
// configuration found by search (topology.SafeInitial).
func safeInitial(p cs.Params) ([]cs.ID, error) {
	g, err := topology.FromLists("", p.Neighbors)
	if err != nil {
		return nil, err
	}
	return topology.SafeInitial(g, topology.Bounds{L: p.Li, K: p.Ki})
}

// localNames returns the names of the local algorithms, sorted.
func localNames() []string {
	var names []string
	for _, a := range All() {
		if a.Local {
			names = append(names, a.Name)
		}
	}
	return names
}

// resolveLocal is Resolve for a local algorithm: the topology, the bounds
// per process, then what every problem has (finish).
func resolveLocal(a Algorithm, s Spec) (*Problem, error) {
	if s.Topology == "" {
		return nil, fmt.Errorf("topology: %s solves a local problem and needs a communication graph: %s, or an edge-list file", a.Name, topology.Forms())
	}
	if s.Coterie != "" || s.Quorums != nil {
		return nil, fmt.Errorf("coterie: %s uses no coterie (each process asks its neighbors); leave it out", a.Name)
	}
	g, err := topology.ByName(s.Topology)
	switch {
	case err != nil && topology.IsSpec(s.Topology):
		return nil, fmt.Errorf("topology %s: %w", s.Topology, err)
	case err != nil:
		return nil, fmt.Errorf("topology: %w", err) // the file's errors name it
	}
	if s.N != 0 && s.N != g.N() {
		return nil, fmt.Errorf("n = %d, but topology %s has %d processes: leave n out", s.N, s.Topology, g.N())
	}
	b, err := localBounds(a, g, s)
	if err != nil {
		return nil, err
	}
	p := &Problem{Alg: a, Topology: g, Params: cs.Params{N: g.N(), Neighbors: g.Lists(), Li: b.L, Ki: b.K}}
	if s.L != nil {
		p.Params.L = *s.L
	}
	if s.K != nil {
		p.Params.K = *s.K
	}
	return finish(p, s)
}

// localBounds returns the bounds per process of a local problem: from the
// bounds file, or uniform (with the algorithm's defaults and fixed
// bounds), each checked against what the algorithm takes.
func localBounds(a Algorithm, g *topology.Graph, s Spec) (topology.Bounds, error) {
	if s.Bounds != "" {
		if s.L != nil || s.K != nil || s.Clamp {
			return topology.Bounds{}, fmt.Errorf("bounds file %s: give per-process bounds or uniform l and k, not both", s.Bounds)
		}
		b, err := topology.ReadBoundsFile(s.Bounds, g)
		if err != nil {
			return b, err
		}
		for i := range b.L {
			id := cs.ID(i + 1)
			size := g.Degree(id) + 1
			switch {
			case !a.UsesL && b.L[i] != 0:
				return b, b.At(id, fmt.Errorf("P%d: l = %d: %s guarantees no lower bound, so l must be 0", id, b.L[i], a.Name))
			case a.FixedK != nil && b.K[i] != a.FixedK(size):
				return b, b.At(id, fmt.Errorf("P%d (degree %d): k = %d: %s always allows %s of N_%d ∪ {P%d} InCS, so k must be %d (or max)", id, size-1, b.K[i], a.Name, processes(a.FixedK(size)), id, id, a.FixedK(size)))
			}
		}
		return b, nil
	}
	l := 0
	if a.UsesL {
		l = 1
	}
	if s.L != nil {
		l = *s.L
		if !a.UsesL && l != 0 {
			return topology.Bounds{}, fmt.Errorf("l = %d: %s guarantees no lower bound, so l must be 0; for at least l_i InCS use %s", l, a.Name, lmutin.Name)
		}
	}
	if a.FixedK != nil {
		if s.K != nil {
			return topology.Bounds{}, fmt.Errorf("k = %d: %s always allows all of N_i ∪ {P_i} InCS (k_i = |N_i|+1); leave k out", *s.K, a.Name)
		}
		return topology.UniformFunc(g, l, a.FixedK, s.Clamp)
	}
	k := l + 1
	if s.K != nil {
		k = *s.K
	}
	if l >= k {
		return topology.Bounds{}, fmt.Errorf("l = %d is out of range: need l < k (k = %d); with l = k no process could ever change state", l, k)
	}
	return topology.Uniform(g, l, k, s.Clamp)
}

// localBytes is the size of an l_i-LMUTIN machine: a few words and sets,
// and timestamps per neighbor (measured: 1 211 bytes a process on
// wheel:10000, 18 bytes a neighbor on complete:1000, 18.7 on
// complete:2000), for the mean neighborhood, so that n times it is the
// whole system's.
func localBytes(p cs.Params) int64 { return 1200 + 19*int64(meanDegree(p)+1) }

// meanDegree is the mean |N_i|, rounded up.
func meanDegree(p cs.Params) int {
	sum := 0
	for _, ns := range p.Neighbors {
		sum += len(ns)
	}
	return (sum + len(p.Neighbors) - 1) / max(1, len(p.Neighbors))
}
