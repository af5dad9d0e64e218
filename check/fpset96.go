package check

// fp96 is a 96-bit fingerprint: the first 96 bits of hash128. Depth-first
// search stores these, 12 bytes a state, so that the largest spaces fit: with
// N distinct states the probability of any collision is at most
// N(N-1)/2 / 2^96, about 6e-12 for N = 10^9 (docs/design/visited-set.md).
type fp96 [3]uint32

// fp96Of returns f's first 96 bits; the all-zero value, which marks an empty
// slot, is mapped to another (a bias of 2^-96, far below the collision bound).
func fp96Of(f fingerprint) fp96 {
	x := fp96{uint32(f.a), uint32(f.a >> 32), uint32(f.b)}
	if x == (fp96{}) {
		x[0] = 1
	}
	return x
}

// fpSet96 is an open-addressing hash set of fp96 (linear probing) that grows
// by doubling at load 3/4 while the doubled table, together with the old one
// being copied, fits in maxBytes (0: no limit). Past that it keeps its table
// and fills it up to load 15/16, then reports full.
type fpSet96 struct {
	slots    []fp96
	count    int
	maxBytes uint64
}

// fp96Bytes is the size of a slot.
const fp96Bytes = 12

// newFPSet96 returns a set sized for capacity fingerprints at load 3/4, or
// the largest table within maxBytes if that is smaller (it then fills up to
// load 15/16 and reports full, rather than allocating more than allowed).
func newFPSet96(capacity int, maxBytes uint64) *fpSet96 {
	size := 1 << 16
	for size/4*3 < capacity {
		size *= 2
	}
	for maxBytes != 0 && size > 1<<16 && uint64(size)*fp96Bytes > maxBytes {
		size /= 2
	}
	return &fpSet96{slots: make([]fp96, size), maxBytes: maxBytes}
}

// insert adds x and reports whether it was new; full reports that x could
// not be added because the set may grow no further.
func (s *fpSet96) insert(x fp96) (added, full bool) {
	if (s.count+1)*4 > len(s.slots)*3 && s.mayGrow() {
		s.grow()
	}
	if (s.count+1)*16 > len(s.slots)*15 {
		return false, !s.has(x)
	}
	mask := uint32(len(s.slots) - 1)
	for i := x[0] & mask; ; i = (i + 1) & mask {
		switch y := s.slots[i]; {
		case y == x:
			return false, false
		case y == fp96{}:
			s.slots[i] = x
			s.count++
			return true, false
		}
	}
}

// has reports whether x is in the set.
func (s *fpSet96) has(x fp96) bool {
	mask := uint32(len(s.slots) - 1)
	for i := x[0] & mask; ; i = (i + 1) & mask {
		switch y := s.slots[i]; {
		case y == x:
			return true
		case y == fp96{}:
			return false
		}
	}
}

// mayGrow reports whether doubling keeps the old and the new table within
// maxBytes.
func (s *fpSet96) mayGrow() bool {
	return s.maxBytes == 0 || uint64(3*len(s.slots))*fp96Bytes <= s.maxBytes
}

func (s *fpSet96) grow() {
	old := s.slots
	s.slots = make([]fp96, 2*len(old))
	mask := uint32(len(s.slots) - 1)
	for _, x := range old {
		if x == (fp96{}) {
			continue
		}
		i := x[0] & mask
		for s.slots[i] != (fp96{}) {
			i = (i + 1) & mask
		}
		s.slots[i] = x
	}
}
