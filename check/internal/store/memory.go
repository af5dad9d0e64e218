package store

// Memory is an open-addressing hash set of FP (linear probing) that grows
// by doubling at load 3/4 while the doubled table, together with the old one
// being copied, fits in maxBytes (0: no limit). Past that it keeps its table
// and fills it up to load 15/16, then reports full.
type Memory struct {
	slots    []FP
	count    int
	maxBytes uint64
}

// NewMemory returns a set sized for capacity fingerprints at load 3/4, or
// the largest table within maxBytes if that is smaller (it then fills up to
// load 15/16 and reports full, rather than allocating more than allowed).
func NewMemory(capacity int, maxBytes uint64) *Memory {
	size := 1 << 16
	for size/4*3 < capacity {
		size *= 2
	}
	for maxBytes != 0 && size > 1<<16 && uint64(size)*fpBytes > maxBytes {
		size /= 2
	}
	return &Memory{slots: make([]FP, size), maxBytes: maxBytes}
}

// Insert adds x and reports whether it was new; ErrFull reports that x
// could not be added because the set may grow no further.
func (s *Memory) Insert(x FP) (added bool, err error) {
	if (s.count+1)*4 > len(s.slots)*3 && s.mayGrow() {
		s.grow()
	}
	if (s.count+1)*16 > len(s.slots)*15 {
		if s.Has(x) {
			return false, nil
		}
		return false, ErrFull
	}
	mask := uint32(len(s.slots) - 1)
	for i := x[0] & mask; ; i = (i + 1) & mask {
		switch y := s.slots[i]; {
		case y == x:
			return false, nil
		case y == FP{}:
			s.slots[i] = x
			s.count++
			return true, nil
		}
	}
}

// Stats describes the set: its fingerprints and its slots.
func (s *Memory) Stats() Stats { return Stats{States: int64(s.count), Slots: len(s.slots)} }

// Close does nothing: the set is garbage once unreferenced.
func (s *Memory) Close() error { return nil }

// Has reports whether x is in the set.
func (s *Memory) Has(x FP) bool {
	mask := uint32(len(s.slots) - 1)
	for i := x[0] & mask; ; i = (i + 1) & mask {
		switch y := s.slots[i]; {
		case y == x:
			return true
		case y == FP{}:
			return false
		}
	}
}

// mayGrow reports whether doubling keeps the old and the new table within
// maxBytes.
func (s *Memory) mayGrow() bool {
	return s.maxBytes == 0 || uint64(3*len(s.slots))*fpBytes <= s.maxBytes
}

func (s *Memory) grow() {
	old := s.slots
	s.slots = make([]FP, 2*len(old))
	mask := uint32(len(s.slots) - 1)
	for _, x := range old {
		if x == (FP{}) {
			continue
		}
		i := x[0] & mask
		for s.slots[i] != (FP{}) {
			i = (i + 1) & mask
		}
		s.slots[i] = x
	}
}
