// Command beat is the fault-injection harness's stand-in service: while it
// runs, it appends one line to a file shared by every member every 20 ms,
//
//	MEMBER PID SEQ UNIXMS
//
// its member's id, its own pid, a counter of its lines from 0 and the wall
// clock in milliseconds. The file is opened with O_APPEND and each line is
// one write, so the file's order is the order in which the copies wrote:
// the record of which copies ran when needs no clock (the milliseconds only
// size what the order shows).
//
//	beat FILE MEMBER
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: beat FILE MEMBER")
		os.Exit(2)
	}
	id, err := strconv.Atoi(os.Args[2])
	if err != nil || id < 1 {
		fmt.Fprintf(os.Stderr, "beat: member %q: give a process id, 1..n\n", os.Args[2])
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "beat: %v\n", err)
		os.Exit(2)
	}
	pid := os.Getpid()
	for seq := 0; ; seq++ {
		line := fmt.Sprintf("%d %d %d %d\n", id, pid, seq, time.Now().UnixMilli())
		if _, err := f.Write([]byte(line)); err != nil {
			fmt.Fprintf(os.Stderr, "beat: %v\n", err)
			os.Exit(1)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
