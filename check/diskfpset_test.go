package check

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDiskFPSet: random fingerprints, many repeated, into a set with a tiny
// memory share, so that it merges into its file many times; every answer
// is compared with a map, then every fingerprint is looked up again, and
// close leaves nothing behind. Fingerprints never added are ruled out by
// the filter nearly always, without reading a page; where the filter may
// not grow with the file, less often, and the answers stay exact. The file is read through its mapping, and
// again with pread (where the mapping is unavailable).
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
		s, err := newDiskFPSet(dir, c.capacity, c.maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		first := len(s.slots)
		rng := rand.New(rand.NewPCG(1, 2))
		want := map[fp96]bool{}
		var all []fp96
		for i := range c.n {
			var x fp96
			if len(all) > 0 && rng.IntN(3) == 0 {
				x = all[rng.IntN(len(all))] // seen before: in the table or on disk
			} else {
				x = fp96{rng.Uint32(), rng.Uint32(), rng.Uint32()}
				if rng.IntN(8) == 0 {
					x[0] = all0(all, rng) // shares x[0] with another: ties broken by x[1], x[2]
				}
				all = append(all, x)
			}
			added, err := s.insert(x)
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
		if s.merges < 10 || s.reads == 0 || s.states() != int64(len(want)) {
			t.Fatalf("%s: %d merges, %d states (want >= 10 merges, %d states)", c.name, s.merges, s.states(), len(want))
		}
		limit := int64(s.maxBytes / 2 * 8 / filterBits)
		// The small filter (the one case that allows more than 2.5 %) is outgrown.
		if k := s.filter.capacity; k < min(s.onDisk, limit) || k > limit || c.maxFP > 0.025 && k >= s.onDisk {
			t.Fatalf("%s: a filter for %d fingerprints (at most %d), %d on disk", c.name, k, limit, s.onDisk)
		}
		reads := s.reads
		const fresh = 10_000
		for range fresh {
			if has, err := s.has(fp96{rng.Uint32(), rng.Uint32(), rng.Uint32()}); has || err != nil {
				t.Fatalf("%s: a fingerprint never added: has %v (%v)", c.name, has, err)
			}
		}
		if got := float64(s.reads-reads) / fresh; got > c.maxFP {
			t.Fatalf("%s: %.1f %% of the fingerprints never added read a page, want at most %.1f %%", c.name, 100*got, 100*c.maxFP)
		}
		for x := range want {
			if has, err := s.has(x); !has || err != nil {
				t.Fatalf("%s: %v lost: %v", c.name, x, err)
			}
			y := x
			y[2]++
			if has, err := s.has(y); has != want[y] || err != nil {
				t.Fatalf("%s: %v: has %v, want %v (%v)", c.name, y, has, want[y], err)
			}
		}
		fi, err := os.Stat(filepath.Join(s.dir, "fps"))
		if err != nil || fi.Size() < s.onDisk*fp96Bytes {
			t.Fatalf("%s: file %v, %d fingerprints", c.name, err, s.onDisk)
		}
		if s.mapped != nil && int64(len(s.mapped)) != fi.Size() {
			t.Fatalf("%s: %d bytes mapped of a file of %d", c.name, len(s.mapped), fi.Size())
		}
		if c.pread && s.mapped != nil || !c.pread && runtime.GOOS == "linux" && s.mapped == nil {
			t.Fatalf("%s: mapped %v on %s", c.name, s.mapped != nil, runtime.GOOS)
		}
		if err := s.close(); err != nil {
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
		s, err := newDiskFPSet(t.TempDir(), 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		var all []fp96
		for s.merges == 0 {
			x := fp96{rng.Uint32(), rng.Uint32(), rng.Uint32()}
			if _, err := s.insert(x); err != nil {
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
			if _, err := s.has(x); err != nil {
				if !strings.Contains(err.Error(), "visited set on disk: read page") {
					t.Fatalf("pread %v: %v", pread, err)
				}
				failed++
			}
		}
		if failed == 0 {
			t.Fatalf("pread %v: no lookup failed on a truncated file", pread)
		}
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
	}
}

func all0(all []fp96, rng *rand.Rand) uint32 {
	if len(all) == 0 {
		return 7
	}
	return all[rng.IntN(len(all))][0]
}

// TestValidateDiskDir: a missing directory and a file are refused.
func TestValidateDiskDir(t *testing.T) {
	dir := t.TempDir()
	if err := ValidateDiskDir(dir); err != nil {
		t.Fatal(err)
	}
	f := dir + "/file"
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir + "/missing", f} {
		if err := ValidateDiskDir(d); err == nil {
			t.Errorf("%s accepted", d)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries left", len(ents))
	}
}
