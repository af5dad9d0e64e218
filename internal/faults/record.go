package faults

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Line is one line of the record the stand-in service (testdata/beat)
// writes: a copy of the service on Member, process PID, its Seq-th line,
// written at UnixMs (wall clock, for sizes only: the order is the file's).
type Line struct {
	Member, PID, Seq int
	UnixMs           int64
}

// maxRecordLines bounds a record read into memory (an hour of five copies
// at 50 lines a second is 900 000).
const maxRecordLines = 4_000_000

// ReadRecord reads a record, one Line per line. A last line without its
// newline (a copy killed in the middle of its write cannot leave one: each
// line is one write, but a reader may race a writer) is ignored.
func ReadRecord(r io.Reader) ([]Line, error) {
	var lines []Line
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		s, err := br.ReadString('\n')
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return nil, err
		}
		if len(lines) == maxRecordLines {
			return nil, fmt.Errorf("record: over %d lines: read a shorter run", maxRecordLines)
		}
		f := strings.Fields(s)
		var v [4]int64
		ok := len(f) == 4
		for i := 0; ok && i < 4; i++ {
			v[i], err = strconv.ParseInt(f[i], 10, 64)
			ok = err == nil && v[i] >= 0
		}
		if !ok {
			return nil, fmt.Errorf("record line %d: %q: want MEMBER PID SEQ UNIXMS", n, strings.TrimSpace(s))
		}
		lines = append(lines, Line{Member: int(v[0]), PID: int(v[1]), Seq: int(v[2]), UnixMs: v[3]})
	}
}

// Copy is one run of the service: its Member and PID, and the indexes in
// the record of its First and Last lines. It is taken to run from its
// first line to its last.
type Copy struct {
	Member, PID int
	First, Last int
}

// Copies splits a record into its copies, in the order they started. A
// copy is a pid's lines with increasing Seq: a pid that starts again from
// Seq 0 (a reused pid) is a new copy.
func Copies(lines []Line) []Copy {
	var copies []Copy
	open := map[int]int{} // pid -> index in copies of its current copy
	for i, l := range lines {
		c, ok := open[l.PID]
		if !ok || l.Seq <= lines[copies[c].Last].Seq || copies[c].Member != l.Member {
			open[l.PID] = len(copies)
			copies = append(copies, Copy{Member: l.Member, PID: l.PID, First: i, Last: i})
			continue
		}
		copies[c].Last = i
	}
	return copies
}

// Span is a stretch of the record, lines From to To (indexes, both
// included), during which Count copies ran: Copies, indexes into the
// copies it was found among. Ms is the wall-clock time between its first
// and last lines.
type Span struct {
	From, To int
	Count    int
	Copies   []int
	Ms       int64
}

// Lines is the span's length in record lines.
func (s Span) Lines() int { return s.To - s.From + 1 }

// Report is what Check found in a record.
type Report struct {
	// Lines is the number of lines checked; Copies the copies among them.
	Lines  int
	Copies []Copy
	// Max is the most copies that ran at once; Min the fewest from the
	// first line at which L ran until Until (0 if L never ran).
	Max, Min int
	// Over are the spans with more than K copies running; Under those,
	// once L ran and before Until, with fewer than L.
	Over, Under []Span
}

// Bounds are what Check checks: never more than K copies at once, and
// never fewer than L (0: no lower bound) from the first line at which L
// ran until line Until (an index; 0: the end), where the run was stopped
// (copies stopping one after the other at the end are not a fault).
type Bounds struct {
	K, L, Until int
}

// Check counts, at each line of the record, the copies running (those
// whose first line is at or before it and whose last line is at or after
// it), and reports the spans over b.K and under b.L.
func Check(lines []Line, b Bounds) Report {
	k, l, until := b.K, b.L, b.Until
	if until <= 0 || until > len(lines) {
		until = len(lines)
	}
	copies := Copies(lines)
	rep := Report{Lines: len(lines), Copies: copies}
	starts := make([][]int, len(lines))
	ends := make([][]int, len(lines))
	for c, cp := range copies {
		starts[cp.First] = append(starts[cp.First], c)
		ends[cp.Last] = append(ends[cp.Last], c)
	}
	running := map[int]bool{}
	settled, minSet := l == 0, false
	var over, under *Span
	// close ends the open span s (over or under) before line i.
	closeSpan := func(s **Span, to *[]Span, i int) {
		if *s != nil {
			(*s).To = i - 1
			(*s).Ms = lines[i-1].UnixMs - lines[(*s).From].UnixMs
			*to = append(*to, **s)
			*s = nil
		}
	}
	// extend opens or grows the span s at line i with the running copies.
	extend := func(s **Span, i int) {
		if *s == nil {
			*s = &Span{From: i}
		}
		(*s).Count = max((*s).Count, len(running))
		for c := range running {
			if !slices.Contains((*s).Copies, c) {
				(*s).Copies = append((*s).Copies, c)
			}
		}
	}
	for i := range lines {
		for _, c := range starts[i] {
			running[c] = true
		}
		n := len(running)
		rep.Max = max(rep.Max, n)
		settled = settled || n >= l
		if n > k {
			extend(&over, i)
		} else {
			closeSpan(&over, &rep.Over, i)
		}
		if i == until {
			closeSpan(&under, &rep.Under, i)
		}
		if settled && i < until {
			if !minSet || n < rep.Min {
				rep.Min, minSet = n, true
			}
			if n < l {
				if under == nil {
					under = &Span{From: i, Count: n}
				}
				under.Count = min(under.Count, n)
				for c := range running {
					if !slices.Contains(under.Copies, c) {
						under.Copies = append(under.Copies, c)
					}
				}
			} else {
				closeSpan(&under, &rep.Under, i)
			}
		}
		for _, c := range ends[i] {
			delete(running, c)
		}
	}
	closeSpan(&over, &rep.Over, len(lines))
	closeSpan(&under, &rep.Under, until)
	for _, s := range append(rep.Over, rep.Under...) {
		slices.Sort(s.Copies)
	}
	return rep
}

// Describe says in one line which copies ran in span s and for how long.
func (r Report) Describe(s Span) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d copies for %d lines (%d ms, lines %d-%d):", s.Count, s.Lines(), s.Ms, s.From+1, s.To+1)
	for _, c := range s.Copies {
		cp := r.Copies[c]
		fmt.Fprintf(&b, " P%d pid %d (lines %d-%d)", cp.Member, cp.PID, cp.First+1, cp.Last+1)
	}
	return b.String()
}

// Timeline says when each copy ran, one line per copy in the order they
// started: member, pid, first and last lines of the record and their
// wall-clock times in milliseconds after the record's first line.
func (r Report) Timeline(lines []Line) string {
	if len(lines) == 0 {
		return "empty record"
	}
	var b strings.Builder
	t0 := lines[0].UnixMs
	fmt.Fprintf(&b, "copies (ms after %s UTC):", time.UnixMilli(t0).UTC().Format("15:04:05.000"))
	for _, c := range r.Copies {
		fmt.Fprintf(&b, "\n  P%d pid %d: lines %d-%d, %d-%d ms", c.Member, c.PID, c.First+1, c.Last+1,
			lines[c.First].UnixMs-t0, lines[c.Last].UnixMs-t0)
	}
	return b.String()
}
