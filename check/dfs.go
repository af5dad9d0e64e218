package check

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/critsec/critsec/check/internal/store"
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
// fingerprints at load 3/8 to 15/16, store.Memory) instead of the BFS frontier's
// packed states, plus the run's tables of distinct machines and messages. The verdicts are the same; a counterexample is the path DFS
// found, not necessarily a shortest one; Depth is the longest path followed.
// One goroutine; Workers is ignored. With Config.Checkpoint it saves its
// progress and continues a saved one (checkpoint.go); err is a checkpoint
// this run cannot continue.
func (e *explorer) runDFS() (res Result, err error) {
	w := e.workers[0]
	st := w.st
	// With DiskDir the visited set is partly on disk (store.Disk); a
	// checkpoint needs the disk set itself.
	var visited store.Set
	var disk *store.Disk
	ck := e.resume
	switch {
	case ck != nil:
		if disk, err = store.OpenDisk(e.cfg.DiskDir, e.cfg.ExpectedStates, e.cfg.diskShare(), filepath.Join(e.cfg.Checkpoint, ck.FPs), ck.OnDisk, ck.FPsCRC); err != nil {
			return res, err
		}
		e.ckFPs = ck.FPs
		visited = disk
	case e.cfg.DiskDir != "":
		if disk, err = store.NewDisk(e.cfg.DiskDir, e.cfg.ExpectedStates, e.cfg.diskShare()); err != nil {
			res.Verdict, res.Reason = Incomplete, diskReason(0, err)
			return res, nil
		}
		visited = disk
		visited.Insert(fpOf(fingerprintOf(e.root)))
	default:
		visited = store.NewMemory(e.cfg.ExpectedStates, e.cfg.MaxMemory)
		visited.Insert(fpOf(fingerprintOf(e.root)))
	}
	defer visited.Close()
	res.States = 1
	if v := e.initialViolation(); v != nil {
		res.Verdict, res.Violation = Violated, v
		return res, nil
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
				var prob *problem
				if acts, prob = w.ample(s, acts, isOnStack); prob != nil {
					return e.dfsViolation(stack, code, &finding{act: noAction, prob: *prob})
				}
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
	// A search that ends by itself (ok, or a violation) spends its
	// checkpoint, which the caller removes once it has the result safe
	// (RemoveCheckpoint); one stopped by a limit saves one (save).
	ended := false
	if e.cfg.Checkpoint != "" {
		defer func() { res.CheckpointSpent = ended || res.Verdict == Violated }()
	}
	save := func(pending uint32) error {
		c := &store.Checkpoint{
			Key: e.checkpointKey(), States: res.States, Transitions: res.Transitions, Depth: res.Depth, BudgetStops: res.BudgetStops,
			Pending: pending, Parts: 1, Seconds: time.Since(e.start).Seconds(),
		}
		if r := res.Resumed; r != nil {
			c.Parts, c.Seconds = r.Parts+1, r.Seconds+c.Seconds
		}
		for _, fr := range stack {
			c.Stack = append(c.Stack, store.Frame{Act: fr.code, Next: fr.next, FP: [2]uint64{fr.fp.a, fr.fp.b}})
		}
		if u := undecidedProb; u != nil {
			c.Undecided = &[2]string{u.kind, u.detail}
		}
		keys, err := e.saveTables(e.cfg.Checkpoint, e.savedKeys)
		if err != nil {
			return err
		}
		c.Machines, c.Messages = keys[0], keys[1]
		if err := store.Save(e.cfg.Checkpoint, e.ckFPs, disk, c); err != nil {
			return err
		}
		e.savedKeys, e.ckFPs = keys, c.FPs
		return nil
	}
	// stop ends the run Incomplete for reason, after saving a checkpoint
	// when one is asked for (pending: see checkpoint.Pending).
	stop := func(reason string, pending uint32) (Result, error) {
		res.Verdict, res.Reason, res.Position = Incomplete, reason, position(stack)
		if e.cfg.Checkpoint != "" {
			if err := save(pending); err != nil {
				res.Reason += "; saving the checkpoint failed: " + err.Error()
			} else {
				res.Reason += "; progress saved in " + e.cfg.Checkpoint + ": the same command continues it"
			}
		}
		return res, nil
	}
	if ck == nil {
		if v := enter(e.root, noAction, fingerprintOf(e.root)); v != nil {
			res.Verdict, res.Violation = Violated, v
			return res, nil
		}
	} else {
		if u := ck.Undecided; u != nil {
			undecidedProb = &problem{u[0], u[1]}
			e.undecided = undecidedProb
		}
		v, err := e.rebuild(ck, &res, &stack, enter)
		if err != nil {
			return res, err
		}
		if v != nil {
			res.Verdict, res.Violation = Violated, v
			return res, nil
		}
	}
	every := e.cfg.CheckpointEvery
	if every == 0 {
		every = DefaultCheckpointEvery
	}
	nextSave, saveDue := time.Now().Add(every), false
	var saveErr error // of the last periodic save
	for len(stack) > 0 {
		if saveDue {
			// Here every visited state is on the stack or fully explored.
			// A failed save leaves the earlier checkpoint whole: the run
			// goes on and tries again at the next interval.
			saveErr = save(noAction)
			nextSave, saveDue = time.Now().Add(every), false
		}
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
			return res, nil
		}
		fp := fingerprintOf(&st.next)
		// Every fingerprint in the recent cache was inserted into visited.
		if w.seenRecently(fp) {
			continue
		}
		added, err := visited.Insert(fpOf(fp))
		if errors.Is(err, store.ErrFull) {
			res.Verdict, res.Reason = Incomplete, fullReason(res.States, visited.Stats().Slots, e.cfg.ExpectedStates)
			return res, nil
		}
		if err != nil {
			res.Verdict, res.Reason = Incomplete, diskReason(res.States, err)
			if saveErr != nil {
				res.Reason += "; the last save of the checkpoint failed as well: " + saveErr.Error()
			}
			return res, nil
		}
		if !added {
			continue
		}
		res.States++
		if res.States&(1<<18-1) == 0 && e.cfg.Progress != nil {
			p := Progress{States: res.States, Transitions: res.Transitions, Depth: len(stack), Seconds: time.Since(e.start).Seconds(), Position: position(stack)}
			if disk != nil {
				ds := disk.Stats()
				p.DiskStates, p.DiskReads = ds.OnDisk, ds.Reads
			}
			if r := res.Resumed; r != nil {
				p.ResumedStates = r.States
			}
			e.cfg.Progress(p)
		}
		// A limit stops the run between the insert of this state and its
		// entry: a checkpoint then names its action as pending.
		if e.cfg.MaxStates > 0 && res.States >= int64(e.cfg.MaxStates) {
			return stop(fmt.Sprintf("max-states %d reached (depth-first, depth %d)", e.cfg.MaxStates, len(stack)), actCode(a))
		}
		if res.States&0xfff == 0 && overMemory(e.cfg.MaxMemory) {
			return stop(fmt.Sprintf("memory limit %.1f GB reached after %d states (depth-first)", float64(e.cfg.MaxMemory)/(1<<30), res.States), actCode(a))
		}
		if res.States&0xfff == 0 && !e.deadline.IsZero() && time.Now().After(e.deadline) {
			return stop(fmt.Sprintf("timeout %v reached after %d states (depth-first)", e.cfg.Timeout, res.States), actCode(a))
		}
		if res.States&0xfff == 0 && e.interrupted() {
			return stop(fmt.Sprintf("interrupted after %d states (depth-first)", res.States), actCode(a))
		}
		if res.States&0xfff == 0 && e.cfg.Checkpoint != "" && time.Now().After(nextSave) {
			saveDue = true
		}
		if v := enter(st.materialize(), actCode(a), fp); v != nil {
			res.Verdict, res.Violation = Violated, v
			return res, nil
		}
	}
	ended = true
	if undecidedProb != nil {
		res.Verdict, res.Reason = Incomplete, undecidedProb.detail
		return res, nil
	}
	res.Verdict = OK
	return res, nil
}

