package coterie_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/cs"
)

// checkResult checks what every answer of Read and ByName must be: an
// error of one line, or n quorums, each nonempty, ids in 1..n, no repeats.
func checkResult(t *testing.T, qs [][]cs.ID, n int, err error) {
	t.Helper()
	if err != nil {
		oneLine(t, err)
		return
	}
	if len(qs) != n {
		t.Fatalf("%d quorums for n = %d", len(qs), n)
	}
	for i, q := range qs {
		if len(q) == 0 {
			t.Fatalf("Q_%d is empty", i+1)
		}
		seen := map[cs.ID]bool{}
		for _, id := range q {
			if id < 1 || int(id) > n || seen[id] {
				t.Fatalf("Q_%d = %v: bad or repeated id %d (n = %d)", i+1, q, id, n)
			}
			seen[id] = true
		}
	}
}

// oneLine fails unless err is nil or a nonempty single line.
func oneLine(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
			t.Fatalf("error is not one line: %q", msg)
		}
	}
}

var fuzzSeeds = []struct {
	text string
	n    int
}{
	{"# grid, n = 4\n1: 1 2 3\n2: 1 2 4\n3: 1, 3, 4\n4: 2 3 4\n", 4},
	{"1: 1 2\n2: 2 3\n3: 1 3\n", 3},
	{"1: 1 2 99999999999\n", 3},
	{"1: 2000000000\n", coterie.MaxN},
	{"9223372036854775807: 1\n", 2},
	{"1: 1\n1: 1\n", 1},
	{"1:1,,2\t#x\n2: 2 2\n", 2},
	{"\x00\xff: \xfe\n", 1},
	{"1: 1\r\n", 1},
	{"", 0},
	{"1: 1\n", -1},
	{"1: " + strings.Repeat("1 ", 3000) + "\n", 1},
	{"1: 1 2 3\n2: 1   4\n3: 1  2  4\n4: 1 2 4", 4},
	{"1:2\n2:2\n3:1", 3},
	{"1:", 1},
	{strings.Repeat("0\xc3", 45), 79}, // a long line without ':', quoted cut short
}

// FuzzRead: Read never panics, answers one error line or a well-formed
// quorum system, and Validate and CheckIntersecting then answer too. Any n
// is fine: Read allocates by what it reads, not by n or by an id's value
// (TestReadBoundedMemory), and it succeeds only with n lines, so Validate's
// O(n²) stays small.
func FuzzRead(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s.text), s.n)
	}
	f.Fuzz(func(t *testing.T, text []byte, n int) {
		qs, err := coterie.Read(strings.NewReader(string(text)), n)
		checkResult(t, qs, n, err)
		if err == nil {
			oneLine(t, coterie.Validate(qs, n))
			oneLine(t, coterie.CheckIntersecting(qs, n))
		}
	})
}

// FuzzByName: ByName never panics and answers one error line or a valid
// coterie. A name other than majority, grid or "" is taken as a file
// holding text (written to a temporary file, so the fuzzer never reads the
// machine's files). Built-in coteries larger than n = 2000 that are not
// refused outright (coterie.Size within MaxIDs) are skipped: they are
// correct but take seconds to build and validate.
func FuzzByName(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add("file", []byte(s.text), s.n)
	}
	for _, n := range []int{-1, 0, 1, 2, 3, 4, 5, 16, 17, 100000, 1 << 31} {
		f.Add("majority", []byte(nil), n)
		f.Add("grid", []byte(nil), n)
	}
	f.Add("", []byte(nil), 3)
	f.Fuzz(func(t *testing.T, name string, text []byte, n int) {
		switch name {
		case "majority", "grid":
			if ids, _, err := coterie.Size(name, n); err == nil && ids <= coterie.MaxIDs && n > 2000 {
				t.Skip("large built-in coterie")
			}
		case "":
		default:
			name = filepath.Join(t.TempDir(), "q.txt")
			if err := os.WriteFile(name, text, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		qs, _, err := coterie.ByName(name, n)
		checkResult(t, qs, n, err)
		if err == nil {
			if err := coterie.Validate(qs, n); err != nil {
				t.Fatalf("ByName returned a quorum system Validate refuses: %v", err)
			}
		}
	})
}
