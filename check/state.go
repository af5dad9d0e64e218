package check

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// unlimited is the budget of a process that may make any number of calls
// (the refilled budget of the deadlock analysis).
const unlimited = -1

// inflight is one message in transit on link from -> to.
type inflight struct {
	link uint16 // (from-1)*n + (to-1)
	m    uint32 // interned message id
}

// proc is one process in a global state: its machine's interned id, that
// machine's State and Pending (kept here so that the explorer never looks
// them up), and how many Entry/Exit calls it may still make, or unlimited.
type proc struct {
	m       uint32
	state   cs.State
	pending cs.Op
	budget  int8
}

// nextOp is the call an idle process makes next: Exit when InCS, else
// Entry (the invocation convention).
func (p proc) nextOp() cs.Op {
	if p.state == cs.InCS {
		return cs.Exit
	}
	return cs.Entry
}

// gstate is a global state. Its slices are never modified once the state
// is in a frontier: a successor copies what it changes (copy on write).
// Machines and messages are ids into the run's interner, so a state holds
// no pointer but its slices'.
type gstate struct {
	procs []proc
	// flight holds the messages in transit, sorted by link; within a link
	// in send order (FIFO) or, with unordered channels, by encoding, so
	// that equal multisets are stored equally.
	flight []inflight
	// suspect[i] has bit j set when process i+1's detector suspects j.
	suspect     []uint64
	crashed     uint64 // bit(id) set when process id has crashed
	crashesLeft int8
	// fencing: the run checks the fencing properties (Config.Fencing), and
	// the state has their history: zombies, the processes that crashed
	// InCS (holders for ever); zombieNamed, the processes their tokens
	// name; lastSeq and lastID, the largest Seq of an entry so far and its
	// process (0: none), kept at k = 1 only.
	fencing              bool
	zombies, zombieNamed uint64
	lastSeq              uint64
	lastID               cs.ID
	// guarded: the run checks an exit guard (property.Property.ExitGuard),
	// which reads zombies (CrashView.CrashedInCS); the state keeps them
	// without the fencing history.
	guarded bool
}

// bit is the bit of process id in a 64-bit set of processes: ids 1..64
// (MaxN) take bits 0..63.
func bit(id cs.ID) uint64 { return 1 << uint(id-1) }

func (s *gstate) isCrashed(id cs.ID) bool { return s.crashed&bit(id) != 0 }

// stateView shows a global state to the property: a process counts when it
// is live and InCS.
type stateView struct{ s *gstate }

// InCS implements property.View.
func (v stateView) InCS(id cs.ID) bool {
	return !v.s.isCrashed(id) && v.s.procs[id-1].state == cs.InCS
}

// crashView shows a global state to an exit guard (property.CrashView):
// a process has crashed InCS when it is in zombies, and i's detector has
// reported j's crash when j has crashed and i suspects it. The latter is
// exact under P (it suspects only the crashed), under T once every module
// has trusted every process (Config.Validate asks for cs.Initializing
// machines, and a crash before that is an error), and under S it counts a
// suspicion that the crash made true.
type crashView struct{ stateView }

// Crashed implements property.CrashView.
func (v crashView) Crashed(id cs.ID) bool { return v.s.isCrashed(id) }

// CrashedInCS implements property.CrashView.
func (v crashView) CrashedInCS(id cs.ID) bool { return v.s.zombies&bit(id) != 0 }

// Reported implements property.CrashView.
func (v crashView) Reported(i, j cs.ID) bool {
	return v.s.isCrashed(j) && v.s.suspect != nil && v.s.suspect[i-1]&bit(j) != 0
}

// pendingMask returns the set of live processes with a pending request.
func (s *gstate) pendingMask() uint64 {
	var p uint64
	for i, pr := range s.procs {
		id := cs.ID(i + 1)
		if !s.isCrashed(id) && pr.pending != cs.None {
			p |= bit(id)
		}
	}
	return p
}

