package store

import "testing"

// TestMemory: the set grows while its memory share allows, then fills to
// load 15/16 and refuses new fingerprints with ErrFull.
func TestMemory(t *testing.T) {
	x := func(i int) FP {
		h := uint64(i+1) * 0x9e3779b97f4a7c15 // distinct, spread, never zero
		return FP{uint32(h >> 32), uint32(h), uint32(i)}
	}
	// Unlimited: grows past its first size, every value once.
	s := NewMemory(0, 0)
	first := len(s.slots)
	const n = 200_000
	for i := range n {
		if added, err := s.Insert(x(i)); !added || err != nil {
			t.Fatalf("insert %d: added %v, %v", i, added, err)
		}
	}
	if added, _ := s.Insert(x(7)); added || !s.Has(x(n-1)) || s.Has(x(n)) || s.count != n || len(s.slots) <= first {
		t.Fatalf("count %d, %d slots (first %d)", s.count, len(s.slots), first)
	}
	// A budget that forbids doubling: the table fills to 15/16, then
	// refuses new values but still knows the old ones.
	s = NewMemory(0, 1)
	size := len(s.slots)
	i := 0
	for ; ; i++ {
		added, err := s.Insert(x(i))
		if err == ErrFull {
			break
		}
		if !added {
			t.Fatalf("insert %d: not added", i)
		}
	}
	if len(s.slots) != size || s.count != size*15/16 || i != s.count {
		t.Fatalf("full at %d values, %d slots (want %d, full at %d)", i, len(s.slots), size, size*15/16)
	}
	if added, err := s.Insert(x(0)); added || err != nil {
		t.Fatalf("a known value in a full set: added %v, %v", added, err)
	}
	// Sized up front for a capacity at load 3/4.
	if s := NewMemory(1_000_000, 0); len(s.slots) < 1_000_000*4/3 {
		t.Fatalf("%d slots for 1e6 at load 3/4", len(s.slots))
	}
	// ... but never larger than the memory budget: 10^6 at load 3/4 needs
	// 2^21 slots (24 MiB); with 16 MiB allowed it gets 2^20.
	if s := NewMemory(1_000_000, 16<<20); len(s.slots) != 1<<20 {
		t.Fatalf("%d slots for 1e6 within 16 MiB, want %d", len(s.slots), 1<<20)
	}
}
