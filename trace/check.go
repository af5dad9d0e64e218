package trace

import (
	"fmt"
	"io"
	"math"

	"critsec/cs"
)

// Report is what Check found in a trace.
type Report struct {
	Header Header
	// Lo and Hi are the bounds checked: the header's "lo" and "hi", or its
	// l and k when the header has no bounds.
	Lo, Hi int
	// Events is the number of events after the header.
	Events int64
	// MinInCS and MaxInCS are the extremes of #InCS, the initial
	// configuration included (up to the violation, if any).
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
	// Violation is the first inconsistency, or nil.
	Violation *Violation
}

// Violation is the first event that breaks a rule of the trace.
type Violation struct {
	// Line is the 1-based line number (1 is the header).
	Line int
	// T is the event's time; Event describes it ("P2 received REPLY from P1").
	T     float64
	Event string
	// Reason says which rule it breaks.
	Reason string
	// InCS lists the live processes InCS just after the event.
	InCS []cs.ID
}

// Error is the one-line report.
func (v *Violation) Error() string {
	return fmt.Sprintf("line %d (t=%g, %s): %s; InCS: %v", v.Line, v.T, v.Event, v.Reason, v.InCS)
}

// Check reads a whole trace and re-checks the run it records, on its own:
//
//   - the initial configuration (header "initial") is within the bounds
//     and #InCS stays within them after every event (a crashed process no
//     longer counts);
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
// Sends never received at the end are allowed (Report.Unreceived). The
// error is an I/O error or a *FormatError (a malformed line); the first
// inconsistency of a well-formed trace is Report.Violation.
func Check(r io.Reader) (*Report, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	h := tr.Header
	c := &checker{rep: &Report{Header: h, Lo: h.Lo, Hi: h.Hi}, n: h.N}
	if !tr.HasBounds {
		c.rep.Lo, c.rep.Hi = h.L, h.K
	}
	if h.N < 1 {
		return nil, &FormatError{Line: 1, Err: fmt.Errorf("header: n = %d: need n >= 1", h.N)}
	}
	if c.rep.Lo < 0 || c.rep.Lo > c.rep.Hi {
		return nil, &FormatError{Line: 1, Err: fmt.Errorf("header: bounds %d..%d are empty or negative", c.rep.Lo, c.rep.Hi)}
	}
	c.fifo = h.FIFO
	c.state = make([]cs.State, h.N+1)
	c.rep.Entries, c.rep.Exits = make([]int64, h.N+1), make([]int64, h.N+1)
	c.pending = make([]cs.Op, h.N+1)
	c.crashed = make([]bool, h.N+1)
	c.kinds = map[string]int32{}
	if c.fifo {
		c.links = map[int64]*fifo{}
	} else {
		c.bags = map[bagKey]int64{}
	}
	c.line = 1
	for _, id := range h.Initial {
		if !c.valid(id) {
			c.fail(fmt.Sprintf("initial: process id %d is out of range 1..%d", id, h.N))
			return c.rep, nil
		}
		if c.state[id] == cs.InCS {
			c.fail(fmt.Sprintf("initial: process %d is listed twice", id))
			return c.rep, nil
		}
		c.state[id] = cs.InCS
		c.inCS++
	}
	c.rep.MinInCS, c.rep.MaxInCS = c.inCS, c.inCS
	if !c.bounds() {
		return c.rep, nil
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
			return c.rep, nil
		}
	}
	for id := 1; id <= h.N; id++ {
		if !c.crashed[id] && c.pending[id] != cs.None {
			c.rep.Pending++
		}
	}
	c.rep.Unreceived = c.sent
	return c.rep, nil
}

type fifo struct {
	kinds []int32
	head  int
}

type bagKey struct {
	link int64
	kind int32
}

type checker struct {
	rep     *Report
	n       int
	fifo    bool
	state   []cs.State
	pending []cs.Op
	crashed []bool
	inCS    int
	kinds   map[string]int32
	links   map[int64]*fifo
	bags    map[bagKey]int64
	sent    int64 // sends not yet matched
	line    int
	lastT   float64
	ev      Event
}

func (c *checker) valid(id cs.ID) bool { return id >= 1 && int(id) <= c.n }

func (c *checker) kind(s string) int32 {
	k, ok := c.kinds[s]
	if !ok {
		k = int32(len(c.kinds))
		c.kinds[s] = k
	}
	return k
}

func (c *checker) link(from, to cs.ID) int64 { return int64(from)*int64(c.n+1) + int64(to) }

