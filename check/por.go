package check

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/cs"
)

// Partial-order reduction (Config.PartialOrder; docs/checker.md, "Partial-order
// reduction", has the argument). In a state s, instead of every enabled
// action, depth-first search may explore only the enabled actions of a set
// P of processes (the ample set), when:
//
//   - P is closed: for every process i in P and every live j that may send
//     to i (every j, or for a cs.Local machine its neighbours) with an empty
//     channel j -> i, j is in P (only j's own actions can enable a new
//     delivery at i; on a non-empty FIFO channel another send appends behind
//     the head and the delivery action stays the same; a cs.Local machine's
//     send outside its neighbours is an error, which ends the path);
//   - no crash can happen before an action of P: no crash is left, or some
//     live process of P has an initialization phase (cs.Initializing) not
//     over yet, which only its own actions can end, and crashes wait for it;
//   - channels are FIFO (with unordered channels any live sender's new
//     message is a new delivery, so every candidate set is everything);
//   - every action of the set is invisible: it makes no env.Changed call
//     (the only visible propositions are the processes' InCS states);
//   - no action of the set leads to a state on the depth-first stack (the
//     cycle proviso).
//
// Then the set is persistent: on every path from s that avoids it, every
// action belongs to a process outside P (a crash cannot happen, no action
// of P becomes enabled), so it commutes with the set's actions. Persistent
// sets preserve every reachable terminal state (every budget stop, so every
// deadlock), and with invisibility and the cycle proviso every reachable
// bounds, convention or error violation.

// ample returns the actions to explore in s: acts (every enabled action, in
// the fixed order) or the smallest ample subset found, in the same order.
// onStack reports whether a fingerprint is a state on the current path.
// A machine's declaration that the reduction relies on and that s
// contradicts is returned as a problem (an error violation at s).
func (w *worker) ample(s *gstate, acts []Action, onStack func(fingerprint) bool) ([]Action, *problem) {
	x := w.e.x
	if x.unordered || len(acts) < 2 {
		return acts, nil
	}
	if a, prob, ok := w.trustFirst(s, acts, onStack); prob != nil {
		return acts, prob
	} else if ok {
		return []Action{a}, nil
	}
	var owners uint64 // processes with an enabled action
	for _, a := range acts {
		// With a crash enabled, no owner-based ample set is smaller than
		// everything for a machine that takes detector input: a crash of
		// any j outside P would enable Suspect(i, j) at the processes of P
		// that do not suspect it, so P would have to contain every such j
		// (docs/checker.md, "Crashes in the ample set").
		if a.Kind == Crash {
			return acts, nil
		}
		owners |= bit(a.Node)
	}
	var tried []uint64
	var cands []candidateSet
	for i := cs.ID(1); int(i) <= x.n; i++ {
		if owners&bit(i) == 0 {
			continue
		}
		p := x.closure(s, i)
		if slices.Contains(tried, p) {
			continue
		}
		tried = append(tried, p)
		if s.crashesLeft > 0 && !x.holdsCrashes(s, p) {
			continue
		}
		if len(x.ideals) > 0 && x.wantsIdeal(s, p) {
			continue
		}
		k := 0
		for _, a := range acts {
			if p&bit(a.Node) != 0 {
				k++
			}
		}
		if k < len(acts) {
			cands = append(cands, candidateSet{procs: p, size: k})
		}
	}
	slices.SortStableFunc(cands, func(a, b candidateSet) int { return a.size - b.size })
	for _, c := range cands {
		sub := make([]Action, 0, c.size)
		ok := true
		for _, a := range acts {
			if c.procs&bit(a.Node) == 0 {
				continue
			}
			if !w.invisibleAndOffStack(s, a, onStack) {
				ok = false
				break
			}
			sub = append(sub, a)
		}
		if ok {
			return sub, nil
		}
	}
	return acts, nil
}

