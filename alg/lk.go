package alg

import (
	"critsec/alg/gcs"
	"critsec/alg/kmutex"
	"critsec/alg/maekawa"
	"critsec/alg/mutin"
	"critsec/cs"
)

// The global (l,k)-CS family of Kamei and Kakugawa (2019): MUTIN(l)
// (Algorithms 1-2), k-mutual exclusion as Co(MUTIN(n-k)) (Theorem 1) and
// (l,k)-GCS (Algorithm 3). The plain names run mutin.Fixed, which forwards
// every Release to an outstanding Query; the "-paper" names run Algorithms
// 1-2 as published, which can deadlock (docs/global-lk-cs.md).
//
// mx, the mutual-exclusion object inside each MUTIN, is Maekawa's algorithm
// on the same coterie, as in the paper (section 3.4, Lemma 8), in its
// corrected variant (maekawa.Fixed) for the "-paper" names too: they isolate
// the published MUTIN's own gap, not Maekawa's (docs/maekawa.md).
func init() {
	for _, v := range []mutin.Variant{mutin.Fixed, mutin.Paper} {
		o := mutin.Options{Mx: maekawa.New, Variant: v}
		suffix, note := "", ""
		if v == mutin.Paper {
			suffix, note = "-paper", " as published (may deadlock)"
		}
		registry = append(registry,
			Algorithm{
				Name:    mutin.Name + suffix,
				Summary: "l-mutual inclusion MUTIN(l)" + note + ", at least l InCS, O(|Q|) messages (Kamei-Kakugawa 2019, Algorithms 1-2)",
				Quorums: true,
				UsesL:   true,
				FixedK:  func(n int) int { return n },
				Bounds:  func(p cs.Params) (int, int) { return p.L, p.N },
				// Processes 1..l InCS: the fewest MUTIN(l) allows.
				DefaultInitial: func(p cs.Params) []cs.ID { return firstIDs(p.L) },
				New:            func(p cs.Params) ([]cs.Machine, error) { return mutin.New(p, o) },
			},
			Algorithm{
				Name:    kmutex.Name + suffix,
				Summary: "k-mutual exclusion as Co(MUTIN(n-k))" + note + " (Kamei-Kakugawa 2019, Theorem 1)",
				Quorums: true,
				Bounds:  func(p cs.Params) (int, int) { return 0, p.K },
				// No process InCS, as usual for mutual exclusion.
				DefaultInitial: func(cs.Params) []cs.ID { return nil },
				New:            func(p cs.Params) ([]cs.Machine, error) { return kmutex.New(p, o) },
			},
			Algorithm{
				Name:    gcs.Name + suffix,
				Summary: "global (l,k)-CS, at least l and at most k InCS" + note + " (Kamei-Kakugawa 2019, Algorithm 3)",
				Quorums: true,
				UsesL:   true,
				Bounds:  func(p cs.Params) (int, int) { return p.L, p.K },
				// Processes 1..l InCS: the minimum, like l servers kept
				// running; the first exits wait for an entry.
				DefaultInitial: func(p cs.Params) []cs.ID { return firstIDs(p.L) },
				New:            func(p cs.Params) ([]cs.Machine, error) { return gcs.New(p, o) },
			},
		)
	}
}

// firstIDs returns processes 1..c.
func firstIDs(c int) []cs.ID {
	ids := make([]cs.ID, c)
	for i := range ids {
		ids[i] = cs.ID(i + 1)
	}
	return ids
}
