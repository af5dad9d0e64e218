package store

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestDiskFPSet: random fingerprints, many repeated, into a set with a tiny
// memory share, so that it merges into its file many times; every answer
// is compared with a map, then every fingerprint is looked up again, and
// close leaves nothing behind. Fingerprints never added are ruled out by
// the filter nearly always, without reading a page; where the filter may
// not grow with the file, less often, and the answers stay exact. The file
// is read through its mapping, and again with pread (where the mapping is
// unavailable).
func TestDiskFPSet(t *testing.T) {
	for _, c := range []struct {
		name     string
		capacity int
		maxBytes uint64
		n        int
		pread    bool
		maxFP    float64 // share of fingerprints never added that read a page
	}{
		{"fixed table", 1000, 0, 60_000, false, 0.025},          // 2^11 slots: a merge every 1536
		{"doubling table", 0, 400 << 10, 200_000, false, 0.025}, // 2^13 slots, then 2^14
		{"fixed table, pread", 1000, 0, 60_000, true, 0.025},
		// A filter share of 24 KiB: 24 576 fingerprints, fewer than the file's.
		{"fixed table, small filter", 1000, 48 << 10, 60_000, false, 0.25},
	} {
		diskMapFile = mapFile
		if c.pread {
			diskMapFile = func(*os.File, int64) []byte { return nil }
		}
		t.Cleanup(func() { diskMapFile = mapFile })
		dir := t.TempDir()
		s, err := NewDisk(dir, c.capacity, c.maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		first := len(s.slots)
		rng := rand.New(rand.NewPCG(1, 2))
		want := map[FP]bool{}
		var all []FP
		for i := range c.n {
			var x FP
			if len(all) > 0 && rng.IntN(3) == 0 {
				x = all[rng.IntN(len(all))] // seen before: in the table or on disk
			} else {
				x = FP{rng.Uint32(), rng.Uint32(), rng.Uint32()}
				if rng.IntN(8) == 0 {
					x[0] = all0(all, rng) // shares x[0] with another: ties broken by x[1], x[2]
				}
				all = append(all, x)
			}
			added, err := s.Insert(x)
			if err != nil {
				t.Fatalf("%s: insert %d: %v", c.name, i, err)
			}
			if added != !want[x] {
				t.Fatalf("%s: insert %d (%v): added %v, want %v (%d on disk, %d merges)", c.name, i, x, added, !want[x], s.onDisk, s.merges)
			}
			want[x] = true
		}
		if grew := len(s.slots) > first; grew != (c.capacity == 0) {
			t.Fatalf("%s: %d slots, %d at first", c.name, len(s.slots), first)
		}
		if s.merges < 10 || s.reads == 0 || s.Len() != int64(len(want)) {
			t.Fatalf("%s: %d merges, %d states (want >= 10 merges, %d states)", c.name, s.merges, s.Len(), len(want))
		}
		limit := int64(s.maxBytes / 2 * 8 / filterBits)
		// The small filter (the one case that allows more than 2.5 %) is outgrown.
		if k := s.filter.capacity; k < min(s.onDisk, limit) || k > limit || c.maxFP > 0.025 && k >= s.onDisk {
			t.Fatalf("%s: a filter for %d fingerprints (at most %d), %d on disk", c.name, k, limit, s.onDisk)
		}
		// A filter is rebuilt when the file outgrows it, at twice the file:
		// a few times in all, not at every merge (at most every other one).
		if s.filterBuilds < 2 || s.filterBuilds > s.merges/2 {
			t.Fatalf("%s: %d filters built in %d merges", c.name, s.filterBuilds, s.merges)
		}
		reads := s.reads
		const fresh = 10_000
		for range fresh {
			if has, err := s.Has(FP{rng.Uint32(), rng.Uint32(), rng.Uint32()}); has || err != nil {
				t.Fatalf("%s: a fingerprint never added: has %v (%v)", c.name, has, err)
			}
		}
		if got := float64(s.reads-reads) / fresh; got > c.maxFP {
			t.Fatalf("%s: %.1f %% of the fingerprints never added read a page, want at most %.1f %%", c.name, 100*got, 100*c.maxFP)
		}
		for x := range want {
			if has, err := s.Has(x); !has || err != nil {
				t.Fatalf("%s: %v lost: %v", c.name, x, err)
			}
			y := x
			y[2]++
			if has, err := s.Has(y); has != want[y] || err != nil {
				t.Fatalf("%s: %v: has %v, want %v (%v)", c.name, y, has, want[y], err)
			}
		}
		fi, err := os.Stat(filepath.Join(s.dir, "fps"))
		if err != nil || fi.Size() < s.onDisk*fpBytes {
			t.Fatalf("%s: file %v, %d fingerprints", c.name, err, s.onDisk)
		}
		if s.mapped != nil && int64(len(s.mapped)) != fi.Size() {
			t.Fatalf("%s: %d bytes mapped of a file of %d", c.name, len(s.mapped), fi.Size())
		}
		if c.pread && s.mapped != nil || !c.pread && runtime.GOOS == "linux" && s.mapped == nil {
			t.Fatalf("%s: mapped %v on %s", c.name, s.mapped != nil, runtime.GOOS)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
			t.Fatalf("%s: %d entries left in the directory (%v)", c.name, len(ents), err)
		}
	}
}

// TestDiskFPSetTruncated: a file cut short under the set (a failing disk,
// another program) is a read error, not a crash, whether the set reads it
// through its mapping (where the cut is a fault) or with pread.
func TestDiskFPSetTruncated(t *testing.T) {
	for _, pread := range []bool{false, true} {
		diskMapFile = mapFile
		if pread {
			diskMapFile = func(*os.File, int64) []byte { return nil }
		}
		t.Cleanup(func() { diskMapFile = mapFile })
		s, err := NewDisk(t.TempDir(), 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		var all []FP
		for s.merges == 0 {
			x := FP{rng.Uint32(), rng.Uint32(), rng.Uint32()}
			if _, err := s.Insert(x); err != nil {
				t.Fatal(err)
			}
			all = append(all, x)
		}
		if err := os.Truncate(filepath.Join(s.dir, "fps"), 0); err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, x := range all {
			// In the file: the filter lets every lookup through, and it
			// reads a page unless x is the first of one (in the index).
			if _, err := s.Has(x); err != nil {
				if !strings.Contains(err.Error(), "visited set on disk: read page") {
					t.Fatalf("pread %v: %v", pread, err)
				}
				failed++
			}
		}
		if failed == 0 {
			t.Fatalf("pread %v: no lookup failed on a truncated file", pread)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func all0(all []FP, rng *rand.Rand) uint32 {
	if len(all) == 0 {
		return 7
	}
	return all[rng.IntN(len(all))][0]
}

// TestValidateDiskDir: a missing directory and a file are refused.
func TestValidateDiskDir(t *testing.T) {
	dir := t.TempDir()
	if err := ValidateDir(dir); err != nil {
		t.Fatal(err)
	}
	f := dir + "/file"
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir + "/missing", f} {
		if err := ValidateDir(d); err == nil {
			t.Errorf("%s accepted", d)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries left", len(ents))
	}
}

// sortedFPs returns n distinct sorted fingerprints drawn by draw.
func sortedFPs(n int, draw func() FP) []FP {
	seen := map[FP]bool{}
	var xs []FP
	for len(xs) < n {
		if x := draw(); x != (FP{}) && !seen[x] {
			seen[x] = true
			xs = append(xs, x)
		}
	}
	slices.SortFunc(xs, cmpFP)
	return xs
}

// fpDraws are distributions of fingerprints for TestPageOf and TestPageHas:
// the hashes' even spread, for which the guesses are close, and spreads
// for which they are far off (one x[0] for all, a narrow range, two
// clusters at the ends).
func fpDraws(rng *rand.Rand) map[string]func() FP {
	return map[string]func() FP{
		"even":      func() FP { return FP{rng.Uint32(), rng.Uint32(), rng.Uint32()} },
		"one x[0]":  func() FP { return FP{7, rng.Uint32N(4), rng.Uint32()} },
		"narrow":    func() FP { return FP{1<<31 + rng.Uint32N(100), rng.Uint32N(3), rng.Uint32N(50)} },
		"clustered": func() FP { return FP{rng.Uint32N(2) * (1<<32 - 1000), rng.Uint32(), rng.Uint32()} },
	}
}

// probes are x itself, its neighbors in the full order, and values beyond
// every fingerprint of xs.
func probes(xs []FP) []FP {
	ps := []FP{{0, 0, 1}, {1<<32 - 1, 1<<32 - 1, 1<<32 - 1}}
	for _, x := range xs {
		lo, hi := x, x
		lo[2]--
		hi[2]++
		ps = append(ps, x, lo, hi, FP{x[0], x[1] + 1, 0})
	}
	return ps
}

// TestPageOf: the guessed-then-widened search finds the page a bisection
// finds, for every probe, on indexes of 1 to 3000 pages of each spread.
func TestPageOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for name, draw := range fpDraws(rng) {
		for _, n := range []int{1, 2, 3, 17, 3000} {
			index := sortedFPs(n, draw)
			for _, x := range probes(index) {
				if got, want := pageOf(index, x), bisectPage(index, x); got != want {
					t.Fatalf("%s, %d pages, %v: page %d, want %d", name, n, x, got, want)
				}
			}
		}
	}
}

// bisectPage is pageOf by bisection, the search pageOf replaced.
func bisectPage(index []FP, x FP) int {
	return sort.Search(len(index), func(i int) bool { return cmpFP(index[i], x) > 0 }) - 1
}

// TestPageHas: the interpolated search in a page answers as a lookup in
// the page's fingerprints does, for every probe above the page's first, on
// pages of 1 to 341 fingerprints of each spread.
func TestPageHas(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for name, draw := range fpDraws(rng) {
		for _, n := range []int{1, 2, 3, 50, diskPageFPs} {
			xs := sortedFPs(n, draw)
			page := make([]byte, n*fpBytes)
			in := map[FP]bool{}
			for i, x := range xs {
				putFP(page[i*fpBytes:], x)
				in[x] = true
			}
			for _, x := range probes(xs) {
				if cmpFP(x, xs[0]) <= 0 {
					continue // the index answers these
				}
				if got := pageHas(page, n, xs[0], x); got != in[x] {
					t.Fatalf("%s, %d fingerprints, %v: %v, want %v", name, n, x, got, in[x])
				}
			}
		}
	}
}

// BenchmarkFileLookup: a lookup in a file of 2^24 fingerprints held in
// memory (200 MB, the page cache's case), half of them present, by
// bisection of the index and the page (the search pageOf replaced) and
// by pageOf and pageHas. Alternate the two and compare: the machine's
// memory latency sets both (docs/results.md, "Visited set on disk").
func BenchmarkFileLookup(b *testing.B) {
	const n = 1 << 24
	rng := rand.New(rand.NewPCG(11, 12))
	fps := sortedFPs(n, func() FP { return FP{rng.Uint32(), rng.Uint32(), rng.Uint32()} })
	var buf bytes.Buffer // the file as a merge writes it
	w := &fpWriter{w: bufio.NewWriter(&buf)}
	for _, x := range fps {
		w.put(x)
	}
	if err := w.w.Flush(); err != nil {
		b.Fatal(err)
	}
	file, index := buf.Bytes(), w.index
	probes := make([]FP, 1<<20)
	for i := range probes {
		probes[i] = FP{rng.Uint32(), rng.Uint32(), rng.Uint32()}
		if i%2 == 0 {
			probes[i] = fps[rng.IntN(n)]
		}
	}
	lookup := func(b *testing.B, page func([]FP, FP) int, has func([]byte, int, FP, FP) bool) {
		found := 0
		for i := range b.N {
			x := probes[i%len(probes)]
			p := page(index, x)
			if index[p] == x {
				found++
				continue
			}
			k := min(diskPageFPs, n-p*diskPageFPs)
			if has(file[p*diskPageBytes:p*diskPageBytes+k*fpBytes], k, index[p], x) {
				found++
			}
		}
		if b.N >= len(probes) && found < b.N/3 {
			b.Fatalf("%d of %d found", found, b.N)
		}
	}
	b.Run("bisect", func(b *testing.B) {
		lookup(b, bisectPage, func(page []byte, n int, _, x FP) bool {
			i := sort.Search(n, func(i int) bool { return cmpFP(getFP(page[i*fpBytes:]), x) >= 0 })
			return i < n && getFP(page[i*fpBytes:]) == x
		})
	})
	b.Run("guess", func(b *testing.B) { lookup(b, pageOf, pageHas) })
}
