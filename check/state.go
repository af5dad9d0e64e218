package check

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"critsec/cs"
	"critsec/trace"
)

// crashedLen marks a crashed process in gstate.menc.
const crashedLen = 0xffffffff

// unlimited is the budget of a process that may make any number of calls
// (the refilled budget of the deadlock analysis).
const unlimited = -1

// inflight is one message in transit on link from -> to.
type inflight struct {
	link uint16 // (from-1)*n + (to-1)
	m    *sent
}

// sent is a message with its canonical encoding (AppendBinary), made once
// per Send and shared by every state in which the message is in transit
// and, through the memo, by every replay of that Send.
type sent struct {
	msg cs.Message
	enc []byte
}

// gstate is a global state. Its slices are never modified once the state
// is in a frontier: a successor copies what it changes (copy on write), so
// successors share unchanged machines, budgets and suspicions with their
// parent.
type gstate struct {
	ms []cs.Machine
	// menc is the machines' part of the canonical encoding: per process a
	// 4-byte length and its AppendState bytes, or crashedLen for a crashed
	// process (whose state no longer matters). Successors re-encode only
	// the machine that acted.
	menc []byte
	// flight holds the messages in transit, sorted by link; within a link
	// in send order (FIFO) or, with unordered channels, by encoding, so
	// that equal multisets are stored equally.
	flight []inflight
	// budget[i] is how many Entry/Exit calls process i+1 may still make,
	// or unlimited.
	budget []int8
	// suspect[i] has bit j set when process i+1's detector suspects j.
	suspect     []uint64
	crashed     uint64
	crashesLeft int8
	inCS        int16 // live processes InCS
}

func (s *gstate) isCrashed(id cs.ID) bool { return s.crashed&(1<<uint(id)) != 0 }

// pendingMask returns the set of live processes with a pending request.
func (s *gstate) pendingMask() uint64 {
	var p uint64
	for i, m := range s.ms {
		id := cs.ID(i + 1)
		if !s.isCrashed(id) && m.Pending() != cs.None {
			p |= 1 << uint(id)
		}
	}
	return p
}

// model is the read-only description of the transition system shared by
// every worker.
type model struct {
	n         int
	lo, hi    int
	unordered bool
	detector  Detector
	detecting []bool // detecting[i]: process i+1 implements cs.Detecting
}

func (x *model) link(from, to cs.ID) uint16 { return uint16(int(from-1)*x.n + int(to-1)) }
func (x *model) ends(l uint16) (from, to cs.ID) {
	return cs.ID(int(l)/x.n + 1), cs.ID(int(l)%x.n + 1)
}

// initial builds the initial global state from cfg (machines are cloned).
func (x *model) initial(cfg Config) *gstate {
	s := &gstate{
		ms:          make([]cs.Machine, x.n),
		budget:      make([]int8, x.n),
		crashesLeft: int8(cfg.Crashes),
	}
	for i, m := range cfg.Machines {
		s.ms[i] = m.Clone()
		s.budget[i] = int8(cfg.Budget)
		if m.State() == cs.InCS {
			s.inCS++
		}
	}
	if x.detector != nil {
		s.suspect = make([]uint64, x.n)
	}
	for _, m := range s.ms {
		s.menc = appendRecord(s.menc, m)
	}
	return s
}

// appendRecord appends m's record of gstate.menc (nil m: crashed).
func appendRecord(b []byte, m cs.Machine) []byte {
	if m == nil {
		return binary.LittleEndian.AppendUint32(b, crashedLen)
	}
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	b = m.AppendState(b)
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// recordSpan returns where process i+1's record starts and ends in menc.
func recordSpan(menc []byte, i int) (start, end int) {
	for j := 0; ; j++ {
		l := binary.LittleEndian.Uint32(menc[start:])
		end = start + 4
		if l != crashedLen {
			end += int(l)
		}
		if j == i {
			return start, end
		}
		start = end
	}
}

// problem is a property failure found while executing one action.
type problem struct {
	kind, detail string
}

// stepper executes actions on a scratch copy of a state. Each worker owns
// one; it is also the cs.Env of the machine being called.
type stepper struct {
	x    *model
	next gstate // the successor being built; its slices are scratch buffers
	ms   []cs.Machine
	fl   []inflight
	menc []byte
	enc  []byte

	// slabs for materialize
	states   []gstate
	machines []cs.Machine
	bytes    []byte
	flights  []inflight

	// the call in progress
	self     cs.ID
	reported cs.State
	changes  int
	prob     *problem

	// memo caches machine calls (nil: every call is made); key, rec and
	// calls are its scratch buffers, and logging makes Send and Changed
	// append to calls.
	memo    *memo
	key     []byte
	rec     []byte
	calls   []envCall
	logging bool

	// record makes the stepper keep trace events (path replay only).
	record bool
	t      float64
	events []trace.Event
}

func newStepper(x *model) *stepper {
	w := &stepper{x: x, ms: make([]cs.Machine, x.n)}
	if memoEntries > 0 {
		w.memo = newMemo(memoEntries)
	}
	return w
}

// Send implements cs.Env.
func (w *stepper) Send(to cs.ID, m cs.Message) {
	p := &sent{msg: m, enc: m.AppendBinary(nil)}
	if w.logging {
		w.calls = append(w.calls, envCall{send: true, to: to, m: p})
	}
	w.send(to, p)
}

// send puts p in transit to process to.
func (w *stepper) send(to cs.ID, p *sent) {
	if w.record {
		w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvSend, Node: w.self, To: to, Msg: p.msg.Kind(), Words: p.msg.Words()})
	}
	if to < 1 || int(to) > w.x.n {
		w.fail(KindError, fmt.Sprintf("P%d sent %s to P%d, which is not a participant (1..%d)", w.self, p.msg.Kind(), to, w.x.n))
		return
	}
	if w.next.isCrashed(to) {
		return // messages to a crashed process are lost
	}
	w.insert(inflight{link: w.x.link(w.self, to), m: p})
}

