package topology

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/critsec/critsec/cs"
)

// maxFileBytes bounds an edge-list or bounds file.
const maxFileBytes = 64 << 20

// Read parses an edge-list file:
//
//	# a ring of 4 processes
//	n 4
//	1 2
//	2 3
//	3 4
//	4 1
//
// One link "a b" per line (the ids separated by spaces, tabs or a comma),
// in any order and either direction. "n N" declares the number of
// processes (at most once, anywhere); without it n is the largest id. Blank
// lines and everything after a '#' are ignored. Read refuses, with the
// line: a line that is not two ids or "n N", ids below 1 or above a
// declared n, self-loops, a link given twice, and no link at all; then, as
// New, a graph that is not connected (naming a process that cannot be
// reached). name is the graph's String.
func Read(r io.Reader, name string) (*Graph, error) {
	var es []Edge
	declared, declaredAt := 0, 0
	maxID := cs.ID(0)
	firstAt := map[Edge]int{} // the line that gave each link
	sc := bufio.NewScanner(io.LimitReader(r, maxFileBytes))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' })
		if len(f) == 0 {
			continue
		}
		if f[0] == "n" {
			if len(f) != 2 {
				return nil, fmt.Errorf("line %d: write \"n N\" to declare N processes", line)
			}
			if declaredAt != 0 {
				return nil, fmt.Errorf("line %d: n is declared twice (first on line %d)", line, declaredAt)
			}
			v, err := strconv.Atoi(f[1])
			if err != nil || v < 2 || v > MaxN {
				return nil, fmt.Errorf("line %d: n = %q is out of range: need an integer in 2..%d", line, f[1], MaxN)
			}
			if maxID > cs.ID(v) {
				return nil, fmt.Errorf("line %d: n = %d, but an earlier line names process %d", line, v, maxID)
			}
			declared, declaredAt = v, line
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: %q: want one link \"a b\" (two process ids) or \"n N\"", line, strings.TrimSpace(text))
		}
		var e Edge
		for i, s := range f {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 || v > MaxN {
				return nil, fmt.Errorf("line %d: %q is not a process id: want an integer in 1..%d", line, s, MaxN)
			}
			if declared != 0 && v > declared {
				return nil, fmt.Errorf("line %d: unknown process id %d: n = %d (line %d) declares ids 1..%d", line, v, declared, declaredAt, declared)
			}
			e[i] = cs.ID(v)
		}
		if e[0] == e[1] {
			return nil, fmt.Errorf("line %d: %d %d is a self-loop: a process is not its own neighbor", line, e[0], e[1])
		}
		key := Edge{min(e[0], e[1]), max(e[0], e[1])}
		if at, dup := firstAt[key]; dup {
			return nil, fmt.Errorf("line %d: link %d %d is given twice (first on line %d)", line, e[0], e[1], at)
		}
		if len(es) == MaxEdges {
			return nil, fmt.Errorf("line %d: more than %d links", line, MaxEdges)
		}
		firstAt[key] = line
		es = append(es, e)
		maxID = max(maxID, e[0], e[1])
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("no links: an edge-list file needs one line \"a b\" per link")
	}
	n := int(maxID)
	if declared != 0 {
		n = declared
	}
	return New(name, n, es)
}

// ReadFile reads the edge-list file at path (Read); errors start with
// the path.
func ReadFile(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%q is not a topology spec (%s) and not a readable edge-list file: %w", path, Forms(), err)
	}
	defer f.Close()
	g, err := Read(f, path)
	if err != nil {
		return nil, fmt.Errorf("edge-list file %s: %w", path, err)
	}
	return g, nil
}

// Write writes g as an edge-list file that Read reads back: "n N", then
// each link once, in increasing order.
func Write(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "n %d\n", g.N())
	for _, e := range g.EdgeList() {
		fmt.Fprintf(bw, "%d %d\n", e[0], e[1])
	}
	return bw.Flush()
}
