package coterie

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"critsec/cs"
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
func Read(r io.Reader, n int) ([][]cs.ID, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	qs := make([][]cs.ID, n)
	seenAt := make([]int, n+1) // the line that gave Q_i, 0 if none yet
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		owner, rest, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: %q has no ':': write \"i: a b c\" to give Q_i = {a, b, c}", line, text)
		}
		i, err := parseID(strings.TrimSpace(owner), n)
		if err != nil {
			return nil, fmt.Errorf("line %d: process %v", line, err)
		}
		if seenAt[i] != 0 {
			return nil, fmt.Errorf("line %d: Q_%d is given twice (first on line %d): give one quorum per process", line, i, seenAt[i])
		}
		seenAt[i] = line
		var members cs.Set
		for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			id, err := parseID(f, n)
			if err != nil {
				return nil, fmt.Errorf("line %d: Q_%d: member %v", line, i, err)
			}
			if members.Has(id) {
				return nil, fmt.Errorf("line %d: Q_%d lists process %d twice", line, i, id)
			}
			members.Add(id)
			qs[i-1] = append(qs[i-1], id)
		}
		if len(qs[i-1]) == 0 {
			return nil, fmt.Errorf("line %d: Q_%d is empty: every quorum needs at least one process (nonemptiness, Definition 3)", line, i)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if seenAt[i] == 0 {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no quorum for process(es) %s: n = %d needs one line \"i: ...\" for every i in 1..%d", strings.Join(missing, ", "), n, n)
	}
	return qs, nil
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
		return 0, fmt.Errorf("%q is not a process id: want an integer in 1..%d", s, n)
	}
	if v < 1 || v > n {
		return 0, fmt.Errorf("id %d is unknown: ids run from 1 to n = %d", v, n)
	}
	return cs.ID(v), nil
}
