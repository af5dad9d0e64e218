package alg

import (
	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/cs"
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
