package alg

import (
	"github.com/critsec/critsec/alg/ftgcs"
	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// ftraymondBytes is the size of an ftraymond machine: Raymond's two
// counters per peer plus five sets of processes (trusted, crashed, the
// detector's suspicions, the ACKs received, the INITs waiting), one bit
// per process each.
func ftraymondBytes(p cs.Params) int64 { return 9*int64(p.N) + int64(p.N) + 512 }

// The fault-tolerant k-mutual exclusion of Bouillaguet, Arantes and Sens
// (2007), Algorithm 1: Raymond's algorithm extended with a trusting failure
// detector (docs/fault-tolerance.md).
func init() {
	registry = append(registry, Algorithm{
		Name:           ftraymond.Name,
		Summary:        "fault-tolerant k-mutual exclusion, Raymond's algorithm with a failure detector T, tolerates n-1 crashes (Bouillaguet, Arantes, Sens 2007)",
		Property:       globalBounds,
		DefaultInitial: none,
		New:            ftraymond.New,
		Decoder:        func(p cs.Params) cs.Decoder { return ftraymond.Decoder(p.N) },
		ProcessBytes:   ftraymondBytes,
	})
}

// ftgcsBytes is the size of an ftgcs machine: an ftraymond machine (the k
// side) and the l side's two words and three sets per process.
func ftgcsBytes(p cs.Params) int64 { return ftraymondBytes(p) + 16*int64(p.N) + int64(p.N) + 512 }

// lsideOption chooses the l side of ftgcs: the design it uses, or one of
// the designs dropped for a counterexample, kept to replay it.
var lsideOption = Option{
	Name:    "lside",
	Help:    "the l-mutual inclusion inside ftgcs: locks (its design), or a dropped design whose counterexample docs/ft-global-lk-cs.md shows",
	Kind:    Choice,
	Default: ftgcs.Locks,
	Choices: []string{ftgcs.Locks, ftgcs.Complement, ftgcs.ComplementFixed},
}

// faultTolerantBounds is the Property of ftgcs: at most k live processes
// InCS, and every exit leaves at least l InCS, counting the crashes its
// exiter has not been told of (docs/ft-global-lk-cs.md).
func faultTolerantBounds(p cs.Params) (*property.Property, error) {
	return property.FaultTolerantGlobal(p.N, p.L, p.K)
}

// A fault-tolerant global (l,k)-CS: the global paper's composition
// (Kamei and Kakugawa 2019, Algorithm 3) of the fault-tolerant k-mutex
// and an l-mutual inclusion whose answers are locks
// (docs/ft-global-lk-cs.md).
func init() {
	registry = append(registry, Algorithm{
		Name:     ftgcs.Name,
		Summary:  "fault-tolerant global (l,k)-CS, ftraymond composed with a lock-based l-mutual inclusion, failure detector T, n-1 crashes (Kamei-Kakugawa 2019 section 5 with Bouillaguet-Arantes-Sens 2007)",
		UsesL:    true,
		Property: faultTolerantBounds,
		// Processes 1..l InCS, as for gcs.
		DefaultInitial: firstL,
		Options:        []Option{lsideOption},
		New:            func(p cs.Params) ([]cs.Machine, error) { return ftgcs.New(p, p.Options.String(lsideOption.Name)) },
		Decoder:        func(p cs.Params) cs.Decoder { return ftgcs.Decoder(p.N, p.Options.String(lsideOption.Name)) },
		ProcessBytes:   ftgcsBytes,
	})
}
