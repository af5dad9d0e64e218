package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The kinds of record in the shared log: a copy's start, its heartbeats
// and its stop on SIGTERM, written by the copy itself; a kill of a
// member's critsec run and the run's end, written by the script's tools.
const (
	kindStart = "start"
	kindBeat  = "beat"
	kindStop  = "stop"
	kindKill  = "kill"
	kindEnd   = "end"
)

// record is one line of the log: "T KIND MEMBER PID", T the machine's
// monotonic clock in nanoseconds (one clock for every process).
type record struct {
	t           int64
	kind        string
	member, pid int
}

// maxRecords bounds a log read into memory: an hour of five copies
// beating every 20 ms is under a million lines.
const maxRecords = 5_000_000

// readRecords parses a log. Each record is one write to a file opened
// for appending, so a kill never leaves half a line: a bad line is
// refused.
func readRecords(r io.Reader) ([]record, error) {
	var recs []record
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(recs) == maxRecords {
			return nil, fmt.Errorf("more than %d records: give a shorter run's log", maxRecords)
		}
		rec, err := parseRecord(f)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v: want \"T KIND MEMBER PID\"", line, err)
		}
		recs = append(recs, rec)
	}
	return recs, sc.Err()
}

func parseRecord(f []string) (record, error) {
	if len(f) != 4 {
		return record{}, fmt.Errorf("%d fields", len(f))
	}
	t, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return record{}, err
	}
	if !slices.Contains([]string{kindStart, kindBeat, kindStop, kindKill, kindEnd}, f[1]) {
		return record{}, fmt.Errorf("unknown kind %q", f[1])
	}
	m, err1 := strconv.Atoi(f[2])
	p, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || m < 0 || p < 0 {
		return record{}, fmt.Errorf("member %q, pid %q: want numbers", f[2], f[3])
	}
	return record{t: t, kind: f[1], member: m, pid: p}, nil
}
