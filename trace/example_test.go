package trace_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/trace"
)

// Check a trace on its own: a simulation of Raymond's algorithm writes
// one, and Check reads it back and re-checks the bounds its header states,
// message by message.
func ExampleCheck() {
	k := 2
	pr, machines, err := alg.Build(alg.Spec{Alg: "raymond", N: 4, K: &k})
	if err != nil {
		log.Fatal(err)
	}
	cfg := sim.Config{Machines: machines, Property: pr.Property, Lambda: 1, E: 1, Tt: 1, Entries: 200, Seed: 1}
	h := trace.Header{Alg: pr.Alg.Name, N: pr.Params.N, L: pr.Params.L, K: pr.Params.K}
	h.SetProperty(pr.Property)
	var buf bytes.Buffer
	cfg.Trace = trace.NewWriter(&buf, sim.TraceHeader(cfg, h))
	if _, err := sim.Run(cfg); err != nil {
		log.Fatal(err)
	}
	if err := cfg.Trace.Flush(); err != nil {
		log.Fatal(err)
	}
	rep, err := trace.Check(&buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Violation == nil, rep.Lo, rep.Hi, rep.MaxInCS <= k, len(rep.NeverEntered()))
	// Output: true 0 2 true 0
}
