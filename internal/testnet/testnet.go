// Package testnet is critsec's one in-memory network for tests, in the
// manner of etcd-raft's raft_test.go network and rafttest: it drives a set
// of machines (processes 1..n) over per-link FIFO channels, one input at a
// time, and checks after every step what the runtimes check:
//
//   - the safety property (a *property.Property: global or local bounds),
//     after every state change and crash, and its exit guard, if any,
//     after every exit (property.CrashBounds.AfterExit: a suspicion of a
//     crashed process is a report); a failure names the bound;
//   - the CS method invocation convention seen from the caller: a machine
//     may report a state change only to complete the request the network
//     made (entry -> InCS, exit -> OutCS), once, and its State() must agree
//     with what it reported; it may not refuse a call the convention
//     allows;
//   - machine errors (a message or detector input it cannot handle).
//
// The first such failure is a *Violation; it is sticky: every later step
// returns it. Steps the network cannot take (an empty link, a call that
// breaks the convention, a crashed process) are plain errors and change
// nothing.
//
// Steps are scripted (Entry, Exit, Deliver, Crash, Suspect, Trust; Pass,
// Drain, Settle and Round deliver many messages in a fixed order) or drawn
// from a seeded random source (RandomStep, RunRandom). Faults: Drop loses
// the head of a link, Cut makes a link lose everything until Heal, Isolate
// cuts every link of a process, and a hook (SetHook) sees every message
// sent and may drop it. Do takes the same steps written as text, in the
// model checker's syntax ("P2 entry", "deliver P3->P1 REQUEST"), so a
// counterexample path replays line by line; the datadriven scripts
// (RunScripts) are built on it.
//
// With Options.Record the network keeps every event and WriteTrace writes
// the run as a critsec trace (docs/trace.md) that `critsec trace check`
// accepts.
//
// The network calls machines through cs.Apply with a recording environment
// (cs.Effects) and acts on the effects afterwards, as the runtimes do.
package testnet

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// Kinds of violations, those of a trace's claim (trace.Claim): a
// bound of the property failed (Violation.Failure); a machine refused a
// call the convention allows, reported a state change that does not
// complete its pending request, or is not in the state it reported; a
// machine returned an error for a message or a detector input, or sent a
// message to a process that does not exist.
const (
	KindBounds     = trace.KindBounds
	KindConvention = trace.KindConvention
	KindError      = trace.KindError
)

// Violation is a failure of a checked property. Once a network has one,
// every later step returns it.
type Violation struct {
	Kind string
	// Step is the number of the step that failed (1 is the first).
	Step   int
	Detail string
	// Failure is the bound that broke, for KindBounds (nil when the exit
	// guard broke: Detail says how).
	Failure *property.Failure
}

// Error is "step 5: bounds: after P2 became InCS: 2 processes InCS, outside
// the bounds 0..1".
func (v *Violation) Error() string {
	return fmt.Sprintf("step %d: %s: %s", v.Step, v.Kind, v.Detail)
}

// ErrDeadlock is wrapped by the error RunRandom returns when nothing is
// enabled although some process waits in a request.
var ErrDeadlock = errors.New("deadlock")

// Options configures a network.
type Options struct {
	// Seed seeds the random schedule (RandomStep, RunRandom).
	Seed uint64
	// Record keeps every event, for Events and WriteTrace.
	Record bool
}

// Link is the channel from one process to another.
type Link struct{ From, To cs.ID }

// String is "P1->P2".
func (l Link) String() string { return fmt.Sprintf("P%d->P%d", l.From, l.To) }

// Counts are totals over a run.
type Counts struct {
	// Sent counts every message a machine sent, lost or not; Delivered
	// those handed to their receiver; Lost those dropped (by Drop, a cut
	// link, the hook, or the crash of the receiver).
	Sent, Delivered, Lost int
	// Entries and Exits count the completed state changes.
	Entries, Exits int
}

