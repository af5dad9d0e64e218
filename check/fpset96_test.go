package check

import (
	"strings"
	"testing"
)

func TestFPSet96(t *testing.T) {
	x := func(i int) fp96 { return fp96Of(hash128([]byte{byte(i), byte(i >> 8), byte(i >> 16)})) }
	// Unlimited: grows past its first size, every value once.
	s := newFPSet96(0, 0)
	first := len(s.slots)
	const n = 200_000
	for i := range n {
		if added, full := s.insert(x(i)); !added || full {
			t.Fatalf("insert %d: added %v, full %v", i, added, full)
		}
	}
	if added, _ := s.insert(x(7)); added || !s.has(x(n-1)) || s.has(x(n)) || s.count != n || len(s.slots) <= first {
		t.Fatalf("count %d, %d slots (first %d)", s.count, len(s.slots), first)
	}
	// A budget that forbids doubling: the table fills to 15/16, then
	// refuses new values but still knows the old ones.
	s = newFPSet96(0, 1)
	size := len(s.slots)
	i := 0
	for ; ; i++ {
		added, full := s.insert(x(i))
		if full {
			break
		}
		if !added {
			t.Fatalf("insert %d: not added", i)
		}
	}
	if len(s.slots) != size || s.count != size*15/16 || i != s.count {
		t.Fatalf("full at %d values, %d slots (want %d, full at %d)", i, len(s.slots), size, size*15/16)
	}
	if added, full := s.insert(x(0)); added || full {
		t.Fatalf("a known value in a full set: added %v, full %v", added, full)
	}
	// Sized up front for a capacity at load 3/4.
	if s := newFPSet96(1_000_000, 0); len(s.slots) < 1_000_000*4/3 {
		t.Fatalf("%d slots for 1e6 at load 3/4", len(s.slots))
	}
	// ... but never larger than the memory budget: 10^6 at load 3/4 needs
	// 2^21 slots (24 MiB); with 16 MiB allowed it gets 2^20.
	if s := newFPSet96(1_000_000, 16<<20); len(s.slots) != 1<<20 {
		t.Fatalf("%d slots for 1e6 within 16 MiB, want %d", len(s.slots), 1<<20)
	}
}

// TestFullReason: a full depth-first table explains itself, and suggests
// --expected-states only to a run that did not pass it.
func TestFullReason(t *testing.T) {
	for _, expected := range []int{0, 1000} {
		r := fullReason(61440, 1<<16, expected)
		if !strings.Contains(r, "full after 61440 states (65536 slots") || !strings.Contains(r, "--max-memory") {
			t.Errorf("expected %d: %q", expected, r)
		}
		if suggests := strings.Contains(r, "--expected-states"); suggests != (expected == 0) {
			t.Errorf("expected %d: suggests --expected-states: %v", expected, suggests)
		}
	}
}
