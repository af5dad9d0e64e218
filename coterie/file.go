package coterie

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/critsec/critsec/cs"
)

// Read parses a coterie file for n processes. The format is one line per
// process, in any order:
//
//	# the grid coterie for n = 4
//	1: 1 2 3
//	2: 1 2 4
//	3: 1, 3, 4
//	4: 2 3 4
//
// "i: a b c" says Q_i = {a, b, c}; members are separated by spaces and/or
// commas. Blank lines and everything after a '#' are ignored. Every process
// 1..n must have exactly one line. Read checks the format, the ids, repeats
// and missing processes, with the line number of the first fault; it does
// not check intersection or minimality: call Validate (ByName does).
//
// Memory is bounded by the input, not by the numbers in it: Read keeps the
// quorums it has read (4 bytes an id) and one line, and a line may hold at
// most MaxLine(n) bytes. Neither n nor an id allocates by its value.
func Read(r io.Reader, n int) ([][]cs.ID, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	quorums := map[cs.ID][]cs.ID{}
	seenAt := map[cs.ID]int{} // the line that gave Q_i
	sc := bufio.NewScanner(r)
	maxLine := MaxLine(n)
	sc.Buffer(make([]byte, 0, min(maxLine, 64<<10)), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		owner, rest, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: %s has no ':': write \"i: a b c\" to give Q_i = {a, b, c}", line, quote(text))
		}
		i, err := parseID(strings.TrimSpace(owner), n)
		if err != nil {
			return nil, fmt.Errorf("line %d: process %v", line, err)
		}
		if first, ok := seenAt[i]; ok {
			return nil, fmt.Errorf("line %d: Q_%d is given twice (first on line %d): give one quorum per process", line, i, first)
		}
		var q []cs.ID
		for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			id, err := parseID(f, n)
			if err != nil {
				return nil, fmt.Errorf("line %d: Q_%d: member %v", line, i, err)
			}
			q = append(q, id)
		}
		if len(q) == 0 {
			return nil, fmt.Errorf("line %d: Q_%d is empty: every quorum needs at least one process (nonemptiness, Definition 3)", line, i)
		}
		sorted := slices.Sorted(slices.Values(q))
		for k := 1; k < len(sorted); k++ {
			if sorted[k] == sorted[k-1] {
				return nil, fmt.Errorf("line %d: Q_%d lists process %d twice", line, i, sorted[k])
			}
		}
		seenAt[i] = line
		quorums[i] = q
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d is longer than %d bytes: a quorum of n = %d processes needs less (is this a coterie file?)", line+1, maxLine, n)
		}
		return nil, fmt.Errorf("after line %d: %w", line, err)
	}
	if len(quorums) < n {
		return nil, missing(seenAt, n)
	}
	qs := make([][]cs.ID, n)
	for i, q := range quorums {
		qs[i-1] = q
	}
	return qs, nil
}

// MaxLine is the longest line Read accepts for n processes: room for every
// id of 1..n written out with a separator, and 4 KiB for comments, at most
// 64 MiB.
func MaxLine(n int) int {
	return min(64<<20, 4096+n*(len(strconv.Itoa(n))+2))
}

// missing reports the processes 1..n without a line: the first ten, and
// how many there are. It takes time and memory in the lines read, not n.
func missing(seenAt map[cs.ID]int, n int) error {
	owners := slices.Sorted(maps.Keys(seenAt))
	var first []string
	next := 1 // the smallest id not yet accounted for
	for k := 0; k <= len(owners) && len(first) < 10; k++ {
		end := n + 1 // past the last owner: up to n
		if k < len(owners) {
			end = int(owners[k])
		}
		for ; next < end && len(first) < 10; next++ {
			first = append(first, strconv.Itoa(next))
		}
		next = end + 1
	}
	count := n - len(owners)
	list := strings.Join(first, ", ")
	if count > len(first) {
		list += fmt.Sprintf(" and %d more", count-len(first))
	}
	what := "process"
	if count > 1 {
		what = "processes"
	}
	return fmt.Errorf("no quorum for %s %s: n = %d needs one line \"i: ...\" for every i in 1..%d", what, list, n, n)
}

// quote quotes a line for an error message, shortened to 80 characters.
func quote(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:77]) + "..."
	}
	return strconv.Quote(s)
}

// ReadFile reads the coterie file at path (see Read); errors start with the
// path.
func ReadFile(path string, n int) ([][]cs.ID, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("not majority or grid, and not a readable coterie file: %w", err)
	}
	defer f.Close()
	qs, err := Read(f, n)
	if err != nil {
		return nil, fmt.Errorf("coterie file %s: %w", path, err)
	}
	return qs, nil
}

// parseID parses a process id in 1..n.
func parseID(s string, n int) (cs.ID, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s is not a process id: want an integer in 1..%d", quote(s), n)
	}
	if v < 1 || v > n {
		return 0, fmt.Errorf("id %d is unknown: ids run from 1 to n = %d", v, n)
	}
	return cs.ID(v), nil
}
