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
// reclaim), which accounts for the other work on the machine, or what the
// process's cgroup (v2) still allows when that is less; 0 where neither can
// be read.
func Available() uint64 {
	avail := meminfo("MemAvailable:")
	if room, ok := cgroupRoom(); ok && room < avail {
		avail = room
	}
	return avail
}

// cgroupRoom returns memory.max - memory.current of the cgroup v2 the
// process runs in, when it has a limit.
func cgroupRoom() (uint64, bool) {
	limit, err1 := os.ReadFile("/sys/fs/cgroup/memory.max")
	used, err2 := os.ReadFile("/sys/fs/cgroup/memory.current")
	if err1 != nil || err2 != nil {
		return 0, false
	}
	l, e1 := strconv.ParseUint(strings.TrimSpace(string(limit)), 10, 64) // "max": no limit
	u, e2 := strconv.ParseUint(strings.TrimSpace(string(used)), 10, 64)
	if e1 != nil || e2 != nil {
		return 0, false // no cgroup v2, or "max": no limit
	}
	if l <= u {
		return 0, true // at or over its limit: no room
	}
	return l - u, true
}

// DefaultLimitGB is the default of the commands' --max-memory: 3/4 of
// Available in GB, rounded down to a tenth but at least 0.1 (0 means no
// limit, which a machine short of memory must not get), or 0 where nothing
// can be read (no /proc/meminfo: not Linux).
func DefaultLimitGB() float64 {
	if meminfo("MemAvailable:") == 0 {
		if _, ok := cgroupRoom(); !ok {
			return 0
		}
	}
	return max(0.1, math.Floor(float64(Available())*0.75/(1<<30)*10)/10)
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
