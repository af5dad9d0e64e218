// Package lmutex is k_i-LMUTEX, the generalized local k_i-mutual exclusion
// algorithm of Kamei and Kakugawa, "An asynchronous message-passing
// distributed algorithm for the generalized local critical section
// problem" (Algorithms 10(2):38, 2017), section 4: at most k_i of P_i and
// its neighbors N_i are InCS at any time (the generalized local (0,k_i)-CS
// problem). It is Co(l_i-LMUTIN) with l_i = |N_i|+1-k_i, by the generalized
// local complementary theorem (Theorem 2), built with the generic wrapper
// cs.Co: Entry here is LMUTIN's Exit-Sequence (Request / Grant, blocking)
// and Exit is LMUTIN's Entry-Sequence (a Release to N_i ∪ {P_i}).
//
// A process InCS here is OutCS in the inner LMUTIN, so the inner initial
// configuration is the complement of Params.Initial: at most k_i InCS in
// N_i ∪ {P_i} here is at least |N_i|+1-k_i InCS there, which LMUTIN
// requires. Deviations are LMUTIN's (package lmutin).
package lmutex

import (
	"fmt"

	"github.com/critsec/critsec/alg/lmutin"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/topology"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "lmutex"

// New validates p (1 <= k_i <= |N_i|+1, l_i = 0 when Li is given, at most
// k_i of N_i ∪ {P_i} InCS initially) and returns the machines
// Co(LMUTIN(|N_i|+1-k_i)) of processes 1..n, in order.
func New(p cs.Params, v lmutin.Variant) ([]cs.Machine, error) {
	if len(p.Neighbors) != p.N || len(p.Ki) != p.N {
		return nil, fmt.Errorf("lmutex: n = %d with %d neighbor lists and %d upper bounds: need N_i and k_i for every process", p.N, len(p.Neighbors), len(p.Ki))
	}
	inner := cs.Params{N: p.N, Neighbors: p.Neighbors, Li: make([]int, p.N)}
	for idx, ns := range p.Neighbors {
		k, d := p.Ki[idx], len(ns)
		if k < 1 || k > d+1 {
			return nil, fmt.Errorf("lmutex: P%d (degree %d): k = %d is out of range: need 1 <= k <= |N_%d|+1 = %d", idx+1, d, k, idx+1, d+1)
		}
		if p.Li != nil && p.Li[idx] != 0 {
			return nil, fmt.Errorf("lmutex: P%d: l = %d: k_i-LMUTEX guarantees no lower bound, so l must be 0", idx+1, p.Li[idx])
		}
		inner.Li[idx] = d + 1 - k
	}
	in := cs.NewSet(p.Initial...)
	for _, id := range p.Initial {
		if id < 1 || int(id) > p.N {
			return nil, fmt.Errorf("lmutex: initial: unknown process id %d: ids run from 1 to n = %d", id, p.N)
		}
	}
	if err := topology.CheckInitial(p.Neighbors, make([]int, p.N), p.Ki, p.Initial); err != nil {
		return nil, fmt.Errorf("lmutex: %w", err)
	}
	for id := cs.ID(1); int(id) <= p.N; id++ {
		if !in.Has(id) {
			inner.Initial = append(inner.Initial, id)
		}
	}
	ms, err := lmutin.New(inner, v)
	if err != nil {
		return nil, fmt.Errorf("lmutex: the inner LMUTIN (Theorem 2): %w", err)
	}
	for i, m := range ms {
		ms[i] = cs.Co(m)
	}
	return ms, nil
}