// model is the read-only description of the transition system shared by
// every worker, and the run's interner.
type model struct {
	n    int
	prop *property.Property
	// fenceK is the k of the fencing properties (Config.Fencing), 0 when
	// they are not checked.
	fenceK int
	// guard is the property's exit guard (property.Property.ExitGuard),
	// checked after every exit, or nil.
	guard     *property.CrashBounds
	unordered bool
	detector  Detector
	detecting []bool // detecting[i]: process i+1 implements cs.Detecting
	// sendsTo[i]: the processes process i+1 may send to, every one unless
	// its machine is cs.Local (then N_i ∪ {P_i}).
	sendsTo []uint64
	tab     *interner
	// ideals are the abstracted children (abstract.go), none usually.
	ideals []idealChild
}

func (x *model) link(from, to cs.ID) uint16 { return uint16(int(from-1)*x.n + int(to-1)) }
func (x *model) ends(l uint16) (from, to cs.ID) {
	return cs.ID(int(l)/x.n + 1), cs.ID(int(l)%x.n + 1)
}

// initial builds the initial global state from cfg (machines are cloned).
func (x *model) initial(cfg Config) *gstate {
	s := &gstate{
		procs:       make([]proc, x.n),
		crashesLeft: int8(cfg.Crashes),
	}
	for i, m := range cfg.Machines {
		c := m.Clone()
		budget := cfg.Budget
		if cfg.Budgets != nil {
			budget = cfg.Budgets[i]
		}
		s.procs[i] = proc{m: x.tab.internMachine(machineKey(nil, c), c), state: c.State(), pending: c.Pending(), budget: int8(budget)}
		if x.fenceK == 1 && c.State() == cs.InCS {
			if f := c.(cs.Fencing).Fence(); s.lastID == 0 || f.Seq > s.lastSeq {
				s.lastSeq, s.lastID = f.Seq, c.Self()
			}
		}
	}
	s.fencing = x.fenceK > 0
	s.guarded = x.guard != nil
	if x.detector != nil {
		s.suspect = make([]uint64, x.n)
		if x.detector.InitiallySuspects() {
			// Each module's first output: every other process suspected.
			// Validate made sure the machines take it without acting.
			for i := range s.procs {
				for j := cs.ID(1); int(j) <= x.n; j++ {
					if j != cs.ID(i+1) {
						s.suspect[i] |= bit(j)
					}
				}
				if x.detecting[i] {
					m := x.tab.machine(s.procs[i].m).m.Clone()
					suspectAll(m, x.n)
					s.procs[i].m = x.tab.internMachine(machineKey(nil, m), m)
				}
			}
		}
	}
	return s
}

// suspectAll gives machine m Suspect(j) for every other process j, the
// first output of a module that starts suspecting everybody (a trusting
// detector's), and returns the first error or effect.
func suspectAll(m cs.Machine, n int) error {
	var eff cs.Effects
	for j := cs.ID(1); int(j) <= n; j++ {
		if j == m.Self() {
			continue
		}
		if err := eff.Step(m, cs.Input{Kind: cs.InSuspect, Who: j}); err != nil {
			return err
		}
		if len(eff.List) > 0 {
			return fmt.Errorf("P%d acts on its detector's initial suspicion of P%d", m.Self(), j)
		}
	}
	return nil
}

// initialized reports whether every live process that has an
// initialization phase (cs.Initializing) has completed it: the fault model
// of such machines has no crash before that.
func (x *model) initialized(s *gstate) bool {
	for i, p := range s.procs {
		if s.isCrashed(cs.ID(i + 1)) {
			continue
		}
		if im, ok := x.tab.machine(p.m).m.(cs.Initializing); ok && !im.Initialized() {
			return false
		}
	}
	return true
}

// problem is a property failure found while executing one action.
type problem struct {
	kind, detail string
}

