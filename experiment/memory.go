package experiment

import (
	"slices"

	"github.com/critsec/critsec/coterie"
)

// The memory model of a run: an upper estimate of its peak resident memory,
// fitted to the peak resident set (getrusage) of single runs of both
// studies at n = 250 .. 8000 (docs/experiments.md, section 4), plus a
// margin. The peak comes at heavy load, when every process has a request
// out at once: each quorum-based request puts a message to every member of
// its quorum in flight (n·|Q| messages of some 200-300 bytes with their
// events), each of Raymond's to every other process (n²); the machines
// themselves hold a few bit sets of n bits each (n² bits per set kind).
// Light loads take less; the estimate does not depend on the load.
const (
	baseBytes = 32 << 20 // the process, the histograms, the runtime, the garbage
	// Bytes per n² for Raymond; per n·|Q| and per n² for the MUTIN-based
	// algorithms (gcs holds two MUTINs and two Maekawa objects per
	// process, kmutex and mutin one of each).
	raymondPerN2           = 160
	gcsPerNQ, gcsPerN2     = 350, 2
	mutinPerNQ, mutinPerN2 = 300, 1
)

// EstimateBytes is the memory model's estimate of r's peak resident memory,
// in bytes, computed without building anything (|Q| is the largest quorum
// of the built-in coterie, coterie.Size).
func (r Run) EstimateBytes() float64 {
	n := float64(r.N)
	if r.Alg == "raymond" {
		return baseBytes + raymondPerN2*n*n
	}
	if r.Topology != "" {
		// A local request goes to N_i ∪ {P_i}: Σ(|N_i|+1) = n + 2·links
		// messages in flight when every process asks at once, counted
		// like MUTIN's n·|Q|, twice for LKCS's two sub-protocols; the
		// machines hold per-neighbor sets, no n-bit ones.
		return baseBytes + 2*mutinPerNQ*(n+2*float64(r.Links))
	}
	q := n
	if _, largest, err := coterie.Size(r.Coterie, r.N); err == nil {
		q = float64(largest)
	}
	if r.Alg == "gcs" {
		return baseBytes + gcsPerNQ*n*q + gcsPerN2*n*n
	}
	return baseBytes + mutinPerNQ*n*q + mutinPerN2*n*n
}

// PeakBytes estimates the peak memory of SimulateAll(runs, workers): the
// workers largest runs at once (their EstimateBytes summed). It also
// returns the largest run.
func PeakBytes(runs []Run, workers int) (float64, Run) {
	if len(runs) == 0 {
		return 0, Run{}
	}
	est := make([]float64, len(runs))
	worst := 0
	for i, r := range runs {
		est[i] = r.EstimateBytes()
		if est[i] > est[worst] {
			worst = i
		}
	}
	slices.Sort(est)
	var sum float64
	for _, e := range est[len(est)-max(1, min(workers, len(est))):] {
		sum += e
	}
	return sum, runs[worst]
}

// MinDuration is a lower bound on the simulated time r takes: each of the
// n processes makes Entries/n requests, each after 1/Lambda OutCS on
// average and followed by E InCS.
func (r Run) MinDuration() float64 {
	return float64(r.Entries) / float64(r.N) * (1/r.Lambda + r.E)
}
