package check

import (
	"reflect"
	"testing"

	"github.com/critsec/critsec/cs"
)

// TestPackRoundTrip: unpacking a packed state gives the state back, every
// field included (unlimited budgets, crashes, suspicions), and states
// packed one after another do not run into each other.
func TestPackRoundTrip(t *testing.T) {
	for _, detector := range []bool{false, true} {
		x := &model{n: 3}
		if detector {
			x.detector = Perfect{}
		}
		pk := newPacker(x)
		states := []gstate{
			{
				procs:       []proc{{m: 7, state: cs.InCS, pending: cs.Exit, budget: unlimited}, {m: 0, budget: 2}, {m: 1<<32 - 2, state: cs.InCS, budget: 0}},
				flight:      []inflight{{link: 1, m: 3}, {link: 1, m: 9}, {link: 65535, m: 1 << 31}},
				crashed:     1 << 3,
				crashesLeft: 1,
			},
			{procs: []proc{{m: 1}, {m: 2}, {m: 3, pending: cs.Entry, budget: 100}}},
		}
		var words []uint64
		var offs []int
		for i := range states {
			if detector {
				states[i].suspect = []uint64{0, 1 << 3, 1<<63 | 1}
			}
			offs = append(offs, len(words))
			words = pk.appendPacked(words, &states[i])
		}
		for i, want := range states {
			got := *pk.unpack(words[offs[i]:])
			if len(got.flight) == 0 {
				got.flight = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("detector %v, state %d: unpacked %+v, want %+v", detector, i, got, want)
			}
		}
	}
}
