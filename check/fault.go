package check

import (
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
)

// Detector is a failure-detector class (Chandra and Toueg 1996): it decides
// which detector outputs may happen in a state. The checker explores every
// output it allows as one more action, delivered to machines that
// implement cs.Detecting. Perfect (P), Trusting (T) and Strong (S) follow
// package detector's definitions; For maps a detector.Class to one.
type Detector interface {
	// Name is the class's name in reports ("P", "T", "S").
	Name() string
	// InitiallySuspects reports whether every module starts by suspecting
	// every other process (its first output, given to the machines before
	// anything else happens).
	InitiallySuspects() bool
	// Outputs appends to dst the Suspect and Trust actions enabled in v, in
	// a fixed order (a function of v only).
	Outputs(v View, dst []Action) []Action
	// MayCrash reports whether process id may crash in v: false for a
	// process the class's accuracy needs correct (S's witness).
	MayCrash(v View, id cs.ID) bool
}

// View is the part of a global state a Detector may look at.
type View struct {
	s *gstate
	x *model
}

// N is the number of processes.
func (v View) N() int { return v.x.n }

// Crashed reports whether process id has crashed.
func (v View) Crashed(id cs.ID) bool { return v.s.isCrashed(id) }

// Detecting reports whether process id takes detector input.
func (v View) Detecting(id cs.ID) bool { return v.x.detecting[id-1] }

// Suspects reports whether process i's detector currently suspects j.
func (v View) Suspects(i, j cs.ID) bool {
	return v.s.suspect != nil && v.s.suspect[i-1]&bit(j) != 0
}

// classOutputs appends the outputs class c allows in v (detector.Allows):
// for every live i and every other j, a Suspect, then a Trust. Every
// process has a detector module; a machine that takes no detector input
// (not cs.Detecting) ignores its outputs, which still count in the state
// and appear in paths and traces, so a counterexample trace shows that no
// detector output was left.
func classOutputs(c detector.Class, witness cs.ID, v View, dst []Action) []Action {
	for i := cs.ID(1); int(i) <= v.N(); i++ {
		if v.Crashed(i) {
			continue
		}
		for j := cs.ID(1); int(j) <= v.N(); j++ {
			if j == i {
				continue
			}
			sus, crashed := v.Suspects(i, j), v.Crashed(j)
			if c.Allows(false, sus, crashed, j == witness) {
				dst = append(dst, Action{Kind: Suspect, Node: i, Who: j})
			}
			if c.Allows(true, sus, crashed, j == witness) {
				dst = append(dst, Action{Kind: Trust, Node: i, Who: j})
			}
		}
	}
	return dst
}

// Perfect is the perfect failure detector P (Chandra and Toueg 1996): strong
// accuracy (no process is suspected before it crashes) and strong
// completeness (every crashed process is eventually suspected by every
// correct process). In the checker: once j has crashed, every live
// process i may start suspecting j, at any later step and in any
// order; it never trusts j again. Completeness ("eventually") is what the
// deadlock analysis's fair continuation assumes.
type Perfect struct{}

// Name returns "P".
func (Perfect) Name() string { return "P" }

// InitiallySuspects returns false: P suspects nobody before a crash.
func (Perfect) InitiallySuspects() bool { return false }

// Outputs enables Suspect(i, j) for every live i and crashed j that i does
// not suspect yet.
func (Perfect) Outputs(v View, dst []Action) []Action { return classOutputs(detector.P, 0, v, dst) }

// MayCrash returns true.
func (Perfect) MayCrash(View, cs.ID) bool { return true }

// Trusting is the trusting failure detector T (Delporte-Gallet et al. 2005;
// section 2 of the fault-tolerant k-mutex paper). Every module starts
// suspecting every other process; it may trust a suspected live process at
// any step (a suspected live process has never been trusted), and suspect
// a process again only once it has crashed (trusting accuracy), for ever.
// A process that crashes before i trusted it stays suspected by i.
type Trusting struct{}

// Name returns "T".
func (Trusting) Name() string { return "T" }

// InitiallySuspects returns true: nobody is trusted before the first
// output.
func (Trusting) InitiallySuspects() bool { return true }

// Outputs enables Trust(i, j) for a suspected live j and Suspect(i, j) for
// a trusted crashed j.
func (Trusting) Outputs(v View, dst []Action) []Action { return classOutputs(detector.T, 0, v, dst) }

// MayCrash returns true.
func (Trusting) MayCrash(View, cs.ID) bool { return true }

// Strong is the strong failure detector S (Chandra and Toueg 1996): strong
// completeness and weak accuracy, witnessed by process Witness (P1 when
// zero), which never crashes and is never suspected. Every other process
// may be suspected and trusted again at any step while it is live, and is
// suspected for ever once it has crashed.
type Strong struct{ Witness cs.ID }

// Name returns "S".
func (Strong) Name() string { return "S" }

// InitiallySuspects returns false.
func (Strong) InitiallySuspects() bool { return false }

func (d Strong) witness() cs.ID { return max(d.Witness, 1) }

// Outputs enables Suspect(i, j) for any j but the witness that i does not
// suspect, and Trust(i, j) for a suspected live j.
func (d Strong) Outputs(v View, dst []Action) []Action {
	return classOutputs(detector.S, d.witness(), v, dst)
}

// MayCrash is false for the witness.
func (d Strong) MayCrash(_ View, id cs.ID) bool { return id != d.witness() }

// For returns the checker's detector of class c: Perfect, Trusting or
// Strong (witness P1).
func For(c detector.Class) Detector {
	switch c {
	case detector.T:
		return Trusting{}
	case detector.S:
		return Strong{}
	}
	return Perfect{}
}
