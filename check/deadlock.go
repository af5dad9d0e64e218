package check

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/critsec/critsec/cs"
)

// A terminal state (nothing enabled) in which some live process still has a
// pending request is a "budget stop": either the algorithm is deadlocked, or the
// request waits for calls that the budget forbids (in mutual inclusion a process
// waiting to exit needs another one to enter). analyzeStop tells them apart by
// looking at continuations in which every process may make any number of further
// calls (the budget refilled to unlimited), as the papers' processes do forever,
// without further crashes. A pending request is deadlocked iff no such
// continuation completes it (docs/design/deadlock-under-a-budget.md).
//
//  1. A fair continuation: rounds in which every enabled action (delivering
//     the oldest message of each channel, every detector output, every idle
//     process's next call) is taken in the checker's fixed order. If all the
//     pending requests complete, the stop is the budget's doing: proven,
//     since the continuation exists. If it reaches a state with nothing
//     enabled, every live process waits in a request with no message in
//     transit: a global deadlock, reachable, so proven too.
//  2. Otherwise (the fair continuation ran maxFairRounds rounds without
//     deciding), random continuations: randomWalks walks of at most
//     randomWalkSteps steps, each step an action drawn from those enabled
//     (a delivery three times in four when there is one), seeded by the
//     stop's fingerprint so that a run is reproducible. A walk that
//     completes a request proves it completable, as the fair continuation
//     does; a property failing on the way is a violation beyond the budget.
//     The fair continuation has every idle process call in every round,
//     and a request that needs the others to stay still can lose to them
//     forever there; a walk lets them rest.
//  3. Otherwise, for each request still undecided, an exhaustive
//     breadth-first search of the unlimited continuations for one that
//     completes it, up to Config.DeadlockStates states. Found: not a
//     deadlock. Search space exhausted: no continuation completes it, a
//     deadlock. Limit hit: undecided, and the run ends Incomplete.

// With an exit guard (property.CrashBounds), two things change. A pending
// exit in a stop with at most l live processes is a required wait, not a
// deadlock (docs/ft-global-lk-cs.md, I3: no exit may complete then), so it
// is not among the requests to complete; the live count cannot change in
// a continuation, which has no crash. And a stop with a deficit (fewer
// than min(l, live) live processes InCS) adds one more goal, recovery (R):
// some continuation reaches a state without deficit. The three steps
// decide it as they decide a request.

// goals are what the continuations of a budget stop must reach: the
// completion of each request in reqs and, with recover, a state without
// deficit.
type goals struct {
	reqs    uint64
	recover bool
}

// maxFairRounds bounds the fair continuation of analyzeStop; randomWalks
// and randomWalkSteps its random continuations.
const (
	maxFairRounds   = 64
	randomWalks     = 32
	randomWalkSteps = 4096
)

type stopOutcome uint8

const (
	completable stopOutcome = iota
	deadlocked
	violatedLater // a property failed in the fair continuation
	undecided
)

type stopVerdict struct {
	outcome stopOutcome
	prob    problem
	ext     []Action
}

// analyzeStop decides the budget stop s (a terminal state with a pending
// request); see above.
func (w *worker) analyzeStop(s *gstate) stopVerdict {
	want := w.e.x.stopGoals(s)
	done, v := w.fairContinuation(s, want)
	if v != nil {
		return *v
	}
	if done == want {
		return stopVerdict{outcome: completable}
	}
	walked, v := w.randomCompletions(s, goals{reqs: want.reqs &^ done.reqs, recover: want.recover && !done.recover})
	if v != nil {
		return *v
	}
	done.reqs |= walked.reqs
	done.recover = done.recover || walked.recover
	for i, p := range s.procs {
		id := cs.ID(i + 1)
		if want.reqs&bit(id) == 0 || done.reqs&bit(id) != 0 {
			continue
		}
		found, explored := w.searchGoal(s, func(c *gstate) bool { return c.procs[id-1].pending == cs.None })
		switch {
		case found:
		case explored < w.e.cfg.DeadlockStates:
			return stopVerdict{outcome: deadlocked, prob: problem{KindDeadlock, fmt.Sprintf(
				"P%d's %s request can never complete: none of the %d states reachable from here with unlimited requests completes it",
				id, p.pending, explored)}}
		default:
			return stopVerdict{outcome: undecided, prob: problem{KindDeadlock, fmt.Sprintf(
				"could not decide whether P%d's pending %s is deadlocked: the re-exploration with refilled budgets hit its limit of %d states (raise it with --deadlock-states)",
				id, p.pending, w.e.cfg.DeadlockStates)}}
		}
	}
	if want.recover && !done.recover {
		g := w.e.x.guard
		found, explored := w.searchGoal(s, func(c *gstate) bool { return g.Deficit(crashView{stateView{c}}) == 0 })
		switch {
		case found:
		case explored < w.e.cfg.DeadlockStates:
			return stopVerdict{outcome: deadlocked, prob: problem{KindDeadlock, fmt.Sprintf(
				"the deficit of %d live processes InCS below min(l, live) can never close: none of the %d states reachable from here with unlimited requests and no crash has min(l, live) live processes InCS",
				g.Deficit(crashView{stateView{s}}), explored)}}
		default:
			return stopVerdict{outcome: undecided, prob: problem{KindDeadlock, fmt.Sprintf(
				"could not decide whether the deficit of %d live processes InCS closes: the re-exploration with refilled budgets hit its limit of %d states (raise it with --deadlock-states)",
				g.Deficit(crashView{stateView{s}}), w.e.cfg.DeadlockStates)}}
		}
	}
	return stopVerdict{outcome: completable}
}

