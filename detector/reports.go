package detector

import "github.com/critsec/critsec/cs"

// Reports records which crashes each module has reported, from its
// outputs in order (docs/ft-global-lk-cs.md, "The model"): module i
// reports j's crash when it outputs a suspicion of j that is not one of a
// trusting detector's initial suspicions. Under T that is a suspicion
// after a trust of the pair (a T module starts by suspecting everybody,
// which tells nothing); under P and S every suspicion counts, as in the
// model checker, where T's initial suspicions are part of the initial
// state and every suspicion is an action. Reports are final. The
// simulator feeds it its detector plan's outputs and the trace checker a
// trace's suspect and trust events; memory follows the outputs fed.
type Reports struct {
	trusting bool
	trusted  map[[2]cs.ID]bool
	reported map[[2]cs.ID]bool
}

// NewReports returns the reports of modules of class c, none yet.
func NewReports(c Class) *Reports {
	return &Reports{trusting: c == T, trusted: map[[2]cs.ID]bool{}, reported: map[[2]cs.ID]bool{}}
}

// Suspect records that module i began to suspect j.
func (r *Reports) Suspect(i, j cs.ID) {
	if !r.trusting || r.trusted[[2]cs.ID{i, j}] {
		r.reported[[2]cs.ID{i, j}] = true
	}
}

// Trust records that module i stopped suspecting j.
func (r *Reports) Trust(i, j cs.ID) {
	if r.trusting {
		r.trusted[[2]cs.ID{i, j}] = true
	}
}

// Reported reports whether module i has reported j's crash.
func (r *Reports) Reported(i, j cs.ID) bool { return r.reported[[2]cs.ID{i, j}] }
