package check

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/check/internal/store"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// TestCheckpointUndecided: a budget stop left undecided (TestDeadlockBySearch's
// machines, DeadlockStates 1) before a checkpoint is still reported by the
// run that continues it: the continued run ends as the uninterrupted one,
// incomplete for that stop.
func TestCheckpointUndecided(t *testing.T) {
	prop, err := property.Global(2, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(maxStates int, ck string) Config {
		c := Config{Machines: []cs.Machine{&stuck{idle: idle{self: 1}}, &idle{self: 2}}, Property: prop, Budget: 2, Search: DepthFirst, DeadlockStates: 1, MaxStates: maxStates}
		if ck != "" {
			c.DiskDir, c.Checkpoint = t.TempDir(), ck
		}
		return c
	}
	want, err := Run(t.Context(), cfg(0, ""))
	if err != nil || want.Verdict != Incomplete || !strings.HasPrefix(want.Reason, "could not decide") {
		t.Fatalf("uninterrupted: %v %s %q", err, want.Verdict, want.Reason)
	}
	ck := t.TempDir()
	var res Result
	for limit := 2; limit < 10; limit++ {
		if res, err = Run(t.Context(), cfg(limit, ck)); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.Reason, "max-states") {
			break
		}
	}
	if res.Verdict != want.Verdict || res.Reason != want.Reason || res.States != want.States || res.Transitions != want.Transitions {
		t.Fatalf("continued: %s %q, %d states, %d transitions; uninterrupted: %s %q, %d, %d",
			res.Verdict, res.Reason, res.States, res.Transitions, want.Verdict, want.Reason, want.States, want.Transitions)
	}
}

// TestPosition: the share of the tree left of the path, with equal sibling
// subtrees: the root's first of two children is done and its second is on
// the path; in that child, one of three actions is done and nothing is on
// the path below: 1/2 + 1/2 · 1/3.
func TestPosition(t *testing.T) {
	stack := []frame{{acts: make([]Action, 2), next: 2}, {acts: make([]Action, 3), next: 1}}
	if got, want := position(stack), 0.5+0.5/3; got != want {
		t.Fatalf("position %v, want %v", got, want)
	}
	if got := position(stack[:1]); got != 1 {
		t.Fatalf("every action of the only frame tried: position %v, want 1", got)
	}
}

// TestCheckpointLockedAndInterrupted: a checkpoint another run holds is
// refused (ErrConfig) and left alone; a run whose context is cancelled stops
// at once, saves, and the run that continues it ends as the uninterrupted
// one.
func TestCheckpointLockedAndInterrupted(t *testing.T) {
	prop, err := property.Global(3, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	machines := func() []cs.Machine { // Raymond n = 3, k = 2: 7 310 states
		ms, err := raymond.New(cs.Params{N: 3, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	cfg := func(ck string) Config {
		return Config{Machines: machines(), Property: prop, Budget: 2, Search: DepthFirst,
			DiskDir: t.TempDir(), Checkpoint: ck, CheckpointID: "test"}
	}
	ck := t.TempDir()
	unlock, held, err := store.Lock(ck)
	if err != nil || held {
		t.Fatal(held, err)
	}
	if _, err := Run(t.Context(), cfg(ck)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "another run is using it") {
		t.Fatalf("while locked: %v", err)
	}
	unlock()
	want, err := Run(t.Context(), Config{Machines: machines(), Property: prop, Budget: 2, Search: DepthFirst})
	if err != nil {
		t.Fatal(err)
	}
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := Run(stopped, cfg(ck))
	if err != nil || res.Verdict != Incomplete || !strings.HasPrefix(res.Reason, "interrupted after") || !strings.Contains(res.Reason, "progress saved") {
		t.Fatalf("interrupted: %v %s %q", err, res.Verdict, res.Reason)
	}
	if res, err = Run(t.Context(), cfg(ck)); err != nil || res.Verdict != want.Verdict || res.States != want.States || res.Transitions != want.Transitions || res.Resumed == nil {
		t.Fatalf("continued: %v %s %d states %d transitions (resumed %v); uninterrupted: %s %d %d", err, res.Verdict, res.States, res.Transitions, res.Resumed, want.Verdict, want.States, want.Transitions)
	}
}
