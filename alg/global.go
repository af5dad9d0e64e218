package alg

import (
	"critsec/alg/maekawa"
)

// Maekawa's quorum-based mutual exclusion (Maekawa 1985), the mx object of
// the global (l,k)-CS paper. "maekawa" is the corrected variant;
// "maekawa-paper" is the algorithm as published, which can deadlock
// (docs/maekawa.md).
func init() {
	for _, v := range []maekawa.Variant{maekawa.Fixed, maekawa.Paper} {
		name, note, build := maekawa.Name, "", maekawa.New
		if v == maekawa.Paper {
			name, note, build = maekawa.Name+"-paper", " as published (may deadlock)", maekawa.NewPaper
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
		})
	}
}
