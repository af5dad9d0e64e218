package check_test

import (
	"context"
	"fmt"
	"log"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
)

// Model check Raymond's k-mutual exclusion for three processes and k = 1:
// every interleaving in which each process enters and exits once (budget
// 2) keeps at most one process in the critical section and never
// deadlocks.
func ExampleRun() {
	k := 1
	pr, machines, err := alg.Build(alg.Spec{Alg: "raymond", N: 3, K: &k})
	if err != nil {
		log.Fatal(err)
	}
	res, err := check.Run(context.Background(), check.Config{Machines: machines, Property: pr.Property, Budget: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Verdict, res.Violation == nil)
	// Output: ok true
}
