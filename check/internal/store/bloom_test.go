package store

import (
	"math/rand/v2"
	"testing"
)

// TestFilterFalsePositives: a filter sized for n fingerprints answers
// "maybe" for every one added (no false negatives), and for fingerprints
// never added, "maybe" at most at the rates the filter's doc comment
// states: 0.25 % while it holds half its capacity (where a merge that
// grows it leaves it), 3 % when full, and 25 % with twice its capacity
// (a filter that may not grow, Disk.filterCapacity).
func TestFilterFalsePositives(t *testing.T) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(5, 6))
	random := func() FP { return FP{rng.Uint32(), rng.Uint32(), rng.Uint32()} }
	f := newBloom(n)
	if got := int64(len(f.blocks)) * 64; got != n*filterBits/8 {
		t.Fatalf("%d bytes for %d fingerprints, want %d", got, n, n*filterBits/8)
	}
	var added []FP
	for _, c := range []struct {
		fill int     // fingerprints in the filter
		max  float64 // largest false-positive rate allowed
	}{{n / 2, 0.0025}, {n, 0.03}, {2 * n, 0.25}} {
		for len(added) < c.fill {
			x := random()
			f.add(x)
			added = append(added, x)
		}
		for i, x := range added {
			if !f.mayHave(x) {
				t.Fatalf("fingerprint %d of %d lost", i, len(added))
			}
		}
		maybe := 0
		const probes = 1 << 20
		for range probes {
			if f.mayHave(random()) {
				maybe++
			}
		}
		rate := float64(maybe) / probes
		t.Logf("%d of %d: false positives %.3f %%", c.fill, n, 100*rate)
		if rate > c.max {
			t.Errorf("%d fingerprints in a filter for %d: false positives %.3f %%, want at most %.2f %%", c.fill, n, 100*rate, 100*c.max)
		}
	}
	var none *bloom
	if !none.mayHave(random()) {
		t.Error("a nil filter ruled a fingerprint out")
	}
}