// stepper executes actions on a scratch copy of a state. Each worker owns
// one; it is also the cs.Env of the machine being called.
type stepper struct {
	x      *model
	next   gstate // the successor being built; its slices are scratch buffers
	procs  []proc
	fl     []inflight
	mkey   []byte     // a machine's key (machineKey)
	msgKey []byte     // a message's key (msgKey)
	eff    cs.Effects // the effects of the machine call in progress

	// slabs for materialize
	states  []gstate
	procSl  []proc
	flights []inflight

	// the call in progress
	self     cs.ID
	reported cs.State
	prob     *problem
	// visible: the call in progress reported a change of CS state (the
	// partial-order reduction's visibility condition, por.go).
	visible bool

	// memo caches machine calls (nil: every call is made); calls is its
	// scratch buffer, and logging makes effect append to calls.
	memo    *memo
	calls   []envCall
	logging bool

	// record makes the stepper keep trace events (path replay only).
	record bool
	t      float64
	events []trace.Event
}

func newStepper(x *model) *stepper {
	w := &stepper{x: x}
	if memoEntries > 0 {
		w.memo = newMemo(memoEntries)
	}
	return w
}

// effect acts on one effect of the machine call in progress: it interns
// and sends a message, or checks a state change.
func (w *stepper) effect(e cs.Effect) {
	if !e.IsSend() {
		if w.logging {
			w.calls = append(w.calls, envCall{state: e.State})
		}
		w.changed(e.State)
		return
	}
	w.msgKey = msgKey(w.msgKey[:0], e.Msg)
	id := w.x.tab.internMsg(w.msgKey, e.Msg)
	if w.logging {
		w.calls = append(w.calls, envCall{send: true, to: e.To, m: id})
	}
	w.send(e.To, id)
}

// send puts message id in transit to process to.
func (w *stepper) send(to cs.ID, id uint32) {
	if w.record {
		m := w.x.tab.msg(id).msg
		w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvSend, Node: w.self, To: to, Msg: m.Kind(), Words: m.Words()})
	}
	if to < 1 || int(to) > w.x.n {
		w.fail(KindError, fmt.Sprintf("P%d sent %s to P%d, which is not a participant (1..%d)", w.self, w.x.tab.msg(id).msg.Kind(), to, w.x.n))
		return
	}
	if w.x.sendsTo[w.self-1]&bit(to) == 0 {
		w.fail(KindError, fmt.Sprintf("P%d sent %s to P%d, which is not one of its neighbors (cs.Local)", w.self, w.x.tab.msg(id).msg.Kind(), to))
		return
	}
	if w.next.isCrashed(to) {
		return // messages to a crashed process are lost
	}
	w.insert(inflight{link: w.x.link(w.self, to), m: id})
}

// insert puts e into w.next.flight at its canonical place.
func (w *stepper) insert(e inflight) {
	fl := w.next.flight
	i := len(fl)
	for i > 0 && fl[i-1].link > e.link {
		i--
	}
	if w.x.unordered {
		enc := w.x.tab.msg(e.m).enc
		for i > 0 && fl[i-1].link == e.link && bytes.Compare(w.x.tab.msg(fl[i-1].m).enc, enc) > 0 {
			i--
		}
	}
	fl = append(fl, inflight{})
	copy(fl[i+1:], fl[i:])
	fl[i] = e
	w.next.flight = fl
}

// changed checks a state change of the machine being called: the
// convention, then the property's bounds that count it.
func (w *stepper) changed(s cs.State) {
	if w.record {
		w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvState, Node: w.self, State: s.String()})
	}
	if s == w.reported {
		w.fail(KindConvention, fmt.Sprintf("P%d reported a change to %s while already %s", w.self, s, s))
		return
	}
	w.reported = s
	w.visible = true
	// The successor's state of the process is set again from its machine
	// after the call; the property needs it now.
	w.procs[w.self-1].state = s
	if f := w.x.prop.CheckAround(w.self, stateView{&w.next}); f != nil {
		w.fail(KindBounds, fmt.Sprintf("after P%d became %s: %v", w.self, s, f))
	}
	if g := w.x.guard; g != nil && s == cs.OutCS {
		if f := g.AfterExit(w.self, crashView{stateView{&w.next}}); f != nil {
			w.fail(KindBounds, fmt.Sprintf("after P%d became %s: %v", w.self, s, f))
		}
	}
}

