// Package tokenk holds what the token-based K-mutex baselines of
// Bulgannawar and Vaidya's study (ICDCS 1995, section 4), alg/srimanireddy
// and alg/makki, share: they solve k-mutual exclusion (no lower bound),
// start with their tokens idle, so with no process InCS, and a site is in
// one phase of its request cycle at a time.
package tokenk

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// Validate checks p for algorithm name: 1 <= k <= n, l = 0 and no process
// InCS initially; start says where the tokens are instead, for the error.
func Validate(p cs.Params, name, start string) error {
	if err := p.CheckKExclusion(name, ""); err != nil {
		return err
	}
	if len(p.Initial) > 0 {
		return fmt.Errorf("initial: %s starts with every process OutCS (%s); give no initial processes InCS", name, start)
	}
	return nil
}

// Phase is a site's place in its request cycle.
type Phase uint8

const (
	// Idle: OutCS with no request pending.
	Idle Phase = iota
	// Waiting: OutCS, its Entry pending.
	Waiting
	// InCS: in the critical section.
	InCS
)

// State is the CS state of a site in phase p.
func (p Phase) State() cs.State {
	if p == InCS {
		return cs.InCS
	}
	return cs.OutCS
}

// Pending is the request pending in phase p: Entry while Waiting.
func (p Phase) Pending() cs.Op {
	if p == Waiting {
		return cs.Entry
	}
	return cs.None
}
