package check

import "testing"

// TestCrashedProcessEncoding: a crashed process's machine, budget and
// suspicions are left out of the fingerprint (mergeCrashed); a live
// process's are not.
func TestCrashedProcessEncoding(t *testing.T) {
	mk := func(m2 uint32, b2 int8, sus2 uint64, crashed uint64) fingerprint {
		s := &gstate{
			procs:       []proc{{m: 1, budget: 2}, {m: m2, budget: b2}, {m: 3, budget: 1}},
			flight:      []inflight{{link: 1, m: 7}},
			suspect:     []uint64{0, sus2, bit(2)},
			crashed:     crashed,
			crashesLeft: 1,
		}
		return fingerprintOf(s)
	}
	c := bit(2)
	if a, b := mk(4, 2, 0, c), mk(5, 0, bit(1)|bit(3), c); a != b {
		t.Errorf("crashed P2 with another machine, budget and suspicions: fingerprints differ")
	}
	if a, b := mk(4, 2, 0, 0), mk(4, 1, 0, 0); a == b {
		t.Errorf("live P2 with another budget: same fingerprint")
	}
	if a, b := mk(4, 2, 0, 0), mk(4, 2, bit(1), 0); a == b {
		t.Errorf("live P2 with other suspicions: same fingerprint")
	}
	if a, b := mk(4, 2, 0, 0), mk(4, 2, 0, c); a == b {
		t.Errorf("P2 live and crashed: same fingerprint")
	}
	defer func() { mergeCrashed = true }()
	mergeCrashed = false
	if a, b := mk(4, 2, 0, c), mk(4, 1, 0, c); a == b {
		t.Errorf("without mergeCrashed, crashed P2's budget is not encoded")
	}
}
