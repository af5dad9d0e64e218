// Package coterie builds and checks the quorums Q_1..Q_n that critsec's
// quorum-based algorithms (Maekawa's mutual exclusion, MUTIN(l), (l,k)-GCS)
// use: process P_i asks the members of its quorum Q_i.
//
// A coterie (Definition 3 of Kamei and Kakugawa, "Asynchronous
// message-passing distributed algorithm for the global critical section
// problem", 2019, after Garcia-Molina and Barbara 1985) is a set of quorums
// with three properties:
//
//  1. nonemptiness: every quorum is nonempty;
//  2. intersection: every two quorums share a process;
//  3. minimality: no quorum is a proper subset of another.
//
// critsec works with the n quorums actually used, one per process, given as
// a slice qs with qs[i-1] = Q_i. Two processes may use the same quorum
// ("distinct quorums" in Definition 3 are distinct sets, so equal quorums do
// not break minimality). Safety of mutual exclusion rests on intersection
// alone; minimality only avoids asking more processes than needed. So:
//
//   - Validate checks all three properties (a coterie, Definition 3); the
//     CLI applies it to every coterie it is given, built in or read from a
//     file, so a file that is not a coterie is refused.
//   - CheckIntersecting checks what an algorithm needs to be safe (one
//     nonempty quorum per process, ids in 1..n, no repeats, intersection);
//     the algorithms' constructors use it, so tests may run them on quorum
//     systems that are not minimal.
//
// Every failure names what is wrong; an intersection failure names the two
// quorums and their members.
//
// Q_i need not contain P_i for any algorithm in critsec. The built-in
// constructions put P_i in Q_i except Majority(2), where Q_2 = {1}
// (see Majority).
package coterie

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/critsec/critsec/cs"
)

// Majority returns the quorums of the majority coterie of Example 1 of the
// global paper, one per process:
//
//   - n odd: every set of (n+1)/2 processes is a quorum; P_i uses the
//     (n+1)/2 consecutive ids starting at i, wrapping after n:
//     Q_i = {i, i+1, ..., i+(n-1)/2} (mod n). Two such sets hold
//     n+1 > n ids in all, so they share one (pigeonhole). They all have
//     the same size, so none is a proper subset of another.
//   - n even: C_maj = C_1 ∪ C_2, where C_1 holds sets of n/2 processes and
//     C_2 sets of n/2+1 processes that contain no set of C_1. critsec takes
//     C_1 = the n/2-sets that contain P_1 (the tie breaker) and C_2 = the
//     (n/2+1)-sets that do not contain P_1. Intersection: two C_1 sets share
//     P_1; a C_1 and a C_2 set hold n+1 > n ids, two C_2 sets n+2 > n.
//     Minimality: every C_1 set holds P_1 and no C_2 set does, and sets of
//     one size cannot properly contain each other.
//     P_i uses the arc A_i = {i, ..., i+n/2-1} (mod n) when it contains P_1
//     (i = 1 or i > n/2+1); otherwise (2 <= i <= n/2+1) it uses the n/2+1
//     consecutive ids starting at i on the cycle 2, 3, ..., n, which avoids
//     P_1. For n = 2 the cycle 2..n is too short and C_2 is empty: both
//     processes use Q = {1}, so Q_2 does not contain P_2.
//
// Quorum sizes are (n+1)/2 for odd n, and n/2 or n/2+1 for even n.
func Majority(n int) ([][]cs.ID, error) {
	if err := checkBuild("majority", n); err != nil {
		return nil, err
	}
	qs := make([][]cs.ID, n)
	for i := 1; i <= n; i++ {
		switch {
		case n%2 == 1:
			qs[i-1] = arc(i, (n+1)/2, 1, n)
		case n == 2:
			qs[i-1] = []cs.ID{1}
		case i == 1 || i > n/2+1:
			qs[i-1] = arc(i, n/2, 1, n)
		default:
			qs[i-1] = arc(i, n/2+1, 2, n)
		}
	}
	return qs, nil
}

// arc returns size consecutive ids from start on the cycle lo, lo+1, ...,
// hi, lo, ..., sorted in increasing order.
func arc(start, size, lo, hi int) []cs.ID {
	span := hi - lo + 1
	q := make([]cs.ID, size)
	for d := range size {
		q[d] = cs.ID(lo + (start-lo+d)%span)
	}
	slices.Sort(q)
	return q
}