// Event is one thing that happened. Most are trace events; two kinds are
// not (WriteTrace leaves them out): EvLost, a message lost in transit or
// at its send (Reason says why), and EvTrust, a failure-detector trust
// output, which the trace format does not record.
type Event struct {
	trace.Event
	// Message is the message of a send, a receive or a loss.
	Message cs.Message
	// Reason is why a message was lost ("" for messages put in transit).
	Reason string
}

// Event kinds that are not trace events.
const (
	EvLost  = "lost"
	EvTrust = "trust"
)

// Verdict classifies a state by what is in transit and who waits.
type Verdict string

const (
	// Deadlock: nothing in transit and every live process waits in a
	// request: no delivery or call can complete one (a detector output
	// may, in fault-tolerant algorithms).
	Deadlock Verdict = "deadlock"
	// Quiet: nothing in transit and no process waits.
	Quiet Verdict = "quiet"
	// Waiting: nothing in transit, some process waits and some other
	// process is idle (its call may complete the waiting ones).
	Waiting Verdict = "waiting"
	// Transit: some message is in transit.
	Transit Verdict = "transit"
)

type envelope struct {
	seq uint64 // global send order
	msg cs.Message
}

type proc struct {
	m cs.Machine
	// state is the state the machine last reported (or its initial one);
	// pending the request the network made that has not completed.
	state   cs.State
	pending cs.Op
	crashed bool
	// crashedInCS: it crashed InCS; reported: the processes whose crash
	// its failure detector has reported (a suspicion after the crash),
	// both for the property's exit guard.
	crashedInCS bool
	reported    map[cs.ID]bool
}

// Network runs machines 1..n over FIFO links. Build one with New or Global.
type Network struct {
	n       int
	procs   []proc // procs[id-1]
	prop    *property.Property
	tracker *property.Tracker // the counts of prop's bounds
	initial []cs.ID
	links   [][]envelope // links[(from-1)*n + to-1]: oldest first
	cut     []bool       // same index
	hook    func(from, to cs.ID, m cs.Message) bool
	rng     *rand.Rand
	eff     cs.Effects
	acts    []int // RandomStep's scratch
	seq     uint64
	step    int
	counts  Counts
	record  bool
	events  []Event
	lossy   bool // a message was lost on a link (the trace is not FIFO)
	err     *Violation
}

// New returns a network of ms (ms[i] is process i+1, in its initial state)
// that checks p after every step. It refuses machines out of order, a
// property over another number of processes and an initial state that
// breaks p.
func New(ms []cs.Machine, p *property.Property, o Options) (*Network, error) {
	n := len(ms)
	if n < 1 || p == nil || p.N() != n {
		return nil, fmt.Errorf("testnet: %d machines, a property over %v processes: need n >= 1 machines and a property over n", n, propN(p))
	}
	net := &Network{
		n: n, procs: make([]proc, n), prop: p,
		links: make([][]envelope, n*n), cut: make([]bool, n*n),
		rng: rand.New(rand.NewPCG(o.Seed, 0x5eed)), record: o.Record,
	}
	for i, m := range ms {
		if m.Self() != cs.ID(i+1) {
			return nil, fmt.Errorf("testnet: machine %d is P%d: need ms[i] to be process i+1", i, m.Self())
		}
		net.procs[i] = proc{m: m, state: m.State(), pending: m.Pending()}
		if m.State() == cs.InCS {
			net.initial = append(net.initial, m.Self())
		}
	}
	var f *property.Failure
	if net.tracker, f = property.NewTracker(p, net); f != nil {
		return nil, fmt.Errorf("testnet: the initial state breaks the property: %v", f)
	}
	return net, nil
}

func propN(p *property.Property) any {
	if p == nil {
		return "no"
	}
	return p.N()
}

// Global returns New(ms, property.Global(len(ms), lo, hi), o): the network
// checks lo <= #InCS <= hi.
func Global(ms []cs.Machine, lo, hi int, o Options) (*Network, error) {
	p, err := property.Global(len(ms), lo, hi)
	if err != nil {
		return nil, err
	}
	return New(ms, p, o)
}

