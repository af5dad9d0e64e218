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

// Bounds are the bounds of the generalized local (l_i,k_i)-CS problem
// (Definition 1): at least L[i-1] = l_i and at most K[i-1] = k_i of P_i and
// its neighbors N_i are InCS, with 0 <= l_i < k_i <= |N_i|+1.
type Bounds struct {
	L, K []int
	// Lines[i-1] is the line of the bounds file that gave P_i's bounds;
	// nil for bounds not read from a file.
	Lines []int
	// File is the bounds file's name, "" for bounds not read from one.
	File string
}

// CheckBound returns nil if 0 <= l < k <= |N_i|+1, and otherwise an error
// naming P_i, its degree and the allowed range.
func (g *Graph) CheckBound(i cs.ID, l, k int) error {
	d := g.Degree(i)
	switch {
	case l < 0:
		return fmt.Errorf("P%d (degree %d): l = %d is out of range: need 0 <= l < k = %d", i, d, l, k)
	case k > d+1:
		return fmt.Errorf("P%d (degree %d): k = %d is out of range: need l < k <= |N_%d|+1 = %d", i, d, k, i, d+1)
	case l >= k:
		return fmt.Errorf("P%d (degree %d): l = %d is out of range: need 0 <= l < k = %d (with l = k no process near P%d could ever change state)", i, d, l, k, i)
	}
	return nil
}

// Check checks every process's bounds (CheckBound); a failure from a
// bounds file also names the file and the line.
func (g *Graph) Check(b Bounds) error {
	if len(b.L) != g.N() || len(b.K) != g.N() {
		return fmt.Errorf("%d lower and %d upper bounds for %d processes: need one of each per process", len(b.L), len(b.K), g.N())
	}
	for i := range b.L {
		if err := g.CheckBound(cs.ID(i+1), b.L[i], b.K[i]); err != nil {
			return b.At(cs.ID(i+1), err)
		}
	}
	return nil
}

// At prefixes err with the bounds file and the line that gave P_i's
// bounds, when they came from a file.
func (b Bounds) At(i cs.ID, err error) error {
	if b.File == "" || int(i) > len(b.Lines) || i < 1 {
		return err
	}
	return fmt.Errorf("bounds file %s: line %d: %w", b.File, b.Lines[i-1], err)
}

// Uniform gives every process the bounds l and k. Where the neighborhood
// is too small (|N_i|+1 < k), it refuses, naming the first such process,
// unless clamp is set: then k_i = |N_i|+1 there and l_i = min(l, k_i-1),
// and every other bound is checked as usual.
func Uniform(g *Graph, l, k int, clamp bool) (Bounds, error) {
	if clamp && l >= k {
		return Bounds{}, fmt.Errorf("l = %d is out of range: need l < k = %d", l, k)
	}
	return UniformFunc(g, l, func(int) int { return k }, clamp)
}

// UniformFunc gives every process l_i = l and k_i = k(|N_i|+1), for
// algorithms whose upper bound depends on the neighborhood's size
// (l_i-LMUTIN's k_i = |N_i|+1). With clamp, each k_i is lowered to
// |N_i|+1 and then each l_i to k_i-1 where they exceed them; the caller
// refuses l >= k beforehand if that is a mistake rather than a small
// neighborhood.
func UniformFunc(g *Graph, l int, k func(size int) int, clamp bool) (Bounds, error) {
	b := Bounds{L: make([]int, g.N()), K: make([]int, g.N())}
	for i := range b.L {
		id := cs.ID(i + 1)
		d := g.Degree(id)
		li, ki := l, k(d+1)
		if clamp && ki >= 1 {
			ki = min(ki, d+1)
			li = min(l, ki-1)
		}
		if err := g.CheckBound(id, li, ki); err != nil {
			if ki > d+1 {
				err = fmt.Errorf("%w; give per-process bounds (a bounds file), or clamp", err)
			}
			return Bounds{}, err
		}
		b.L[i], b.K[i] = li, ki
	}
	return b, nil
}

// ReadBounds parses a bounds file for g:
//
//	# process: l k
//	1: 0 2
//	2: 1 max
//
// One line "i: l k" per process 1..n, in any order; "max" for k means
// |N_i|+1. Blank lines and everything after a '#' are ignored. Each
// failure names the line; the range of each bound is checked as by
// CheckBound.
func ReadBounds(r io.Reader, g *Graph) (Bounds, error) {
	n := g.N()
	b := Bounds{L: make([]int, n), K: make([]int, n), Lines: make([]int, n)}
	sc := bufio.NewScanner(io.LimitReader(r, maxFileBytes))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		owner, rest, ok := strings.Cut(text, ":")
		f := strings.Fields(rest)
		if !ok || len(f) != 2 {
			return Bounds{}, fmt.Errorf("line %d: %q: write \"i: l k\" to give P_i the bounds l_i = l and k_i = k", line, text)
		}
		v, err := strconv.Atoi(strings.TrimSpace(owner))
		if err != nil || v < 1 || v > n {
			return Bounds{}, fmt.Errorf("line %d: %q is not a process: ids run from 1 to n = %d", line, strings.TrimSpace(owner), n)
		}
		i := cs.ID(v)
		if at := b.Lines[i-1]; at != 0 {
			return Bounds{}, fmt.Errorf("line %d: P%d's bounds are given twice (first on line %d)", line, i, at)
		}
		l, err := strconv.Atoi(f[0])
		if err != nil {
			return Bounds{}, fmt.Errorf("line %d: P%d: l = %q is not an integer", line, i, f[0])
		}
		k := g.Degree(i) + 1
		if f[1] != "max" {
			if k, err = strconv.Atoi(f[1]); err != nil {
				return Bounds{}, fmt.Errorf("line %d: P%d: k = %q is not an integer or max", line, i, f[1])
			}
		}
		if err := g.CheckBound(i, l, k); err != nil {
			return Bounds{}, fmt.Errorf("line %d: %w", line, err)
		}
		b.L[i-1], b.K[i-1], b.Lines[i-1] = l, k, line
	}
	if err := sc.Err(); err != nil {
		return Bounds{}, err
	}
	var missing []string
	for i, at := range b.Lines {
		if at == 0 {
			missing = append(missing, strconv.Itoa(i+1))
		}
	}
	if len(missing) > 0 {
		if len(missing) > 8 {
			missing = append(missing[:8], "...")
		}
		return Bounds{}, fmt.Errorf("no bounds for process(es) %s: give one line \"i: l k\" for every i in 1..%d", strings.Join(missing, ", "), n)
	}
	return b, nil
}

// ReadBoundsFile reads the bounds file at path for g (ReadBounds); errors
// start with the path.
func ReadBoundsFile(path string, g *Graph) (Bounds, error) {
	f, err := os.Open(path)
	if err != nil {
		return Bounds{}, err
	}
	defer f.Close()
	b, err := ReadBounds(f, g)
	if err != nil {
		return Bounds{}, fmt.Errorf("bounds file %s: %w", path, err)
	}
	b.File = path
	return b, nil
}
