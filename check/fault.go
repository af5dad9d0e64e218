package check

import "github.com/critsec/critsec/cs"

// Detector is a failure-detector class (Chandra and Toueg 1996): it decides
// which detector outputs may happen in a state. The checker explores every
// output it allows as one more action, delivered to machines that
// implement cs.Detecting. The fault-tolerance issue adds classes; Perfect is
// the first.
type Detector interface {
	// Name is the class's name in reports ("P", "<>P", ...).
	Name() string
	// Outputs appends to dst the Suspect and Trust actions enabled in v, in
	// a fixed order (a function of v only).
	Outputs(v View, dst []Action) []Action
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

// Perfect is the perfect failure detector P (Chandra and Toueg 1996): strong
// accuracy (no process is suspected before it crashes) and strong
// completeness (every crashed process is eventually suspected by every
// correct process). In the checker: once j has crashed, every live
// detecting process i may start suspecting j, at any later step and in any
// order; it never trusts j again. Completeness ("eventually") is what the
// deadlock analysis's fair continuation assumes.
type Perfect struct{}

// Name returns "P".
func (Perfect) Name() string { return "P" }

// Outputs enables Suspect(i, j) for every live detecting i and crashed j
// that i does not suspect yet.
func (Perfect) Outputs(v View, dst []Action) []Action {
	for i := cs.ID(1); int(i) <= v.N(); i++ {
		if v.Crashed(i) || !v.Detecting(i) {
			continue
		}
		for j := cs.ID(1); int(j) <= v.N(); j++ {
			if j != i && v.Crashed(j) && !v.Suspects(i, j) {
				dst = append(dst, Action{Kind: Suspect, Node: i, Who: j})
			}
		}
	}
	return dst
}