// N is the number of processes.
func (net *Network) N() int { return net.n }

// Machine returns process id's machine. Calling it directly bypasses the
// network's checks.
func (net *Network) Machine(id cs.ID) cs.Machine { return net.procs[id-1].m }

// Property is the property checked.
func (net *Network) Property() *property.Property { return net.prop }

// Counts returns the totals so far.
func (net *Network) Counts() Counts { return net.counts }

// Err is the violation found, or nil.
func (net *Network) Err() error {
	if net.err == nil {
		return nil
	}
	return net.err
}

// Events returns the events recorded (Options.Record), in order. The
// caller must not modify them.
func (net *Network) Events() []Event { return net.events }

// InCS implements property.View: whether id is live and InCS as it
// reported.
func (net *Network) InCS(id cs.ID) bool {
	p := &net.procs[id-1]
	return !p.crashed && p.state == cs.InCS
}

// Crashed implements property.CrashView: whether id has crashed.
func (net *Network) Crashed(id cs.ID) bool { return net.procs[id-1].crashed }

// CrashedInCS implements property.CrashView: whether id crashed InCS.
func (net *Network) CrashedInCS(id cs.ID) bool { return net.procs[id-1].crashedInCS }

// Reported implements property.CrashView: whether i's failure detector has
// reported j's crash, that is, suspected j after j crashed (under P every
// suspicion; under T a suspicion of a crashed process follows a trust).
func (net *Network) Reported(i, j cs.ID) bool { return net.procs[i-1].reported[j] }

// CountInCS is the number of live processes InCS.
func (net *Network) CountInCS() int {
	c := 0
	for id := cs.ID(1); int(id) <= net.n; id++ {
		if net.InCS(id) {
			c++
		}
	}
	return c
}

// State returns what process id last reported (or its initial state), the
// request the network made that has not completed (or cs.None), and
// whether it crashed.
func (net *Network) State(id cs.ID) (state cs.State, pending cs.Op, crashed bool) {
	p := &net.procs[id-1]
	return p.state, p.pending, p.crashed
}

// idle reports whether process id may be called: live, and no request
// pending either as the network sees it or as the machine says (a
// composed machine may stay busy after reporting its change).
func (net *Network) idle(id cs.ID) bool {
	p := &net.procs[id-1]
	return !p.crashed && p.pending == cs.None && p.m.Pending() == cs.None
}

func (net *Network) link(from, to cs.ID) int { return int(from-1)*net.n + int(to-1) }

func (net *Network) valid(id cs.ID) error {
	if id < 1 || int(id) > net.n {
		return fmt.Errorf("testnet: no process P%d (ids run from 1 to %d)", id, net.n)
	}
	return nil
}

func (net *Network) live(id cs.ID) error {
	if err := net.valid(id); err != nil {
		return err
	}
	if net.procs[id-1].crashed {
		return fmt.Errorf("testnet: P%d has crashed", id)
	}
	return nil
}

// linkIndex returns link from->to and its index in links, or the
// network's violation or an error for an unknown process.
func (net *Network) linkIndex(from, to cs.ID) (Link, int, error) {
	if net.err != nil {
		return Link{}, 0, net.err
	}
	for _, id := range []cs.ID{from, to} {
		if err := net.valid(id); err != nil {
			return Link{}, 0, err
		}
	}
	return Link{from, to}, net.link(from, to), nil
}

// InTransit lists the messages in transit as "P1->P2 KIND", link by link
// (by sender, then receiver), oldest first.
func (net *Network) InTransit() []string {
	var out []string
	for i, q := range net.links {
		for _, e := range q {
			out = append(out, fmt.Sprintf("%v %s", net.linkOf(i), e.msg.Kind()))
		}
	}
	return out
}