// trustFirst returns an enabled Trust(i, j) that is a persistent set on its
// own (docs/checker.md, "Trust first"), when the detector is trusting and
// P_i's machine declares cs.TrustGated. With T, a live j that i suspects is
// one i has never trusted, so by the declaration P_j cannot complete its
// initialization before the Trust, and crashes wait for it: on every path
// that avoids the Trust no crash happens, no Suspect(i, j) is enabled (i
// suspects j already), the other processes' actions leave P_i's machine
// alone and only append to its channels, and P_i's own actions commute with
// the Trust. The declaration is checked where the search can: no crash may
// be enabled while such a Trust is, and both orders of the Trust and each
// other action of P_i enabled in s must reach the same state; a failure is
// returned as an error problem.
func (w *worker) trustFirst(s *gstate, acts []Action, onStack func(fingerprint) bool) (Action, *problem, bool) {
	x := w.e.x
	if _, ok := x.detector.(Trusting); !ok || len(x.ideals) > 0 {
		return Action{}, nil, false
	}
	for _, a := range acts {
		if a.Kind != Trust {
			continue
		}
		if _, ok := x.tab.machine(s.procs[a.Node-1].m).m.(cs.TrustGated); !ok {
			continue
		}
		if slices.ContainsFunc(acts, func(b Action) bool { return b.Kind == Crash }) {
			return a, &problem{KindError, fmt.Sprintf("P%d's machine declares cs.TrustGated, but a crash is enabled while its detector still suspects P%d, which it has never trusted: P%d completed its initialization first", a.Node, a.Who, a.Who)}, false
		}
		if !w.invisibleAndOffStack(s, a, onStack) {
			return Action{}, nil, false
		}
		for _, b := range acts {
			if b.Node == a.Node && b != a && !w.commute(s, a, b) {
				return a, &problem{KindError, fmt.Sprintf("P%d's machine declares cs.TrustGated, but its detector's trust of P%d and %v do not commute: the two orders reach different states", a.Node, a.Who, b)}, false
			}
		}
		return a, nil, true
	}
	return Action{}, nil, false
}

// commute reports whether a then b and b then a, both applied to s, reach
// the same state, or both fail a property on the way.
func (w *worker) commute(s *gstate, a, b Action) bool {
	st := w.st
	both := func(first, second Action) (fingerprint, bool) {
		if st.apply(s, first) != nil {
			return fingerprint{}, false
		}
		mid := st.materialize()
		if st.apply(mid, second) != nil {
			return fingerprint{}, false
		}
		return fingerprintOf(&st.next), true
	}
	ab, okAB := both(a, b)
	ba, okBA := both(b, a)
	return okAB == okBA && ab == ba
}

// candidateSet is a closed set of processes and how many enabled actions
// they have.
type candidateSet struct {
	procs uint64
	size  int
}

// closure returns the smallest set of processes that contains i and, with
// each of its processes, every live process that may send to it on a
// channel that is empty.
func (x *model) closure(s *gstate, i cs.ID) uint64 {
	p := bit(i)
	work := []cs.ID{i}
	for len(work) > 0 {
		to := work[len(work)-1]
		work = work[:len(work)-1]
		for j := cs.ID(1); int(j) <= x.n; j++ {
			if p&bit(j) != 0 || x.sendsTo[j-1]&bit(to) == 0 || s.isCrashed(j) || x.channelBusy(s, j, to) {
				continue
			}
			p |= bit(j)
			work = append(work, j)
		}
	}
	return p
}

// channelBusy reports whether a message is in transit from -> to.
func (x *model) channelBusy(s *gstate, from, to cs.ID) bool {
	l := x.link(from, to)
	for _, e := range s.flight {
		if e.link == l {
			return true
		}
	}
	return false
}

// holdsCrashes reports whether set p contains a live process whose
// initialization is not over: no crash is enabled before it acts.
func (x *model) holdsCrashes(s *gstate, p uint64) bool {
	for i, pr := range s.procs {
		id := cs.ID(i + 1)
		if p&bit(id) == 0 || s.isCrashed(id) {
			continue
		}
		if im, ok := x.tab.machine(pr.m).m.(cs.Initializing); ok && !im.Initialized() {
			return true
		}
	}
	return false
}

// invisibleAndOffStack applies a to s and reports whether it changed no
// process's CS state (no env.Changed call, no failure) and led to a state
// not on the current path.
func (w *worker) invisibleAndOffStack(s *gstate, a Action, onStack func(fingerprint) bool) bool {
	st := w.st
	if p := st.apply(s, a); p != nil || st.visible {
		return false
	}
	return !onStack(fingerprintOf(&st.next))
}
