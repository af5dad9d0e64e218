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
// fingerprints at load 3/8 to 15/16, store.Memory) instead of the BFS
// frontier's packed states, plus the run's tables of distinct machines and
// messages. The verdicts are the same; a counterexample is the path DFS
// found, not necessarily a shortest one; Depth is the longest path followed.
// One goroutine; Workers is ignored. With Config.Checkpoint it saves its
// progress and continues a saved one (checkpoint.go); err is a checkpoint
// this run cannot continue.
func (e *explorer) runDFS() (res Result, err error) {
	d := &dfs{e: e, w: e.workers[0], onStack: map[fingerprint]int{}}
	d.isOnStack = func(fp fingerprint) bool { return d.onStack[fp] > 0 }
	if reason, err := d.open(); reason != "" || err != nil {
		d.res.Verdict, d.res.Reason = Incomplete, reason
		return d.res, err
	}
	defer d.visited.Close()
	// A search that ends by itself (ok, or a violation) spends its
	// checkpoint, which the caller removes once it has the result safe
	// (RemoveCheckpoint); one stopped by a limit saves one (save).
	if e.cfg.Checkpoint != "" {
		defer func() { res.CheckpointSpent = d.ended || res.Verdict == Violated }()
	}
	return d.search()
}

// dfs is one depth-first search: the visited set, the path (stack) and
// what the path's loop carries from one step to the next.
type dfs struct {
	e  *explorer
	w  *worker
	st *stepper
	// visited is the visited set; disk is the same set when it is partly
	// on disk (Config.DiskDir), which a checkpoint saves, else nil.
	visited store.Set
	disk    *store.Disk
	res     Result
	stack   []frame
	// onStack counts the states of the stack by fingerprint: the cycle
	// proviso of the partial-order reduction (por.go); isOnStack asks it.
	onStack   map[fingerprint]int
	isOnStack func(fingerprint) bool
	undecided *problem // the first budget stop left undecided
	ended     bool     // the search ended by itself, not by a limit
	// every is the interval between periodic saves, nextSave the time of
	// the next, saveDue that it is due at the next step, and saveErr the
	// error of the last.
	every    time.Duration
	nextSave time.Time
	saveDue  bool
	saveErr  error
}

// open makes the visited set: the checkpoint's file when the run continues
// one, a set partly on disk with Config.DiskDir, in memory otherwise; the
// initial state is in it. A reason is a disk set that could not be made
// (the run is Incomplete); err, a checkpoint this run cannot continue.
func (d *dfs) open() (reason string, err error) {
	e := d.e
	d.st = d.w.st
	switch ck := e.resume; {
	case ck != nil:
		if d.disk, err = store.OpenDisk(e.cfg.DiskDir, e.cfg.ExpectedStates, e.cfg.diskShare(), filepath.Join(e.cfg.Checkpoint, ck.FPs), ck.OnDisk, ck.FPsCRC); err != nil {
			return "", err
		}
		e.ckFPs = ck.FPs
		d.visited = d.disk
	case e.cfg.DiskDir != "":
		if d.disk, err = store.NewDisk(e.cfg.DiskDir, e.cfg.ExpectedStates, e.cfg.diskShare()); err != nil {
			return diskReason(0, err), nil
		}
		d.visited = d.disk
		d.visited.Insert(fpOf(fingerprintOf(e.root)))
	default:
		d.visited = store.NewMemory(e.cfg.ExpectedStates, e.cfg.MaxMemory)
		d.visited.Insert(fpOf(fingerprintOf(e.root)))
	}
	return "", nil
}