func (net *Network) linkOf(i int) Link {
	return Link{cs.ID(i/net.n + 1), cs.ID(i%net.n + 1)}
}

func (net *Network) transit() bool {
	for _, q := range net.links {
		if len(q) > 0 {
			return true
		}
	}
	return false
}

// Verdict classifies the current state (see the constants).
func (net *Network) Verdict() Verdict {
	if net.transit() {
		return Transit
	}
	waiting, idle := 0, 0
	for i := range net.procs {
		switch p := &net.procs[i]; {
		case p.crashed:
		case p.pending != cs.None:
			waiting++
		default:
			idle++
		}
	}
	switch {
	case waiting == 0:
		return Quiet
	case idle == 0:
		return Deadlock
	}
	return Waiting
}

// Deadlocked reports whether nothing is in transit and every live process
// waits in a request (Verdict() == Deadlock).
func (net *Network) Deadlocked() bool { return net.Verdict() == Deadlock }

// Waits describes the pending requests: "P1 exit, P2 entry".
func (net *Network) Waits() string {
	var ws []string
	for i, p := range net.procs {
		if !p.crashed && p.pending != cs.None {
			ws = append(ws, fmt.Sprintf("P%d %s", i+1, p.pending))
		}
	}
	if len(ws) == 0 {
		return "none"
	}
	return strings.Join(ws, ", ")
}

// SetHook sets a function called on every message a machine sends, before
// it is put in transit; when it returns false the message is lost. nil
// removes the hook.
func (net *Network) SetHook(h func(from, to cs.ID, m cs.Message) bool) { net.hook = h }

// emit records ev when the network records, filling in the kind (and for
// a send the size) of its Message, which costs nothing when it does not.
func (net *Network) emit(ev Event) {
	if !net.record {
		return
	}
	if ev.Message != nil {
		ev.Msg = ev.Message.Kind()
		if ev.Ev == trace.EvSend {
			ev.Words = ev.Message.Words()
		}
	}
	net.events = append(net.events, ev)
}

func (net *Network) fail(kind, detail string, f *property.Failure) {
	if net.err == nil {
		net.err = &Violation{Kind: kind, Step: net.step, Detail: detail, Failure: f}
	}
}

// Entry makes process id call Entry.
func (net *Network) Entry(id cs.ID) error { return net.Call(id, cs.Entry) }

// Exit makes process id call Exit.
func (net *Network) Exit(id cs.ID) error { return net.Call(id, cs.Exit) }

// Call makes process id call op. A call that breaks the convention (id
// has a request pending, or is not in the state op leaves) is refused
// with an error wrapping cs.ErrConvention and not made.
func (net *Network) Call(id cs.ID, op cs.Op) error {
	if net.err != nil {
		return net.err
	}
	if err := net.live(id); err != nil {
		return err
	}
	p := &net.procs[id-1]
	if p.pending != cs.None {
		return fmt.Errorf("testnet: %w: P%d called %s while its %s request is pending", cs.ErrConvention, id, op, p.pending)
	}
	if err := cs.CheckCall(p.m, op); err != nil {
		return fmt.Errorf("testnet: %w", err)
	}
	if (op == cs.Entry) != (p.state == cs.OutCS) {
		return fmt.Errorf("testnet: %w: P%d called %s while %s", cs.ErrConvention, id, op, p.state)
	}
	net.step++
	p.pending = op
	net.emit(Event{Event: trace.Event{T: net.t(), Ev: trace.EvRequest, Node: id, Op: op.String()}})
	return net.apply(id, cs.Call(op))
}

// Toggle makes process id call Exit if it is InCS and Entry otherwise.
func (net *Network) Toggle(id cs.ID) error {
	if err := net.valid(id); err != nil {
		return err
	}
	if net.procs[id-1].state == cs.InCS {
		return net.Call(id, cs.Exit)
	}
	return net.Call(id, cs.Entry)
}

func (net *Network) t() float64 { return float64(net.step) }

