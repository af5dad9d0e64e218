package sim_test

import (
	"fmt"
	"log"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/sim"
)

// Simulate Raymond's k-mutual exclusion for five processes and k = 2 in
// the token k-mutex paper's timing model until 1000 critical-section
// entries; the bounds are checked after every event.
func ExampleRun() {
	k := 2
	pr, machines, err := alg.Build(alg.Spec{Alg: "raymond", N: 5, K: &k})
	if err != nil {
		log.Fatal(err)
	}
	res, err := sim.Run(sim.Config{
		Machines: machines, Property: pr.Property,
		Lambda: 1, E: 1, Tt: 1, // request rate, mean time InCS, transit time
		Entries: 1000, Seed: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Stop, res.Entries, res.Violation == nil, res.MaxInCS <= k)
	// Output: entries 1000 true true
}
