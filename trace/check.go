package trace

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/property"
)

// Report is what Check found in a trace.
type Report struct {
	Header Header
	// Property is the safety property checked (Header.Property).
	Property *property.Property
	// Lo and Hi are the global bounds checked: the header's "lo" and "hi",
	// or its l and k when the header has no bounds; 0 and n for a local
	// property, which bounds neighborhoods instead.
	Lo, Hi int
	// Events is the number of events after the header.
	Events int64
	// MinInCS and MaxInCS are the extremes of #InCS over all live
	// processes, the initial configuration included (up to the violation,
	// if any).
	MinInCS, MaxInCS int
	// Unreceived counts sends never matched by a recv: messages still in
	// transit when the trace ends, or lost at crashed processes. It is not
	// an error (a model-checker path or a cut-off run ends with messages in
	// flight).
	Unreceived int64
	// Pending counts live processes whose last request has no state event.
	Pending int
	// Entries[i] and Exits[i] count the state events of process i (to InCS
	// and to OutCS), i = 1..n; index 0 is unused.
	Entries, Exits []int64
	// Fences counts the entries that carried a fencing token, and FenceK
	// is the k the fencing properties were checked with (0: no token, not
	// checked).
	Fences int64
	FenceK int
	// Violation is the first inconsistency, or nil.
	Violation *Violation
	// Claim is the header's "demonstrates" or the final verdict event's
	// claim (nil when the trace claims nothing),
	// Confirmation whether the trace shows it, and ClaimNote why, in one
	// sentence.
	Claim        *Claim
	Confirmation Confirmation
	ClaimNote    string
}

// Confirmation is Check's answer to a header's claim.
type Confirmation uint8

const (
	// NoClaim: the header claims nothing.
	NoClaim Confirmation = iota
	// Confirmed: the trace shows the claimed violation.
	Confirmed
	// NotConfirmed: the trace does not show it (it shows another
	// violation, or none, or its end is not a deadlock, or not the
	// starvation or livelock the claim states in numbers).
	NotConfirmed
	// CannotConfirm: nothing in the trace contradicts the claim, but a
	// trace alone cannot show it (a deadlock decided by searching the
	// continuations, a machine's refusal or error, which traces do not
	// record).
	CannotConfirm
)

// String is the word trace check prints: "confirmed", "not confirmed",
// "cannot confirm" ("no claim" for NoClaim).
func (c Confirmation) String() string {
	return [...]string{"no claim", "confirmed", "not confirmed", "cannot confirm"}[c]
}

// Rules a violation breaks (Violation.Rule).
const (
	// RuleBounds: the safety property (Header.Property).
	RuleBounds = "bounds"
	// RuleMessages: a recv without a matching send in transit.
	RuleMessages = "messages"
	// RuleConvention: a request or state change against the invocation
	// convention.
	RuleConvention = "convention"
	// RuleRun: the run is not well formed (ids out of range, time going
	// back, a crashed process acting).
	RuleRun = "run"
	// RuleFencing: a fencing property (property.FenceFailure), checked
	// once entries carry tokens.
	RuleFencing = "fencing"
)

// Violation is the first event that breaks a rule of the trace.
type Violation struct {
	// Line is the 1-based line number (1 is the header).
	Line int
	// T is the event's time; Event describes it ("P2 received REPLY from P1").
	T     float64
	Event string
	// Rule is the rule broken (RuleBounds, ...); Reason says how.
	Rule   string
	Reason string
	// Failure is the bound that broke, for RuleBounds.
	Failure *property.Failure
	// InCS lists the live processes InCS just after the event.
	InCS []cs.ID
}

// Error is the violation in one line.
func (v *Violation) Error() string {
	return fmt.Sprintf("line %d (t=%g, %s): %s; InCS: %v", v.Line, v.T, v.Event, v.Reason, v.InCS)
}

// Check reads a whole trace with the default Limits and re-checks the run
// it records; see CheckLimits.
func Check(r io.Reader) (*Report, error) { return CheckLimits(r, Limits{}) }

