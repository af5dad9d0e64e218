// Package alg is the registry of critsec's algorithms: each entry names an
// algorithm, says which safety property it guarantees, declares its own
// options, and builds the machines of all n processes from cs.Params.
// Resolve is the one path from a user's problem (flags or a problem file,
// Spec) to a validated Problem. The runtimes (sim, check, node) and the CLI
// find algorithms here and nowhere else.
package alg

import (
	"fmt"
	"slices"
	"strings"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
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
	// Local reports whether the algorithm solves a local problem: it runs
	// on a communication graph (Params.Neighbors, from a topology) with
	// bounds per process (Params.Li, Params.Ki) instead of one bound over
	// all processes.
	Local bool
	// UsesL reports whether the algorithm takes a lower bound Params.L;
	// for the others L must be 0.
	UsesL bool
	// FixedK, when set, gives the upper bound the algorithm always has on
	// a group of n processes (1 for mutual exclusion, n for mutual
	// inclusion), which Params.K must equal; nil means K is the user's
	// choice. The group is all processes for a global algorithm and
	// N_i ∪ {P_i} for a local one, whose k_i is FixedK(|N_i|+1).
	FixedK func(n int) int
	// Property returns the safety property the algorithm guarantees for p,
	// which every runtime checks after every event.
	Property func(p cs.Params) (*property.Property, error)
	// DefaultInitial returns the processes InCS in the documented default
	// initial configuration for p (a safe one), or an error saying why
	// there is none.
	DefaultInitial func(p cs.Params) ([]cs.ID, error)
	// Options declares the algorithm's own options; p.Options holds each
	// of them, validated, when New is called.
	Options []Option
	// New validates p and returns the machines of processes 1..n in order.
	New func(p cs.Params) ([]cs.Machine, error)
	// Decoder returns the decoder of the messages the machines of p send
	// (cs.Decoder), the inverse of their AppendKind and AppendBinary, for
	// the networked runtime; Problem.Decoder is how runtimes get it.
	Decoder func(p cs.Params) cs.Decoder
	// ProcessBytes estimates the memory of one process's machine for p,
	// in bytes, at the start of a run, from above: the runtimes refuse a
	// problem that cannot fit before they build it (TestProcessBytes keeps
	// the estimate between the measured size and four times it plus 1 kB).
	ProcessBytes func(p cs.Params) int64
}

// raymondBytes is the size of a Raymond machine: two counters per peer
// (reply_count and defer_count) and a few words.
func raymondBytes(p cs.Params) int64 { return 9*int64(p.N) + 256 }

// variant returns the name suffix and the summary note of an algorithm's
// published variant (paper set), which runs the pseudo-code as written:
// "-paper" and " as published (flaw)"; the corrected variant gets neither.
func variant(paper bool, flaw string) (suffix, note string) {
	if !paper {
		return "", ""
	}
	return "-paper", " as published (" + flaw + ")"
}

// globalBounds is the Property of the algorithms of the global family:
// p.L <= #InCS <= p.K over all processes.
func globalBounds(p cs.Params) (*property.Property, error) {
	return property.Global(p.N, p.L, p.K)
}

var registry = []Algorithm{
	{
		Name:           raymond.Name,
		Summary:        "k-mutual exclusion, permission based, 2(n-1) messages (Raymond 1989; FT k-mutex paper, section 3)",
		Property:       globalBounds,
		DefaultInitial: none,
		New:            raymond.New,
		Decoder:        func(cs.Params) cs.Decoder { return raymond.Decode },
		ProcessBytes:   raymondBytes,
	},
}

// none is the DefaultInitial of algorithms that start with no process
// InCS.
func none(cs.Params) ([]cs.ID, error) { return nil, nil }

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
