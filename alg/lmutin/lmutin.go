// Package lmutin implements l_i-LMUTIN, the generalized local l_i-mutual
// inclusion algorithm of Kamei and Kakugawa, "An asynchronous
// message-passing distributed algorithm for the generalized local critical
// section problem" (Algorithms 10(2):38, 2017), section 3, Algorithms 1
// and 2: at least l_i of P_i and its neighbors N_i are InCS at any time
// (the generalized local (l_i, |N_i|+1)-CS problem).
//
// To leave the CS, P_i asks every member of N_i ∪ {P_i} for a grant
// (Request, timestamped (ts_i, P_i)) and leaves when it holds all
// |N_i|+1 of them. Each P_j hands out at most |N_j| - l_j + 1 grants at a
// time (grantedTo_j), so at most that many of N_j ∪ {P_j} are OutCS; a
// grant comes back with a Release when its holder enters the CS again.
// Requests wait in pendingReq_j, lowest timestamp first, and an older
// request may take a grant back from a younger one that is still waiting
// (Preempt / Relinquish), which is what makes every exit complete (Lemma
// 2).
//
// Deviations from the paper, and readings of what it leaves open:
//   - Algorithm 1 gives grantedTo_i initially as {(0, P_j ∈ CS_i(C_0))}.
//     The complement bar over CS was lost in the renderings; grantedTo_i
//     holds the grants to be OutCS, so it starts with the processes of
//     N_i ∪ {P_i} that are OutCS in C_0, each with timestamp 0 (the same
//     bar is lost in the proof of Lemma 1). A process InCS holds none.
//   - The logical clock (section 3, "omitted") travels on every message
//     and is merged on receipt, ts_i := max(ts_i, ts); Exit increments it.
//     That is the property Lemma 2 uses: once P_j has received P_i's
//     Request, P_j's next request is younger.
//   - "wait until nGrants_i = |N_i|+1" is a recorded phase re-tested after
//     every message.
//   - Liveness (Definition 1, Lemma 2) is read with the paper's assumption
//     of section 2.2: every OutCS process eventually enters again. Without
//     it (a simulator's drain) an exit that no bound holds can wait for
//     good, as in Algorithm 2: behind an older exit that a bound holds,
//     which keeps its grants (a younger Request preempts nothing), or
//     behind a preemption in progress, since a Request that finds
//     preemptingNow_i set is never reconsidered for preemption (Lemma 2's
//     proof assumes "P_j's permission is preempted"). Either way the next
//     Release at the grantor frees a grant for the oldest pending request;
//     docs/design/lmutin-fix.md, "Exits that no bound holds after a drain".
//   - Messages from outside N_i ∪ {P_i} are refused as errors.
//   - Variant Paper is Algorithms 1-2 as published; a step the paper
//     leaves undefined returns an error naming it (a Relinquish from a
//     process that holds no grant of P_i's: there is no "deleted item" to
//     re-queue). Variant Fixed (the zero value) repairs what the model
//     checker found; see Variant and docs/local-lk-cs.md.
package lmutin

