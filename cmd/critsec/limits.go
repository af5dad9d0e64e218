package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/critsec/critsec/internal/sysmem"
)

// addMemoryFlag registers --max-memory (in GB) on fs; what says what the
// limit applies to.
func addMemoryFlag(fs *pflag.FlagSet, gb *float64, what string) {
	fs.Float64Var(gb, "max-memory", sysmem.DefaultLimitGB(), what+" (0: no limit); the default is 3/4 of the memory available when the command starts (MemAvailable, or the cgroup's room if less)")
	machineDefault(fs, "max-memory", "3/4 of the memory available")
}

// machineDefaultKey is the flag annotation that holds, for a flag whose
// default depends on the machine the command starts on, what the command
// reference (docs/cli.md) shows instead of the value.
const machineDefaultKey = "critsec-machine-default"

// machineDefault marks the flag name of fs, registered just before, as one
// whose default depends on the machine; what describes the default. A name
// not registered is left unmarked, and TestCLIReference then shows its
// machine's value.
func machineDefault(fs *pflag.FlagSet, name, what string) {
	if f := fs.Lookup(name); f != nil {
		f.Annotations = map[string][]string{machineDefaultKey: {what}}
	}
}

// checkMemoryFlag refuses a --max-memory that is not a size.
func checkMemoryFlag(gb float64) error {
	if !(gb >= 0) || gb > 1<<30 {
		return badInput("--max-memory %v is out of range: need a size in GB >= 0 (0: no limit)", gb)
	}
	return nil
}

// fits refuses, up front, a problem whose machines alone would not fit in
// the memory limit (GB, 0: none).
func fits(pr problem, gb float64) error {
	need := pr.MachineBytes()
	if gb == 0 || float64(need) <= gb*(1<<30) {
		return nil
	}
	return badInput("--n %d: the machines of %s alone need about %s (%s per process, measured: docs/performance.md), more than the memory limit of %.1f GB; use a smaller --n, or raise --max-memory if the machine has the room",
		pr.Params.N, pr.Alg.Name, size(need), size(need/int64(pr.Params.N)), gb)
}

// size formats a byte count as "512 B", "1.5 kB", "3.2 GB".
func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// showProgress reports whether a command prints progress to w: when asked
// (--progress) or when w is a terminal.
func showProgress(asked bool, w any) bool {
	f, ok := w.(*os.File)
	return asked || ok && term.IsTerminal(int(f.Fd()))
}
