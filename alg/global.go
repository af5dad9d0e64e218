package alg

import (
	"github.com/critsec/critsec/alg/maekawa"
	"github.com/critsec/critsec/cs"
)

// maekawaBytes is the size of a Maekawa machine: a few words, its quorum
// and its arbiter's queue, which starts empty.
func maekawaBytes(p cs.Params) int64 {
	q := 0
	for _, qi := range p.Quorums {
		q = max(q, len(qi))
	}
	return 256 + 8*int64(q)
}

// Maekawa's quorum-based mutual exclusion (Maekawa 1985), the mx object of
// the global (l,k)-CS paper. "maekawa" is the corrected variant;
// "maekawa-paper" is the algorithm as published, which can deadlock
// (docs/maekawa.md).
func init() {
	for _, v := range []maekawa.Variant{maekawa.Fixed, maekawa.Paper} {
		suffix, note := variant(v == maekawa.Paper, "may deadlock")
		name, build := maekawa.Name+suffix, maekawa.New
		if v == maekawa.Paper {
			build = maekawa.NewPaper
		}
		registry = append(registry, Algorithm{
			Name:     name,
			Summary:  "mutual exclusion on a coterie" + note + ", 3(|Q|-1) to 5(|Q|-1) messages per entry (Maekawa 1985)",
			Quorums:  true,
			FixedK:   func(int) int { return 1 },
			Property: globalBounds,
			// No process InCS, as usual for mutual exclusion.
			DefaultInitial: none,
			New:            build,
			Decoder:        func(cs.Params) cs.Decoder { return maekawa.Decode },
			ProcessBytes:   maekawaBytes,
		})
	}
}
