// Command wakeup measures how late a process asleep on a timer wakes up:
// it sleeps --period in a loop for --for and prints the median, the 99th
// and 99.9th percentiles and the largest lateness. It is the measurement
// behind docs/fencing.md, "A machine short of processor time": run it as
// it is, under `nice -n -20` and under `chrt -f 10` on a loaded machine to
// compare the scheduling classes the watchdog could use.
//
//	go build -o wakeup ./examples/wakeup && chrt -f 10 ./wakeup --for 1m
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"time"
)

func main() {
	period := flag.Duration("period", 30*time.Millisecond, "sleep of each round, > 0")
	length := flag.Duration("for", time.Minute, "how long to measure, at least one period")
	flag.Parse()
	if *period <= 0 || *length < *period {
		fmt.Fprintf(os.Stderr, "wakeup: --period %v and --for %v: need period > 0 and for >= period\n", *period, *length)
		os.Exit(2)
	}
	var late []time.Duration
	for end := time.Now().Add(*length); time.Now().Before(end); {
		start := time.Now()
		time.Sleep(*period)
		late = append(late, time.Since(start)-*period)
	}
	slices.Sort(late)
	at := func(q float64) time.Duration { return late[min(int(q*float64(len(late))), len(late)-1)] }
	fmt.Printf("%d wake-ups of %v: late by median %v, 99th percentile %v, 99.9th %v, max %v\n",
		len(late), *period, at(0.5), at(0.99), at(0.999), late[len(late)-1])
}
