// Package kmutex is k-mutual exclusion (at most k processes InCS) obtained
// from MUTIN(n-k) by the complementary theorem: Theorem 1 of Kamei and
// Kakugawa, "Asynchronous message-passing distributed algorithm for the global
// critical section problem" (2019), applied as in section 5, where (l,k)-GCS
// uses it as its object kmex. The complement is the generic wrapper cs.Co:
// Entry of k-mutex is Exit of MUTIN(n-k) (blocking, serialised by mx), and
// Exit is MUTIN's Entry (a Release to each member of Q_i, never blocking).
//
// A process InCS here is OutCS in the inner MUTIN(n-k), so the inner
// configuration is the complement of Params.Initial: at most k processes
// InCS here means at least n-k InCS there, which MUTIN(n-k) requires.
package kmutex

import (
	"fmt"

	"github.com/critsec/critsec/alg/mutin"
	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "kmutex"

// Validate checks p for k-mutual exclusion: 1 <= k <= n, l = 0, the quorums
// form a coterie, and at most k processes are InCS initially.
func Validate(p cs.Params) error {
	if err := p.CheckKExclusion(Name, " (or --alg gcs for l > 0)"); err != nil {
		return err
	}
	if err := coterie.CheckIntersecting(p.Quorums, p.N); err != nil {
		return fmt.Errorf("quorums: %w", err)
	}
	return p.CheckInitial(0, p.K)
}

// New returns the machines Co(MUTIN(n-k)) of processes 1..n, in order.
func New(p cs.Params, o mutin.Options) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	in := cs.NewSet(p.Initial...)
	var complement []cs.ID
	for id := cs.ID(1); int(id) <= p.N; id++ {
		if !in.Has(id) {
			complement = append(complement, id)
		}
	}
	inner, err := mutin.New(cs.Params{N: p.N, L: p.N - p.K, Quorums: p.Quorums, Initial: complement}, o)
	if err != nil {
		return nil, fmt.Errorf("kmutex: MUTIN(n-k): %w", err)
	}
	ms := make([]cs.Machine, p.N)
	for i, m := range inner {
		ms[i] = cs.Co(m)
	}
	return ms, nil
}