// CheckLimits reads a whole trace and re-checks the run it records, on its
// own:
//
//   - the safety property of the header (Header.Property: global bounds
//     lo..hi, or local bounds l_i..k_i on every neighborhood) holds in the
//     initial configuration (header "initial", ids valid and distinct) and
//     after every event; a crashed process no longer counts;
//   - with an exit guard (Header.ExitGuard), every exit keeps S2
//     (property.CrashBounds.AfterExit), with the reports of the trace's
//     suspect and trust events (detector.Reports, of the class the
//     header's "detector" parameter names, else P);
//   - every recv is matched by an earlier send on the same link (from, to)
//     with the same message kind, not matched before; when the header says
//     "fifo": true, it must be the oldest unmatched send of that link;
//   - a state event follows a pending request of its node (entry -> InCS,
//     exit -> OutCS), a request is made only under the invocation
//     convention (entry when OutCS, exit when InCS) and never while another
//     request of the node is pending;
//   - node ids lie in 1..n, time never decreases, and a crashed process
//     takes no further step and does not crash twice.
//
// Sends never received at the end are allowed (Report.Unreceived). When
// the header claims a violation ("demonstrates"), Report.Confirmation says
// whether the trace shows it.
//
// The error is an I/O error or a *FormatError (a malformed line, or a
// header over lim: its n above lim.MaxN is refused before any memory is
// taken for it); the first inconsistency of a well-formed trace is
// Report.Violation.
func CheckLimits(r io.Reader, lim Limits) (*Report, error) {
	tr, err := NewReaderLimits(r, lim)
	if err != nil {
		return nil, err
	}
	h := tr.Header
	if h.N >= 1 && h.N <= MaxID && h.N > lim.maxN() {
		return nil, &FormatError{Line: 1, Err: fmt.Errorf("header: %w", &LimitError{What: "n", Value: int64(h.N), Limit: int64(lim.maxN())})}
	}
	p, err := h.Property()
	if err != nil {
		return nil, &FormatError{Line: 1, Err: fmt.Errorf("header: %w", err)}
	}
	c := newChecker(h, p)
	c.line = 1
	if !c.initial(h.Initial) {
		return c.done(), nil
	}
	c.lastT = math.Inf(-1)
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		c.line = tr.Line()
		c.rep.Events++
		c.ev = ev
		if !c.step(ev) {
			return c.claimAfter(tr)
		}
	}
	return c.done(), nil
}

// claimAfter reads the rest of a trace after its first violation, without
// checking it, for the verdict a runtime writes last (the simulator's): a
// violation found there is what the verdict claims.
func (c *checker) claimAfter(tr *Reader) (*Report, error) {
	for c.rep.Claim == nil {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		c.rep.Events++
		if ev.Ev == EvVerdict {
			cl := ev.Claim()
			c.rep.Claim = &cl
		}
	}
	return c.done(), nil
}

type fifo struct {
	kinds []int32
	seqs  []uint64 // the sends' "seq", 0 where absent
	head  int
	last  uint64 // the last send's seq on the link
}

type bagKey struct {
	link int64
	kind int32
}

type checker struct {
	rep     *Report
	n       int
	verdict bool // the trace's verdict event was read: nothing may follow
	// drained: the trace's drain event was read (no entry request may
	// follow).
	drained bool
	fifo    bool
	state   []cs.State
	pending []cs.Op
	crashed []bool
	// reqT[i] is the time of i's last request (for a starvation claim).
	reqT []float64
	// The last state event (for a starvation or livelock claim): its time
	// and node (0: none yet), and the recvs after it.
	stateT     float64
	stateNode  cs.ID
	quietRecvs int64
	prop       *property.Tracker
	inCS       int // live processes InCS
	kinds      map[string]int32
	names      []string // names[k] is the kind interned as k
	links      map[int64]*fifo
	bags       map[bagKey]int64
	sent       int64 // sends not yet matched
	// suspects holds the pairs (i, j) where i has suspected j.
	suspects map[[2]cs.ID]bool
	// guard is the property's exit guard (nil without one), and reports
	// what the detector modules have reported by the current event.
	guard   *property.CrashBounds
	reports *detector.Reports
	// fences checks the fencing properties from the first entry that
	// carries a token on (nil before; global properties only).
	fences *property.Fences
	line   int
	lastT  float64
	ev     Event
}

func newChecker(h Header, p *property.Property) *checker {
	lo, hi := p.GlobalBounds()
	c := &checker{
		rep:     &Report{Header: h, Property: p, Lo: lo, Hi: hi, Claim: h.Demonstrates},
		n:       h.N,
		fifo:    h.FIFO,
		state:   make([]cs.State, h.N+1),
		pending: make([]cs.Op, h.N+1),
		crashed: make([]bool, h.N+1),
		reqT:    make([]float64, h.N+1),
		kinds:   map[string]int32{},
	}
	c.rep.Entries, c.rep.Exits = make([]int64, h.N+1), make([]int64, h.N+1)
	if c.guard = p.ExitGuard(); c.guard != nil {
		c.reports = detector.NewReports(traceDetector(h))
	}
	if c.fifo {
		c.links = map[int64]*fifo{}
	} else {
		c.bags = map[bagKey]int64{}
	}
	return c
}