import (
	"fmt"

	"github.com/critsec/critsec/alg/internal/stamp"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/topology"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "lmutin"

// Variant selects the published algorithm or the corrected one. The zero
// value is the corrected one.
type Variant uint8

const (
	// Fixed is the corrected algorithm (docs/design/lmutin-fix.md).
	Fixed Variant = iota
	// Paper is Algorithms 1-2 exactly as published; the undefined step
	// returns an error.
	Paper
	// PaperLenient is Paper with the undefined step given the most lenient
	// reading: a Relinquish from a process holding no grant deletes
	// nothing, and the oldest pending request, if any, is granted as
	// usual. The model checker shows that this reading breaks safety
	// (docs/design/lmutin-fix.md); it is not registered, only tested.
	PaperLenient
)

// String returns "fixed", "paper" or "paper-lenient".
func (v Variant) String() string {
	switch v {
	case Fixed:
		return "fixed"
	case PaperLenient:
		return "paper-lenient"
	}
	return "paper"
}

// Machine is process P_i's part of l_i-LMUTIN.
type Machine struct {
	i       cs.ID
	variant Variant
	// closed is N_i ∪ {P_i} in increasing order and member the same set;
	// l is l_i. Constants shared between clones.
	closed []cs.ID
	member *cs.Set
	l      int

	state   cs.State
	waiting bool // Exit-Sequence: wait until nGrants_i = |N_i|+1

	// The local variables of Algorithm 1, named as in the paper.
	ts            int64
	reqTS         int64 // Fixed: the timestamp of the request in progress
	nGrants       int
	grantedTo     stamp.Set
	pendingReq    stamp.Set
	preemptingNow cs.ID // 0 is nil
}

// Validate checks p for l_i-LMUTIN: n >= 2 neighbor lists of a connected
// graph, symmetric, without self-loops or repeats; 0 <= l_i <= |N_i| for every process (and
// k_i = |N_i|+1 when Ki is given); and at least l_i of N_i ∪ {P_i} InCS
// initially.
func Validate(p cs.Params) error {
	if err := checkGraph(p); err != nil {
		return err
	}
	if len(p.Li) != p.N || (p.Ki != nil && len(p.Ki) != p.N) {
		return fmt.Errorf("lmutin: %d lower bounds and %d upper bounds for n = %d: need l_i for every process", len(p.Li), len(p.Ki), p.N)
	}
	ks := make([]int, p.N)
	for idx, ns := range p.Neighbors {
		id := cs.ID(idx + 1)
		l, d := p.Li[idx], len(ns)
		ks[idx] = d + 1
		if l < 0 || l > d {
			return fmt.Errorf("lmutin: P%d (degree %d): l = %d is out of range: need 0 <= l <= |N_%d| = %d", id, d, l, id, d)
		}
		if p.Ki != nil && p.Ki[idx] != d+1 {
			return fmt.Errorf("lmutin: P%d (degree %d): k = %d: l_i-LMUTIN allows all of N_%d ∪ {P%d} InCS, so k must be %d", id, d, p.Ki[idx], id, id, d+1)
		}
	}
	if err := topology.CheckInitial(p.Neighbors, p.Li, ks, p.Initial); err != nil {
		return fmt.Errorf("lmutin: %w", err)
	}
	return nil
}

// checkGraph checks p.N and p.Neighbors (the communication graph: at
// least two processes, symmetric links, no self-loop, connected) and the
// ids of p.Initial.
func checkGraph(p cs.Params) error {
	if len(p.Neighbors) != p.N {
		return fmt.Errorf("lmutin: n = %d with %d neighbor lists: need one list N_i per process", p.N, len(p.Neighbors))
	}
	if _, err := topology.FromLists("", p.Neighbors); err != nil {
		return fmt.Errorf("lmutin: %w", err)
	}
	for _, id := range p.Initial {
		if id < 1 || int(id) > p.N {
			return fmt.Errorf("lmutin: initial: unknown process id %d: ids run from 1 to n = %d", id, p.N)
		}
	}
	return nil
}

// New validates p and returns the machines of processes 1..n, in order.
func New(p cs.Params, v Variant) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	in := cs.NewSet(p.Initial...)
	ms := make([]cs.Machine, p.N)
	for idx, ns := range p.Neighbors {
		id := cs.ID(idx + 1)
		closed := topology.Closed(id, ns)
		member := cs.NewSet(closed...)
		m := &Machine{i: id, variant: v, closed: closed, member: &member, l: p.Li[idx]}
		if in.Has(id) {
			m.state = cs.InCS
		}
		for _, j := range closed {
			if !in.Has(j) {
				m.grantedTo = append(m.grantedTo, stamp.Stamp{ID: j})
			}
		}
		ms[idx] = m
	}
	return ms, nil
}

// Self is P_i.
func (m *Machine) Self() cs.ID { return m.i }

// Neighbors returns N_i (cs.Local): P_i sends to N_i ∪ {P_i} only.
func (m *Machine) Neighbors() []cs.ID {
	return topology.Open(m.i, m.closed)
}

// State is state_i.
func (m *Machine) State() cs.State { return m.state }

// Pending is Exit while the Exit-Sequence waits for grants; the
// Entry-Sequence never blocks.
func (m *Machine) Pending() cs.Op {
	if m.waiting {
		return cs.Exit
	}
	return cs.None
}

// Exit is the Exit-Sequence of Algorithm 2: a new timestamp and a Request
// to every member of N_i ∪ {P_i}; it completes from Receive when all
// |N_i|+1 grants are in.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.ts++
	if m.variant == Fixed {
		m.reqTS = m.ts
	}
	m.nGrants = 0
	for _, j := range m.closed {
		env.Send(j, Request{Clock: m.ts})
	}
	m.waiting = true
	return nil
}

// Entry is the Entry-Sequence of Algorithm 2: state_i := InCS and a
// Release to every member of N_i ∪ {P_i}. It never blocks.
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.state = cs.InCS
	env.Changed(cs.InCS)
	for _, j := range m.closed {
		env.Send(j, Release{Clock: m.ts})
	}
	return nil
}

