package check

import (
	"fmt"
	"time"
)

// frame is one state on the depth-first path.
type frame struct {
	s    *gstate
	acts []Action
	next int    // index in acts of the next action to try
	code uint32 // the action (actCode) that led to s; noAction at the root
	fp   fingerprint
}

// runDFS explores the same state graph as run, depth-first, in the same
// fixed order of actions, keeping only the fingerprints of visited states and
// the states on the current path: memory is 12-32 bytes per state (96-bit
// fingerprints at load 3/8 to 15/16, fpSet96) instead of the BFS frontier's
// packed states, plus the run's tables of distinct machines and messages. The verdicts are the same; a counterexample is the path DFS
// found, not necessarily a shortest one; Depth is the longest path followed.
// One goroutine; Workers is ignored.
func (e *explorer) runDFS() Result {
	var res Result
	w := e.workers[0]
	st := w.st
	// With DiskDir the visited set is partly on disk (diskfpset.go).
	var visited *fpSet96
	var disk *diskFPSet
	if e.cfg.DiskDir != "" {
		var err error
		if disk, err = newDiskFPSet(e.cfg.DiskDir, e.cfg.ExpectedStates, e.cfg.diskShare()); err != nil {
			res.Verdict, res.Reason = Incomplete, diskReason(0, err)
			return res
		}
		defer disk.close()
		disk.insert(fp96Of(fingerprintOf(e.root)))
	} else {
		visited = newFPSet96(e.cfg.ExpectedStates, e.cfg.MaxMemory)
		visited.insert(fp96Of(fingerprintOf(e.root)))
	}
	res.States = 1
	if v := e.initialViolation(); v != nil {
		res.Verdict, res.Violation = Violated, v
		return res
	}
	var stack []frame
	var undecidedProb *problem
	// onStack counts the states of the stack by fingerprint: the cycle
	// proviso of the partial-order reduction (por.go).
	onStack := map[fingerprint]int{}
	isOnStack := func(fp fingerprint) bool { return onStack[fp] > 0 }
	// enter pushes s (reached by code, fingerprint fp) or, when nothing is
	// enabled in it, decides its pending requests; it returns a violation
	// found there.
	enter := func(s *gstate, code uint32, fp fingerprint) *Violation {
		acts := st.actions(s, nil)
		if len(acts) > 0 {
			if e.cfg.PartialOrder {
				onStack[fp]++ // a self-loop is a cycle too
				acts = w.ample(s, acts, isOnStack)
			}
			stack = append(stack, frame{s: s, acts: acts, code: code, fp: fp})
			res.Depth = max(res.Depth, len(stack))
			return nil
		}
		if s.pendingMask() == 0 {
			return nil
		}
		switch v := w.analyzeStop(s); v.outcome {
		case completable:
			res.BudgetStops++
		case deadlocked, violatedLater:
			return e.dfsViolation(stack, code, &finding{act: noAction, prob: v.prob, ext: v.ext})
		case undecided:
			if undecidedProb == nil {
				undecidedProb = &v.prob
				e.undecided = undecidedProb
			}
		}
		return nil
	}
	if v := enter(e.root, noAction, fingerprintOf(e.root)); v != nil {
		res.Verdict, res.Violation = Violated, v
		return res
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.acts) {
			if e.cfg.PartialOrder {
				if onStack[top.fp]--; onStack[top.fp] == 0 {
					delete(onStack, top.fp)
				}
			}
			stack[len(stack)-1] = frame{}
			stack = stack[:len(stack)-1]
			continue
		}
		a := top.acts[top.next]
		top.next++
		res.Transitions++
		if p := st.apply(top.s, a); p != nil {
			res.Verdict = Violated
			res.Violation = e.dfsViolation(stack, noAction, &finding{act: actCode(a), prob: *p})
			return res
		}
		fp := fingerprintOf(&st.next)
		// Every fingerprint in the recent cache was inserted into visited.
		if w.seenRecently(fp) {
			continue
		}
		var added, full bool
		if disk != nil {
			var err error
			if added, err = disk.insert(fp96Of(fp)); err != nil {
				res.Verdict, res.Reason = Incomplete, diskReason(res.States, err)
				return res
			}
		} else {
			added, full = visited.insert(fp96Of(fp))
		}
		if full {
			res.Verdict, res.Reason = Incomplete, fullReason(res.States, len(visited.slots), e.cfg.ExpectedStates)
			return res
		}
		if !added {
			continue
		}
		res.States++
		if res.States&(1<<18-1) == 0 && e.cfg.Progress != nil {
			p := Progress{States: res.States, Transitions: res.Transitions, Depth: len(stack), Seconds: time.Since(e.start).Seconds()}
			if disk != nil {
				p.DiskStates = disk.onDisk
			}
			e.cfg.Progress(p)
		}
		if e.cfg.MaxStates > 0 && res.States >= int64(e.cfg.MaxStates) {
			res.Verdict, res.Reason = Incomplete, fmt.Sprintf("max-states %d reached (depth-first, depth %d)", e.cfg.MaxStates, len(stack))
			return res
		}
		if res.States&0xfff == 0 && overMemory(e.cfg.MaxMemory) {
			res.Verdict, res.Reason = Incomplete, fmt.Sprintf("memory limit %.1f GB reached after %d states (depth-first)", float64(e.cfg.MaxMemory)/(1<<30), res.States)
			return res
		}
		if res.States&0xfff == 0 && !e.deadline.IsZero() && time.Now().After(e.deadline) {
			res.Verdict, res.Reason = Incomplete, fmt.Sprintf("timeout %v reached after %d states (depth-first)", e.cfg.Timeout, res.States)
			return res
		}
		if v := enter(st.materialize(), actCode(a), fp); v != nil {
			res.Verdict, res.Violation = Violated, v
			return res
		}
	}
	if undecidedProb != nil {
		res.Verdict, res.Reason = Incomplete, undecidedProb.detail
		return res
	}
	res.Verdict = OK
	return res
}

// dfsViolation rebuilds the path of the stack, then last (the action into the
// state where the stop was found, or noAction), then f's action and
// continuation, by replaying it.
func (e *explorer) dfsViolation(stack []frame, last uint32, f *finding) *Violation {
	var codes []uint32
	for _, fr := range stack {
		if fr.code != noAction { // the root's
			codes = append(codes, fr.code)
		}
	}
	if last != noAction {
		codes = append(codes, last)
	}
	return e.replayViolation(codes, f)
}

// fullReason is the Incomplete reason of a depth-first run whose visited
// set is full.
func fullReason(states int64, slots, expected int) string {
	r := fmt.Sprintf("the visited set is full after %d states (%d slots of 12 bytes at load 15/16), and a table twice as large would pass the memory limit: "+
		"the state space has more states than this; raise --max-memory if the machine has more memory, or lower the budget", states, slots)
	if expected == 0 {
		r += ", or pass --expected-states to size the table up front (no room needed for two tables while it doubles)"
	}
	return r
}