// search runs the search from the initial state, or from the checkpoint
// the run continues, to its end or a limit.
func (d *dfs) search() (Result, error) {
	e, res := d.e, &d.res
	res.States = 1
	if v := e.initialViolation(); v != nil {
		res.Verdict, res.Violation = Violated, v
		return *res, nil
	}
	if ck := e.resume; ck == nil {
		if v := d.enter(e.root, noAction, fingerprintOf(e.root)); v != nil {
			res.Verdict, res.Violation = Violated, v
			return *res, nil
		}
	} else {
		if u := ck.Undecided; u != nil {
			d.undecided = &problem{u[0], u[1]}
			e.undecided = d.undecided
		}
		v, err := e.rebuild(ck, res, &d.stack, d.enter)
		if err != nil {
			return *res, err
		}
		if v != nil {
			res.Verdict, res.Violation = Violated, v
			return *res, nil
		}
	}
	d.every = e.cfg.CheckpointEvery
	if d.every == 0 {
		d.every = DefaultCheckpointEvery
	}
	d.nextSave = time.Now().Add(d.every)
	for len(d.stack) > 0 {
		if done, err := d.step(); done || err != nil {
			return *res, err
		}
	}
	d.ended = true
	if d.undecided != nil {
		res.Verdict, res.Reason = Incomplete, d.undecided.detail
		return *res, nil
	}
	res.Verdict = OK
	return *res, nil
}

// enter pushes s (reached by code, fingerprint fp) or, when nothing is
// enabled in it, decides its pending requests; it returns a violation found
// there.
func (d *dfs) enter(s *gstate, code uint32, fp fingerprint) *Violation {
	e := d.e
	acts := d.st.actions(s, nil)
	if len(acts) > 0 {
		if e.cfg.PartialOrder {
			d.onStack[fp]++ // a self-loop is a cycle too
			var prob *problem
			if acts, prob = d.w.ample(s, acts, d.isOnStack); prob != nil {
				return e.dfsViolation(d.stack, code, &finding{act: noAction, prob: *prob})
			}
		}
		d.stack = append(d.stack, frame{s: s, acts: acts, code: code, fp: fp})
		d.res.Depth = max(d.res.Depth, len(d.stack))
		return nil
	}
	if s.pendingMask() == 0 {
		return nil
	}
	switch v := d.w.analyzeStop(s); v.outcome {
	case completable:
		d.res.BudgetStops++
	case deadlocked, violatedLater:
		return e.dfsViolation(d.stack, code, &finding{act: noAction, prob: v.prob, ext: v.ext})
	case undecided:
		if d.undecided == nil {
			d.undecided = &v.prob
			e.undecided = d.undecided
		}
	}
	return nil
}

// step takes one step of the search: a save when one is due, then the
// next action of the top of the stack, or a pop when it has none left.
// done reports that the search ended (d.res holds the result).
func (d *dfs) step() (done bool, err error) {
	e, res := d.e, &d.res
	if d.saveDue {
		// Here every visited state is on the stack or fully explored.
		// A failed save leaves the earlier checkpoint whole: the run goes
		// on and tries again at the next interval.
		d.saveErr = d.save(noAction)
		d.nextSave, d.saveDue = time.Now().Add(d.every), false
	}
	top := &d.stack[len(d.stack)-1]
	if top.next == len(top.acts) {
		if e.cfg.PartialOrder {
			if d.onStack[top.fp]--; d.onStack[top.fp] == 0 {
				delete(d.onStack, top.fp)
			}
		}
		d.stack[len(d.stack)-1] = frame{}
		d.stack = d.stack[:len(d.stack)-1]
		return false, nil
	}
	a := top.acts[top.next]
	top.next++
	res.Transitions++
	if p := d.st.apply(top.s, a); p != nil {
		res.Verdict = Violated
		res.Violation = e.dfsViolation(d.stack, noAction, &finding{act: actCode(a), prob: *p})
		return true, nil
	}
	fp := fingerprintOf(&d.st.next)
	// Every fingerprint in the recent cache was inserted into visited.
	if d.w.seenRecently(fp) {
		return false, nil
	}
	added, err := d.visited.Insert(fpOf(fp))
	if errors.Is(err, store.ErrFull) {
		res.Verdict, res.Reason = Incomplete, fullReason(res.States, d.visited.Stats().Slots, e.cfg.ExpectedStates)
		return true, nil
	}
	if err != nil {
		res.Verdict, res.Reason = Incomplete, diskReason(res.States, err)
		if d.saveErr != nil {
			res.Reason += "; the last save of the checkpoint failed as well: " + d.saveErr.Error()
		}
		return true, nil
	}
	if !added {
		return false, nil
	}
	res.States++
	if res.States&(1<<18-1) == 0 && e.cfg.Progress != nil {
		d.progress()
	}
	// A limit stops the run between the insert of this state and its
	// entry: a checkpoint then names its action as pending.
	if reason := d.limitReason(); reason != "" {
		d.stop(reason, actCode(a))
		return true, nil
	}
	if res.States&0xfff == 0 && e.cfg.Checkpoint != "" && time.Now().After(d.nextSave) {
		d.saveDue = true
	}
	if v := d.enter(d.st.materialize(), actCode(a), fp); v != nil {
		res.Verdict, res.Violation = Violated, v
		return true, nil
	}
	return false, nil
}