// Receive handles the five messages of Algorithm 2.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	if !m.member.Has(from) {
		return fmt.Errorf("%w: P%d got %s from P%d, which is not in N_%d ∪ {P%d}", cs.ErrUnexpected, m.i, kind(msg), from, m.i, m.i)
	}
	switch msg := msg.(type) {
	case Request:
		m.clock(msg.Clock)
		m.onRequest(env, stamp.Stamp{TS: msg.Clock, ID: from})
	case Grant:
		m.clock(msg.Clock)
		m.nGrants++
		if m.waiting && m.nGrants == len(m.closed) {
			m.waiting = false
			m.state = cs.OutCS
			env.Changed(cs.OutCS)
		}
	case Release:
		m.clock(msg.Clock)
		if from == m.preemptingNow {
			m.preemptingNow = 0
		}
		var held bool
		m.grantedTo, _, held = m.grantedTo.Take(from)
		if !held && m.variant == Fixed {
			// A process enters only after holding every grant of its
			// neighborhood, and gives one back only while waiting.
			return fmt.Errorf("lmutin: P%d got Release from P%d, which holds no grant of P%d's", m.i, from, m.i)
		}
		if len(m.pendingReq) > 0 {
			m.grantNext(env)
		}
	case Preempt:
		m.clock(msg.Clock)
		// Paper: whenever InCS. Fixed: only while the request whose grant
		// is asked back is still waiting (docs/design/lmutin-fix.md).
		relinquish := m.state == cs.InCS
		if m.variant == Fixed {
			relinquish = m.waiting && msg.Target == m.reqTS
		}
		if relinquish {
			m.nGrants--
			env.Send(from, Relinquish{Clock: m.ts})
		}
	case Relinquish:
		m.clock(msg.Clock)
		m.preemptingNow = 0
		var gone stamp.Stamp
		var ok bool
		m.grantedTo, gone, ok = m.grantedTo.Take(from)
		switch {
		case ok:
		case m.variant == Fixed:
			return fmt.Errorf("lmutin: P%d got Relinquish from P%d, which holds no grant of P%d's", m.i, from, m.i)
		case m.variant == PaperLenient:
			if len(m.pendingReq) > 0 {
				m.grantNext(env)
			}
			return nil
		default:
			return fmt.Errorf("lmutin-paper: P%d got Relinquish from P%d, which holds no grant of P%d's: Algorithm 2 re-queues \"the deleted item\" of grantedTo_%d, and there is none (an undefined step)", m.i, from, m.i, m.i)
		}
		m.pendingReq = m.pendingReq.Insert(gone)
		m.grantNext(env)
	default:
		return cs.Unexpected(m.i, from, msg)
	}
	return nil
}

// onRequest is the receipt of ⟨Request, ts_j, P_j⟩.
func (m *Machine) onRequest(env cs.Env, r stamp.Stamp) {
	m.pendingReq = m.pendingReq.Insert(r)
	if len(m.grantedTo) < m.limit() {
		m.grantNext(env)
		return
	}
	if m.preemptingNow == 0 {
		h := m.grantedTo.Max()
		if r.Less(h) {
			m.preemptingNow = h.ID
			p := Preempt{Clock: m.ts}
			if m.variant == Fixed {
				p.Target = h.TS
			}
			env.Send(h.ID, p)
		}
	}
}

// grantNext grants the oldest pending request: deleteMin(pendingReq_i)
// joins grantedTo_i and gets a Grant.
func (m *Machine) grantNext(env cs.Env) {
	var h stamp.Stamp
	m.pendingReq, h = m.pendingReq.DeleteMin()
	m.grantedTo = m.grantedTo.Insert(h)
	env.Send(h.ID, Grant{Clock: m.ts})
}

// clock merges a received clock into ts_i.
func (m *Machine) clock(ts int64) { m.ts = max(m.ts, ts) }

func kind(msg cs.Message) string {
	if msg == nil {
		return "<nil>"
	}
	return msg.Kind()
}

// Clone returns a deep copy; the constants are shared.
func (m *Machine) Clone() cs.Machine {
	c := *m
	c.grantedTo = m.grantedTo.Clone()
	c.pendingReq = m.pendingReq.Clone()
	return &c
}

// AppendState appends state_i, the waiting phase and the variables of
// Algorithm 1.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state))
	b = cs.AppendBool(b, m.waiting)
	b = cs.AppendInt(b, m.ts)
	b = cs.AppendInt(b, m.reqTS)
	b = cs.AppendInt(b, int64(m.nGrants))
	b = m.grantedTo.AppendBinary(b)
	b = m.pendingReq.AppendBinary(b)
	return cs.AppendInt(b, int64(m.preemptingNow))
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer); every process it names is P_i or a neighbor.
func (m *Machine) ReadState(r *cs.Reader) {
	n := int(m.closed[len(m.closed)-1])
	m.state = cs.State(r.Phase(byte(cs.InCS) + 1))
	m.waiting = r.Bool()
	m.ts, m.reqTS = r.Int(), r.Int()
	m.nGrants = int(r.Int32())
	m.grantedTo, m.pendingReq = stamp.Read(r, n), stamp.Read(r, n)
	m.preemptingNow = r.ID(n)
}

// limit is |N_i| - l_i + 1, the most grants P_i has out at once
// (Algorithm 2).
func (m *Machine) limit() int { return len(m.closed) - m.l }

// String names the algorithm and l_i, e.g. "lmutin(l_3=1)".
func (m *Machine) String() string { return fmt.Sprintf("%s(l_%d=%d)", Name, m.i, m.l) }