// insert puts e into w.next.flight at its canonical place.
func (w *stepper) insert(e inflight) {
	fl := w.next.flight
	i := len(fl)
	for i > 0 && fl[i-1].link > e.link {
		i--
	}
	if w.x.unordered {
		for i > 0 && fl[i-1].link == e.link && bytes.Compare(fl[i-1].m.enc, e.m.enc) > 0 {
			i--
		}
	}
	fl = append(fl, inflight{})
	copy(fl[i+1:], fl[i:])
	fl[i] = e
	w.next.flight = fl
}

// Changed implements cs.Env: it checks the convention and the bounds.
func (w *stepper) Changed(s cs.State) {
	if w.logging {
		w.calls = append(w.calls, envCall{state: s})
	}
	if w.record {
		w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvState, Node: w.self, State: s.String()})
	}
	if s == w.reported {
		w.fail(KindConvention, fmt.Sprintf("P%d reported a change to %s while already %s", w.self, s, s))
		return
	}
	w.reported = s
	w.changes++
	if s == cs.InCS {
		w.next.inCS++
	} else {
		w.next.inCS--
	}
	if c := int(w.next.inCS); c < w.x.lo || c > w.x.hi {
		w.fail(KindBounds, fmt.Sprintf("%d processes InCS after P%d became %s, want %d..%d", c, w.self, s, w.x.lo, w.x.hi))
	}
}

func (w *stepper) fail(kind, detail string) {
	if w.prob == nil {
		w.prob = &problem{kind, detail}
	}
}

// actions appends the actions enabled in s, in the checker's fixed order:
// deliveries by link (sender, then receiver), requests by process,
// detector outputs, crashes.
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
				if k > i && bytes.Equal(fl[k].m.enc, fl[k-1].m.enc) {
					continue // the same message again: same successor
				}
				dst = append(dst, Action{Kind: Deliver, Node: to, From: from, Index: k - i})
			}
		}
		i = j
	}
	for i, m := range s.ms {
		id := cs.ID(i + 1)
		if s.budget[i] == 0 || s.isCrashed(id) || m.Pending() != cs.None {
			continue
		}
		op := cs.Entry
		if m.State() == cs.InCS {
			op = cs.Exit
		}
		dst = append(dst, Action{Kind: Request, Node: id, Op: op})
	}
	if x.detector != nil {
		dst = x.detector.Outputs(View{s: s, x: x}, dst)
	}
	if s.crashesLeft > 0 {
		for i := range s.ms {
			if id := cs.ID(i + 1); !s.isCrashed(id) {
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
	copy(w.ms, s.ms)
	w.next = *s
	w.next.ms = w.ms
	w.next.flight = append(w.fl[:0], s.flight...)
	w.prob = nil
	w.self = a.Node
	w.changes = 0
	i := int(a.Node) - 1
	var msg *sent
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
			w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvRecv, Node: a.Node, From: a.From, Msg: msg.msg.Kind()})
		}
	case Request:
		if b := s.budget[i]; b > 0 { // 0 only when replaying a path beyond the budget
			w.next.budget = append([]int8(nil), s.budget...)
			w.next.budget[i] = b - 1
		}
		if w.record {
			w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvRequest, Node: a.Node, Op: a.Op.String()})
		}
	case Crash:
		w.next.crashed |= 1 << uint(a.Node)
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
		if s.ms[i].State() == cs.InCS {
			w.next.inCS--
			if c := int(w.next.inCS); c < x.lo {
				w.fail(KindBounds, fmt.Sprintf("%d processes InCS after P%d crashed InCS, want %d..%d", c, a.Node, x.lo, x.hi))
			}
		}
	case Suspect, Trust:
		w.next.suspect = append([]uint64(nil), s.suspect...)
		if a.Kind == Suspect {
			w.next.suspect[i] |= 1 << uint(a.Who)
			if w.record {
				w.events = append(w.events, trace.Event{T: w.t, Ev: trace.EvSuspect, Node: a.Node, Who: a.Who})
			}
		} else {
			w.next.suspect[i] &^= 1 << uint(a.Who)
		}
	}
	start, end := recordSpan(s.menc, i)
	var rec []byte
	if a.Kind == Crash {
		rec = binary.LittleEndian.AppendUint32(w.rec[:0], crashedLen)
	} else {
		rec = w.call(s.ms[i], a, msg, s.menc[start:end])
	}
	b := append(w.menc[:0], s.menc[:start]...)
	b = append(b, rec...)
	w.menc = append(b, s.menc[end:]...)
	w.fl = w.next.flight[:0] // keep the grown buffer
	w.next.menc = w.menc
	return w.prob
}

