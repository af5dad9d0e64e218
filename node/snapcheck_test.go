package node

import (
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/cs"
)

// TestLoadsBack: the snapshot of a raymond node with a request under way
// loads back into a fresh raymond machine, and not into a maekawa one
// (whose ReadState reads the bytes otherwise or refuses them), which the
// node would then not write.
func TestLoadsBack(t *testing.T) {
	problem := func(name string) *Config {
		p, err := alg.Resolve(alg.Spec{Alg: name, N: 3})
		if err != nil {
			t.Fatal(err)
		}
		return &Config{Problem: p}
	}
	ra := problem("raymond")
	ms, err := ra.Problem.Machines()
	if err != nil {
		t.Fatal(err)
	}
	rp := newReplay(1, 3, ra.Fingerprint(), ms[0], ra.Problem.Decoder())
	if err := rp.step(cs.Call(cs.Entry), 0); err != nil {
		t.Fatal(err)
	}
	snap := rp.appendSnapshot(nil)
	if err := loadsBack(rp, freshReplay(ra, rp), snap); err != nil {
		t.Errorf("raymond's snapshot into raymond: %v", err)
	}
	mk := problem("maekawa")
	other := func() (*replay, error) {
		ms, err := mk.Problem.Machines()
		if err != nil {
			return nil, err
		}
		return newReplay(1, 3, rp.fp, ms[0], mk.Problem.Decoder()), nil
	}
	if err := loadsBack(rp, other, snap); err == nil {
		t.Error("raymond's snapshot loads back into maekawa")
	}
}