// stopGoals returns the goals of the budget stop s: every pending request
// of a live process but, with an exit guard, the exits that must wait
// (property.CrashBounds.ExitsBlocked), and recovery when s has a deficit.
func (x *model) stopGoals(s *gstate) goals {
	want := goals{reqs: s.pendingMask()}
	g := x.guard
	if g == nil {
		return want
	}
	v := crashView{stateView{s}}
	if g.ExitsBlocked(v) {
		for i, p := range s.procs {
			if p.pending == cs.Exit {
				want.reqs &^= bit(cs.ID(i + 1))
			}
		}
	}
	want.recover = g.Deficit(v) > 0
	return want
}

// fairContinuation is step 1 of analyzeStop: the fair continuation of the
// budget stop s. It returns the requests in pending it completed, or the
// verdict when it decided the stop otherwise (a global deadlock, a
// property failing).
func (w *worker) fairContinuation(s *gstate, want goals) (goals, *stopVerdict) {
	cur := refill(s)
	st := w.st
	var ext, acts []Action
	var done goals
	if done == want {
		return done, nil
	}
	for range maxFairRounds {
		acts = st.actions(cur, acts[:0])
		n := 0
		for _, a := range acts {
			if a.Kind != Crash && (a.Kind != Deliver || a.Index == 0) {
				acts[n] = a
				n++
			}
		}
		acts = acts[:n]
		if len(acts) == 0 {
			return done, &stopVerdict{outcome: deadlocked, ext: ext, prob: problem{KindDeadlock, w.e.x.globalDeadlock(cur, want.reqs&^done.reqs)}}
		}
		for _, a := range acts {
			a, ok := w.e.x.stillEnabled(cur, a)
			if !ok {
				continue
			}
			var v *stopVerdict
			if cur, ext, v = w.continueWith(cur, a, ext, want, &done); v != nil {
				return done, v
			}
			if done == want {
				return done, nil
			}
		}
	}
	return done, nil
}

// randomCompletions is step 2 of analyzeStop: random continuations of the
// budget stop s (budgets refilled, no crash) for the requests in want. It
// returns those some walk completed, or the verdict when a property fails
// on a walk.
func (w *worker) randomCompletions(s *gstate, want goals) (goals, *stopVerdict) {
	st := w.st
	fp := fingerprintOf(s)
	var done goals
	var acts, deliveries []Action
	for walk := range uint64(randomWalks) {
		rng := rand.New(rand.NewPCG(fp.a, fp.b+walk))
		cur := refill(s)
		var ext []Action
		for range randomWalkSteps {
			acts = st.actions(cur, acts[:0])
			acts = slices.DeleteFunc(acts, func(a Action) bool { return a.Kind == Crash })
			if len(acts) == 0 {
				break
			}
			deliveries = append(deliveries[:0], acts...)
			deliveries = slices.DeleteFunc(deliveries, func(a Action) bool { return a.Kind != Deliver })
			from := acts
			if len(deliveries) > 0 && rng.IntN(4) != 0 {
				from = deliveries
			}
			var v *stopVerdict
			if cur, ext, v = w.continueWith(cur, from[rng.IntN(len(from))], ext, want, &done); v != nil {
				return done, v
			}
			if done == want {
				return done, nil
			}
		}
	}
	return done, nil
}

