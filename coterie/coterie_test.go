package coterie_test

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/cs"
)

// TestBuiltinsAreCoteries checks Definition 3 for every n in 1..200, that
// P_i is in Q_i (except Majority(2)), and the quorum sizes.
func TestBuiltinsAreCoteries(t *testing.T) {
	for n := 1; n <= 200; n++ {
		maj, err := coterie.Majority(n)
		if err != nil {
			t.Fatal(err)
		}
		grid, err := coterie.Grid(n)
		if err != nil {
			t.Fatal(err)
		}
		for name, qs := range map[string][][]cs.ID{"majority": maj, "grid": grid} {
			if err := coterie.Validate(qs, n); err != nil {
				t.Fatalf("%s(%d): %v", name, n, err)
			}
			for i, q := range qs {
				if !slices.IsSorted(q) {
					t.Errorf("%s(%d): Q_%d = %v is not sorted", name, n, i+1, q)
				}
				if !slices.Contains(q, cs.ID(i+1)) && !(name == "majority" && n == 2) {
					t.Errorf("%s(%d): Q_%d = %v does not contain P_%d", name, n, i+1, q, i+1)
				}
			}
		}
		for i, q := range maj {
			want := []int{(n + 1) / 2}
			if n%2 == 0 {
				want = []int{n / 2, n/2 + 1}
			}
			if !slices.Contains(want, len(q)) {
				t.Errorf("majority(%d): |Q_%d| = %d, want one of %v", n, i+1, len(q), want)
			}
		}
		s := int(math.Ceil(math.Sqrt(float64(n))))
		for i, q := range grid {
			if len(q) > 2*s-1 {
				t.Errorf("grid(%d): |Q_%d| = %d > 2 ceil(sqrt n) - 1 = %d", n, i+1, len(q), 2*s-1)
			}
			if s*s == n && len(q) != 2*s-1 {
				t.Errorf("grid(%d): |Q_%d| = %d, want 2 sqrt(n) - 1 = %d", n, i+1, len(q), 2*s-1)
			}
		}
	}
}

func TestExamples(t *testing.T) {
	cases := []struct {
		name string
		f    func(int) ([][]cs.ID, error)
		n    int
		want [][]cs.ID
	}{
		{"majority", coterie.Majority, 1, [][]cs.ID{{1}}},
		{"majority", coterie.Majority, 2, [][]cs.ID{{1}, {1}}},
		{"majority", coterie.Majority, 3, [][]cs.ID{{1, 2}, {2, 3}, {1, 3}}},
		// n = 4: C_1 = {1,2}, {1,4}; C_2 = {2,3,4}.
		{"majority", coterie.Majority, 4, [][]cs.ID{{1, 2}, {2, 3, 4}, {2, 3, 4}, {1, 4}}},
		{"majority", coterie.Majority, 6, [][]cs.ID{{1, 2, 3}, {2, 3, 4, 5}, {3, 4, 5, 6}, {2, 4, 5, 6}, {1, 5, 6}, {1, 2, 6}}},
		{"grid", coterie.Grid, 4, [][]cs.ID{{1, 2, 3}, {1, 2, 4}, {1, 3, 4}, {2, 3, 4}}},
		{"grid", coterie.Grid, 9, [][]cs.ID{{1, 2, 3, 4, 7}, {1, 2, 3, 5, 8}, {1, 2, 3, 6, 9}, {1, 4, 5, 6, 7}, {2, 4, 5, 6, 8}, {3, 4, 5, 6, 9}, {1, 4, 7, 8, 9}, {2, 5, 7, 8, 9}, {3, 6, 7, 8, 9}}},
		// n = 3: rows {1,2}, {3}; Q_1 = {1,2,3} contained Q_2 = {1,2}.
		{"grid", coterie.Grid, 3, [][]cs.ID{{1, 2}, {1, 2}, {1, 3}}},
		// n = 5: rows {1,2,3}, {4,5}; column 2 is {3}, so Q_3 = row 0,
		// which Q_1 and Q_2 contained.
		{"grid", coterie.Grid, 5, [][]cs.ID{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 4, 5}, {2, 4, 5}}},
		// n = 10: rows {1..4}, {5..8}, {9,10}: no repair needed.
		{"grid", coterie.Grid, 10, [][]cs.ID{{1, 2, 3, 4, 5, 9}, {1, 2, 3, 4, 6, 10}, {1, 2, 3, 4, 7}, {1, 2, 3, 4, 8}, {1, 5, 6, 7, 8, 9}, {2, 5, 6, 7, 8, 10}, {3, 5, 6, 7, 8}, {4, 5, 6, 7, 8}, {1, 5, 9, 10}, {2, 6, 9, 10}}},
		// n = 13: the last row is {13}; Q_13 = column 0 replaces the
		// quorums of 1, 5 and 9, which contained it.
		{"grid", coterie.Grid, 13, nil},
	}
	for _, c := range cases {
		got, err := c.f(c.n)
		if err != nil {
			t.Fatal(err)
		}
		if c.want == nil {
			col := []cs.ID{1, 5, 9, 13}
			for _, i := range col {
				if !slices.Equal(got[i-1], col) {
					t.Errorf("grid(13): Q_%d = %v, want %v", i, got[i-1], col)
				}
			}
			continue
		}
		for i := range c.want {
			if !slices.Equal(got[i], c.want[i]) {
				t.Errorf("%s(%d): Q_%d = %v, want %v", c.name, c.n, i+1, got[i], c.want[i])
			}
		}
	}
}