// initial sets up the initial configuration and checks it.
func (c *checker) initial(ids []cs.ID) bool {
	for _, id := range ids {
		if !c.valid(id) {
			return c.fail(RuleRun, fmt.Sprintf("initial: process id %d is out of range 1..%d", id, c.n))
		}
		if c.state[id] == cs.InCS {
			return c.fail(RuleRun, fmt.Sprintf("initial: process %d is listed twice", id))
		}
		c.state[id] = cs.InCS
		c.inCS++
	}
	c.rep.MinInCS, c.rep.MaxInCS = c.inCS, c.inCS
	t, f := property.NewTracker(c.rep.Property, c)
	c.prop = t
	if !c.bounds(f) {
		return false
	}
	if c.guard != nil {
		if f := c.guard.Initial(c); f != nil {
			return c.fail(RuleBounds, f.Error())
		}
	}
	return true
}

// traceDetector is the detector class the header's "detector" parameter
// names (the simulator and the model checker write it), P when it names
// none: then every suspicion is a report. The simulator writes a trusting
// detector's initial suspicions at t = 0; the model checker keeps them in
// its initial state, so each suspect event it writes follows a trust of
// the pair, a report under either reading.
func traceDetector(h Header) detector.Class {
	if s, ok := h.Params["detector"].(string); ok {
		if c, err := detector.Parse(s); err == nil {
			return c
		}
	}
	return detector.P
}

// Crashed implements property.CrashView: id has crashed.
func (c *checker) Crashed(id cs.ID) bool { return c.valid(id) && c.crashed[id] }

// CrashedInCS implements property.CrashView: id crashed while InCS (its
// state stays what it was at the crash).
func (c *checker) CrashedInCS(id cs.ID) bool { return c.Crashed(id) && c.state[id] == cs.InCS }

// Reported implements property.CrashView: i's module has reported j's
// crash by the current event (detector.Reports).
func (c *checker) Reported(i, j cs.ID) bool { return c.reports.Reported(i, j) }

// InCS implements property.View: id is live and InCS.
func (c *checker) InCS(id cs.ID) bool { return c.valid(id) && !c.crashed[id] && c.state[id] == cs.InCS }

func (c *checker) valid(id cs.ID) bool { return id >= 1 && int(id) <= c.n }

func (c *checker) kind(s string) int32 {
	k, ok := c.kinds[s]
	if !ok {
		k = int32(len(c.names))
		c.kinds[s] = k
		c.names = append(c.names, s)
	}
	return k
}

func (c *checker) link(from, to cs.ID) int64 { return int64(from)*int64(c.n+1) + int64(to) }

// step checks one event and applies it; false means a violation.
func (c *checker) step(ev Event) bool {
	if math.IsNaN(ev.T) || ev.T < c.lastT {
		return c.fail(RuleRun, fmt.Sprintf("time %g is before the previous event's %g", ev.T, c.lastT))
	}
	c.lastT = ev.T
	if c.verdict {
		return c.fail(RuleRun, "an event after the verdict, which ends a trace")
	}
	if ev.Ev == EvVerdict {
		if c.rep.Claim != nil {
			return c.fail(RuleRun, "a verdict in a trace whose header already claims one")
		}
		c.verdict = true
		cl := ev.Claim()
		c.rep.Claim = &cl
		return true
	}
	if ev.Ev == EvDrain {
		if c.drained {
			return c.fail(RuleRun, "a second drain event: the workload stops once")
		}
		c.drained = true
		return true
	}
	if !c.valid(ev.Node) {
		return c.fail(RuleRun, fmt.Sprintf("node %d is out of range 1..%d", ev.Node, c.n))
	}
	if c.crashed[ev.Node] {
		return c.fail(RuleRun, fmt.Sprintf("P%d acts after it crashed", ev.Node))
	}
	switch ev.Ev {
	case EvSend:
		return c.send(ev)
	case EvRecv:
		return c.recv(ev)
	case EvRequest:
		return c.request(ev)
	case EvState:
		return c.changed(ev)
	case EvCrash:
		c.crashed[ev.Node] = true
		if c.fences != nil {
			c.fences.Crash(ev.Node)
		}
		if c.state[ev.Node] == cs.InCS {
			c.inCS--
			return c.bounds(c.prop.Set(ev.Node, false))
		}
	case EvSuspect:
		if !c.valid(ev.Who) || ev.Who == ev.Node {
			return c.fail(RuleRun, fmt.Sprintf("P%d suspects %d: need another process id in 1..%d", ev.Node, ev.Who, c.n))
		}
		if c.suspects == nil {
			c.suspects = map[[2]cs.ID]bool{}
		}
		c.suspects[[2]cs.ID{ev.Node, ev.Who}] = true
		if c.reports != nil {
			c.reports.Suspect(ev.Node, ev.Who)
		}
	case EvTrust:
		if !c.valid(ev.Who) || ev.Who == ev.Node {
			return c.fail(RuleRun, fmt.Sprintf("P%d trusts %d: need another process id in 1..%d", ev.Node, ev.Who, c.n))
		}
		delete(c.suspects, [2]cs.ID{ev.Node, ev.Who})
		if c.reports != nil {
			c.reports.Trust(ev.Node, ev.Who)
		}
	}
	return true
}