// Deliver hands the oldest message on link from->to to its receiver. When
// kind is not empty, the message must be of that kind. An empty link or
// another kind is an error and changes nothing.
func (net *Network) Deliver(from, to cs.ID, kind string) error {
	l, i, err := net.linkIndex(from, to)
	if err != nil {
		return err
	}
	q := net.links[i]
	switch {
	case len(q) == 0 && kind != "":
		return fmt.Errorf("testnet: nothing in transit on %v (want %s)", l, kind)
	case len(q) == 0:
		return fmt.Errorf("testnet: nothing in transit on %v", l)
	case kind != "" && q[0].msg.Kind() != kind:
		return fmt.Errorf("testnet: the next message on %v is %s, not %s", l, q[0].msg.Kind(), kind)
	}
	net.deliver(i)
	return net.Err()
}

// deliver delivers the head of link i, which must be non-empty.
func (net *Network) deliver(i int) {
	l := net.linkOf(i)
	m := net.links[i][0].msg
	net.links[i][0] = envelope{}
	net.links[i] = net.links[i][1:]
	net.step++
	net.counts.Delivered++
	net.emit(Event{Event: trace.Event{T: net.t(), Ev: trace.EvRecv, Node: l.To, From: l.From}, Message: m})
	net.apply(l.To, cs.Deliver(l.From, m))
}

// Suspect gives process id the failure-detector output "suspect who".
func (net *Network) Suspect(id, who cs.ID) error { return net.detect(id, who, cs.InSuspect) }

// Trust gives process id the failure-detector output "trust who".
func (net *Network) Trust(id, who cs.ID) error { return net.detect(id, who, cs.InTrust) }

func (net *Network) detect(id, who cs.ID, kind cs.InputKind) error {
	if net.err != nil {
		return net.err
	}
	if err := net.live(id); err != nil {
		return err
	}
	if err := net.valid(who); err != nil {
		return err
	}
	if _, ok := net.procs[id-1].m.(cs.Detecting); !ok {
		return fmt.Errorf("testnet: P%d takes no failure-detector input", id)
	}
	net.step++
	ev := trace.Event{T: net.t(), Ev: trace.EvSuspect, Node: id, Who: who}
	if kind == cs.InTrust {
		ev.Ev = EvTrust
	}
	net.emit(Event{Event: ev})
	if p := &net.procs[id-1]; kind == cs.InSuspect && net.procs[who-1].crashed {
		if p.reported == nil {
			p.reported = map[cs.ID]bool{}
		}
		p.reported[who] = true
	}
	net.apply(id, cs.Input{Kind: kind, Who: who})
	return net.Err()
}

// apply gives in to process id's machine and acts on its effects: sends go
// in transit (or are lost), state changes are checked against the pending
// request and the property.
func (net *Network) apply(id cs.ID, in cs.Input) error {
	p := &net.procs[id-1]
	err := net.eff.Step(p.m, in)
	for _, e := range net.eff.List {
		if e.IsSend() {
			net.send(id, e.To, e.Msg)
		} else {
			net.changed(id, e.State)
		}
	}
	net.eff.Reset()
	switch {
	case err != nil && in.Op() != cs.None:
		net.fail(KindConvention, fmt.Sprintf("P%d refused %s: %v", id, in, err), nil)
	case err != nil:
		net.fail(KindError, fmt.Sprintf("P%d cannot take %s: %v", id, in, err), nil)
	case p.m.State() != p.state:
		net.fail(KindConvention, fmt.Sprintf("P%d is %s but reported %s last", id, p.m.State(), p.state), nil)
	}
	return net.Err()
}