// call makes the machine call of action a (not a crash) on a copy of
// process a.Node's machine old, whose record in gstate.menc is rec, and
// returns the new record. The copy is left in w.ms. With the memo, a call
// already made on a machine with the same record is not made again: its
// effect is replayed (see memo).
func (w *stepper) call(old cs.Machine, a Action, msg *sent, rec []byte) []byte {
	i := int(a.Node) - 1
	if w.memo != nil {
		w.key = memoKey(w.key[:0], a, msg, rec)
		if f := w.memo.get(w.key); f != nil {
			w.ms[i] = f.m
			w.reported = f.before
			for _, c := range f.calls {
				if c.send {
					w.send(c.to, c.m)
				} else {
					w.Changed(c.state)
				}
			}
			w.checkReported(a.Node, f.after)
			return f.rec
		}
		w.calls = w.calls[:0]
	}
	m := old.Clone()
	w.ms[i] = m
	before := m.State()
	w.reported = before
	w.logging = w.memo != nil
	var err error
	switch a.Kind {
	case Deliver:
		if err = m.Receive(w, a.From, msg.msg); err != nil {
			w.fail(KindError, fmt.Sprintf("P%d cannot receive %s from P%d: %v", a.Node, msg.msg.Kind(), a.From, err))
		}
	case Request:
		if a.Op == cs.Entry {
			err = m.Entry(w)
		} else {
			err = m.Exit(w)
		}
		if err != nil {
			w.fail(KindConvention, fmt.Sprintf("P%d refused %s while %s with no request pending: %v", a.Node, a.Op, before, err))
		}
	case Suspect, Trust:
		d := m.(cs.Detecting)
		if a.Kind == Suspect {
			err = d.Suspect(w, a.Who)
		} else {
			err = d.Trust(w, a.Who)
		}
		if err != nil {
			w.fail(KindError, fmt.Sprintf("P%d cannot take %s: %v", a.Node, a, err))
		}
	}
	w.logging = false
	after := m.State()
	w.checkReported(a.Node, after)
	w.rec = appendRecord(w.rec[:0], m)
	if w.memo != nil && err == nil {
		w.memo.put(w.key, &effect{
			m: m, rec: slices.Clone(w.rec), calls: slices.Clone(w.calls),
			before: before, after: after,
		})
	}
	return w.rec
}

// checkReported fails unless the machine of node, now in state now,
// reported its last change as now (or none if it did not change).
func (w *stepper) checkReported(node cs.ID, now cs.State) {
	if now != w.reported {
		w.fail(KindConvention, fmt.Sprintf("P%d is %s but reported %s", node, now, w.reported))
	}
}

// encode writes the canonical encoding of s into w.enc: the machine
// records (menc), each process's budget and suspicions, the messages in
// transit with their links (each message length-prefixed), and the crash
// budget left. Every part has a fixed or prefixed length, so distinct states
// encode differently.
func (w *stepper) encode(s *gstate) []byte {
	b := append(w.enc[:0], s.menc...)
	for i := range s.ms {
		b = append(b, byte(s.budget[i]))
		if s.suspect != nil {
			b = binary.AppendUvarint(b, s.suspect[i])
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.flight)))
	for _, e := range s.flight {
		b = append(b, byte(e.link), byte(e.link>>8))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.m.enc)))
		b = append(b, e.m.enc...)
	}
	b = append(b, byte(s.crashesLeft))
	w.enc = b
	return b
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
	s.ms = cut(&w.machines, w.next.ms, slabStates*len(w.next.ms))
	s.menc = cut(&w.bytes, w.next.menc, slabBytes)
	s.flight = cut(&w.flights, w.next.flight, slabStates)
	return s
}

// slabStates and slabBytes size the slabs of materialize.
const (
	slabStates = 1024
	slabBytes  = 64 << 10
)

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
