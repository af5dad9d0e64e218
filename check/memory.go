package check

import (
	"fmt"
	"runtime/metrics"
)

// liveHeapMetric is the Go heap that survived the last garbage collection:
// what the run holds on to (visited set, frontier, path), garbage excluded.
const liveHeapMetric = "/gc/heap/live:bytes"

// overMemory reports whether the live heap exceeds limit bytes (0: no
// limit). It reads a runtime metric, which does not stop the world.
func overMemory(limit uint64) bool {
	if limit == 0 {
		return false
	}
	s := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(s)
	return s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > limit
}

// memoryReason is the Incomplete reason of a run stopped by MaxMemory.
func memoryReason(limit uint64, depth int, states int64) string {
	return fmt.Sprintf("memory limit %.1f GB reached at depth %d after %d states: the breadth-first frontier does not fit; "+
		"explore depth-first (--search dfs), which keeps 12-32 bytes per visited state plus the distinct machines and messages", float64(limit)/(1<<30), depth, states)
}