// step checks one event and applies it; false means a violation.
func (c *checker) step(ev Event) bool {
	if math.IsNaN(ev.T) || ev.T < c.lastT {
		return c.fail(fmt.Sprintf("time %g is before the previous event's %g", ev.T, c.lastT))
	}
	c.lastT = ev.T
	if !c.valid(ev.Node) {
		return c.fail(fmt.Sprintf("node %d is out of range 1..%d", ev.Node, c.n))
	}
	if c.crashed[ev.Node] {
		return c.fail(fmt.Sprintf("P%d acts after it crashed", ev.Node))
	}
	i := ev.Node
	switch ev.Ev {
	case EvSend:
		if !c.valid(ev.To) {
			return c.fail(fmt.Sprintf("destination %d is out of range 1..%d", ev.To, c.n))
		}
		k := c.kind(ev.Msg)
		if c.fifo {
			l := c.links[c.link(i, ev.To)]
			if l == nil {
				l = &fifo{}
				c.links[c.link(i, ev.To)] = l
			}
			l.kinds = append(l.kinds, k)
		} else {
			c.bags[bagKey{c.link(i, ev.To), k}]++
		}
		c.sent++
	case EvRecv:
		if !c.valid(ev.From) {
			return c.fail(fmt.Sprintf("sender %d is out of range 1..%d", ev.From, c.n))
		}
		k := c.kind(ev.Msg)
		if c.fifo {
			l := c.links[c.link(ev.From, i)]
			if l == nil || l.head == len(l.kinds) {
				return c.fail(fmt.Sprintf("no message from P%d to P%d is in transit", ev.From, i))
			}
			if l.kinds[l.head] != k {
				return c.fail(fmt.Sprintf("the oldest message in transit from P%d to P%d is %s, not %s (the run is FIFO)", ev.From, i, c.kindName(l.kinds[l.head]), ev.Msg))
			}
			l.head++
			if l.head == len(l.kinds) {
				l.kinds, l.head = l.kinds[:0], 0
			} else if l.head >= 64 && 2*l.head >= len(l.kinds) {
				l.kinds = l.kinds[:copy(l.kinds, l.kinds[l.head:])]
				l.head = 0
			}
		} else {
			key := bagKey{c.link(ev.From, i), k}
			if c.bags[key] == 0 {
				return c.fail(fmt.Sprintf("no %s message from P%d to P%d is in transit", ev.Msg, ev.From, i))
			}
			if c.bags[key]--; c.bags[key] == 0 {
				delete(c.bags, key)
			}
		}
		c.sent--
	case EvRequest:
		op := cs.Entry
		if ev.Op == cs.Exit.String() {
			op = cs.Exit
		}
		switch {
		case c.pending[i] != cs.None:
			return c.fail(fmt.Sprintf("P%d requests %s while its %s request is pending", i, op, c.pending[i]))
		case op == cs.Entry && c.state[i] != cs.OutCS:
			return c.fail(fmt.Sprintf("P%d requests entry while InCS", i))
		case op == cs.Exit && c.state[i] != cs.InCS:
			return c.fail(fmt.Sprintf("P%d requests exit while OutCS", i))
		}
		c.pending[i] = op
	case EvState:
		s := cs.OutCS
		want := cs.Exit
		if ev.State == cs.InCS.String() {
			s, want = cs.InCS, cs.Entry
		}
		if c.pending[i] != want {
			return c.fail(fmt.Sprintf("P%d becomes %s without a pending %s request", i, s, want))
		}
		c.pending[i] = cs.None
		c.state[i] = s
		if s == cs.InCS {
			c.inCS++
			c.rep.Entries[i]++
		} else {
			c.inCS--
			c.rep.Exits[i]++
		}
		return c.bounds()
	case EvCrash:
		c.crashed[i] = true
		if c.state[i] == cs.InCS {
			c.inCS--
			return c.bounds()
		}
	case EvSuspect:
		if !c.valid(ev.Who) || ev.Who == i {
			return c.fail(fmt.Sprintf("P%d suspects %d: need another process id in 1..%d", i, ev.Who, c.n))
		}
	}
	return true
}

func (c *checker) kindName(k int32) string {
	for s, v := range c.kinds {
		if v == k {
			return s
		}
	}
	return "?"
}

// bounds records the extremes of #InCS and checks lo <= #InCS <= hi.
func (c *checker) bounds() bool {
	c.rep.MinInCS = min(c.rep.MinInCS, c.inCS)
	c.rep.MaxInCS = max(c.rep.MaxInCS, c.inCS)
	if c.inCS < c.rep.Lo || c.inCS > c.rep.Hi {
		return c.fail(fmt.Sprintf("%d processes InCS, outside the bounds %d..%d", c.inCS, c.rep.Lo, c.rep.Hi))
	}
	return true
}

func (c *checker) fail(reason string) bool {
	v := &Violation{Line: c.line, T: c.ev.T, Event: describe(c.ev), Reason: reason}
	if c.line == 1 {
		v.Event = "header"
	}
	for id := 1; id <= c.n; id++ {
		if !c.crashed[id] && c.state[id] == cs.InCS {
			v.InCS = append(v.InCS, cs.ID(id))
		}
	}
	c.rep.Violation = v
	return false
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
