package check

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/critsec/critsec/check/internal/store"
	"github.com/critsec/critsec/cs"
)

// Run explores every state reachable under cfg with the search
// cfg.Search (breadth-first by default) and returns the verdict. It returns
// an error (wrapping ErrConfig) for a bad Config, or an I/O error reading a
// checkpoint; property failures are in the Result. ctx stops the run
// (Incomplete): its deadline with the reason "timeout D reached ...", D
// being the time the run had, and its cancellation with "interrupted ...";
// a depth-first run with a checkpoint saves it first. Results, paths
// included, do not depend on cfg.Workers or on timing, except that ctx or
// MaxMemory may stop a run.
func Run(ctx context.Context, cfg Config) (Result, error) {
	timeout := timeLeft(ctx)
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	e := newExplorer(cfg)
	e.ctx, e.timeout = ctx, timeout
	var res Result
	switch {
	case cfg.Search == Liveness:
		res = e.runLiveness()
	case cfg.Search == DepthFirst:
		var err error
		if res, err = e.runCheckpointed(); err != nil {
			return Result{}, err
		}
	default:
		res = e.run()
	}
	if u := e.undecided; res.Verdict == Incomplete && u != nil && res.Reason != u.detail {
		// A limit ended the run after a budget stop was left undecided:
		// say both, so that a longer run is not thought enough.
		res.Reason += "; before that, a budget stop was left undecided: " + u.detail
	}
	res.Seconds = time.Since(e.start).Seconds()
	return res, nil
}

// runCheckpointed is runDFS, with Config.Checkpoint locking the
// directory and continuing its checkpoint. A checkpoint this run cannot
// continue is an ErrConfig; an I/O error reading one is returned as is.
func (e *explorer) runCheckpointed() (Result, error) {
	dir := e.cfg.Checkpoint
	if dir == "" {
		return e.runDFS()
	}
	wrap := func(err error) error {
		var bad *store.UnusableError
		if errors.As(err, &bad) {
			return fmt.Errorf("%w: checkpoint in %s: %w", ErrConfig, dir, err)
		}
		return fmt.Errorf("checkpoint in %s: %w", dir, err)
	}
	unlock, held, err := store.Lock(dir)
	if held {
		return Result{}, fmt.Errorf("%w: checkpoint in %s: another run is using it: wait for it to end, or give another directory", ErrConfig, dir)
	}
	if err != nil {
		return Result{}, wrap(err)
	}
	defer unlock()
	c, err := store.Load(dir, e.checkpointKey(), noAction)
	if err == nil && c != nil {
		err = e.seedTables(dir, c)
	}
	if err != nil {
		return Result{}, wrap(err)
	}
	e.resume = c
	res, err := e.runDFS()
	if err != nil {
		return Result{}, wrap(err)
	}
	return res, nil
}

