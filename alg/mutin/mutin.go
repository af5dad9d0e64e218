// Package mutin implements the class MUTIN(l) for l-mutual inclusion (at
// least l processes InCS at any time) of Kamei and Kakugawa, "Asynchronous
// message-passing distributed algorithm for the global critical section
// problem" (2019), section 4, Algorithms 1 and 2.
//
// Each process P_i keeps procsInCS_i, the processes of R_i = {P_k | P_i ∈ Q_k}
// it knows to be InCS: Entry sends Release to each member of Q_i, and Exit,
// serialised by a mutual-exclusion object mx, asks each member of Q_i for its
// procsInCS (Query / Response1 / Response2) until it knows of l+1 processes
// InCS, then removes itself everywhere (Acquire / Ack) before it leaves.
//
// The paper uses Maekawa's algorithm as mx; this package takes mx as a
// parameter (Options.Mx), so any mutual-exclusion machine can serve.
//
// Deviations from the paper (see docs/global-lk-cs.md and
// docs/design/mutin-fix.md):
//   - Variant Paper is Algorithms 1-2 as published. Variant Fixed keeps
//     responseAgainTo_i set after a Response2 has been sent, until the
//     querier's Acquire arrives, so every Release that reaches P_i while a
//     Query is outstanding is forwarded. The published rule (one Response2
//     per Query) can lose the Release the querier still needs; the
//     counterexample is in docs/design/mutin-fix.md and mutin_test.go.
//   - currentInCS_i and ackFrom_i are also cleared when Exit() completes (the
//     paper clears them when the next Exit() starts). Nothing reads them in
//     between: every Response1/Response2 for a Query travels before the
//     sender's Ack on the same FIFO link. This only merges states that
//     behave alike, which shrinks the model checker's state space.
//   - The paper's "mx.Exit(); state := OutCS" is taken to complete when mx's
//     Exit completes (it does so at once for Maekawa and Ricart-Agrawala).
//   - Messages from a process that should not send them (a Query, Acquire or
//     Release from outside R_i, a Response or Ack from outside Q_i) are
//     refused as errors instead of being processed.
package mutin

import (
	"fmt"
	"iter"

	"github.com/critsec/critsec/alg/internal/variant"
	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "mutin"

// Variant selects the published algorithm or the corrected one (the zero
// value).
type Variant = variant.Variant

const (
	// Fixed forwards every Release that arrives while a Query is
	// outstanding: responseAgainTo_i is cleared only by Acquire.
	Fixed = variant.Fixed
	// Paper is Algorithms 1-2 exactly as published: a process sends at most
	// one Response2 per Query (responseAgainTo_i := nil after sending it).
	Paper = variant.Paper
)

// MxTag is the tag of mx's messages inside MUTIN's (cs.Tagged).
const MxTag = "mx"

// Options are the choices MUTIN(l) leaves open.
type Options struct {
	// Mx builds the mutual-exclusion objects of processes 1..n; it is
	// called with Params{N: n, K: 1, Quorums: the quorums} and must return
	// n machines, all OutCS. The paper uses Maekawa's algorithm.
	Mx func(p cs.Params) ([]cs.Machine, error)
	// Variant is Paper or Fixed.
	Variant Variant
}

// phase is where P_i is in Exit (Algorithm 1): each value but idle is one
// blocking statement.
type phase uint8

const (
	idle       phase = iota
	waitMx           // mx.Entry(): wait until mx is InCS
	waitCount        // wait until |currentInCS_i| >= l+1
	waitAck          // wait until ackFrom_i = Q_i
	waitMxExit       // mx.Exit(): wait until it completes
)

// Machine is process P_i's part of MUTIN(l).
type Machine struct {
	i       cs.ID
	n, l    int
	variant Variant
	// q lists Q_i in increasing order; qSet and rSet are Q_i and R_i.
	// All three are constants shared between clones.
	q          []cs.ID
	qSet, rSet cs.Set

	state cs.State
	phase phase
	// mx is the mutual-exclusion object serialising exits.
	mx cs.Machine

	// The local variables of Algorithm 1, named as in the paper.
	reqCnt          int64
	procsInCS       cs.Set
	currentInCS     cs.Set
	ackFrom         cs.Set
	responseAgainTo cs.ID // 0 is nil
	respAgainReqCnt int64
}

// Validate checks p for MUTIN(l): n >= 1, 0 <= l < n, the quorums form a
// coterie of n quorums (coterie.CheckIntersecting), and between l and n processes are
// InCS initially. p.K is not used.
func Validate(p cs.Params) error {
	if p.N < 1 {
		return fmt.Errorf("n = %d is out of range: need n >= 1", p.N)
	}
	if p.L < 0 || p.L >= p.N {
		return fmt.Errorf("l = %d is out of range for mutin: need 0 <= l < n (n = %d); with l >= n no process could ever exit", p.L, p.N)
	}
	if err := coterie.CheckIntersecting(p.Quorums, p.N); err != nil {
		return fmt.Errorf("quorums: %w", err)
	}
	return p.CheckInitial(p.L, p.N)
}

// New validates p and returns the machines of processes 1..n, in order.
func New(p cs.Params, o Options) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	if o.Mx == nil {
		return nil, fmt.Errorf("mutin: no mutual-exclusion algorithm for mx (Options.Mx is nil)")
	}
	mxs, err := o.Mx(cs.Params{N: p.N, K: 1, Quorums: p.Quorums})
	if err != nil {
		return nil, fmt.Errorf("mutin: mx: %w", err)
	}
	if len(mxs) != p.N {
		return nil, fmt.Errorf("mutin: mx: got %d machines for n = %d", len(mxs), p.N)
	}
	initial := cs.NewSet(p.Initial...)
	// R_i = {k : P_i ∈ Q_k}, for every i at once: one pass over the
	// quorums, O(Σ|Q_k|), not one per process.
	r := make([]cs.Set, p.N+1)
	for k, qk := range p.Quorums {
		for _, x := range qk {
			r[x].Add(cs.ID(k + 1))
		}
	}
	ms := make([]cs.Machine, p.N)
	for idx := range ms {
		id := cs.ID(idx + 1)
		if mxs[idx].Self() != id || mxs[idx].State() != cs.OutCS || mxs[idx].Pending() != cs.None {
			return nil, fmt.Errorf("mutin: mx: machine %d is not an idle OutCS machine of P%d", idx, id)
		}
		m := &Machine{i: id, n: p.N, l: p.L, variant: o.Variant, mx: mxs[idx]}
		m.q = cs.NewSet(p.Quorums[idx]...).Members()
		m.qSet = cs.NewSet(m.q...)
		m.rSet = r[id]
		if initial.Has(id) {
			m.state = cs.InCS
		}
		// procsInCS_i: the processes of R_i InCS initially (Algorithm 1).
		for _, k := range m.rSet.Members() {
			if initial.Has(k) {
				m.procsInCS.Add(k)
			}
		}
		ms[idx] = m
	}
	return ms, nil
}