// Grid returns the quorums of the grid coterie of Example 2 of the global
// paper (Maekawa 1985, section 4): the processes are laid out in a grid and
// Q_i is P_i's row together with P_i's column. For a perfect square n the
// grid is sqrt(n) x sqrt(n) and |Q_i| = 2 sqrt(n) - 1.
//
// For any n (the generalization): let s = ceil(sqrt(n)). Process i sits at
// row (i-1)/s, column (i-1)%s (row-major, s columns); the last row may be
// partial, holding w <= s processes. Q_i = row(i) ∪ column(i), over the
// cells that hold a process.
//
// Intersection holds for every n. Take processes a at (ra, ca) and b at
// (rb, cb). If ra = rb they share their row. Otherwise at most one of them
// is in the last row: if ra is not the last row, the cell (ra, cb) exists
// (every row but the last is full) and lies in a's row and b's column; if
// ra is the last row then rb is not, and (rb, ca) exists and lies in b's
// row and a's column.
//
// Minimality can fail for the raw row ∪ column sets in two layouts, and
// Grid repairs it. (1) The last row holds a single process x (w = 1, at
// least 2 rows): Q_x is column 0, a proper subset of Q_b for every other b
// in column 0. (2) There are exactly two rows and the last is partial: a
// process a of row 0 whose column is empty below has Q_a = row 0, a proper
// subset of Q_b for the other processes b of row 0. These are the only
// cases: for a, b in different rows and columns neither set can contain the
// other (a's row would have to be a single cell of b's column, yet it holds
// a); in one row Q_a ⊂ Q_b needs a's column to be {a} (case 2, or n = 1);
// in one column it needs a's row to be {a} (case 1). The repair: each
// quorum that properly contains another raw quorum is replaced by the
// smallest raw quorum it contains (the lowest process id on ties). The
// result uses only minimal raw quorums, so it is minimal, and it is a
// subfamily of an intersecting family, so it still intersects. In both
// cases the replacement contains the process (column 0 contains every b of
// column 0; row 0 contains every b of row 0), so P_i ∈ Q_i for every n.
//
// Sizes: 2 sqrt(n) - 1 for perfect squares, at most 2 ceil(sqrt(n)) - 1
// otherwise.
func Grid(n int) ([][]cs.ID, error) {
	if err := checkBuild("grid", n); err != nil {
		return nil, err
	}
	g := newGridLayout(n)
	// Shared slices for equal quorums: a repaired quorum is another
	// process's raw one.
	raw := make([][]cs.ID, n)
	member := func(i int) []cs.ID {
		if raw[i] == nil {
			raw[i] = g.members(i)
		}
		return raw[i]
	}
	qs := make([][]cs.ID, n)
	for i := range n {
		best := i
		// A raw quorum inside raw(i) belongs to a member j of raw(i)
		// (P_j is in its own raw quorum): only those are candidates.
		for _, id := range member(i) {
			j := int(id) - 1
			if g.size(j) < g.size(best) && g.within(j, i) {
				best = j
			}
		}
		qs[i] = member(best)
	}
	return qs, nil
}

// gridLayout is the grid of Grid(n): s columns, rows rows, the last one
// holding w processes; process i (0-based) sits at row i/s, column i%s.
type gridLayout struct{ n, s, rows, w int }

func newGridLayout(n int) gridLayout {
	s := 1
	for s*s < n {
		s++
	}
	rows := (n + s - 1) / s
	return gridLayout{n: n, s: s, rows: rows, w: n - (rows-1)*s}
}

// rowLen and colLen are the numbers of processes in row r and column c.
func (g gridLayout) rowLen(r int) int {
	if r == g.rows-1 {
		return g.w
	}
	return g.s
}

func (g gridLayout) colLen(c int) int {
	if c < g.w {
		return g.rows
	}
	return g.rows - 1
}

// size is |raw(i)| = |row ∪ column| of process i (0-based).
func (g gridLayout) size(i int) int { return g.rowLen(i/g.s) + g.colLen(i%g.s) - 1 }

// within reports whether raw(j) ⊆ raw(i): j's row lies in raw(i) when it is
// i's row or a single cell of i's column, and likewise j's column.
func (g gridLayout) within(j, i int) bool {
	rj, cj, ri, ci := j/g.s, j%g.s, i/g.s, i%g.s
	rowIn := rj == ri || (g.rowLen(rj) == 1 && cj == ci) // a one-cell row is column 0's last cell
	colIn := cj == ci || (g.colLen(cj) == 1 && rj == ri) // a one-cell column lies in row 0
	return rowIn && colIn
}