// timeLeft is the time until ctx's deadline, rounded to the millisecond
// (to the microsecond below 10 ms) so that the reason of a run given
// context.WithTimeout(ctx, 10*time.Second) just before says "timeout 10s";
// 0 without a deadline or past it.
func timeLeft(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	d := time.Until(dl)
	switch {
	case d <= 0:
		return 0
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// stopped is limitTimeout once the run's context passed its deadline,
// limitInterrupt once it was cancelled, and limitNone before.
func (e *explorer) stopped() int32 {
	switch err := e.ctx.Err(); {
	case err == nil:
		return limitNone
	case errors.Is(err, context.DeadlineExceeded):
		return limitTimeout
	}
	return limitInterrupt
}

// chunkSize is how many frontier states a worker expands at a time.
const chunkSize = 256

// explorer is one run: level-synchronous BFS. Each level has two phases.
// Phase 1 (parallel): workers take chunks of the frontier in increasing
// order, expand every state, and keep, packed, the successors whose
// fingerprint is not in their recent cache (see expandChunk). Phase 2: the
// kept successors are inserted into the visited set, and the first of each
// fingerprint in chunk order is the new state, so each new state gets the
// parent and id a one-worker BFS would give it. Hence results do not depend on the number
// of workers. The visited set is split into shards by fingerprint, and
// phase 2 inserts into the shards in parallel (each worker owns some
// shards and walks the candidates in chunk order), then numbers the
// winners in one sequential pass. When one goroutine expands the whole
// level (one worker, or one chunk), phase 1 inserts each successor into the
// visited set directly, in the same order, and keeps only new states.
type explorer struct {
	cfg     Config
	x       *model
	root    *gstate
	visited *shardedSet
	// direct: this level is expanded by one goroutine, which inserts into
	// visited itself (see above).
	direct bool
	// parent[id] and act[id] are the predecessor of state id and the
	// action (encoded by actCode) that led to it; ids follow BFS order.
	parent []uint32
	act    []uint32
	start  time.Time
	// ctx stops the run (Run's); timeout is the time it had until ctx's
	// deadline, for the reason.
	ctx     context.Context
	timeout time.Duration
	workers []*worker
	// undecided is the first budget stop whose deadlock analysis hit its
	// limit, or nil.
	undecided *problem
	// resume is the checkpoint a depth-first run continues, or nil;
	// savedKeys counts the keys of the interning tables saved in the
	// checkpoint's directory so far (checkpoint.go).
	resume    *store.Checkpoint
	savedKeys [2]store.KeyCount
	ckFPs     string // the fingerprint file of the checkpoint saved last
}

// worker is one goroutine's scratch space.
type worker struct {
	e    *explorer
	st   *stepper
	acts []Action
	pk   *packer // unpacks the frontier's states
	// recent is a small direct-mapped cache of the successors' fingerprints
	// this worker computed; see seenRecently.
	recent []fingerprint
}

// candidate is a successor kept in phase 1.
type candidate struct {
	fp   fingerprint
	from int // index of the parent in the frontier
	act  uint32
	off  uint32 // where it starts in its chunkOut's words
	won  bool   // phase 2: the first candidate with this fingerprint
}

// finding is a violation or an undecided budget stop in phase 1.
type finding struct {
	from int    // frontier index of the state expanded
	act  uint32 // the failing action, or noAction for a deadlock
	prob problem
	ext  []Action // deadlock found by a fair continuation: its actions
}

const noAction = ^uint32(0)

// recentSize is the number of slots of worker.recent (256 KiB). For
// Raymond n = 4 it catches 16.1 of the 17.6 million duplicates.
const recentSize = 1 << 14

type chunkOut struct {
	cands       []candidate
	words       []uint64 // the candidates, packed
	viol        *finding
	undecided   *finding
	transitions int64
	stops       int64
}

func newExplorer(cfg Config) *explorer {
	x := &model{
		n:         len(cfg.Machines),
		prop:      cfg.Property,
		unordered: cfg.Unordered,
		detector:  cfg.Detector,
		detecting: make([]bool, len(cfg.Machines)),
		sendsTo:   make([]uint64, len(cfg.Machines)),
		tab:       newInterner(),
	}
	if cfg.Fencing {
		_, x.fenceK = cfg.Property.GlobalBounds()
	}
	x.guard = cfg.Property.ExitGuard()
	for i, m := range cfg.Machines {
		_, x.detecting[i] = m.(cs.Detecting)
		x.sendsTo[i] = sendsTo(m, x.n)
	}
	if cfg.DeadlockStates == 0 {
		cfg.DeadlockStates = DefaultDeadlockStates
	}
	if cfg.LivenessStates == 0 {
		cfg.LivenessStates = DefaultLivenessStates
	}
	e := &explorer{cfg: cfg, x: x, start: time.Now(), ctx: context.Background()}
	x.findIdeals(cfg.Machines[0])
	e.root = x.initial(cfg)
	nw := max(cfg.Workers, 1)
	for range nw {
		e.workers = append(e.workers, &worker{e: e, st: newStepper(x), pk: newPacker(x), recent: make([]fingerprint, recentSize)})
	}
	return e
}

// sendsTo returns the processes m may send to: N_i ∪ {P_i} for a cs.Local
// machine, every process otherwise.
func sendsTo(m cs.Machine, n int) uint64 {
	l, ok := m.(cs.Local)
	if !ok {
		return uint64(1)<<n - 1
	}
	to := bit(m.Self())
	for _, j := range l.Neighbors() {
		to |= bit(j)
	}
	return to
}

// run is the breadth-first search, one level of the frontier at a time:
// phase 1 (expand), the level's counts and findings (tally), its limits,
// phase 2 (claim, then number).
func (e *explorer) run() Result {
	var res Result
	e.visited = newShardedSet()
	e.visited.insert(fingerprintOf(e.root))
	e.parent = append(e.parent, 0)
	e.act = append(e.act, noAction)
	res.States = 1
	if v := e.initialViolation(); v != nil {
		res.Verdict, res.Violation = Violated, v
		return res
	}
	front := &frontier{arenas: [][]uint64{e.workers[0].pk.appendPacked(nil, e.root)}, refs: []stateRef{{}}}
	base := 0 // id of the frontier's first state
	var undecided *finding
	for depth := 0; front.len() > 0; depth++ {
		res.Depth = depth
		outs, limit := e.expand(front)
		if viol := e.tally(&res, outs, &undecided); viol != nil {
			res.Verdict = Violated
			res.Violation = e.violation(base, viol)
			return res
		}
		if reason := e.limitReason(limit, depth, res.States); reason != "" {
			res.Verdict, res.Reason = Incomplete, reason
			return res
		}
		// Phase 2.
		if !e.direct {
			e.claim(outs)
		}
		nextBase := len(e.parent)
		next, full := e.number(&res, outs, base, front.len())
		if full {
			res.Depth = depth + 1
			res.Verdict, res.Reason = Incomplete, fmt.Sprintf("max-states %d reached at depth %d", e.cfg.MaxStates, depth+1)
			return res
		}
		front, base = next, nextBase
		if e.cfg.Progress != nil {
			e.cfg.Progress(Progress{States: res.States, Transitions: res.Transitions, Depth: depth + 1, Seconds: time.Since(e.start).Seconds()})
		}
	}
	if undecided != nil {
		res.Verdict = Incomplete
		res.Reason = undecided.prob.detail
		return res
	}
	res.Verdict = OK
	return res
}

// tally adds the counts of a level's chunks, outs, to res, keeps the first
// undecided budget stop in *undecided, and returns the first violation in
// chunk order, or nil.
func (e *explorer) tally(res *Result, outs []chunkOut, undecided **finding) *finding {
	for _, o := range outs {
		res.Transitions += o.transitions
		res.BudgetStops += o.stops
		if o.undecided != nil && *undecided == nil {
			*undecided = o.undecided
			e.undecided = &o.undecided.prob
		}
		if o.viol != nil {
			// Whether later chunks ran depends on timing; their counts
			// are left out, so that they do not depend on the number of
			// workers.
			return o.viol
		}
	}
	return nil
}

// limitReason is the Incomplete reason of a level whose phase 1 a limit
// stopped, or "" for limitNone.
func (e *explorer) limitReason(limit int32, depth int, states int64) string {
	switch limit {
	case limitTimeout:
		return fmt.Sprintf("timeout %v reached at depth %d", e.timeout, depth)
	case limitInterrupt:
		return fmt.Sprintf("interrupted at depth %d", depth)
	case limitMemory:
		return memoryReason(e.cfg.MaxMemory, depth, states)
	}
	return ""
}

// number gives the new states of a level, the winning candidates of outs
// in chunk order (every candidate when the level was direct), the next ids
// with their parents (base is the id of the frontier's first state) and
// actions, and returns them as the next frontier (room for size states
// at first); full reports that MaxStates was reached first.
func (e *explorer) number(res *Result, outs []chunkOut, base, size int) (next *frontier, full bool) {
	next = &frontier{refs: make([]stateRef, 0, size)}
	for _, o := range outs {
		arena := uint32(len(next.arenas))
		next.arenas = append(next.arenas, o.words)
		for _, c := range o.cands {
			if !e.direct && !c.won {
				continue
			}
			e.parent = append(e.parent, uint32(base+c.from))
			e.act = append(e.act, c.act)
			next.refs = append(next.refs, stateRef{arena: arena, off: c.off})
			res.States++
			if e.cfg.MaxStates > 0 && res.States >= int64(e.cfg.MaxStates) {
				return next, true
			}
		}
	}
	return next, false
}

// claim inserts the candidates of outs into the visited set and marks the
// first candidate of each new fingerprint in chunk order as won. Worker g
// inserts the candidates of the shards s with s % workers == g, so the
// shards fill in parallel and each in chunk order.
func (e *explorer) claim(outs []chunkOut) {
	nw := len(e.workers)
	var wg sync.WaitGroup
	for g := range nw {
		wg.Go(func() {
			for i := range outs {
				cands := outs[i].cands
				for j := range cands {
					c := &cands[j]
					if s := shardOf(c.fp); s%nw == g {
						c.won = e.visited.shards[s].insert(c.fp)
					}
				}
			}
		})
	}
	wg.Wait()
}

// Limits that stop phase 1.
const (
	limitNone = iota
	limitTimeout
	limitInterrupt
	limitMemory
)

// expand runs phase 1 on frontier. It returns one output per chunk and
// which limit struck, if any.
func (e *explorer) expand(front *frontier) ([]chunkOut, int32) {
	nchunks := (front.len() + chunkSize - 1) / chunkSize
	outs := make([]chunkOut, nchunks)
	var nextChunk atomic.Int64
	var stopAt atomic.Int64 // chunks after a violation are not needed
	stopAt.Store(int64(nchunks))
	var limit atomic.Int32
	work := func(w *worker) {
		for {
			c := int(nextChunk.Add(1) - 1)
			if c >= nchunks || int64(c) > stopAt.Load() || limit.Load() != limitNone {
				return
			}
			if l := e.stopped(); l != limitNone {
				limit.Store(l)
				return
			}
			if c%8 == 0 && overMemory(e.cfg.MaxMemory) {
				limit.Store(limitMemory)
				return
			}
			lo, hi := c*chunkSize, min((c+1)*chunkSize, front.len())
			w.expandChunk(front, lo, hi, &outs[c])
			if outs[c].viol != nil {
				for {
					cur := stopAt.Load()
					if int64(c) >= cur || stopAt.CompareAndSwap(cur, int64(c)) {
						break
					}
				}
			}
		}
	}
	e.direct = len(e.workers) == 1 || nchunks == 1
	if e.direct {
		work(e.workers[0])
	} else {
		var wg sync.WaitGroup
		for _, w := range e.workers {
			wg.Go(func() { work(w) })
		}
		wg.Wait()
	}
	return outs, limit.Load()
}

// expandChunk expands the frontier's states lo..hi-1 into out.
func (w *worker) expandChunk(front *frontier, lo, hi int, out *chunkOut) {
	e := w.e
	st := w.st
	for idx := lo; idx < hi; idx++ {
		s := w.pk.unpack(front.at(idx))
		w.acts = st.actions(s, w.acts[:0])
		if len(w.acts) == 0 {
			if s.pendingMask() == 0 {
				continue
			}
			switch v := w.analyzeStop(s); v.outcome {
			case completable:
				out.stops++
			case deadlocked, violatedLater:
				out.viol = &finding{from: idx, act: noAction, prob: v.prob, ext: v.ext}
				return
			case undecided:
				if out.undecided == nil {
					out.undecided = &finding{from: idx, act: noAction, prob: v.prob}
				}
			}
			continue
		}
		for _, a := range w.acts {
			out.transitions++
			if p := st.apply(s, a); p != nil {
				out.viol = &finding{from: idx, act: actCode(a), prob: *p}
				return
			}
			fp := fingerprintOf(&st.next)
			// A fingerprint seen recently was computed by this worker in
			// an earlier level (so it is in the visited set) or earlier in
			// this one, from a state before this one in frontier order
			// (the worker takes chunks in increasing order): it is a
			// duplicate, or a candidate that comes first in phase 2.
			if w.seenRecently(fp) {
				continue
			}
			if e.direct && !e.visited.insert(fp) {
				continue
			}
			out.cands = append(out.cands, candidate{fp: fp, from: idx, act: actCode(a), off: uint32(len(out.words))})
			out.words = w.pk.appendPacked(out.words, &st.next)
		}
	}
}

// seenRecently reports whether fp is in the worker's recent cache, and
// puts it there. Most duplicates were computed shortly before by the same
// worker, so this small direct-mapped cache, which fits in a fast CPU
// cache, catches them before the large visited set is probed.
func (w *worker) seenRecently(fp fingerprint) bool {
	slot := &w.recent[fp.b&(recentSize-1)]
	if *slot == fp {
		return true
	}
	*slot = fp
	return false
}

// initialViolation returns the bounds violation of the initial state, or
// nil.
func (e *explorer) initialViolation() *Violation {
	if f := e.x.prop.Check(stateView{e.root}); f != nil {
		return &Violation{Kind: KindBounds, Detail: "in the initial state: " + f.Error()}
	}
	if g := e.x.guard; g != nil {
		if f := g.Initial(crashView{stateView{e.root}}); f != nil {
			return &Violation{Kind: KindBounds, Detail: "in the initial state: " + f.Error()}
		}
	}
	return nil
}

// actCode packs an action into 32 bits (the operation of a Request is
// implied by the state it is taken in).
func actCode(a Action) uint32 {
	other := a.From
	if a.Kind == Suspect || a.Kind == Trust {
		other = a.Who
	}
	return uint32(a.Kind)<<28 | uint32(a.Node)<<21 | uint32(other)<<14 | uint32(a.Index)&0x3fff
}

// decodeAct is the inverse of actCode, in state s.
func decodeAct(code uint32, s *gstate) Action {
	a := Action{Kind: ActionKind(code >> 28), Node: cs.ID(code >> 21 & 0x7f), Index: int(code & 0x3fff)}
	other := cs.ID(code >> 14 & 0x7f)
	switch a.Kind {
	case Deliver:
		a.From = other
	case Suspect, Trust:
		a.Who = other
	case Request:
		a.Op = s.procs[a.Node-1].nextOp()
	}
	return a
}
