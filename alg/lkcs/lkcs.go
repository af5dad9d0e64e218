// Package lkcs implements LKCS, the algorithm for the generalized local
// (l_i,k_i)-CS problem of Kamei and Kakugawa, "An asynchronous
// message-passing distributed algorithm for the generalized local critical
// section problem" (Algorithms 10(2):38, 2017), section 5, Algorithms 3-7:
// at least l_i and at most k_i of P_i and its neighbours N_i are InCS.
//
// LKCS runs l_i-LMUTIN (type MUTIN: grants to leave the CS) and
// k_i-LMUTEX (type MUTEX: grants to enter it) side by side, with one state
// and one timestamp per process. Exit asks for MUTIN grants, then gives its
// MUTEX grants back; Entry asks for MUTEX grants, then gives its MUTIN
// grants back. Chains of processes waiting on each other can deadlock this
// composition, so a leader P_LDR with |N_LDR| >= 4 watches its own
// neighbourhood: the processes within two hops of it keep one grant of
// each type in reserve (L_i = l_i+1, K_i = k_i-1), and when the leader,
// blocked in its own request, sees all of N_LDR ∪ {P_LDR} waiting
// (Waiting_LDR = |N_LDR|+1), it nominates one of them (Trigger), which asks
// again (RequestByTrigger) and is granted at once by the "sidetrack", with
// the highest priority (timestamp 0).
//
// The two sub-protocols are written as the paper writes them, as one
// machine with variables indexed by the type at, not as two composed
// machines: the leader reads both at once (Grant_LDR, Waiting_LDR) and a
// trigger crosses from one to the other.
//
// Readings of what the paper leaves open, and deviations:
//   - Algorithm 3's initial grantedTo_i[at] = {(1, P_j ∈ CS_i(C_0))} lost
//     its complement bar for MUTIN, as in LMUTIN: grantedTo_i[MUTIN] starts
//     with the members of N_i ∪ {P_i} OutCS in C_0, grantedTo_i[MUTEX] with
//     those InCS, each with timestamp 1.
//   - ts_i changes only in the Exit-Sequence (ts_i := ts_i+1): the Trigger
//     handler's test ts = ts_i and TriggerNomination's (ts_j+1, P_j) rule
//     both need the timestamp of P_j's request to be ts_j, so the clock is
//     not merged with received ones (LMUTIN's is).
//   - "while (...) { if (leader and Waiting = |N_LDR|+1) { TriggerNomination();
//     wait until Waiting < |N_LDR|+1 } }" is a recorded phase re-tested
//     after every message: the leader nominates when its own request is
//     blocked and it sees all |N_LDR|+1 waiting, then waits for that to
//     change before it looks again (even if its own grants are all in).
//   - Messages from outside N_i ∪ {P_i} are refused as errors, and so is a
//     Trigger sent by a process that is not the leader.
//   - A step the paper leaves undefined (a Relinquish with no grant to
//     delete, min of an empty candidate set) returns an error naming it.
//
// This package is Algorithms 3-7 as published, registered as lkcs-paper.
// The model checker finds a global deadlock on the smallest graph the
// paper's assumptions allow (Algorithm 6 nominates no trigger when the
// leader's grants are full); three repairs were tried and each failed in
// the checker or the simulator, so no corrected "lkcs" is registered
// (docs/local-lk-cs.md, "LKCS").
package lkcs

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/alg/internal/stamp"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/topology"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "lkcs"

// phase is the sequence in progress.
type phase uint8

const (
	idle     phase = iota
	exiting        // Exit-Sequence: waiting for MUTIN grants
	entering       // Entry-Sequence: waiting for MUTEX grants
)