func (w *stepper) fail(kind, detail string) {
	if w.prob == nil {
		w.prob = &problem{kind, detail}
	}
}

// actions appends the actions enabled in s, in the checker's fixed order:
// deliveries by link (sender, then receiver), requests by process, grants
// of ideal objects (abstract.go), detector outputs, crashes.
func (w *stepper) actions(s *gstate, dst []Action) []Action {
	x := w.x
	fl := s.flight
	for i := 0; i < len(fl); {
		l := fl[i].link
		from, to := x.ends(l)
		j := i
		for j < len(fl) && fl[j].link == l {
			j++
		}
		if !x.unordered {
			dst = append(dst, Action{Kind: Deliver, Node: to, From: from})
		} else {
			for k := i; k < j; k++ {
				if k > i && fl[k].m == fl[k-1].m {
					continue // the same message again: same successor
				}
				dst = append(dst, Action{Kind: Deliver, Node: to, From: from, Index: k - i})
			}
		}
		i = j
	}
	for i, p := range s.procs {
		id := cs.ID(i + 1)
		if p.budget == 0 || s.isCrashed(id) || p.pending != cs.None {
			continue
		}
		dst = append(dst, Action{Kind: Request, Node: id, Op: p.nextOp()})
	}
	if len(x.ideals) > 0 {
		dst = x.grants(s, dst)
	}
	if x.detector != nil {
		dst = x.detector.Outputs(View{s: s, x: x}, dst)
	}
	if s.crashesLeft > 0 && x.initialized(s) {
		for i := range s.procs {
			if id := cs.ID(i + 1); !s.isCrashed(id) && (x.detector == nil || x.detector.MayCrash(View{s: s, x: x}, id)) {
				dst = append(dst, Action{Kind: Crash, Node: id})
			}
		}
	}
	return dst
}

// apply executes a on a copy of s, leaving the successor in w.next (whose
// slices are scratch until materialized). It returns the first property
// that failed, or nil.
func (w *stepper) apply(s *gstate, a Action) *problem {
	x := w.x
	w.procs = append(w.procs[:0], s.procs...)
	w.next = *s
	w.next.procs = w.procs
	w.next.flight = append(w.fl[:0], s.flight...)
	w.prob = nil
	w.visible = false
	w.self = a.Node
	i := int(a.Node) - 1
	msg := noMsg
	switch a.Kind {
	case Deliver:
		l := x.link(a.From, a.Node)
		p := 0
		for w.next.flight[p].link != l {
			p++
		}
		p += a.Index
		msg = w.next.flight[p].m
		w.next.flight = append(w.next.flight[:p], w.next.flight[p+1:]...)
		if w.record {
			w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvRecv, Node: a.Node, From: a.From, Msg: x.tab.msg(msg).msg.Kind()})
		}
	case Request:
		if b := s.procs[i].budget; b > 0 { // 0 only when replaying a path beyond the budget
			w.procs[i].budget = b - 1
		}
		if w.record {
			w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvRequest, Node: a.Node, Op: a.Op.String()})
		}
	case Grant:
		msg = x.ideals[a.Index].grant
		a.Msg = x.ideals[a.Index].name // for the error, if the parent refuses it
	case Crash:
		w.next.crashed |= bit(a.Node)
		w.next.crashesLeft--
		if w.record {
			w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvCrash, Node: a.Node})
		}
		fl := w.next.flight[:0]
		for _, e := range w.next.flight {
			if _, to := x.ends(e.link); to != a.Node {
				fl = append(fl, e)
			}
		}
		w.next.flight = fl
		if s.procs[i].state == cs.InCS {
			if s.fencing || s.guarded {
				w.next.zombies |= bit(a.Node)
			}
			if f := x.prop.CheckAround(a.Node, stateView{&w.next}); f != nil {
				w.fail(KindBounds, fmt.Sprintf("after P%d crashed InCS: %v", a.Node, f))
			}
		}
		if s.guarded {
			w.untrustedCrash(a.Node)
		}
	case Suspect, Trust:
		w.next.suspect = append([]uint64(nil), s.suspect...)
		if a.Kind == Suspect {
			w.next.suspect[i] |= bit(a.Who)
			if w.record {
				w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvSuspect, Node: a.Node, Who: a.Who})
			}
		} else {
			w.next.suspect[i] &^= bit(a.Who)
			if w.record {
				w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvTrust, Node: a.Node, Who: a.Who})
			}
		}
	}
	if a.Kind != Crash && (x.detecting[i] || (a.Kind != Suspect && a.Kind != Trust)) {
		w.call(i, a, msg)
	}
	if x.fenceK > 0 && w.prob == nil && (w.visible || a.Kind == Crash) {
		w.fences(a)
	}
	if w.record && x.fenceK > 0 && w.visible && w.procs[i].state == cs.InCS {
		w.recordFence(a.Node)
	}
	w.fl = w.next.flight[:0] // keep the grown buffer
	return w.prob
}