// continueWith takes action a from cur on a continuation of a budget stop
// (ext, the actions so far) and adds to done the goals in want it reached;
// a property failing is the continuation's verdict.
func (w *worker) continueWith(cur *gstate, a Action, ext []Action, want goals, done *goals) (*gstate, []Action, *stopVerdict) {
	ext = append(ext, a)
	if p := w.st.apply(cur, a); p != nil {
		return cur, ext, &stopVerdict{outcome: violatedLater, ext: ext, prob: problem{p.kind, p.detail + " (in a continuation beyond the budget)"}}
	}
	cur = w.st.materialize()
	for i, p := range cur.procs {
		if want.reqs&bit(cs.ID(i+1)) != 0 && p.pending == cs.None {
			done.reqs |= bit(cs.ID(i + 1))
		}
	}
	if want.recover && !done.recover && w.e.x.guard.Deficit(crashView{stateView{cur}}) == 0 {
		done.recover = true
	}
	return cur, ext, nil
}

// refill returns a copy of s in which every process has an unlimited budget.
func refill(s *gstate) *gstate {
	c := *s
	c.procs = slices.Clone(s.procs)
	for i := range c.procs {
		c.procs[i].budget = unlimited
	}
	return &c
}

// stillEnabled re-checks a (computed at the start of a fair round) in s and
// returns it with the operation a Request now calls.
func (x *model) stillEnabled(s *gstate, a Action) (Action, bool) {
	switch a.Kind {
	case Deliver:
		_, ok := x.head(s, a.From, a.Node)
		return a, ok
	case Request:
		p := s.procs[a.Node-1]
		if s.isCrashed(a.Node) || p.pending != cs.None {
			return a, false
		}
		a.Op = p.nextOp()
		return a, true
	case Suspect:
		return a, s.suspect[a.Node-1]&bit(a.Who) == 0
	case Trust:
		return a, s.suspect[a.Node-1]&bit(a.Who) != 0
	case Grant:
		return a, x.tab.machine(s.procs[a.Node-1].m).idealWant&(1<<a.Index) != 0 && x.grantable(s, a.Index)
	}
	return a, false
}

// head returns the oldest message in transit from -> to in s, if any.
func (x *model) head(s *gstate, from, to cs.ID) (uint32, bool) {
	l := x.link(from, to)
	for _, e := range s.flight {
		if e.link == l {
			return e.m, true
		}
	}
	return 0, false
}

// searchGoal searches breadth-first, from s with refilled budgets and no
// crashes, for a state where goal holds (a process has no pending
// request, no deficit). It returns whether one was found and how many
// states it explored (at most Config.DeadlockStates). States where a
// property fails are not expanded.
func (w *worker) searchGoal(s *gstate, goal func(*gstate) bool) (found bool, explored int) {
	st := w.st
	limit := w.e.cfg.DeadlockStates
	seen := newFPSet(0)
	root := refill(s)
	seen.insert(fingerprintOf(root))
	frontier := []*gstate{root}
	var acts []Action
	explored = 1
	for len(frontier) > 0 {
		var next []*gstate
		for _, cur := range frontier {
			acts = st.actions(cur, acts[:0])
			for _, a := range acts {
				if a.Kind == Crash {
					continue
				}
				if st.apply(cur, a) != nil {
					continue
				}
				if goal(&st.next) {
					return true, explored
				}
				if !seen.insert(fingerprintOf(&st.next)) {
					continue
				}
				if explored++; explored >= limit {
					return false, explored
				}
				next = append(next, st.materialize())
			}
		}
		frontier = next
	}
	return false, explored
}

// globalDeadlock describes a state with nothing enabled and unlimited
// budgets: every live process waits in a request; open are the requests
// the continuation had to complete and did not (none: only recovery was
// left, and the state has a deficit). With an exit guard, the exits that
// must wait are named as such.
func (x *model) globalDeadlock(s *gstate, open uint64) string {
	var waits []string
	for i, p := range s.procs {
		if !s.isCrashed(cs.ID(i+1)) && p.pending != cs.None {
			waits = append(waits, fmt.Sprintf("P%d %s", i+1, p.pending))
		}
	}
	d := "global deadlock: no message in transit and every live process waits in a request (" + strings.Join(waits, ", ") + "), even with unlimited budgets"
	if g := x.guard; g != nil {
		v := crashView{stateView{s}}
		if g.ExitsBlocked(v) {
			d += fmt.Sprintf("; the exits wait as they must, with %d live processes and l = %d", g.Live(v), g.L())
		}
		if open == 0 {
			d += fmt.Sprintf("; the deficit of %d live processes InCS below min(l, live) never closes", g.Deficit(v))
		}
	}
	return d
}
