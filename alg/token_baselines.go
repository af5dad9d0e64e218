package alg

import (
	"github.com/critsec/critsec/alg/makki"
	"github.com/critsec/critsec/alg/srimanireddy"
	"github.com/critsec/critsec/cs"
)

// srimaniReddyBytes is the size of a Srimani-Reddy machine: RN and PLN (two
// int64 per site), and on average K/N privileges of N int64 each, which
// start at P1..PK; 9 bytes an int64 allow for the allocator's size classes
// (measured by TestProcessBytes: 22 040 bytes on n = 1000, k = 667).
func srimaniReddyBytes(p cs.Params) int64 {
	n, k := int64(p.N), int64(p.K)
	return 17*n + (9*n+128)*k/n + 256
}

// makkiBytes is the size of a Makki machine: a few words; the token's queue
// starts empty.
func makkiBytes(cs.Params) int64 { return 256 }

// The token-based baselines of Bulgannawar and Vaidya's K-mutex study
// (ICDCS 1995, section 4), reconstructed from what is published about them
// (docs/token-baselines.md): Srimani and Reddy's K privileges (Inf.
// Process. Lett. 41, 1992) and Makki et al.'s single token with a queue and
// a semaphore (IEEE SPDP 1992).
func init() {
	registry = append(registry,
		Algorithm{
			Name:           srimanireddy.Name,
			Summary:        "k-mutual exclusion, K privileges extending Suzuki-Kasami's broadcast, about N messages per entry (Srimani and Reddy 1992, reconstructed; Bulgannawar and Vaidya 1995, section 4)",
			Property:       globalBounds,
			DefaultInitial: none,
			New:            srimanireddy.New,
			Decoder:        func(p cs.Params) cs.Decoder { return srimanireddy.Decoder(p.N) },
			ProcessBytes:   srimaniReddyBytes,
		},
		Algorithm{
			Name:           makki.Name,
			Summary:        "k-mutual exclusion, one token with a queue and a semaphore, near 3 messages per entry at heavy load (Makki et al. 1992, reconstructed; Bulgannawar and Vaidya 1995, section 4)",
			Property:       globalBounds,
			DefaultInitial: none,
			New:            makki.New,
			Decoder:        func(p cs.Params) cs.Decoder { return makki.Decoder(p.N, p.K) },
			ProcessBytes:   makkiBytes,
		},
	)
}
