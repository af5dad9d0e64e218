package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHistQuantiles compares the histogram's quantiles with exact ones
// from the stored samples, over many orders of magnitude: they must agree
// to within HistRelErr.
func TestHistQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, scale := range []float64{1e-6, 1, 1e6} {
		h := newHist()
		var xs []float64
		for range 20000 {
			x := scale * rng.ExpFloat64() * math.Exp(3*rng.NormFloat64())
			if rng.IntN(10) == 0 {
				x = 0
			}
			xs = append(xs, x)
			h.add(x)
		}
		slices.Sort(xs)
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
			exact := xs[int(math.Ceil(q*float64(len(xs))))-1]
			got := h.quantile(q)
			if math.Abs(got-exact) > HistRelErr*exact {
				t.Errorf("scale %g q=%g: got %g, exact %g (rel err %g > %g)", scale, q, got, exact, math.Abs(got-exact)/exact, HistRelErr)
			}
		}
		w := h.waits()
		if w.Max != xs[len(xs)-1] || w.Count != int64(len(xs)) {
			t.Errorf("scale %g: max %g count %d", scale, w.Max, w.Count)
		}
	}
	var h hist = newHist()
	if w := h.waits(); w != (Waits{}) {
		t.Fatalf("empty histogram: %+v", w)
	}
}
