package check

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/cs"
)

// Partial-order reduction (Config.PartialOrder;
// docs/design/partial-order-reduction.md has the argument). In a state s,
// instead of every enabled action, depth-first search may explore only the
// enabled actions of a set P of processes (the ample set), when:
//
//   - P is closed: for every process i in P and every live j that may send
//     to i (every j, or for a cs.Local machine its neighbors) with an empty
//     channel j -> i, j is in P (only j's own actions can enable a new
//     delivery at i; on a non-empty FIFO channel another send appends behind
//     the head and the delivery action stays the same; a cs.Local machine's
//     send outside its neighbors is an error, which ends the path);
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
//
// The other ample set is a cycle of first trusts under a trusting detector
// (trustCycle, for machines that declare cs.TrustGated): a set of actions
// of several processes, none of which can initialize, hence none crash,
// before the set is taken.

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
	if set, prob := w.trustCycle(s, acts, onStack); prob != nil {
		return acts, prob
	} else if set != nil {
		return set, nil
	}
	var owners uint64 // processes with an enabled action
	for _, a := range acts {
		// With a crash enabled, no owner-based ample set is smaller than
		// everything for a machine that takes detector input: a crash of
		// any j outside P would enable Suspect(i, j) at the processes of P
		// that do not suspect it, so P would have to contain every such j
		// (docs/design/partial-order-reduction.md, "Crashes in the ample set").
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

// trustCycle returns the Trust actions of a cycle of first trusts, a persistent
// set (docs/design/partial-order-reduction.md, "Trust first"), or nil: the
// detector is trusting, and x_1 -> x_2 -> ... -> x_m -> x_1 is a shortest cycle
// of enabled Trust(x_l, x_l+1) whose processes' machines declare cs.TrustGated.
// With T, x_l suspects x_l+1 because it has never trusted it. On a path that
// avoids the cycle's trusts, x_l-1 keeps suspecting x_l, so by the declaration
// x_l stays uninitialized: no crash happens (crashes wait for every live
// process's initialization), and x_l's own actions commute with Trust(x_l,
// x_l+1), again by the declaration; the other processes' actions leave x_l's
// machine alone, and a delivery from the head of a channel out of x_l commutes
// with the Trust's send onto its tail. The declaration is checked where the
// search can: every x_l must be uninitialized, and both orders of its Trust and
// of each other action of x_l enabled in s must reach the same state; a failure
// is returned as an error problem.
func (w *worker) trustCycle(s *gstate, acts []Action, onStack func(fingerprint) bool) ([]Action, *problem) {
	x := w.e.x
	if _, ok := x.detector.(Trusting); !ok || len(x.ideals) > 0 || !slices.ContainsFunc(acts, func(a Action) bool { return a.Kind == Trust }) {
		return nil, nil
	}
	succ := make([]uint64, x.n) // succ[i-1]: the j of the enabled Trust(i, j) of declaring machines
	for _, a := range acts {
		if a.Kind == Trust {
			if _, ok := x.tab.machine(s.procs[a.Node-1].m).m.(cs.TrustGated); ok {
				succ[a.Node-1] |= bit(a.Who)
			}
		}
	}
	cycle := shortestCycle(succ)
	if cycle == nil {
		return nil, nil
	}
	var set []Action
	for l, i := range cycle {
		j := cycle[(l+1)%len(cycle)]
		if x.tab.machine(s.procs[i-1].m).m.(cs.Initializing).Initialized() {
			prev := cycle[(l+len(cycle)-1)%len(cycle)]
			return nil, &problem{KindError, fmt.Sprintf("P%d's machine declares cs.TrustGated, but P%d has completed its initialization while P%d's detector still suspects it (P%d has never trusted P%d)", i, i, prev, prev, i)}
		}
		a := Action{Kind: Trust, Node: i, Who: j}
		if !w.invisibleAndOffStack(s, a, onStack) {
			return nil, nil
		}
		for _, b := range acts {
			if b.Node == i && b != a && !w.commute(s, a, b) {
				return nil, &problem{KindError, fmt.Sprintf("P%d's machine declares cs.TrustGated, but its detector's trust of P%d and %v do not commute: the two orders reach different states", i, j, b)}
			}
		}
		set = append(set, a)
	}
	return slices.DeleteFunc(slices.Clone(acts), func(a Action) bool { return !slices.Contains(set, a) }), nil
}

// shortestCycle returns a shortest cycle x_1, ..., x_m (x_1 the smallest
// id among the shortest cycles' starts, m >= 2) of the directed graph in
// which i -> j when succ[i-1] has bit(j), or nil if it has none.
func shortestCycle(succ []uint64) []cs.ID {
	n := len(succ)
	var best []cs.ID
	for start := cs.ID(1); int(start) <= n && len(best) != 2; start++ {
		parent := make([]cs.ID, n+1)
		queue := []cs.ID{start}
	search:
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for v := cs.ID(1); int(v) <= n; v++ {
				switch {
				case succ[u-1]&bit(v) == 0:
				case v == start:
					var c []cs.ID
					for p := u; p != start; p = parent[p] {
						c = append(c, p)
					}
					c = append(c, start)
					slices.Reverse(c)
					if best == nil || len(c) < len(best) {
						best = c
					}
					break search
				case parent[v] == 0:
					parent[v] = u
					queue = append(queue, v)
				}
			}
		}
	}
	return best
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