func (net *Network) send(from, to cs.ID, m cs.Message) {
	net.counts.Sent++
	ev := Event{Event: trace.Event{T: net.t(), Ev: trace.EvSend, Node: from, To: to}, Message: m}
	if net.valid(to) != nil {
		net.emit(ev)
		net.fail(KindError, fmt.Sprintf("P%d sent %s to P%d, which is not a participant (ids 1..%d)", from, m.Kind(), to, net.n), nil)
		return
	}
	i := net.link(from, to)
	switch {
	case net.hook != nil && !net.hook(from, to, m):
		ev.Reason = "dropped by the hook"
	case net.cut[i]:
		ev.Reason = "link cut"
	case net.procs[to-1].crashed:
		ev.Reason = fmt.Sprintf("P%d crashed", to)
	}
	net.emit(ev)
	if ev.Reason != "" {
		net.counts.Lost++
		// A message lost to a crashed process cannot be overtaken by a
		// received one; any other loss can.
		net.lossy = net.lossy || !net.procs[to-1].crashed
		return
	}
	net.seq++
	net.links[i] = append(net.links[i], envelope{seq: net.seq, msg: m})
}

func (net *Network) changed(id cs.ID, s cs.State) {
	p := &net.procs[id-1]
	net.emit(Event{Event: trace.Event{T: net.t(), Ev: trace.EvState, Node: id, State: s.String()}})
	want := cs.InCS
	if p.pending == cs.Exit {
		want = cs.OutCS
	}
	if p.pending == cs.None || s != want {
		net.fail(KindConvention, fmt.Sprintf("P%d reported %s while %s with request %s pending", id, s, p.state, p.pending), nil)
		return
	}
	p.state, p.pending = s, cs.None
	if s == cs.InCS {
		net.counts.Entries++
	} else {
		net.counts.Exits++
	}
	if f := net.tracker.Set(id, s == cs.InCS); f != nil {
		net.fail(KindBounds, fmt.Sprintf("after P%d became %s: %v", id, s, f), f)
	}
	if g := net.prop.ExitGuard(); g != nil && s == cs.OutCS {
		if f := g.AfterExit(id, net); f != nil {
			net.fail(KindBounds, fmt.Sprintf("after P%d became %s: %v", id, s, f), nil)
		}
	}
}

// lose drops the first k messages in transit on link i for reason.
func (net *Network) lose(i, k int, reason string) {
	q := net.links[i]
	l := net.linkOf(i)
	if k > 0 && !net.procs[l.To-1].crashed {
		net.lossy = true
	}
	for _, e := range q[:k] {
		net.counts.Lost++
		net.emit(Event{Event: trace.Event{T: net.t(), Ev: EvLost, Node: l.From, To: l.To}, Message: e.msg, Reason: reason})
	}
	clear(q[:k])
	net.links[i] = q[k:]
}

// Drop loses the oldest message in transit on link from->to.
func (net *Network) Drop(from, to cs.ID) error {
	l, i, err := net.linkIndex(from, to)
	if err != nil {
		return err
	}
	if len(net.links[i]) == 0 {
		return fmt.Errorf("testnet: nothing in transit on %v to drop", l)
	}
	net.lose(i, 1, "dropped")
	return nil
}

// Cut makes link from->to lose every message: those in transit now and
// those sent until Heal.
func (net *Network) Cut(from, to cs.ID) error {
	_, i, err := net.linkIndex(from, to)
	if err != nil {
		return err
	}
	net.cut[i] = true
	net.lose(i, len(net.links[i]), "link cut")
	return nil
}

// Heal restores link from->to.
func (net *Network) Heal(from, to cs.ID) error {
	_, i, err := net.linkIndex(from, to)
	if err == nil {
		net.cut[i] = false
	}
	return err
}

// HealAll restores every link.
func (net *Network) HealAll() { clear(net.cut) }

// Isolate cuts every link between process id and the others, both ways
// (its link to itself stays).
func (net *Network) Isolate(id cs.ID) error {
	if err := net.valid(id); err != nil {
		return err
	}
	for j := cs.ID(1); int(j) <= net.n; j++ {
		if j != id {
			net.Cut(id, j)
			net.Cut(j, id)
		}
	}
	return nil
}

