package cs

import "fmt"

// Params are the parameters every algorithm of the CS family is built from.
// Not every algorithm uses every field; each algorithm's constructor validates
// the fields it uses and says which one is wrong.
type Params struct {
	// N is the number of processes; ids run from 1 to N.
	N int
	// L is the lower bound: at least L processes InCS (mutual inclusion).
	L int
	// K is the upper bound: at most K processes InCS (mutual exclusion).
	K int
	// Quorums[i-1] is Q_i, the quorum process i uses (quorum-based
	// algorithms only; see package coterie).
	Quorums [][]ID
	// Neighbors[i-1] is N_i, the neighbors of process i in increasing id
	// order: the communication graph of the local algorithms (the
	// generalized local (l_i,k_i)-CS problem; see package topology). Nil
	// for the global algorithms.
	Neighbors [][]ID
	// Li[i-1] and Ki[i-1] are process i's own bounds l_i and k_i in a local
	// problem: at least l_i and at most k_i of N_i ∪ {P_i} InCS, with
	// 0 <= l_i < k_i <= |N_i|+1. L and K then hold the uniform bounds the
	// user gave, if any, for reports.
	Li, Ki []int
	// Initial lists the processes InCS in the initial configuration; the
	// others start OutCS.
	Initial []ID
	// Options are the algorithm's own options, validated (see Options).
	Options Options
}

// InitiallyInCS reports whether id is InCS in the initial configuration.
func (p Params) InitiallyInCS(id ID) bool {
	for _, x := range p.Initial {
		if x == id {
			return true
		}
	}
	return false
}

// Quorum returns Q_id, or nil when no quorums are set.
func (p Params) Quorum(id ID) []ID {
	if int(id) < 1 || int(id) > len(p.Quorums) {
		return nil
	}
	return p.Quorums[id-1]
}

// CheckSize returns an error unless 1 <= N and 0 <= L < K <= N: the
// parameters of the global (l,k)-CS problem (Definition 2 of the global paper).
func (p Params) CheckSize() error {
	switch {
	case p.N < 1:
		return fmt.Errorf("n = %d is out of range: need n >= 1", p.N)
	case p.K < 1 || p.K > p.N:
		return fmt.Errorf("k = %d is out of range: need 1 <= k <= n (n = %d)", p.K, p.N)
	case p.L < 0:
		return fmt.Errorf("l = %d is out of range: need l >= 0", p.L)
	case p.L >= p.K:
		return fmt.Errorf("l = %d is out of range: need l < k (k = %d); at l = k no process could ever exit", p.L, p.K)
	}
	return nil
}

// CheckKExclusion returns CheckSize's error, or an error unless L = 0:
// algorithm name solves k-mutual exclusion and guarantees no lower bound.
// hint, when not empty, follows "use l = 0" in the error, for example to name
// an algorithm that does keep a lower bound.
func (p Params) CheckKExclusion(name, hint string) error {
	if err := p.CheckSize(); err != nil {
		return err
	}
	if p.L != 0 {
		return fmt.Errorf("l = %d: %s solves k-mutual exclusion and guarantees no lower bound; use l = 0%s", p.L, name, hint)
	}
	return nil
}

// CheckInitial returns an error unless every id in Initial is in 1..N, none is
// repeated, and lo <= len(Initial) <= hi: the initial configuration must be
// safe (Definition 2 of the global paper assumes a safe C_0).
func (p Params) CheckInitial(lo, hi int) error {
	seen := make([]bool, p.N+1)
	for _, id := range p.Initial {
		if id < 1 || int(id) > p.N {
			return fmt.Errorf("initial: unknown process id %d: ids run from 1 to n = %d", id, p.N)
		}
		if seen[id] {
			return fmt.Errorf("initial: process %d is listed twice", id)
		}
		seen[id] = true
	}
	if c := len(p.Initial); c < lo || c > hi {
		return fmt.Errorf("initial: %d processes InCS is unsafe: the initial configuration needs between %d and %d processes InCS", c, lo, hi)
	}
	return nil
}

// Options are an algorithm's own options (for example the mutual-exclusion
// object inside MUTIN, or the number of INFORM messages of the token
// K-mutex algorithm), by name. Each algorithm declares the options it takes
// (package alg: name, type, default, range); the registry validates the
// values and fills in the defaults before the algorithm sees them, so every
// declared option is present with a value of its declared type: string or
// int.
type Options map[string]any

// String returns option name as a string ("" when absent or not a string).
func (o Options) String(name string) string { s, _ := o[name].(string); return s }

// Int returns option name as an int (0 when absent or not an int).
func (o Options) Int(name string) int { v, _ := o[name].(int); return v }