// Self is P_i.
func (m *Machine) Self() cs.ID { return m.i }

// State is state_i.
func (m *Machine) State() cs.State { return m.state }

// Pending is Exit while Exit() has not completed; Entry() never blocks.
func (m *Machine) Pending() cs.Op {
	if m.phase != idle {
		return cs.Exit
	}
	return cs.None
}

// Children yields mx, MUTIN's only child (cs.Composite).
func (m *Machine) Children() iter.Seq2[string, cs.Machine] {
	return func(yield func(string, cs.Machine) bool) { yield(MxTag, m.mx) }
}

func (m *Machine) mxEnv(env cs.Env) cs.Env { return cs.ChildEnv{Parent: env, Tag: MxTag} }

// Exit is Exit() of Algorithm 1: mx.Entry(), then Query, then Acquire; it
// completes from Receive when the waits are over.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	if err := m.mx.Entry(m.mxEnv(env)); err != nil {
		return fmt.Errorf("mutin: P%d: mx.Entry: %w", m.i, err)
	}
	m.phase = waitMx
	return m.advance(env)
}

// Entry is Entry() of Algorithm 1: state_i := InCS and a Release to each
// member of Q_i. It never blocks.
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.state = cs.InCS
	env.Changed(cs.InCS)
	for _, j := range m.q {
		env.Send(j, Release{})
	}
	return nil
}

// advance re-tests the condition of the statement Exit() is blocked on and
// runs the following statements for as long as the conditions hold.
func (m *Machine) advance(env cs.Env) error {
	for {
		switch m.phase {
		case waitMx:
			if m.mx.State() != cs.InCS {
				return nil
			}
			m.reqCnt++
			m.currentInCS.Clear()
			for _, j := range m.q {
				env.Send(j, Query{ReqCnt: m.reqCnt})
			}
			m.phase = waitCount
		case waitCount:
			if m.currentInCS.Len() < m.l+1 {
				return nil
			}
			m.ackFrom.Clear()
			for _, j := range m.q {
				env.Send(j, Acquire{})
			}
			m.phase = waitAck
		case waitAck:
			if !m.ackFrom.Equal(m.qSet) {
				return nil
			}
			// mx is InCS with nothing pending, so an error here means mx
			// itself is broken.
			if err := m.mx.Exit(m.mxEnv(env)); err != nil {
				return fmt.Errorf("mutin: P%d: mx.Exit: %w", m.i, err)
			}
			m.phase = waitMxExit
		case waitMxExit:
			if m.mx.State() != cs.OutCS || m.mx.Pending() != cs.None {
				return nil
			}
			// currentInCS_i and ackFrom_i are not read again before the
			// next Exit resets them; clearing them now keeps equal
			// behaviours equal states for the model checker.
			m.currentInCS.Clear()
			m.ackFrom.Clear()
			m.phase = idle
			m.state = cs.OutCS
			env.Changed(cs.OutCS)
			return nil
		default:
			return nil
		}
	}
}