// Crash stops process id for good (crash-stop): it takes no further
// input, the messages in transit to it and those sent to it later are
// lost, the messages it sent stay in transit, and it no longer counts for
// the property (which is checked: a crash InCS may break a lower bound).
func (net *Network) Crash(id cs.ID) error {
	if net.err != nil {
		return net.err
	}
	if err := net.live(id); err != nil {
		return err
	}
	net.step++
	p := &net.procs[id-1]
	p.crashed, p.crashedInCS = true, p.state == cs.InCS
	net.emit(Event{Event: trace.Event{T: net.t(), Ev: trace.EvCrash, Node: id}})
	for from := cs.ID(1); int(from) <= net.n; from++ {
		i := net.link(from, id)
		net.lose(i, len(net.links[i]), fmt.Sprintf("P%d crashed", id))
	}
	if f := net.tracker.Set(id, false); f != nil {
		net.fail(KindBounds, fmt.Sprintf("after P%d crashed: %v", id, f), f)
	}
	return net.Err()
}

// Pass delivers the oldest message of every non-empty link but the held
// ones, one link after the other by sender then receiver (a link filled
// by an earlier delivery of the pass is served when its turn comes). It
// reports whether it delivered anything.
func (net *Network) Pass(hold ...Link) (bool, error) {
	if net.err != nil {
		return false, net.err
	}
	moved := false
	for i := range net.links {
		if len(net.links[i]) == 0 || held(hold, net.linkOf(i)) {
			continue
		}
		net.deliver(i)
		moved = true
		if net.err != nil {
			return moved, net.err
		}
	}
	return moved, nil
}

func held(hold []Link, l Link) bool {
	for _, h := range hold {
		if h == l {
			return true
		}
	}
	return false
}

// maxQuiesce bounds Drain and Settle, whose runs end only if the
// algorithm goes quiet.
const maxQuiesce = 100_000

// Drain repeats Pass until every link but the held ones is empty.
func (net *Network) Drain(hold ...Link) error {
	for range maxQuiesce {
		moved, err := net.Pass(hold...)
		if err != nil || !moved {
			return err
		}
	}
	return fmt.Errorf("testnet: drain: messages still in transit after %d passes", maxQuiesce)
}

// Settle repeats, until nothing moves: every idle process InCS calls
// Exit (by id), then one Pass. It ends with nothing in transit and no
// idle process InCS.
func (net *Network) Settle() error {
	for range maxQuiesce {
		moved := false
		for id := cs.ID(1); int(id) <= net.n; id++ {
			if net.idle(id) && net.procs[id-1].state == cs.InCS {
				if err := net.Call(id, cs.Exit); err != nil {
					return err
				}
				moved = true
			}
		}
		m, err := net.Pass()
		if err != nil {
			return err
		}
		if !moved && !m {
			return nil
		}
	}
	return fmt.Errorf("testnet: settle: still moving after %d rounds", maxQuiesce)
}

// Round delivers every message in transit now, in the order they were
// sent, and none of those their delivery sends: one time unit of the
// papers' lock-step timing model (every message takes one unit, local
// computation none). It reports whether it delivered anything.
func (net *Network) Round() (bool, error) {
	if net.err != nil {
		return false, net.err
	}
	last := net.seq
	moved := false
	for {
		best := -1
		for i, q := range net.links {
			if len(q) > 0 && q[0].seq <= last && (best < 0 || q[0].seq < net.links[best][0].seq) {
				best = i
			}
		}
		if best < 0 {
			return moved, nil
		}
		net.deliver(best)
		moved = true
		if net.err != nil {
			return moved, net.err
		}
	}
}

