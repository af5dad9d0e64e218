package sim

import "math"

// The waiting-time histogram is log-linear: each power-of-two range
// [2^(e-1), 2^e) is split into histSub equal buckets, so a bucket's width is
// at most 1/histSub of its lower bound and a quantile reported as the
// bucket's midpoint is within 1/(2*histSub) = 0.39% of the true sample
// (relative error). Memory is fixed (histExps*histSub counters), whatever
// the run's length: the simulator stores no samples.
const (
	histSub    = 128
	histMinExp = -30 // values below 2^-31 (~5e-10) share the first bucket
	histMaxExp = 50  // values above 2^50 share the last bucket
	histExps   = histMaxExp - histMinExp + 1
	// HistRelErr bounds the relative error of reported quantiles.
	HistRelErr = 1.0 / (2 * histSub)
)

// hist records non-negative durations: count, exact sum and max, and a
// log-linear histogram for quantiles.
type hist struct {
	count, zeros int64
	sum, max     float64
	b            []int64
}

func newHist() hist { return hist{b: make([]int64, histExps*histSub)} }

func (h *hist) add(v float64) {
	h.count++
	h.sum += v
	if v > h.max {
		h.max = v
	}
	if !(v > 0) {
		h.zeros++ // 0, and NaN, which Validate's bounds keep out
		return
	}
	h.b[histIndex(v)]++
}

func histIndex(v float64) int {
	frac, exp := math.Frexp(v) // v = frac * 2^exp, frac in [0.5, 1)
	switch {
	case math.IsInf(v, 1):
		return histExps*histSub - 1
	case exp < histMinExp:
		return 0
	case exp > histMaxExp:
		return histExps*histSub - 1
	}
	return (exp-histMinExp)*histSub + int((frac-0.5)*2*histSub)
}

// bucketMid is the midpoint of bucket i.
func bucketMid(i int) float64 {
	exp := i/histSub + histMinExp
	sub := i % histSub
	lo := (0.5 + float64(sub)/(2*histSub))
	return math.Ldexp(lo+1.0/(4*histSub), exp)
}

// quantile returns the q-quantile (0 < q <= 1): the smallest recorded value
// v such that at least a fraction q of the samples are <= v, to within
// HistRelErr, and never above the exact maximum.
func (h *hist) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.count)))
	rank = max(rank, 1)
	if rank <= h.zeros {
		return 0
	}
	seen := h.zeros
	for i, c := range h.b {
		seen += c
		if seen >= rank {
			return min(bucketMid(i), h.max)
		}
	}
	return h.max
}

// Waits summarises waiting times, from a request (the workload's Entry or
// Exit call) to the state change that completes it.
type Waits struct {
	// Count is the number of completed requests.
	Count int64 `json:"count"`
	// Mean and Max are exact; P50 and P99 are within HistRelErr.
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func (h *hist) waits() Waits {
	w := Waits{Count: h.count, Max: h.max}
	if h.count > 0 {
		w.Mean = h.sum / float64(h.count)
		w.P50 = h.quantile(0.5)
		w.P99 = h.quantile(0.99)
	}
	return w
}