// Machine is process P_i's part of LKCS.
type Machine struct {
	i cs.ID
	// Constants shared between clones: N_i ∪ {P_i} (sorted, and as a
	// set), the macros L_i and K_i (Algorithm 3), and the leader P_LDR.
	closed []cs.ID
	member *cs.Set
	macroL int
	macroK int
	ldr    cs.ID

	state cs.State
	phase phase
	// waitTrigger: the leader nominated and waits until
	// Waiting_LDR < |N_LDR|+1.
	waitTrigger bool

	// The local variables of Algorithm 3, named as in the paper and
	// indexed by At.
	ts            int64
	nGrants       [2]cs.Set
	grantedTo     [2]stamp.Set
	pendingReq    [2]stamp.Set
	preemptingNow [2]stamp.Stamp // ID 0 is nil
}

// New validates p (a connected graph, bounds with a leader that satisfies
// section 5.1's assumptions, see Resolve, and a safe initial
// configuration) and returns the machines of processes 1..n, in order.
func New(p cs.Params) ([]cs.Machine, error) {
	pr, err := Resolve(p)
	if err != nil {
		return nil, fmt.Errorf("lkcs: %w", err)
	}
	in := cs.NewSet(p.Initial...)
	for _, id := range p.Initial {
		if id < 1 || int(id) > p.N {
			return nil, fmt.Errorf("lkcs: initial: unknown process id %d: ids run from 1 to n = %d", id, p.N)
		}
	}
	if err := topology.CheckInitial(p.Neighbors, p.Li, p.Ki, p.Initial); err != nil {
		return nil, fmt.Errorf("lkcs: %w", err)
	}
	ms := make([]cs.Machine, p.N)
	for idx, ns := range p.Neighbors {
		id := cs.ID(idx + 1)
		closed := topology.Closed(id, ns)
		member := cs.NewSet(closed...)
		m := &Machine{i: id, closed: closed, member: &member, macroL: pr.L[idx], macroK: pr.K[idx], ldr: pr.Leader, ts: 1}
		if in.Has(id) {
			m.state = cs.InCS
		}
		for _, j := range closed {
			at := Mutin
			if in.Has(j) {
				at = Mutex
			}
			m.grantedTo[at] = append(m.grantedTo[at], stamp.Stamp{TS: 1, ID: j})
		}
		ms[idx] = m
	}
	return ms, nil
}

// Self is P_i.
func (m *Machine) Self() cs.ID { return m.i }

// State is state_i.
func (m *Machine) State() cs.State { return m.state }

// Pending is the sequence in progress.
func (m *Machine) Pending() cs.Op {
	switch m.phase {
	case exiting:
		return cs.Exit
	case entering:
		return cs.Entry
	}
	return cs.None
}

// Exit is the Exit-Sequence of Algorithm 4: a new timestamp and a MUTIN
// Request to N_i ∪ {P_i}; it completes when every MUTIN grant is in.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.ts++
	return m.start(env, Mutin, exiting)
}

// Entry is the Entry-Sequence of Algorithm 4: a MUTEX Request to
// N_i ∪ {P_i}; it completes when every MUTEX grant is in.
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	return m.start(env, Mutex, entering)
}

func (m *Machine) start(env cs.Env, at At, ph phase) error {
	m.nGrants[at].Clear()
	for _, j := range m.closed {
		env.Send(j, Request{At: at, TS: m.ts})
	}
	m.phase = ph
	return m.advance(env)
}

// advance runs the while loop of the sequence in progress as far as it
// goes: the leader's nomination, its wait, and the completion.
func (m *Machine) advance(env cs.Env) error {
	for m.phase != idle {
		at := Mutin
		if m.phase == entering {
			at = Mutex
		}
		size := len(m.closed)
		if m.waitTrigger {
			if m.waiting() >= size {
				return nil // wait until (Waiting_LDR < |N_LDR|+1)
			}
			m.waitTrigger = false
			continue
		}
		if m.nGrants[at].Len() >= size {
			// The while loop is over: change state and give the other
			// type's grants back.
			m.phase = idle
			m.state = m.state.Flip()
			env.Changed(m.state)
			for _, j := range m.closed {
				env.Send(j, Release{At: 1 - at})
			}
			return nil
		}
		if m.i != m.ldr || m.waiting() != size {
			return nil
		}
		// The configuration may be in a deadlock.
		if err := m.nominate(env); err != nil {
			return err
		}
		m.waitTrigger = true
	}
	return nil
}

