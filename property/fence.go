package property

import (
	"fmt"
	"slices"
	"strings"

	"github.com/critsec/critsec/cs"
)

// The fencing properties (docs/fencing.md), beside the bounds, for the
// machines that give every entry a token (cs.Fencing). A holder is a
// process InCS or a process that crashed while InCS: in a deployment a
// process that only seemed crashed (paused, or cut off) and still acts as
// InCS, which is what a fencing token is for. A crashed holder stays a
// holder for ever.
//
//   - Seq (k = 1 only): every entry's Seq is at least the Seq of every
//     entry before it, and exceeds it when that entry was another
//     process's (a process that enters again with no request of another
//     process in between may keep its stamp: SeqBroken).
//   - Named: at every moment, at most k holders are named by no holder's
//     token (cs.Fence.Crashed).

// FenceFailure is a broken fencing property.
type FenceFailure struct {
	// For Seq: process ID entered with Seq, not above Max, the Seq of an
	// earlier entry of process Prev.
	ID       cs.ID
	Seq, Max uint64
	Prev     cs.ID
	// For Named: the holders named by no holder's token (Unnamed, in id
	// order; Crashed marks those that crashed InCS), more than K.
	Unnamed []cs.ID
	Crashed []bool
	K       int
}

// Error is the one-line report: "P2 entered with fence seq 4, below seq
// 7 of an earlier entry of P1", "P2 entered with fence seq 7, equal to
// seq 7 of an earlier entry of P1" or "2 holders named by no holder's
// fence, more than k = 1: P1 (crashed InCS), P3".
func (f *FenceFailure) Error() string {
	if f.Unnamed == nil {
		how := "below"
		if f.Seq == f.Max {
			how = "equal to"
		}
		return fmt.Sprintf("P%d entered with fence seq %d, %s seq %d of an earlier entry of P%d", f.ID, f.Seq, how, f.Max, f.Prev)
	}
	var sb strings.Builder
	for i, id := range f.Unnamed {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "P%d", id)
		if f.Crashed[i] {
			sb.WriteString(" (crashed InCS)")
		}
	}
	return fmt.Sprintf("%d holders named by no holder's fence, more than k = %d: %s", len(f.Unnamed), f.K, sb.String())
}

// Fences follows the holders and their tokens through a run, event by
// event, and checks both fencing properties: the simulator and the trace
// checker use it (the model checker evaluates them on each state). Its
// memory follows the holders and the ids their tokens name, not n.
type Fences struct {
	k int
	// last is the largest Seq of an entry so far, and lastID its process
	// (0: none yet).
	last   uint64
	lastID cs.ID
	// holders maps each holder to the ids its token names; crashed marks
	// the holders that crashed InCS.
	holders map[cs.ID][]cs.ID
	crashed map[cs.ID]bool
	// named[id] counts the holders whose token names id.
	named map[cs.ID]int32
}

// NewFences returns a tracker of the fencing properties of k-mutual
// exclusion, with no holder yet.
func NewFences(k int) *Fences {
	return &Fences{k: k, holders: map[cs.ID][]cs.ID{}, crashed: map[cs.ID]bool{}, named: map[cs.ID]int32{}}
}

// Enter records that process id became InCS with a token of Seq seq
// (hasSeq false: a holder whose token is not known, such as one InCS
// before a trace's first token) naming the processes names, and returns
// the first fencing property that broke, or nil. t keeps names.
func (t *Fences) Enter(id cs.ID, seq uint64, hasSeq bool, names []cs.ID) *FenceFailure {
	if t.k == 1 && hasSeq {
		if SeqBroken(seq, id, t.last, t.lastID) {
			return &FenceFailure{ID: id, Seq: seq, Max: t.last, Prev: t.lastID}
		}
		t.last, t.lastID = seq, id
	}
	t.holders[id] = names
	for _, j := range names {
		t.named[j]++
	}
	return t.check()
}

// SeqBroken reports whether an entry of process id with Seq seq breaks
// the Seq property after the largest Seq so far, last, of an entry of
// process lastID (0: no entry yet): seq is below last, or equal to it and
// not id's own. The largest Seq is the latest entry's while the property
// holds, so comparing with it compares with every earlier entry.
func SeqBroken(seq uint64, id cs.ID, last uint64, lastID cs.ID) bool {
	return lastID != 0 && (seq < last || seq == last && id != lastID)
}

// Exit records that process id left the CS and returns the first fencing
// property that broke (a holder its token named may be named by no other),
// or nil.
func (t *Fences) Exit(id cs.ID) *FenceFailure {
	for _, j := range t.holders[id] {
		if t.named[j]--; t.named[j] == 0 {
			delete(t.named, j)
		}
	}
	delete(t.holders, id)
	return t.check()
}

// Crash records that process id crashed: if it was a holder, it stays one.
func (t *Fences) Crash(id cs.ID) {
	if _, ok := t.holders[id]; ok {
		t.crashed[id] = true
	}
}

// check returns the Named failure, or nil. It costs the number of
// holders.
func (t *Fences) check() *FenceFailure {
	if len(t.holders) <= t.k {
		return nil
	}
	var f FenceFailure
	for id := range t.holders {
		if t.named[id] == 0 {
			f.Unnamed = append(f.Unnamed, id)
		}
	}
	if len(f.Unnamed) <= t.k {
		return nil
	}
	return NamedFailure(t.k, f.Unnamed, func(id cs.ID) bool { return t.crashed[id] })
}

// NamedFailure returns the failure of the Named property for the holders
// unnamed (any order), more than k; crashed reports which crashed InCS.
func NamedFailure(k int, unnamed []cs.ID, crashed func(cs.ID) bool) *FenceFailure {
	ids := slices.Sorted(slices.Values(unnamed))
	f := &FenceFailure{Unnamed: ids, Crashed: make([]bool, len(ids)), K: k}
	for i, id := range ids {
		f.Crashed[i] = crashed(id)
	}
	return f
}