// members returns raw(i), i's row and column, as sorted ids.
func (g gridLayout) members(i int) []cs.ID {
	r, c := i/g.s, i%g.s
	q := make([]cs.ID, 0, g.size(i))
	for rr := 0; rr < r; rr++ {
		q = append(q, cs.ID(rr*g.s+c+1))
	}
	for cc := range g.rowLen(r) {
		q = append(q, cs.ID(r*g.s+cc+1))
	}
	for rr := r + 1; rr < g.rows; rr++ {
		if id := rr*g.s + c; id < g.n {
			q = append(q, cs.ID(id+1))
		}
	}
	return q
}

// ByName resolves a coterie name as the CLI's --coterie flag takes it:
// "majority", "grid", or the path of a coterie file (ReadFile). A file is
// validated as a coterie (Validate); the built-ins are coteries by
// construction. The second result is the name to report (the path for a
// file).
func ByName(name string, n int) ([][]cs.ID, string, error) {
	var qs [][]cs.ID
	var err error
	switch name {
	case "majority":
		qs, err = Majority(n)
	case "grid":
		qs, err = Grid(n)
	case "":
		return nil, "", fmt.Errorf("no coterie given: use majority, grid, or the path of a coterie file")
	default:
		qs, err = ReadFile(name, n)
	}
	if err != nil {
		return nil, "", err
	}
	// Majority and Grid are coteries by construction (Examples 1 and 2 of
	// the global paper; TestBuiltinsAreCoteries checks n = 1..200), so only
	// a file is validated: that is O(n²) pairs of quorums, minutes at
	// n = 10^4.
	if name != "majority" && name != "grid" {
		if err := Validate(qs, n); err != nil {
			return nil, "", err
		}
	}
	return qs, name, nil
}

// MaxN is the largest n: process ids are 32-bit (cs.ID).
const MaxN = math.MaxInt32

// MaxIDs bounds the built-in coteries: Majority and Grid refuse to build
// more than MaxIDs process ids in all (1 GiB of ids). Majority(n) holds
// about n²/2 ids, so n <= 23 169; Grid(n) about 2 n^1.5, so n <= 262 144.
// Beyond that a simulation's own state (messages of every quorum in flight)
// would not fit in memory either, and checking intersection (n²/2 pairs)
// would take hours.
const MaxIDs = 1 << 28

// Size returns upper bounds, without building them, on the number of
// process ids in all quorums of the built-in coterie name ("majority" or
// "grid") for n processes and on its largest quorum: what Majority(n) or
// Grid(n) would allocate. Other names (files) are an error.
func Size(name string, n int) (ids float64, largest int, err error) {
	if err := checkN(n); err != nil {
		return 0, 0, err
	}
	switch name {
	case "majority":
		if n <= 2 {
			return float64(n), 1, nil
		}
		if n%2 == 1 {
			return float64(n) * float64((n+1)/2), (n + 1) / 2, nil
		}
		return float64(n/2)*float64(n/2) + float64(n/2)*float64(n/2+1), n/2 + 1, nil
	case "grid":
		g := newGridLayout(n)
		largest = min(n, 2*g.s-1)
		return float64(n) * float64(largest), largest, nil
	}
	return 0, 0, fmt.Errorf("%q is not a built-in coterie (majority or grid)", name)
}

// checkBuild refuses n out of range, or a built-in coterie larger than
// MaxIDs.
func checkBuild(name string, n int) error {
	ids, _, err := Size(name, n)
	if err != nil {
		return err
	}
	if ids > MaxIDs {
		return fmt.Errorf("%s(n = %d) would hold %.3g process ids (%.3g GB): critsec builds at most %d (1 GiB) per coterie; use a smaller n%s",
			name, n, ids, ids*4/(1<<30), MaxIDs, map[bool]string{true: " or the grid coterie", false: ""}[name == "majority"])
	}
	return nil
}

