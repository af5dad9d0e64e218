package alg

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/critsec/critsec/topology"
)

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestProcessBytes measures the machines of every algorithm, with every
// choice of its options, and keeps each estimate (Algorithm.ProcessBytes)
// between the measured size and four times it plus 1 kB: an estimate
// below would let a run through that does not fit; one far above would
// refuse runs that do. n = 1000 (and 2000 without -short); the published
// variants build the same machines as the corrected ones and are left out
// where there is a corrected one; under -short, so are the non-default
// options. CRITSEC_PROCESS_BYTES_N=10000 measures other sizes instead (the
// n = 10 000 figures of docs/performance.md).
func TestProcessBytes(t *testing.T) {
	ns := []int{1000}
	if !testing.Short() {
		ns = append(ns, 2000)
	}
	if env := os.Getenv("CRITSEC_PROCESS_BYTES_N"); env != "" {
		ns = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 4 {
				t.Fatalf("CRITSEC_PROCESS_BYTES_N=%q: want comma-separated integers >= 4", env)
			}
			ns = append(ns, n)
		}
	}
	for _, n := range ns {
		for _, a := range All() {
			if _, err := Lookup(strings.TrimSuffix(a.Name, "-paper")); err == nil && strings.HasSuffix(a.Name, "-paper") {
				continue
			}
			for _, opts := range optionVariants(a, !testing.Short()) {
				spec := a.SpecFor(n, n/3, n-n/3)
				spec.Options = opts
				if a.Local && n*(n-1)/2 > topology.MaxEdges {
					// complete:n is too large to build; a wheel keeps one
					// process of degree n-1, which the estimate follows,
					// and bounds (0,3) fit its rim of degree 3 (and LKCS's
					// k_q - l_q >= 3).
					spec = a.SpecFor(n, 0, 3)
					spec.Options, spec.Topology = opts, fmt.Sprintf("wheel:%d", n)
				}
				pr, err := Resolve(spec)
				if err != nil {
					t.Fatal(err)
				}
				before := liveHeap()
				ms, err := pr.Machines()
				if err != nil {
					t.Fatal(err)
				}
				measured := int64(liveHeap()-before) / int64(n)
				runtime.KeepAlive(ms)
				est := pr.Alg.ProcessBytes(pr.Params)
				t.Logf("%s %v n=%d: %d bytes per process measured, %d estimated", a.Name, opts, n, measured, est)
				if est < measured || est > 4*measured+1024 {
					t.Errorf("%s %v n=%d: estimate %d bytes per process, measured %d", a.Name, opts, n, est, measured)
				}
			}
		}
	}
}