func (c *checker) send(ev Event) bool {
	if !c.valid(ev.To) {
		return c.fail(RuleRun, fmt.Sprintf("destination %d is out of range 1..%d", ev.To, c.n))
	}
	k := c.kind(ev.Msg)
	if c.fifo {
		l := c.links[c.link(ev.Node, ev.To)]
		if l == nil {
			l = &fifo{}
			c.links[c.link(ev.Node, ev.To)] = l
		}
		if ev.Seq != 0 {
			if l.last != 0 && ev.Seq != l.last+1 {
				return c.fail(RuleMessages, fmt.Sprintf("send of seq %d from P%d to P%d after seq %d: a link's sequence numbers go up by one", ev.Seq, ev.Node, ev.To, l.last))
			}
			l.last = ev.Seq
		}
		l.kinds = append(l.kinds, k)
		l.seqs = append(l.seqs, ev.Seq)
	} else {
		c.bags[bagKey{c.link(ev.Node, ev.To), k}]++
	}
	c.sent++
	return true
}

func (c *checker) recv(ev Event) bool {
	i := ev.Node
	if !c.valid(ev.From) {
		return c.fail(RuleRun, fmt.Sprintf("sender %d is out of range 1..%d", ev.From, c.n))
	}
	k := c.kind(ev.Msg)
	if c.fifo {
		l := c.links[c.link(ev.From, i)]
		if l == nil || l.head == len(l.kinds) {
			return c.fail(RuleMessages, fmt.Sprintf("no message from P%d to P%d is in transit", ev.From, i))
		}
		if l.kinds[l.head] != k {
			return c.fail(RuleMessages, fmt.Sprintf("the oldest message in transit from P%d to P%d is %s, not %s (the run is FIFO)", ev.From, i, c.names[l.kinds[l.head]], ev.Msg))
		}
		if s := l.seqs[l.head]; s != 0 && ev.Seq != 0 && s != ev.Seq {
			return c.fail(RuleMessages, fmt.Sprintf("recv of seq %d from P%d to P%d, but the oldest message in transit is seq %d (lost or duplicated)", ev.Seq, ev.From, i, s))
		}
		l.head++
		if l.head == len(l.kinds) {
			l.kinds, l.seqs, l.head = l.kinds[:0], l.seqs[:0], 0
		} else if l.head >= 64 && 2*l.head >= len(l.kinds) {
			l.kinds = l.kinds[:copy(l.kinds, l.kinds[l.head:])]
			l.seqs = l.seqs[:copy(l.seqs, l.seqs[l.head:])]
			l.head = 0
		}
	} else {
		key := bagKey{c.link(ev.From, i), k}
		if c.bags[key] == 0 {
			return c.fail(RuleMessages, fmt.Sprintf("no %s message from P%d to P%d is in transit", ev.Msg, ev.From, i))
		}
		if c.bags[key]--; c.bags[key] == 0 {
			delete(c.bags, key)
		}
	}
	c.sent--
	c.quietRecvs++
	return true
}

func (c *checker) request(ev Event) bool {
	i := ev.Node
	op := cs.Entry
	if ev.Op == cs.Exit.String() {
		op = cs.Exit
	}
	switch {
	case op == cs.Entry && c.drained:
		return c.fail(RuleRun, fmt.Sprintf("P%d requests entry after the drain event, after which no process calls Entry", i))
	case c.pending[i] != cs.None:
		return c.fail(RuleConvention, fmt.Sprintf("P%d requests %s while its %s request is pending", i, op, c.pending[i]))
	case op == cs.Entry && c.state[i] != cs.OutCS:
		return c.fail(RuleConvention, fmt.Sprintf("P%d requests entry while InCS", i))
	case op == cs.Exit && c.state[i] != cs.InCS:
		return c.fail(RuleConvention, fmt.Sprintf("P%d requests exit while OutCS", i))
	}
	c.pending[i] = op
	c.reqT[i] = ev.T
	return true
}

