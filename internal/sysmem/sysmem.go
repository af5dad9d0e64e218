// Package sysmem tells how much memory the machine has for a command, so
// that critsec refuses a run that cannot fit, up front, instead of being
// killed by the operating system.
package sysmem

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// Available returns the memory available to a new process, in bytes:
// MemAvailable of /proc/meminfo (free memory plus what the kernel can
// reclaim), which accounts for the other work on the machine; 0 where it
// cannot be read.
func Available() uint64 { return meminfo("MemAvailable:") }

// DefaultLimitGB is the default of the commands' --max-memory: 3/4 of
// Available in GB, rounded down to a tenth, or 0 (no limit) where it cannot
// be read.
func DefaultLimitGB() float64 {
	return math.Floor(float64(Available())*0.75/(1<<30)*10) / 10
}

func meminfo(field string) uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	return parse(string(b), field)
}

// parse returns field's value (in kB in the file) in bytes, or 0.
func parse(meminfo, field string) uint64 {
	for _, line := range strings.Split(meminfo, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil || kb > math.MaxUint64/1024 {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