func TestValidateNamesTheFault(t *testing.T) {
	cases := []struct {
		qs   [][]cs.ID
		n    int
		want string
	}{
		{[][]cs.ID{{1, 2}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}, 5, "Q_1 = {1,2} and Q_4 = {3,4} do not intersect"},
		{[][]cs.ID{{1}, {1}}, 3, "got 2 quorums for n = 3"},
		{[][]cs.ID{{1}, {}}, 2, "Q_2 is empty"},
		{[][]cs.ID{{1}, {1, 3}}, 2, "Q_2 = {1,3} holds unknown process id 3"},
		{[][]cs.ID{{1}, {1, 1}}, 2, "Q_2 = {1,1} lists process 1 twice"},
		{[][]cs.ID{{1, 2}, {2}}, 2, "Q_2 = {2} is a proper subset of Q_1 = {1,2}"},
		{nil, 0, "n = 0 is out of range"},
	}
	for _, c := range cases {
		err := coterie.Validate(c.qs, c.n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v, %d) = %v, want an error containing %q", c.qs, c.n, err, c.want)
		}
	}
	// CheckIntersecting accepts the non-minimal one and refuses the rest.
	if err := coterie.CheckIntersecting([][]cs.ID{{1, 2}, {2}}, 2); err != nil {
		t.Errorf("CheckIntersecting refused a non-minimal intersecting family: %v", err)
	}
	if err := coterie.CheckIntersecting(cases[0].qs, 5); err == nil {
		t.Error("CheckIntersecting accepted disjoint quorums")
	}
}

func TestRead(t *testing.T) {
	good := "# grid, n = 4\n\n3: 1, 3, 4\n1: 1 2 3   # row 0 and column 0\n2:1 2 4\n4:\t2 3 4\n"
	qs, err := coterie.Read(strings.NewReader(good), 4)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := coterie.Grid(4)
	for i := range want {
		if !slices.Equal(qs[i], want[i]) {
			t.Errorf("Q_%d = %v, want %v", i+1, qs[i], want[i])
		}
	}
	bad := []struct{ text, want string }{
		{"1: 1 2\n2 1 2\n", "line 2: \"2 1 2\" has no ':'"},
		{"1: 1 2\nx: 1\n", "line 2: process \"x\" is not a process id"},
		{"1: 1 2\n7: 1\n", "line 2: process id 7 is unknown: ids run from 1 to n = 2"},
		{"1: 1 2\n2: 1 9\n", "line 2: Q_2: member id 9 is unknown"},
		{"1: 1 2\n2: 1 b\n", "line 2: Q_2: member \"b\" is not a process id"},
		{"1: 1 2\n\n1: 1\n", "line 3: Q_1 is given twice (first on line 1)"},
		{"1: 1 2\n2: 2 2\n", "line 2: Q_2 lists process 2 twice"},
		{"1: 1 2\n2:  # nothing\n", "line 2: Q_2 is empty"},
		{"2: 1 2\n", "no quorum for process 1: n = 2 needs"},
	}
	for _, b := range bad {
		_, err := coterie.Read(strings.NewReader(b.text), 2)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Read(%q) = %v, want an error containing %q", b.text, err, b.want)
		}
	}
}

func TestByName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.txt", "1: 1 2\n2: 2 3\n3: 1 3\n")
	qs, name, err := coterie.ByName(ok, 3)
	if err != nil || name != ok || len(qs) != 3 {
		t.Fatalf("ByName(%s) = %v, %q, %v", ok, qs, name, err)
	}
	for _, n := range []int{1, 7, 16} {
		for _, c := range []string{"majority", "grid"} {
			if _, got, err := coterie.ByName(c, n); err != nil || got != c {
				t.Errorf("ByName(%s, %d): %q, %v", c, n, got, err)
			}
		}
	}
	disjoint := write("disjoint.txt", "1: 1 2\n2: 2 3\n3: 3 4\n4: 4 1\n")
	_, _, err = coterie.ByName(disjoint, 4)
	if err == nil || !strings.Contains(err.Error(), "Q_1 = {1,2} and Q_3 = {3,4} do not intersect") {
		t.Errorf("non-intersecting file: %v", err)
	}
	nonMinimal := write("superset.txt", "1: 1 2\n2: 1 2 3\n3: 1 3\n")
	_, _, err = coterie.ByName(nonMinimal, 3)
	if err == nil || !strings.Contains(err.Error(), "Q_1 = {1,2} is a proper subset of Q_2 = {1,2,3}") {
		t.Errorf("non-minimal file: %v", err)
	}
	malformed := write("bad.txt", "1: 1 2\n2 2 3\n")
	_, _, err = coterie.ByName(malformed, 3)
	if err == nil || !strings.Contains(err.Error(), "coterie file "+malformed+": line 2:") {
		t.Errorf("malformed file: %v", err)
	}
	if _, _, err := coterie.ByName(filepath.Join(dir, "none"), 3); err == nil || !strings.Contains(err.Error(), "not majority or grid") {
		t.Errorf("missing file: %v", err)
	}
}