func (c *checker) changed(ev Event) bool {
	i := ev.Node
	s, want := cs.OutCS, cs.Exit
	if ev.State == cs.InCS.String() {
		s, want = cs.InCS, cs.Entry
	}
	if c.pending[i] != want {
		return c.fail(RuleConvention, fmt.Sprintf("P%d becomes %s without a pending %s request", i, s, want))
	}
	c.pending[i] = cs.None
	c.state[i] = s
	c.stateT, c.stateNode, c.quietRecvs = ev.T, i, 0
	if s == cs.InCS {
		c.inCS++
		c.rep.Entries[i]++
	} else {
		c.inCS--
		c.rep.Exits[i]++
	}
	if !c.bounds(c.prop.Set(i, s == cs.InCS)) {
		return false
	}
	if c.guard != nil && s == cs.OutCS {
		if f := c.guard.AfterExit(i, c); f != nil {
			return c.fail(RuleBounds, f.Error())
		}
	}
	return c.fence(ev)
}

// fence checks the fencing properties after the state event ev: from the
// first entry that carries a token on, the holders so far (the processes
// InCS, crashed or not) count with tokens that name nobody and have no
// Seq, as does a later entry without a token.
func (c *checker) fence(ev Event) bool {
	if c.fences == nil {
		if ev.Fence == nil || !c.rep.Property.IsGlobal() {
			return true
		}
		_, hi := c.rep.Property.GlobalBounds()
		c.fences, c.rep.FenceK = property.NewFences(hi), hi
		for id := cs.ID(1); int(id) <= c.n; id++ {
			if id != ev.Node && c.state[id] == cs.InCS {
				c.fences.Enter(id, 0, false, nil)
				if c.crashed[id] {
					c.fences.Crash(id)
				}
			}
		}
	}
	var f *property.FenceFailure
	switch {
	case ev.State != cs.InCS.String():
		f = c.fences.Exit(ev.Node)
	case ev.Fence == nil:
		f = c.fences.Enter(ev.Node, 0, false, nil)
	default:
		for _, j := range ev.Fence.Crashed {
			if !c.valid(j) {
				return c.fail(RuleRun, fmt.Sprintf("P%d's fence names process %d: ids run from 1 to %d", ev.Node, j, c.n))
			}
		}
		f = c.fences.Enter(ev.Node, ev.Fence.Seq, true, ev.Fence.Crashed)
		c.rep.Fences++
	}
	if f != nil {
		return c.fail(RuleFencing, f.Error())
	}
	return true
}

// bounds records the extremes of #InCS and turns f, the bound the last
// change broke (nil if none), into a violation.
func (c *checker) bounds(f *property.Failure) bool {
	c.rep.MinInCS = min(c.rep.MinInCS, c.inCS)
	c.rep.MaxInCS = max(c.rep.MaxInCS, c.inCS)
	if f == nil {
		return true
	}
	c.fail(RuleBounds, f.Error())
	c.rep.Violation.Failure = f
	return false
}

func (c *checker) fail(rule, reason string) bool {
	v := &Violation{Line: c.line, T: c.ev.T, Event: describe(c.ev), Rule: rule, Reason: reason}
	if c.line == 1 {
		v.Event = "header"
	}
	v.InCS = c.liveInCS()
	c.rep.Violation = v
	return false
}