// RandomStep takes one step chosen uniformly at random among: deliver the
// head of a non-empty link, and, when requests is set, let an idle process
// call Entry (if OutCS) or Exit (if InCS). It returns false when nothing
// is enabled.
func (net *Network) RandomStep(requests bool) (bool, error) {
	if net.err != nil {
		return false, net.err
	}
	acts := net.acts[:0] // a link index, or -id for a call by process id
	for i, q := range net.links {
		if len(q) > 0 {
			acts = append(acts, i)
		}
	}
	if requests {
		for id := cs.ID(1); int(id) <= net.n; id++ {
			if net.idle(id) {
				acts = append(acts, -int(id))
			}
		}
	}
	net.acts = acts
	if len(acts) == 0 {
		return false, nil
	}
	a := acts[net.rng.IntN(len(acts))]
	if a < 0 {
		return true, net.Toggle(cs.ID(-a))
	}
	net.deliver(a)
	return true, net.Err()
}

// RunRandom takes random steps, calls allowed, until changes state
// changes have completed in all (Counts.Entries + Counts.Exits). It
// returns the first violation, or an error wrapping ErrDeadlock when
// nothing is enabled with a request pending.
func (net *Network) RunRandom(changes int) error {
	for net.counts.Entries+net.counts.Exits < changes {
		ok, err := net.RandomStep(true)
		if err != nil {
			return err
		}
		if !ok {
			if net.Verdict() == Deadlock {
				return fmt.Errorf("testnet: %w after %d state changes: nothing in transit and every live process waits (%s)",
					ErrDeadlock, net.counts.Entries+net.counts.Exits, net.Waits())
			}
			return fmt.Errorf("testnet: nothing enabled after %d state changes: every process crashed", net.counts.Entries+net.counts.Exits)
		}
	}
	return nil
}

// Claim is what the run demonstrates, as a trace header says it
// ("demonstrates"): the violation found, else a deadlock when the state is
// one (Verdict), else nil.
func (net *Network) Claim() *trace.Claim {
	switch {
	case net.err != nil:
		return &trace.Claim{Kind: net.err.Kind, Detail: net.err.Detail}
	case net.Verdict() == Deadlock:
		return &trace.Claim{Kind: trace.KindDeadlock, Detail: "nothing in transit and every live process waits in a request (" + net.Waits() + ")"}
	}
	return nil
}

// WriteTrace writes the run in critsec's trace format (docs/trace.md): h
// completed with n, the initial configuration, the property
// (Header.SetProperty), runtime "testnet", fifo (false when a message was
// lost on a link that may deliver later ones, which may then be received
// first) and what the run demonstrates (Claim), then the recorded events
// with t the step number (lost messages and trust outputs have no trace
// event). The network must record (Options.Record).
func (net *Network) WriteTrace(w io.Writer, h trace.Header) error {
	if !net.record {
		return errors.New("testnet: WriteTrace: the network does not record (Options.Record)")
	}
	h.SetProperty(net.prop)
	h.Initial, h.Runtime, h.FIFO, h.Demonstrates = net.initial, "testnet", !net.lossy, net.Claim()
	tw := trace.NewWriter(w, h)
	for _, ev := range net.events {
		tw.Event(ev.Event) // leaves out the kinds that are not trace events
	}
	return tw.Flush()
}

// Arcs returns the quorums Q_i = {P_i, P_i+1, ..., P_i+n/2} (ids mod n, in
// that order), the quorum system the algorithm tests use: each quorum
// holds n/2+1 processes, more than half, so every two intersect, and all
// have one size, so none contains another. For odd n they are the sets of
// coterie.Majority, listed from P_i on; for even n they are larger than
// Majority's (n/2+1 against n/2 or n/2+1), which is why the package
// coterie does not offer them.
func Arcs(n int) [][]cs.ID {
	qs := make([][]cs.ID, n)
	for i := range qs {
		for d := 0; d <= n/2; d++ {
			qs[i] = append(qs[i], cs.ID((i+d)%n+1))
		}
	}
	return qs
}

// First returns the ids 1..c, the initial configuration "the first c
// processes InCS".
func First(c int) []cs.ID {
	ids := make([]cs.ID, c)
	for i := range ids {
		ids[i] = cs.ID(i + 1)
	}
	return ids
}
