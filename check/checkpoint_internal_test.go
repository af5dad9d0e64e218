package check

import (
	"strings"
	"testing"

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
		c := Config{Machines: []cs.Machine{&stuck{idle: idle{self: 1}}, &idle{self: 2}}, Property: prop, Budget: 2, DepthFirst: true, DeadlockStates: 1, MaxStates: maxStates}
		if ck != "" {
			c.DiskDir, c.Checkpoint = t.TempDir(), ck
		}
		return c
	}
	want, err := Run(cfg(0, ""))
	if err != nil || want.Verdict != Incomplete || !strings.HasPrefix(want.Reason, "could not decide") {
		t.Fatalf("uninterrupted: %v %s %q", err, want.Verdict, want.Reason)
	}
	ck := t.TempDir()
	var res Result
	for limit := 2; limit < 10; limit++ {
		if res, err = Run(cfg(limit, ck)); err != nil {
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