// grantLDR is Grant_LDR: the processes holding grants of both types.
func (m *Machine) grantLDR() []cs.ID {
	var ids []cs.ID
	for _, s := range m.grantedTo[Mutin] {
		if m.grantedTo[Mutex].HasID(s.ID) && !slices.Contains(ids, s.ID) {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// waiting is Waiting_LDR.
func (m *Machine) waiting() int {
	return len(m.pendingReq[Mutin]) + len(m.pendingReq[Mutex]) + len(m.grantLDR())
}

// nominate is TriggerNomination() (Algorithm 6).
func (m *Machine) nominate(env cs.Env) error {
	// Algorithm 6 tests |grantedTo[MUTIN]| = |N_LDR| - L_LDR and
	// |grantedTo[MUTEX]| = K_LDR - 1, one below the normal limits; the
	// proof of Lemma 5 speaks of the limits themselves (docs/local-lk-cs.md).
	var at At
	switch {
	case len(m.grantedTo[Mutin]) == len(m.closed)-1-m.macroL: // |N_LDR| - L_LDR
		at = Mutex
	case len(m.grantedTo[Mutex]) == m.macroK-1:
		at = Mutin
	default:
		return nil // neither case: no Trigger is sent
	}
	var h stamp.Stamp
	if len(m.pendingReq[at]) > 0 {
		m.pendingReq[at], h = m.pendingReq[at].DeleteMin()
	} else {
		var ok bool
		if h, ok = m.candidate(at); !ok {
			return fmt.Errorf("lkcs-paper: leader P%d: TriggerNomination takes min(candidate_LDR) of an empty set (type %s, Grant_LDR = %v): an undefined step", m.i, at, m.grantLDR())
		}
	}
	env.Send(h.ID, Trigger{At: at, TS: h.TS})
	return nil
}

// candidate is the least stamp of candidate_LDR for a trigger of type at
// (Algorithm 6): a P_j of Grant_LDR with (ts_j, P_j) in grantedTo[MUTEX]
// and (ts_j, P_j) (at = MUTEX: "waiting to enter") or (ts_j+1, P_j) (at =
// MUTIN: "waiting to exit") in grantedTo[MUTIN].
func (m *Machine) candidate(at At) (stamp.Stamp, bool) {
	var best stamp.Stamp
	found := false
	for _, j := range m.grantLDR() {
		for _, s := range m.grantedTo[Mutex] {
			if s.ID != j {
				continue
			}
			want := s
			if at == Mutin {
				want.TS++
			}
			if m.grantedTo[Mutin].Has(want) && (!found || s.Less(best)) {
				best, found = s, true
			}
		}
	}
	return best, found
}

// cond is Cond_i for type at (Algorithm 3).
func (m *Machine) cond(at At) bool {
	if at == Mutex {
		return len(m.grantedTo[Mutex]) < m.macroK
	}
	return len(m.grantedTo[Mutin]) < len(m.closed)-m.macroL
}

// Receive handles the messages of Algorithms 5 and 7.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	if !m.member.Has(from) {
		return fmt.Errorf("%w: P%d got %s from P%d, which is not in N_%d ∪ {P%d}", cs.ErrUnexpected, m.i, kind(msg), from, m.i, m.i)
	}
	switch msg := msg.(type) {
	case Request:
		at := msg.At
		m.pendingReq[at] = m.pendingReq[at].Insert(stamp.Stamp{TS: msg.TS, ID: from})
		if m.cond(at) {
			m.grantNext(env, at)
		} else if m.preemptingNow[at].ID == 0 {
			h := m.grantedTo[at].Max()
			if (stamp.Stamp{TS: msg.TS, ID: from}).Less(h) {
				m.preemptingNow[at] = h
				env.Send(h.ID, Preempt{At: at})
			}
		}
	case Grant:
		m.nGrants[msg.At].Add(from)
	case Release:
		at := msg.At
		if m.preemptingNow[at].ID == from {
			m.preemptingNow[at] = stamp.Stamp{}
		}
		m.grantedTo[at], _, _ = m.grantedTo[at].Take(from)
		if len(m.pendingReq[at]) > 0 {
			m.grantNext(env, at)
		}
	case Preempt:
		at := msg.At
		if (at == Mutex && m.state == cs.OutCS) || (at == Mutin && m.state == cs.InCS) {
			m.nGrants[at].Remove(from)
			env.Send(from, Relinquish{At: at})
		}
	case Relinquish:
		at := msg.At
		m.preemptingNow[at] = stamp.Stamp{}
		var gone stamp.Stamp
		var ok bool
		if m.grantedTo[at], gone, ok = m.grantedTo[at].Take(from); !ok {
			return fmt.Errorf("lkcs-paper: P%d got Relinquish(%s) from P%d, which holds no %s grant of P%d's: Algorithm 5 re-queues \"the deleted item\", and there is none (an undefined step)", m.i, at, from, at, m.i)
		}
		m.pendingReq[at] = m.pendingReq[at].Insert(gone)
		m.grantNext(env, at)
	case Trigger:
		if from != m.ldr {
			return fmt.Errorf("%w: P%d got Trigger from P%d, which is not the leader P%d", cs.ErrUnexpected, m.i, from, m.ldr)
		}
		at := msg.At
		ok := msg.TS == m.ts && m.nGrants[at].Len() < len(m.closed) &&
			((m.state == cs.InCS && at == Mutin) || (m.state == cs.OutCS && at == Mutex))
		if ok {
			m.nGrants[at].Clear()
			for _, j := range m.closed {
				env.Send(j, RequestByTrigger{At: at})
			}
		}
	case RequestByTrigger:
		at := msg.At
		m.pendingReq[at], _, _ = m.pendingReq[at].Take(from)
		m.grantedTo[at], _, _ = m.grantedTo[at].Take(from)
		m.grantedTo[at] = m.grantedTo[at].Insert(stamp.Stamp{TS: 0, ID: from})
		env.Send(from, Grant{At: at})
	default:
		return cs.Unexpected(m.i, from, msg)
	}
	return m.advance(env)
}

// grantNext grants the oldest pending request of type at.
func (m *Machine) grantNext(env cs.Env, at At) {
	var h stamp.Stamp
	m.pendingReq[at], h = m.pendingReq[at].DeleteMin()
	m.grantedTo[at] = m.grantedTo[at].Insert(h)
	env.Send(h.ID, Grant{At: at})
}

func kind(msg cs.Message) string {
	if msg == nil {
		return "<nil>"
	}
	return msg.Kind()
}

// Clone returns a deep copy; the constants are shared.
func (m *Machine) Clone() cs.Machine {
	c := *m
	for at := range 2 {
		c.nGrants[at] = m.nGrants[at].Clone()
		c.grantedTo[at] = m.grantedTo[at].Clone()
		c.pendingReq[at] = m.pendingReq[at].Clone()
	}
	return &c
}

// AppendState appends state_i, the phase and the variables of Algorithm 3.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state), byte(m.phase))
	b = cs.AppendBool(b, m.waitTrigger)
	b = cs.AppendInt(b, m.ts)
	for at := range 2 {
		b = m.nGrants[at].AppendBinary(b)
		b = m.grantedTo[at].AppendBinary(b)
		b = m.pendingReq[at].AppendBinary(b)
		b = cs.AppendInt(cs.AppendInt(b, m.preemptingNow[at].TS), int64(m.preemptingNow[at].ID))
	}
	return b
}

// String names the algorithm and the macros, e.g. "lkcs(L_3=1,K_3=2)".
func (m *Machine) String() string {
	return fmt.Sprintf("%s(L_%d=%d,K_%d=%d)", Name, m.i, m.macroL, m.i, m.macroK)
}