// refGrid is Grid as first written: raw row ∪ column sets over all pairs,
// each quorum replaced by the smallest raw quorum it properly contains
// (lowest id on ties). O(n²); the reference for Grid's O(n |Q|) layout.
func refGrid(n int) [][]cs.ID {
	s := 1
	for s*s < n {
		s++
	}
	raw := make([]cs.Set, n)
	for i := 1; i <= n; i++ {
		r, c := (i-1)/s, (i-1)%s
		for j := 1; j <= n; j++ {
			if (j-1)/s == r || (j-1)%s == c {
				raw[i-1].Add(cs.ID(j))
			}
		}
	}
	members := make([][]cs.ID, n)
	for i := range raw {
		members[i] = raw[i].Members()
	}
	qs := make([][]cs.ID, n)
	for i := range raw {
		best := i
		for j := range raw {
			if len(members[j]) < len(members[best]) && isSubset(members[j], raw[i]) {
				best = j
			}
		}
		qs[i] = members[best]
	}
	return qs
}

func isSubset(q []cs.ID, s cs.Set) bool {
	for _, id := range q {
		if !s.Has(id) {
			return false
		}
	}
	return true
}

func TestGridMatchesReference(t *testing.T) {
	for n := 1; n <= 400; n++ {
		got, err := coterie.Grid(n)
		if err != nil {
			t.Fatal(err)
		}
		want := refGrid(n)
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("grid(%d): Q_%d = %v, want %v", n, i+1, got[i], want[i])
			}
		}
	}
}

// TestSizeBoundsTheBuiltins: Size's bounds hold (exactly for majority) and
// a coterie beyond MaxIDs, or n beyond MaxN, is refused before anything is
// allocated.
func TestSizeBoundsTheBuiltins(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 10, 17, 64, 99, 100} {
		for name, f := range map[string]func(int) ([][]cs.ID, error){"majority": coterie.Majority, "grid": coterie.Grid} {
			qs, err := f(n)
			if err != nil {
				t.Fatal(err)
			}
			ids, largest, err := coterie.Size(name, n)
			if err != nil {
				t.Fatal(err)
			}
			total, big := 0, 0
			for _, q := range qs {
				total += len(q)
				big = max(big, len(q))
			}
			if float64(total) > ids || big > largest || name == "majority" && (float64(total) != ids || big != largest) {
				t.Errorf("%s(%d): %d ids, largest %d; Size says %v, %d", name, n, total, big, ids, largest)
			}
		}
	}
	for _, c := range []struct {
		name string
		n    int
		want string
	}{
		{"majority", 100000, "majority(n = 100000) would hold 5e+09 process ids"},
		{"grid", 1 << 30, "grid(n = 1073741824) would hold"},
		{"grid", math.MaxInt32 + 1, "need 1 <= n <= 2147483647"},
		{"majority", math.MinInt, "need 1 <= n"},
	} {
		if _, _, err := coterie.ByName(c.name, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ByName(%s, %d) = %v, want %q", c.name, c.n, err, c.want)
		}
	}
	if _, _, err := coterie.Size("file.txt", 4); err == nil {
		t.Error("Size of a file name")
	}
}

// TestReadBoundedMemory: neither n nor the ids in a file allocate by value,
// a long line is refused with its number, and missing processes are listed
// briefly whatever n.
func TestReadBoundedMemory(t *testing.T) {
	allocs := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	for _, c := range []struct {
		text string
		n    int
		want string
	}{
		{"1: 1 2 99999999999\n", 3, "line 1: Q_1: member id 99999999999 is unknown: ids run from 1 to n = 3"},
		{"1: 2000000000\n", coterie.MaxN, "no quorum for processes 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2147483636 more"},
		{"2147483647: 1 2147483646\n5: 5\n", coterie.MaxN, "no quorum for processes 1, 2, 3, 4, 6, 7, 8, 9, 10, 11 and 2147483635 more"},
		{"1: 99999999999999999999999\n", 3, "member \"99999999999999999999999\" is not a process id"},
		{"1: 1\n" + strings.Repeat("2", 5000) + "\n", 2, "line 2 is longer than 4102 bytes"},
	} {
		var err error
		if a := allocs(func() { _, err = coterie.Read(strings.NewReader(c.text), c.n) }); a > 1<<20 {
			t.Errorf("Read(%.20q, %d) allocated %d bytes", c.text, c.n, a)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Read(%.20q, %d) = %v, want one line containing %q", c.text, c.n, err, c.want)
		}
	}
	if a := allocs(func() { coterie.CheckIntersecting([][]cs.ID{{1, 2}, {2, 3}, {3, 1 << 30}}, 3) }); a > 1<<16 {
		t.Errorf("CheckIntersecting allocated %d bytes by an id's value", a)
	}
}
