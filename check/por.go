package check

import (
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
func (w *worker) ample(s *gstate, acts []Action, onStack func(fingerprint) bool) []Action {
	x := w.e.x
	if x.unordered || len(acts) < 2 {
		return acts
	}
	var owners uint64 // processes with an enabled action
	for _, a := range acts {
		// With a crash enabled, no owner-based ample set is smaller than
		// everything for a machine that takes detector input: a crash of
		// any j outside P would enable Suspect(i, j) at the processes of P
		// that do not suspect it, so P would have to contain every such j
		// (docs/checker.md, "Crashes in the ample set").
		if a.Kind == Crash {
			return acts
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
			return sub
		}
	}
	return acts
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