// call makes the machine call of action a (not a crash) on a copy of
// process a.Node's machine, delivering message msg (or noMsg), and puts
// the resulting machine into w.procs[i]. With the memo, a call already
// made on the same machine is not made again: its effect is replayed (see
// memo).
func (w *stepper) call(i int, a Action, msg uint32) {
	p := &w.procs[i]
	var key memoKey
	if w.memo != nil {
		key = makeMemoKey(a, p.m, msg)
		if f := w.memo.get(key); f != nil {
			w.reported = f.before
			for _, c := range f.calls {
				if c.send {
					w.send(c.to, c.m)
				} else {
					w.changed(c.state)
				}
			}
			w.checkReported(a.Node, f.after)
			p.m, p.state, p.pending = f.m, f.after, f.pending
			return
		}
		w.calls = w.calls[:0]
	}
	m := w.x.tab.machine(p.m).m.Clone()
	before := p.state
	w.reported = before
	var in cs.Input
	switch a.Kind {
	case Deliver:
		in = cs.Deliver(a.From, w.x.tab.msg(msg).msg)
	case Grant:
		in = cs.Deliver(a.Node, w.x.tab.msg(msg).msg)
	case Request:
		in = cs.Call(a.Op)
	case Suspect:
		in = cs.Input{Kind: cs.InSuspect, Who: a.Who}
	case Trust:
		in = cs.Input{Kind: cs.InTrust, Who: a.Who}
	}
	err := w.eff.Step(m, in)
	w.logging = w.memo != nil
	for _, e := range w.eff.List {
		w.effect(e)
	}
	w.logging = false
	w.eff.Reset()
	if err != nil {
		switch a.Kind {
		case Deliver:
			w.fail(KindError, fmt.Sprintf("P%d cannot receive %s from P%d: %v", a.Node, w.x.tab.msg(msg).msg.Kind(), a.From, err))
		case Request:
			w.fail(KindConvention, fmt.Sprintf("P%d refused %s while %s with no request pending: %v", a.Node, a.Op, before, err))
		default:
			w.fail(KindError, fmt.Sprintf("P%d cannot take %s: %v", a.Node, a, err))
		}
	}
	w.checkReported(a.Node, m.State())
	w.mkey = machineKey(w.mkey[:0], m)
	p.m = w.x.tab.internMachine(w.mkey, m)
	e := w.x.tab.machine(p.m)
	p.state, p.pending = e.state, e.pending
	if w.memo != nil && err == nil {
		w.memo.put(key, &effect{
			m: p.m, calls: slices.Clone(w.calls),
			before: before, after: e.state, pending: e.pending,
		})
	}
}