// rebuild restores a depth-first run from checkpoint c: its counts into
// res, and its path into stack by replaying, from the initial state, the
// action each frame records as the one last tried in the frame below, and
// entering each state with enter, as the first run did (its actions, and
// ample sets, are computed again, with the same path below). It then
// enters the pending state, if any, and returns a violation found there.
// An inconsistency is an error: a damaged checkpoint, or one of another
// algorithm that the key could not tell apart.
func (e *explorer) rebuild(c *store.Checkpoint, res *Result, stack *[]frame, enter func(*gstate, uint32, fingerprint) *Violation) (*Violation, error) {
	st := e.workers[0].st
	res.States, res.Transitions, res.Depth, res.BudgetStops = c.States, c.Transitions, c.Depth, c.BudgetStops
	res.Resumed = &Resumption{States: c.States, Transitions: c.Transitions, Parts: c.Parts, Seconds: c.Seconds}
	// step applies the action last tried in the top frame, which must
	// have the given code, and returns the state it leads to.
	step := func(code uint32) (*gstate, error) {
		top := &(*stack)[len(*stack)-1]
		if top.next == 0 || actCode(top.acts[top.next-1]) != code {
			return nil, store.Unusable("frame %d: action %#x is not the one last tried there: the checkpoint does not fit this check", len(*stack), code)
		}
		if p := st.apply(top.s, top.acts[top.next-1]); p != nil {
			return nil, store.Unusable("frame %d: replaying its action fails (%s): the checkpoint does not fit this check", len(*stack), p.detail)
		}
		return st.materialize(), nil
	}
	for i, fr := range c.Stack {
		s := e.root
		if i > 0 {
			var err error
			if s, err = step(fr.Act); err != nil {
				return nil, err
			}
		}
		fp := fingerprintOf(s)
		if fp != (fingerprint{fr.FP[0], fr.FP[1]}) {
			return nil, store.Unusable("frame %d: the replay reaches another state: the checkpoint does not fit this check", i)
		}
		if v := enter(s, fr.Act, fp); v != nil || len(*stack) != i+1 {
			return nil, store.Unusable("frame %d: no action is enabled there: the checkpoint does not fit this check", i)
		}
		top := &(*stack)[i]
		if fr.Next < 0 || fr.Next > len(top.acts) {
			return nil, store.Unusable("frame %d: %d actions, next %d: the checkpoint does not fit this check", i, len(top.acts), fr.Next)
		}
		top.next = fr.Next
	}
	if c.Pending == noAction {
		return nil, nil
	}
	s, err := step(c.Pending)
	if err != nil {
		return nil, err
	}
	return enter(s, c.Pending, fingerprintOf(s)), nil
}

// position is the share of the depth-first search tree to the left of the
// current path, were the subtrees of siblings of equal size: in each frame,
// the actions already done out of all, weighted by the share of the tree
// below the frame. The subtrees explored later are usually smaller (more of
// their states are visited already), so it tends to understate how far the
// search is; a rough guide for a long run, not a measure.
func position(stack []frame) float64 {
	pos, share := 0.0, 1.0
	for i, fr := range stack {
		done := fr.next // the top frame's tried actions are all done
		if i < len(stack)-1 {
			done-- // the action into the next frame is in progress
		}
		n := float64(len(fr.acts))
		pos += share * float64(done) / n
		share /= n
	}
	return pos
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