// progress reports the search's progress to Config.Progress.
func (d *dfs) progress() {
	e, res := d.e, &d.res
	p := Progress{States: res.States, Transitions: res.Transitions, Depth: len(d.stack), Seconds: time.Since(e.start).Seconds(), Position: position(d.stack)}
	if d.disk != nil {
		ds := d.disk.Stats()
		p.DiskStates, p.DiskReads = ds.OnDisk, ds.Reads
	}
	if r := res.Resumed; r != nil {
		p.ResumedStates = r.States
	}
	e.cfg.Progress(p)
}

// limitReason is the Incomplete reason of a limit reached now that the
// search has d.res.States states (MaxStates; MaxMemory and the run's
// context every 4096 states), or "".
func (d *dfs) limitReason() string {
	e, states := d.e, d.res.States
	switch {
	case e.cfg.MaxStates > 0 && states >= int64(e.cfg.MaxStates):
		return fmt.Sprintf("max-states %d reached (depth-first, depth %d)", e.cfg.MaxStates, len(d.stack))
	case states&0xfff != 0:
		return ""
	case overMemory(e.cfg.MaxMemory):
		return fmt.Sprintf("memory limit %.1f GB reached after %d states (depth-first)", float64(e.cfg.MaxMemory)/(1<<30), states)
	}
	switch e.stopped() {
	case limitTimeout:
		return fmt.Sprintf("timeout %v reached after %d states (depth-first)", e.timeout, states)
	case limitInterrupt:
		return fmt.Sprintf("interrupted after %d states (depth-first)", states)
	}
	return ""
}

// stop ends the run Incomplete for reason, after saving a checkpoint when
// one is asked for (pending: see store.Checkpoint.Pending).
func (d *dfs) stop(reason string, pending uint32) {
	res := &d.res
	res.Verdict, res.Reason, res.Position = Incomplete, reason, position(d.stack)
	if d.e.cfg.Checkpoint == "" {
		return
	}
	if err := d.save(pending); err != nil {
		res.Reason += "; saving the checkpoint failed: " + err.Error()
	} else {
		res.Reason += "; progress saved in " + d.e.cfg.Checkpoint + ": the same command continues it"
	}
}

// save saves a checkpoint of the search in Config.Checkpoint: the counts,
// the path, the interning tables' new keys and the visited set's file.
func (d *dfs) save(pending uint32) error {
	e, res := d.e, &d.res
	c := &store.Checkpoint{
		Key: e.checkpointKey(), States: res.States, Transitions: res.Transitions, Depth: res.Depth, BudgetStops: res.BudgetStops,
		Pending: pending, Parts: 1, Seconds: time.Since(e.start).Seconds(),
	}
	if r := res.Resumed; r != nil {
		c.Parts, c.Seconds = r.Parts+1, r.Seconds+c.Seconds
	}
	for _, fr := range d.stack {
		c.Stack = append(c.Stack, store.Frame{Act: fr.code, Next: fr.next, FP: [2]uint64{fr.fp.a, fr.fp.b}})
	}
	if u := d.undecided; u != nil {
		c.Undecided = &[2]string{u.kind, u.detail}
	}
	keys, err := e.saveTables(e.cfg.Checkpoint, e.savedKeys)
	if err != nil {
		return err
	}
	c.Machines, c.Messages = keys[0], keys[1]
	if err := store.Save(e.cfg.Checkpoint, e.ckFPs, d.disk, c); err != nil {
		return err
	}
	e.savedKeys, e.ckFPs = keys, c.FPs
	return nil
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