// fences updates the fencing history after action a, which changed the CS
// state of a.Node or crashed it, and checks the fencing properties
// (Config.Fencing, property.FenceFailure): a holder that crashes stays a
// holder, with its token; at k = 1 an entry's Seq is at least every
// earlier entry's, and above another process's (property.SeqBroken); at
// most k holders are named by no holder's token.
func (w *stepper) fences(a Action) {
	x, s, i := w.x, &w.next, a.Node
	p := w.procs[i-1]
	if a.Kind == Crash {
		if p.state == cs.InCS {
			s.zombieNamed |= x.fenceOf(p).crashed
		}
		return // the holders and their tokens are unchanged
	}
	if p.state == cs.InCS && x.fenceK == 1 {
		f := x.fenceOf(p)
		if property.SeqBroken(f.seq, i, s.lastSeq, s.lastID) {
			w.fail(KindFencing, fmt.Sprintf("after P%d became InCS: %v", i, &property.FenceFailure{ID: i, Seq: f.seq, Max: s.lastSeq, Prev: s.lastID}))
			return
		}
		s.lastSeq, s.lastID = f.seq, i
	}
	holders, named := s.zombies, s.zombieNamed
	for j, q := range w.procs {
		if id := cs.ID(j + 1); q.state == cs.InCS && !s.isCrashed(id) {
			holders |= bit(id)
			named |= x.fenceOf(q).crashed
		}
	}
	if un := holders &^ named; bits.OnesCount64(un) > x.fenceK {
		var ids []cs.ID
		for id := cs.ID(1); int(id) <= x.n; id++ {
			if un&bit(id) != 0 {
				ids = append(ids, id)
			}
		}
		f := property.NamedFailure(x.fenceK, ids, func(id cs.ID) bool { return s.zombies&bit(id) != 0 })
		w.fail(KindFencing, fmt.Sprintf("after P%d became %s: %v", i, p.state, f))
	}
}

// recordFence puts the token of node's machine on its last state event
// (path replay with the fencing properties: a counterexample's trace
// carries the tokens that trace check verifies).
func (w *stepper) recordFence(node cs.ID) {
	for k := len(w.events) - 1; k >= 0; k-- {
		if ev := &w.events[k]; ev.Ev == trace.EvState && ev.Node == node {
			ev.Fence = trace.FenceOf(w.x.tab.machine(w.procs[node-1].m).m.(cs.Fencing).Fence())
			return
		}
	}
}

// fence is a token with its Crashed as a set of bits (bit).
type fence struct {
	seq     uint64
	crashed uint64
}

// fenceOf returns the token of p's machine (cs.Fencing).
func (x *model) fenceOf(p proc) fence {
	f := x.tab.machine(p.m).m.(cs.Fencing).Fence()
	out := fence{seq: f.Seq}
	for id := cs.ID(1); int(id) <= x.n; id++ {
		if f.Crashed.Has(id) {
			out.crashed |= bit(id)
		}
	}
	return out
}

// untrustedCrash fails when process j crashes while a live module of a
// trusting detector has never trusted it (it still suspects j, live): that
// module will never report the crash, which crashView.Reported would count
// as reported. Machines whose initialization waits for every module's
// trust (cs.TrustGated) exclude it: crashes wait for the initialization.
func (w *stepper) untrustedCrash(j cs.ID) {
	if _, ok := w.x.detector.(Trusting); !ok {
		return
	}
	for i := range w.next.procs {
		if id := cs.ID(i + 1); id != j && !w.next.isCrashed(id) && w.next.suspect[i]&bit(j) != 0 {
			w.fail(KindError, fmt.Sprintf("P%d crashed before P%d's trusting detector ever trusted it: the exit guard cannot tell that crash's suspicion from a report: the machines' initialization must wait for every module's trust, as cs.TrustGated declares", j, id))
			return
		}
	}
}