func (c *checker) liveInCS() []cs.ID {
	var ids []cs.ID
	for id := cs.ID(1); int(id) <= c.n; id++ {
		if c.InCS(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// done completes the report: the counts at the end and the answer to the
// header's claim.
func (c *checker) done() *Report {
	for id := 1; id <= c.n; id++ {
		if !c.crashed[id] && c.pending[id] != cs.None {
			c.rep.Pending++
		}
	}
	c.rep.Unreceived = c.sent
	if cl := c.rep.Claim; cl != nil {
		c.rep.Confirmation, c.rep.ClaimNote = c.confirm(cl)
	}
	return c.rep
}

// confirm answers the claim cl.
func (c *checker) confirm(cl *Claim) (Confirmation, string) {
	k, v := cl.Kind, c.rep.Violation
	switch {
	case v != nil && (k == KindBounds && v.Rule == RuleBounds || k == KindConvention && v.Rule == RuleConvention || k == KindFencing && v.Rule == RuleFencing):
		return Confirmed, fmt.Sprintf("line %d breaks it: %s", v.Line, v.Reason)
	case v != nil:
		return NotConfirmed, fmt.Sprintf("the trace breaks another rule (%s) first, at line %d", v.Rule, v.Line)
	case k == KindBounds:
		return NotConfirmed, "the property holds in every state of the trace"
	case k == KindFencing:
		return NotConfirmed, "the fencing properties hold in every state of the trace"
	case k == KindConvention:
		return CannotConfirm, "no request or state change in the trace breaks the invocation convention; a machine that refuses a call or changes state silently leaves no event, so a trace alone cannot show it"
	case k == KindError:
		return CannotConfirm, "a trace does not record a machine's errors"
	case k == KindStarvation:
		return c.confirmStarvation(cl)
	case k == KindLivelock:
		return c.confirmLivelock(cl)
	}
	return c.confirmDeadlock()
}

// confirmStarvation checks a starvation claim against the trace: process
// cl.Who made a request at cl.Since that is still pending at the end, live,
// at least cl.Bound later, and another process changed state after
// cl.Since + cl.Bound, so the others progressed while it waited (an exit
// the exit guard holds is not starved: it must wait).
func (c *checker) confirmStarvation(cl *Claim) (Confirmation, string) {
	i := cl.Who
	switch {
	case !c.valid(i):
		return NotConfirmed, fmt.Sprintf("the claim names process %d: ids run from 1 to %d", i, c.n)
	case c.crashed[i]:
		return NotConfirmed, fmt.Sprintf("P%d crashed: a crashed process is not starved", i)
	case c.pending[i] == cs.None:
		return NotConfirmed, fmt.Sprintf("P%d has no request pending at the end of the trace", i)
	case c.reqT[i] != cl.Since:
		return NotConfirmed, fmt.Sprintf("P%d's pending request was made at t=%g, not at t=%g as claimed", i, c.reqT[i], cl.Since)
	case !(cl.Since+cl.Bound <= c.lastT):
		return NotConfirmed, fmt.Sprintf("P%d's request, made at t=%g, was pending %g time units at the end of the trace (t=%g), less than the bound %g", i, cl.Since, c.lastT-cl.Since, c.lastT, cl.Bound)
	case !(c.stateNode != 0 && c.stateT > cl.Since+cl.Bound):
		return NotConfirmed, fmt.Sprintf("no process changed state after t=%g, when P%d's request had waited the bound: the others did not progress while it waited, which is not starvation", cl.Since+cl.Bound, i)
	case c.pending[i] == cs.Exit && c.exitsBlocked():
		return NotConfirmed, fmt.Sprintf("at the end at most l = %d processes are live: the exit guard requires P%d's exit to wait (docs/ft-global-lk-cs.md, I3)", c.guard.L(), i)
	}
	return Confirmed, fmt.Sprintf("P%d's %s request, made at t=%g, is still pending at the end of the trace (t=%g), %g time units later, at least the bound %g, while the others went on changing state until t=%g",
		i, c.pending[i], cl.Since, c.lastT, c.lastT-cl.Since, cl.Bound, c.stateT)
}

// confirmLivelock checks a livelock claim against the trace: no state
// change after cl.Since, messages received after the last one, the end of
// the trace at least cl.Bound after cl.Since, and requests of live
// processes pending there (but for exits the exit guard holds).
func (c *checker) confirmLivelock(cl *Claim) (Confirmation, string) {
	if c.stateNode != 0 && c.stateT > cl.Since {
		return NotConfirmed, fmt.Sprintf("P%d changed state at t=%g, after the claimed last state change at t=%g", c.stateNode, c.stateT, cl.Since)
	}
	if c.quietRecvs == 0 {
		return NotConfirmed, "no message was received after the last state change: the run was quiet, not livelocked"
	}
	if !(cl.Since+cl.Bound <= c.lastT) {
		return NotConfirmed, fmt.Sprintf("the trace ends at t=%g, %g time units after t=%g, less than the bound %g", c.lastT, c.lastT-cl.Since, cl.Since, cl.Bound)
	}
	blocked := c.exitsBlocked()
	var waits []string
	for id := cs.ID(1); int(id) <= c.n; id++ {
		if !c.crashed[id] && c.pending[id] != cs.None && !(blocked && c.pending[id] == cs.Exit) {
			waits = append(waits, fmt.Sprintf("P%d %s", id, c.pending[id]))
		}
	}
	if len(waits) == 0 {
		return NotConfirmed, "no live process waits in a request at the end (but for exits the exit guard holds)"
	}
	more := ""
	if len(waits) > 10 {
		waits, more = waits[:10], fmt.Sprintf(" ... (%d requests)", len(waits))
	}
	return Confirmed, fmt.Sprintf("no state change from t=%g to the end of the trace at t=%g, %g time units, at least the bound %g, while %d messages were received; pending at the end: %s%s",
		cl.Since, c.lastT, c.lastT-cl.Since, cl.Bound, c.quietRecvs, list(waits), more)
}

// confirmDeadlock checks the end of the trace against the model checker's
// deadlock (docs/design/deadlock-under-a-budget.md): no message in
// transit to a live process and every live process waiting in a request,
// with no failure detector output left. A
// deadlock under a budget (a pending request that no continuation
// completes while other processes could still call) is decided by
// searching the continuations, which a trace does not record. After a
// drain event the idle processes call Entry no more: see drainUnheld.
func (c *checker) confirmDeadlock() (Confirmation, string) {
	if n, example := c.inTransitToLive(); n > 0 {
		return NotConfirmed, fmt.Sprintf("%d %s still in transit to live processes at the end (%s): it can be delivered, so this is not a deadlock", n, messages(n), example)
	}
	var waits, idle []string
	entries := 0
	for id := cs.ID(1); int(id) <= c.n; id++ {
		switch {
		case c.crashed[id]:
		case c.pending[id] != cs.None:
			waits = append(waits, fmt.Sprintf("P%d %s", id, c.pending[id]))
			if c.pending[id] == cs.Entry {
				entries++
			}
		default:
			idle = append(idle, fmt.Sprintf("P%d", id))
		}
	}
	if len(waits) == 0 {
		return NotConfirmed, "no live process waits in a request at the end"
	}
	if entries == 0 && c.exitsBlocked() {
		return NotConfirmed, fmt.Sprintf("at the end only exits wait (%s) and at most l = %d processes are live: the exit guard requires them to wait (docs/ft-global-lk-cs.md, I3), which is not a deadlock",
			list(waits), c.guard.L())
	}
	var unheld []string
	if len(idle) > 0 {
		if !c.drained {
			return CannotConfirm, fmt.Sprintf("at the end %s %s waiting but %s could still call Entry or Exit; whether some continuation completes the pending requests is decided by the model checker's search (docs/design/deadlock-under-a-budget.md), not by a trace",
				list(waits), isAre(len(waits)), strings.Join(idle, " "))
		}
		var conf Confirmation
		var note string
		if unheld, conf, note = c.drainUnheld(waits, idle); unheld == nil {
			return conf, note
		}
	}
	if i, j, ok := c.unsuspected(); ok {
		return CannotConfirm, fmt.Sprintf("P%d has not suspected the crashed P%d: a failure detector output may still be enabled (the trace does not say which detector ran)", i, j)
	}
	if len(idle) > 0 {
		return Confirmed, fmt.Sprintf("at the end of the drain no message is in transit to a live process, the idle live processes (%s) are OutCS and call Entry no more, and no bound holds %s: no continuation without new entries completes it",
			strings.Join(idle, " "), list(unheld))
	}
	return Confirmed, fmt.Sprintf("at the end no message is in transit to a live process and every live process waits in a request (%s)", list(waits))
}

// drainUnheld returns the pending requests that no bound holds at the end
// of a drained trace where some live processes are idle (waits and idle
// list the others and them), or nil and the answer to the claim. After
// the drain event no process calls Entry, so an idle process OutCS never
// acts again and, with no message in transit to a live process, nothing
// happens any more. A request that a bound holds (an entry waiting for an
// exit, an exit for an entry that the drain does not make) waits as the
// problem allows; one that no bound holds is never completed by a
// continuation without new entries: the simulator's deadlock of the
// drain. Under an exit guard the bounds are the global l..k, as the
// simulator judges them (property.CrashBounds.DrainTracker).
func (c *checker) drainUnheld(waits, idle []string) ([]string, Confirmation, string) {
	for id := cs.ID(1); int(id) <= c.n; id++ {
		if !c.crashed[id] && c.pending[id] == cs.None && c.state[id] == cs.InCS {
			return nil, CannotConfirm, fmt.Sprintf("at the end of the drain P%d is InCS with no exit request: it could still call Exit", id)
		}
	}
	judge, blocked := c.prop, c.exitsBlocked()
	if c.guard != nil {
		judge = c.guard.DrainTracker(c)
	}
	var unheld []string
	for id := cs.ID(1); int(id) <= c.n; id++ {
		op := c.pending[id]
		if c.crashed[id] || op == cs.None || blocked && op == cs.Exit || judge.Blocks(id, op == cs.Entry) {
			continue
		}
		unheld = append(unheld, fmt.Sprintf("P%d %s", id, op))
	}
	if len(unheld) == 0 {
		return nil, NotConfirmed, fmt.Sprintf("at the end of the drain a bound holds every pending request (%s): each waits for a state change of an idle process (%s), which the drain does not make", list(waits), strings.Join(idle, " "))
	}
	return unheld, Confirmed, ""
}

// exitsBlocked reports whether the property has an exit guard and at most
// l processes are live: every pending exit then waits as the
// specification requires (property.CrashBounds.ExitsBlocked), as the
// simulator judges it.
func (c *checker) exitsBlocked() bool { return c.guard != nil && c.guard.ExitsBlocked(c) }

// inTransitToLive counts the unreceived sends to live processes and
// describes the one on the lowest link.
func (c *checker) inTransitToLive() (n int64, example string) {
	first := [2]int64{math.MaxInt64, 0} // the link and kind of the example
	note := func(link int64, kind int32, count int64) {
		if to := cs.ID(link % int64(c.n+1)); count == 0 || c.crashed[to] {
			return
		}
		n += count
		if k := [2]int64{link, int64(kind)}; k[0] < first[0] || k[0] == first[0] && k[1] < first[1] {
			first = k
		}
	}
	for link, l := range c.links {
		if l.head < len(l.kinds) {
			note(link, l.kinds[l.head], int64(len(l.kinds)-l.head))
		}
	}
	for key, count := range c.bags {
		note(key.link, key.kind, count)
	}
	if n > 0 {
		from, to := first[0]/int64(c.n+1), first[0]%int64(c.n+1)
		example = fmt.Sprintf("%s from P%d to P%d", c.names[first[1]], from, to)
	}
	return n, example
}

// unsuspected returns a live process i and a crashed j that i has not
// suspected, if any. It costs O(n) plus one lookup per suspicion found in
// the trace: every lookup but the last that fails is a distinct suspect
// event, so the work follows the input, not crashed × live.
func (c *checker) unsuspected() (i, j cs.ID, ok bool) {
	var live []cs.ID
	for id := cs.ID(1); int(id) <= c.n; id++ {
		if !c.crashed[id] {
			live = append(live, id)
		}
	}
	for j := cs.ID(1); int(j) <= c.n; j++ {
		if !c.crashed[j] {
			continue
		}
		for _, i := range live {
			if !c.suspects[[2]cs.ID{i, j}] {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

func list(s []string) string { return strings.Join(s, ", ") }

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func messages(n int64) string {
	if n == 1 {
		return "message is"
	}
	return "messages are"
}

// describe is a readable form of ev.
func describe(ev Event) string {
	switch ev.Ev {
	case EvSend:
		return fmt.Sprintf("P%d sends %s to P%d", ev.Node, ev.Msg, ev.To)
	case EvRecv:
		return fmt.Sprintf("P%d receives %s from P%d", ev.Node, ev.Msg, ev.From)
	case EvRequest:
		return fmt.Sprintf("P%d requests %s", ev.Node, ev.Op)
	case EvState:
		return fmt.Sprintf("P%d becomes %s", ev.Node, ev.State)
	case EvCrash:
		return fmt.Sprintf("P%d crashes", ev.Node)
	case EvSuspect:
		return fmt.Sprintf("P%d suspects P%d", ev.Node, ev.Who)
	case EvTrust:
		return fmt.Sprintf("P%d trusts P%d", ev.Node, ev.Who)
	case EvDrain:
		return "the drain begins"
	}
	return ev.Ev
}

// NeverEntered returns the processes that never became InCS in the trace.
func (r *Report) NeverEntered() []cs.ID { return zeroCounts(r.Entries) }

// NeverExited returns the processes that never became OutCS in the trace.
func (r *Report) NeverExited() []cs.ID { return zeroCounts(r.Exits) }

// zeroCounts returns the ids i >= 1 with counts[i] == 0.
func zeroCounts(counts []int64) []cs.ID {
	var ids []cs.ID
	for i := 1; i < len(counts); i++ {
		if counts[i] == 0 {
			ids = append(ids, cs.ID(i))
		}
	}
	return ids
}
