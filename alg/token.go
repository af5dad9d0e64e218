package alg

import (
	"github.com/critsec/critsec/alg/forest"
	"github.com/critsec/critsec/alg/partition"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/alg/srimanireddy"
	"github.com/critsec/critsec/cs"
)

// The token-based K-mutual exclusion of Bulgannawar and Vaidya (ICDCS
// 1995): the dynamic-forest algorithm of section 2 ("forest", corrected;
// "forest-paper" as published, which can lose a request after a stale
// INFORM: docs/design/forest-fix.md) and the partitioning scheme of section 5
// ("partition": K clusters, each running forest with K = 1), and the same
// scheme over the baselines section 5 works it out for: Raymond's
// algorithm ("partition-raymond", about 2(N/K - 1) messages per entry) and
// Srimani and Reddy's ("partition-srimani-reddy", about N/K - 1). Options:
// the token-choice heuristic and ν, the decision mechanisms of section 3.
func init() {
	for _, v := range []forest.Variant{forest.Fixed, forest.Paper} {
		suffix, note := variant(v == forest.Paper, "may lose a request")
		registry = append(registry, Algorithm{
			Name:     forest.Name + suffix,
			Summary:  "k-mutual exclusion with k tokens and a dynamic forest per token" + note + " (Bulgannawar-Vaidya 1995, section 2)",
			Property: globalBounds,
			// No process InCS; token t starts at process t.
			DefaultInitial: none,
			Options:        []Option{tokenOption, nuOption},
			New:            func(p cs.Params) ([]cs.Machine, error) { return forest.New(p, forestOptions(p, v)) },
			Decoder:        func(p cs.Params) cs.Decoder { return forest.Decoder(p.N, p.K, v) },
			ProcessBytes:   forestBytes,
		})
	}
	registry = append(registry, Algorithm{
		Name:     partition.Name,
		Summary:  "k-mutual exclusion by k clusters of about n/k processes, each running forest with one token (Bulgannawar-Vaidya 1995, section 5)",
		Property: globalBounds,
		// No process InCS; each cluster's token starts at its first process.
		DefaultInitial: none,
		Options:        []Option{nuOption},
		New:            func(p cs.Params) ([]cs.Machine, error) { return partition.New(p, forestOptions(p, forest.Fixed)) },
		Decoder:        func(p cs.Params) cs.Decoder { return forest.Decoder(p.N, 1, forest.Fixed) },
		ProcessBytes:   func(cs.Params) int64 { return forestBytes(cs.Params{K: 1}) },
	})
	registry = append(registry,
		partitioned(raymond.Name, "about 2(n/k-1) messages per entry", raymond.New,
			func(cs.Params) cs.Decoder { return raymond.Decode }, raymondBytes),
		partitioned(srimanireddy.Name, "about n/k-1 messages per entry", srimanireddy.New,
			func(p cs.Params) cs.Decoder { return partition.Decoder(p.N, p.K, srimanireddy.Decoder) }, srimaniReddyBytes))
}

// partitioned is the partitioning scheme of section 5 over the registered
// algorithm inner (partition.Of): k clusters, each running inner's
// machines (built by build) with k = 1. Its decoder is dec; a process's
// memory is inner's (bytes) on the largest cluster, ceil(n/k) processes.
func partitioned(inner, msgs string, build func(cs.Params) ([]cs.Machine, error), dec func(cs.Params) cs.Decoder, bytes func(cs.Params) int64) Algorithm {
	name := partition.Name + "-" + inner
	return Algorithm{
		Name:     name,
		Summary:  "k-mutual exclusion by k clusters of about n/k processes, each running " + inner + " with k = 1, " + msgs + " (Bulgannawar-Vaidya 1995, section 5)",
		Property: globalBounds,
		// No process InCS; inner's own initial placement in each cluster.
		DefaultInitial: none,
		New: func(p cs.Params) ([]cs.Machine, error) {
			return partition.Of(p, name, func(m int, initial []cs.ID) ([]cs.Machine, error) {
				return build(cs.Params{N: m, K: 1, Initial: initial})
			})
		},
		Decoder: dec,
		ProcessBytes: func(p cs.Params) int64 {
			k := max(p.K, 1)
			return bytes(cs.Params{N: (p.N + k - 1) / k, K: 1})
		},
	}
}

// The choices of the token option.
const (
	tokenLastSeen = "last-seen" // the paper's heuristic
	tokenRandom   = "random"
)

// tokenOption chooses the token Entry_CS requests.
var tokenOption = Option{
	Name:    "token",
	Help:    "the token a process requests (Bulgannawar-Vaidya 1995, section 3): the last seen token, or one at random",
	Kind:    Choice,
	Default: tokenLastSeen,
	Choices: []string{tokenLastSeen, tokenRandom},
}

// nuOption is ν, the number of INFORM messages per exit that keeps the
// token.
var nuOption = Option{
	Name:    "nu",
	Help:    "INFORM messages sent to random other processes on an exit that keeps the token (Bulgannawar-Vaidya 1995, section 3: nu = 2)",
	Kind:    Int,
	Default: 2,
	Min:     0,
	Max:     MaxN,
}

// forestOptions builds the forest options of variant v from p's options.
func forestOptions(p cs.Params, v forest.Variant) forest.Options {
	o := forest.Options{Nu: p.Options.Int(nuOption.Name), Variant: v}
	if p.Options.String(tokenOption.Name) == tokenRandom {
		o.Choice = forest.Random
	}
	return o
}

// forestBytes is the size of a forest machine: a few words, k pointers (4
// bytes each) and k counts (8 bytes each, the corrected variant's seen);
// the queues start empty and the member list is shared. Measured by
// TestProcessBytes: 8 292 bytes a process at n = 1000, k = 667.
func forestBytes(p cs.Params) int64 { return 320 + 12*int64(p.K+1) }