// checkReported fails unless the machine of node, now in state now,
// reported its last change as now (or none if it did not change).
func (w *stepper) checkReported(node cs.ID, now cs.State) {
	if now != w.reported {
		w.fail(KindConvention, fmt.Sprintf("P%d is %s but reported %s", node, now, w.reported))
	}
}

// mergeCrashed makes a crashed process encode as crashedID alone, without
// its budget and its detector's suspicions (tests turn it off to compare).
var mergeCrashed = true

// fingerprintOf returns the fingerprint of s: MurmurHash3 (hasher) of its
// canonical encoding, a sequence of 64-bit words (little-endian), fed to
// the hash word by word without building it. Per process: its machine's id
// with its budget, then, with a detector, its suspicions, or, once it has
// crashed, crashedID and (with a detector) a zero word: nothing reads a
// crashed process's machine, budget or suspicions again (actions,
// detector outputs, the properties and the deadlock analysis all skip
// crashed processes), so states that differ only there are merged; the
// number of messages in transit, then each with its link; the crash budget
// left; with the fencing properties, their history (gstate.fencing: what
// they read of the crashed processes, which their machines' words no longer
// say), or, with an exit guard alone, the processes that crashed InCS
// (gstate.guarded: the guard's CrashedInCS, which the reserved id drops).
// Ids
// stand for contents one to one (intern.go) and the only
// variable-length part is prefixed by its length, so distinct states
// encode differently.
func fingerprintOf(s *gstate) fingerprint {
	h := newHasher()
	for i, p := range s.procs {
		sus := uint64(0)
		if s.suspect != nil {
			sus = s.suspect[i]
		}
		if s.isCrashed(cs.ID(i + 1)) {
			p.m = crashedID
			if mergeCrashed {
				p.budget, sus = 0, 0
			}
		}
		h.add(uint64(p.m) | uint64(uint8(p.budget))<<32)
		if s.suspect != nil {
			h.add(sus)
		}
	}
	h.add(uint64(len(s.flight)))
	for _, e := range s.flight {
		h.add(uint64(e.link)<<32 | uint64(e.m))
	}
	h.add(uint64(uint8(s.crashesLeft)))
	switch {
	case s.fencing:
		h.add(s.zombies)
		h.add(s.zombieNamed)
		h.add(s.lastSeq)
		h.add(uint64(s.lastID))
	case s.guarded:
		h.add(s.zombies)
	}
	return h.sum()
}

// materialize returns a heap copy of w.next that owns its slices. The
// copies are cut from slabs (large blocks allocated together), which makes
// the explorer allocate and collect far fewer objects; a slab lives as long
// as any state cut from it.
func (w *stepper) materialize() *gstate {
	if len(w.states) == 0 {
		w.states = make([]gstate, slabStates)
	}
	s := &w.states[0]
	w.states = w.states[1:]
	*s = w.next
	s.procs = cut(&w.procSl, w.next.procs, slabStates*len(w.next.procs))
	s.flight = cut(&w.flights, w.next.flight, slabStates)
	return s
}

// slabStates sizes the slabs of materialize.
const slabStates = 1024

// cut copies src into the front of *slab (a fresh slab of at least size
// elements when it does not fit) and returns the copy, capped so that
// appending to it never writes into the slab.
func cut[T any](slab *[]T, src []T, size int) []T {
	if len(src) == 0 {
		return nil
	}
	if len(*slab) < len(src) {
		*slab = make([]T, max(size, len(src)))
	}
	c := (*slab)[:len(src):len(src)]
	copy(c, src)
	*slab = (*slab)[len(src):]
	return c
}
