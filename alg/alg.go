// Package alg is the registry of critsec's algorithms: each entry names an
// algorithm, says which bounds on #InCS it guarantees, and builds the
// machines of all n processes from cs.Params. The runtimes (sim, check, node)
// and the CLI find algorithms here and nowhere else.
package alg

import (
	"fmt"
	"slices"
	"strings"

	"critsec/alg/raymond"
	"critsec/coterie"
	"critsec/cs"
)

// Algorithm describes one algorithm of the CS family.
type Algorithm struct {
	// Name is the value of the CLI's --alg flag and of the trace header's
	// "alg" field.
	Name string
	// Summary is one line for --help: the problem solved and the paper.
	Summary string
	// Quorums reports whether the algorithm uses Params.Quorums (a coterie).
	Quorums bool
	// UsesL reports whether the algorithm takes a lower bound Params.L;
	// for the others L must be 0.
	UsesL bool
	// FixedK, when set, gives the upper bound the algorithm always has for
	// n processes (1 for mutual exclusion, n for mutual inclusion), which
	// Params.K must equal; nil means K is the user's choice.
	FixedK func(n int) int
	// Bounds returns the bounds lo <= #InCS <= hi the algorithm guarantees
	// for p: the safety property every runtime checks after every event.
	Bounds func(p cs.Params) (lo, hi int)
	// DefaultInitial returns the processes InCS in the documented default
	// initial configuration for p (a safe one).
	DefaultInitial func(p cs.Params) []cs.ID
	// New validates p and returns the machines of processes 1..n in order.
	New func(p cs.Params) ([]cs.Machine, error)
}

var registry = []Algorithm{
	{
		Name:           raymond.Name,
		Summary:        "k-mutual exclusion, permission based, 2(n-1) messages (Raymond 1989; FT k-mutex paper, section 3)",
		Bounds:         func(p cs.Params) (int, int) { return 0, p.K },
		DefaultInitial: func(cs.Params) []cs.ID { return nil },
		New:            raymond.New,
	},
}

// Lookup returns the algorithm called name, or an error that lists the known
// names.
func Lookup(name string) (Algorithm, error) {
	for _, a := range registry {
		if a.Name == name {
			return a, nil
		}
	}
	return Algorithm{}, fmt.Errorf("unknown algorithm %q: choose one of %s", name, strings.Join(Names(), ", "))
}

// Names returns the registered names in sorted order.
func Names() []string {
	names := make([]string, len(registry))
	for i, a := range registry {
		names[i] = a.Name
	}
	slices.Sort(names)
	return names
}

// All returns every registered algorithm, sorted by name.
func All() []Algorithm {
	all := slices.Clone(registry)
	slices.SortFunc(all, func(a, b Algorithm) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Build returns the machines of the algorithm called name for n processes,
// in its default initial configuration, and the bounds lo..hi it
// guarantees. l is ignored by algorithms without a lower bound (UsesL) and
// k by those with a fixed upper bound (FixedK); cot names a built-in
// coterie (majority or grid, package coterie) for the quorum-based ones.
func Build(name string, n, l, k int, cot string) (ms []cs.Machine, p cs.Params, lo, hi int, err error) {
	a, err := Lookup(name)
	if err != nil {
		return nil, p, 0, 0, err
	}
	p = cs.Params{N: n, L: l, K: k}
	if !a.UsesL {
		p.L = 0
	}
	if a.FixedK != nil {
		p.K = a.FixedK(n)
	}
	if err := p.CheckSize(); err != nil {
		return nil, p, 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	if a.Quorums {
		if p.Quorums, _, err = coterie.ByName(cot, n); err != nil {
			return nil, p, 0, 0, fmt.Errorf("%s: coterie %s: %w", name, cot, err)
		}
	}
	p.Initial = a.DefaultInitial(p)
	lo, hi = a.Bounds(p)
	if ms, err = a.New(p); err != nil {
		return nil, p, 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	return ms, p, lo, hi, nil
}