// Receive handles mx's messages (tagged MxTag) and the six messages of
// Algorithm 2.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	if from < 1 || int(from) > m.n {
		return cs.Unexpected(m.i, from, msg)
	}
	switch msg := msg.(type) {
	case cs.Tagged:
		if msg.Tag != MxTag {
			return cs.Unexpected(m.i, from, msg)
		}
		if err := m.mx.Receive(m.mxEnv(env), from, msg.Msg); err != nil {
			return err
		}
	case Query:
		if !m.rSet.Has(from) {
			return m.notMember(from, msg, "R")
		}
		env.Send(from, Response1{ProcsInCS: m.procsInCS.Members(), ReqCnt: msg.ReqCnt})
		m.responseAgainTo = from
		m.respAgainReqCnt = msg.ReqCnt
	case Response1:
		if !m.qSet.Has(from) {
			return m.notMember(from, msg, "Q")
		}
		if msg.ReqCnt == m.reqCnt {
			m.currentInCS.Union(cs.NewSet(msg.ProcsInCS...))
		}
	case Acquire:
		if !m.rSet.Has(from) {
			return m.notMember(from, msg, "R")
		}
		m.procsInCS.Remove(from)
		env.Send(from, Ack{})
		m.responseAgainTo = 0
		m.respAgainReqCnt = 0
	case Ack:
		if !m.qSet.Has(from) {
			return m.notMember(from, msg, "Q")
		}
		m.ackFrom.Add(from)
	case Release:
		if !m.rSet.Has(from) {
			return m.notMember(from, msg, "R")
		}
		m.procsInCS.Add(from)
		if m.responseAgainTo != 0 {
			env.Send(m.responseAgainTo, Response2{ProcsInCS: m.procsInCS.Members(), ReqCnt: m.respAgainReqCnt})
			if m.variant == Paper {
				m.responseAgainTo = 0
				m.respAgainReqCnt = 0
			}
		}
	case Response2:
		if !m.qSet.Has(from) {
			return m.notMember(from, msg, "Q")
		}
		if msg.ReqCnt == m.reqCnt {
			m.currentInCS.Union(cs.NewSet(msg.ProcsInCS...))
		}
	default:
		return cs.Unexpected(m.i, from, msg)
	}
	return m.advance(env)
}

func (m *Machine) notMember(from cs.ID, msg cs.Message, set string) error {
	return fmt.Errorf("%w: P%d got %s from P%d, which is not in %s_%d", cs.ErrUnexpected, m.i, msg.Kind(), from, set, m.i)
}

// Clone returns a deep copy; the constants Q_i and R_i are shared.
func (m *Machine) Clone() cs.Machine {
	c := *m
	c.mx = m.mx.Clone()
	c.procsInCS = m.procsInCS.Clone()
	c.currentInCS = m.currentInCS.Clone()
	c.ackFrom = m.ackFrom.Clone()
	return &c
}

// AppendState appends state_i, the Exit phase, the variables of Algorithm 1
// and mx's state.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state), byte(m.phase))
	b = cs.AppendInt(b, m.reqCnt)
	b = m.procsInCS.AppendBinary(b)
	b = m.currentInCS.AppendBinary(b)
	b = m.ackFrom.AppendBinary(b)
	b = cs.AppendInt(b, int64(m.responseAgainTo))
	b = cs.AppendInt(b, m.respAgainReqCnt)
	return m.mx.AppendState(b)
}

// ReadState sets the machine and its mx object to the state AppendState
// wrote (cs.Restorer).
func (m *Machine) ReadState(r *cs.Reader) {
	m.state = cs.State(r.Phase(byte(cs.InCS) + 1))
	m.phase = phase(r.Phase(byte(waitMxExit) + 1))
	m.reqCnt = r.Int()
	m.procsInCS, m.currentInCS, m.ackFrom = r.Set(m.n), r.Set(m.n), r.Set(m.n)
	m.responseAgainTo = r.ID(m.n)
	m.respAgainReqCnt = r.Int()
	cs.ReadState(r, m.mx)
}

// String names the algorithm and l, e.g. "mutin(2)".
func (m *Machine) String() string { return fmt.Sprintf("%s(%d)", Name, m.l) }