// CheckIntersecting checks what a quorum-based mutual-exclusion algorithm
// needs to be safe: n >= 1, exactly n quorums (qs[i-1] = Q_i), each nonempty,
// ids in 1..n, no id listed twice in a quorum, and every two quorums
// intersect. A failure names the quorum(s) at fault.
//
// It takes O(n) memory beyond qs, whatever the ids, and time O(n² |Q|) at
// most: a pair whose sizes add up to more than n intersects by pigeonhole
// and costs nothing (every pair of majority(n) for odd n).
func CheckIntersecting(qs [][]cs.ID, n int) error {
	_, err := intersecting(qs, n)
	return err
}

// Validate checks that qs (qs[i-1] = Q_i) is a coterie under {1..n}
// (Definition 3): everything CheckIntersecting checks, and minimality: no
// quorum is a proper subset of another. A failure names the two quorums;
// of several faults of one kind, the first pair in (i, j) order.
func Validate(qs [][]cs.ID, n int) error {
	mark, err := intersecting(qs, n)
	if err != nil {
		return err
	}
	sub, sup := -1, -1
	for j, qj := range qs {
		mark.set(qj)
		for i, qi := range qs {
			if len(qi) < len(qj) && (sub < 0 || i < sub || i == sub && j < sup) && mark.all(qi) {
				sub, sup = i, j
			}
		}
	}
	if sub >= 0 {
		return fmt.Errorf("Q_%d = %s is a proper subset of Q_%d = %s: a coterie's quorums must be minimal (Definition 3); let P_%d use Q_%d too, or drop the extra members",
			sub+1, show(qs[sub]), sup+1, show(qs[sup]), sup+1, sub+1)
	}
	return nil
}

// intersecting checks everything but minimality; it returns the marks it
// used, for Validate.
func intersecting(qs [][]cs.ID, n int) (*marks, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if len(qs) != n {
		return nil, fmt.Errorf("got %d quorums for n = %d processes: need exactly one quorum Q_i per process", len(qs), n)
	}
	mark := newMarks(n)
	for i, q := range qs {
		if len(q) == 0 {
			return nil, fmt.Errorf("Q_%d is empty: every quorum needs at least one process (nonemptiness, Definition 3)", i+1)
		}
		mark.next()
		for _, id := range q {
			if id < 1 || int(id) > n {
				return nil, fmt.Errorf("Q_%d = %s holds unknown process id %d: ids run from 1 to n = %d", i+1, show(q), id, n)
			}
			if mark.has(id) {
				return nil, fmt.Errorf("Q_%d = %s lists process %d twice", i+1, show(q), id)
			}
			mark.add(id)
		}
	}
	for i, qi := range qs {
		mark.set(qi)
		for j := i + 1; j < n; j++ {
			if len(qi)+len(qs[j]) <= n && !mark.any(qs[j]) {
				return nil, fmt.Errorf("Q_%d = %s and Q_%d = %s do not intersect: every pair of quorums must share a process (intersection property, Definition 3)",
					i+1, show(qi), j+1, show(qs[j]))
			}
		}
	}
	return mark, nil
}

// marks is a set of ids in 1..n with O(1) clearing: id is in the set when
// its stamp is the current one.
type marks struct {
	stamp []uint32
	cur   uint32
}

func newMarks(n int) *marks { return &marks{stamp: make([]uint32, n+1)} }

// next empties the set.
func (m *marks) next() {
	if m.cur == math.MaxUint32 {
		clear(m.stamp)
		m.cur = 0
	}
	m.cur++
}

func (m *marks) add(id cs.ID)      { m.stamp[id] = m.cur }
func (m *marks) has(id cs.ID) bool { return m.stamp[id] == m.cur }

// set empties the set and adds q (ids already checked to be in 1..n).
func (m *marks) set(q []cs.ID) {
	m.next()
	for _, id := range q {
		m.add(id)
	}
}

// any reports whether some id of q is in the set, all whether every one is.
func (m *marks) any(q []cs.ID) bool {
	for _, id := range q {
		if m.has(id) {
			return true
		}
	}
	return false
}

func (m *marks) all(q []cs.ID) bool {
	for _, id := range q {
		if !m.has(id) {
			return false
		}
	}
	return true
}

func checkN(n int) error {
	if n < 1 || n > MaxN {
		return fmt.Errorf("n = %d is out of range: need 1 <= n <= %d (ids are 32-bit)", n, MaxN)
	}
	return nil
}

// show formats a quorum as {1,2,5}.
func show(q []cs.ID) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, id := range q {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, id)
	}
	b.WriteByte('}')
	return b.String()
}
