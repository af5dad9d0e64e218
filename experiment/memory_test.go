package experiment

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// memoryChildEnv, when set, makes TestMemoryModel a child process that
// simulates the run it holds (JSON) and prints its peak resident memory.
const memoryChildEnv = "CRITSEC_EXPERIMENT_MEMORY_RUN"

// memorySizesEnv, when set to comma-separated sizes, makes TestMemoryModel
// measure every run kind of both studies at those n (docs/experiments.md:
// CRITSEC_EXPERIMENT_MEMORY_N=2000,4000 go test ./experiment -run
// TestMemoryModel -v -timeout 1h).
const memorySizesEnv = "CRITSEC_EXPERIMENT_MEMORY_N"

// TestMemoryModel measures the peak resident memory of single runs, each
// in a fresh process (getrusage), and checks that EstimateBytes is above
// it and not absurdly so (within 3 times): by default every run kind at
// heavy load, n = 1000 (500 for the majority coterie, whose runs are
// slower).
func TestMemoryModel(t *testing.T) {
	if spec := os.Getenv(memoryChildEnv); spec != "" {
		memoryChild(t, spec)
		return
	}
	if testing.Short() {
		t.Skip("simulates n = 500 and 1000 under heavy load in child processes (about 20 s)")
	}
	c := Common{Entries: 100, Seed: 1}
	var runs []Run
	if env := os.Getenv(memorySizesEnv); env != "" {
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s=%s: %v", memorySizesEnv, env, err)
			}
			runs = append(runs, MessageRuns([]int{n}, Heavy, c, 1)...)
			runs = append(runs, WaitingRuns([]int{n}, []float64{1}, c, 1)...)
		}
	} else {
		for _, r := range append(MessageRuns([]int{1000}, Heavy, c, 1), WaitingRuns([]int{1000}, []float64{1}, c, 1)...) {
			if r.Coterie != "majority" {
				runs = append(runs, r)
			}
		}
		for _, r := range MessageRuns([]int{500}, Heavy, c, 1) {
			if r.Coterie == "majority" {
				runs = append(runs, r)
			}
		}
	}
	for _, r := range runs {
		spec, _ := json.Marshal(r)
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryModel$")
		cmd.Env = append(os.Environ(), memoryChildEnv+"="+string(spec))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s n=%d: %v\n%s", r.Label, r.N, err, out)
		}
		var peak float64
		if _, err := fmt.Sscanf(string(out[strings.Index(string(out), "peak ")+5:]), "%g", &peak); err != nil {
			t.Fatalf("%s n=%d: %v\n%s", r.Label, r.N, err, out)
		}
		est := r.EstimateBytes()
		t.Logf("%-16s n=%4d lambda=%-6g peak %7.1f MB, estimate %7.1f MB", r.Label, r.N, r.Lambda, peak/1e6, est/1e6)
		if est < peak || est > 3*peak {
			t.Errorf("%s n=%d: estimate %.1f MB, measured peak %.1f MB", r.Label, r.N, est/1e6, peak/1e6)
		}
	}
}

func memoryChild(t *testing.T, spec string) {
	var r Run
	if err := json.Unmarshal([]byte(spec), &r); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Simulate(); err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("peak %d\n", ru.Maxrss*1024) // Linux: kilobytes
}
