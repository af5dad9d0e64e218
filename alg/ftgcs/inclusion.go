package ftgcs

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// Request is REQUEST(ts) of the l side: its sender, InCS, asks to leave
// the CS, stamped with the Lamport timestamp TS of the request.
type Request struct{ TS int64 }

// Grant is GRANT(ts): its sender is InCS and stays InCS until the
// requester of TS releases it (or is known to have crashed).
type Grant struct{ TS int64 }

// Release is RELEASE: the requester no longer needs one grant its
// receiver gave it (its exit completed, or the grant came too late).
type Release struct{}

// Kind is "REQUEST".
func (Request) Kind() string { return "REQUEST" }

// Kind is "GRANT".
func (Grant) Kind() string { return "GRANT" }

// Kind is "RELEASE".
func (Release) Kind() string { return "RELEASE" }

// Words is the message's size in words (cs.Message.Words): source,
// destination, type and the timestamp.
func (Request) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words): source,
// destination, type and the timestamp.
func (Grant) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words): source,
// destination and type.
func (Release) Words() int { return 3 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), m.TS) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Grant) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'G'), m.TS) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Release) AppendBinary(b []byte) []byte { return append(b, 'R') }

// Inclusion is process i's part of the l side of ftgcs: a fault-tolerant
// l-mutual inclusion in which a process leaves the CS only while l other
// processes are locked InCS for it.
//
// It keeps the shape of the complement of Raymond's algorithm that the
// global paper's complementarity theorem (Kamei and Kakugawa 2019,
// Theorem 1) gives from the fault-tolerant k-mutex (Bouillaguet, Arantes
// and Sens 2007, Algorithm 1, with K = n-l): an Exit broadcasts a request
// stamped with a Lamport timestamp, a process InCS answers at once unless
// it asks to leave with an earlier timestamp, a process OutCS defers its
// answer to its next Entry. It differs in what an answer means. In
// Raymond's algorithm a permission says "I am not in your way now", and
// the bound holds for the processes as a whole: the giver may leave right
// after, the others keeping the count. A crash breaks that count, however
// the threshold is set (docs/ft-global-lk-cs.md, "Dropped designs"). Here
// an answer is a lock: the giver stays InCS until the requester releases
// it, so at the moment an exit completes each of the l grants it holds
// comes from a process InCS or crashed while InCS; a grant from a process
// known to have crashed is dropped (as line 41 of Algorithm 1 cancels a
// crashed replier's permission), so what is left are the unreported
// crashes S2 counts. A requester holds its grants until its exit
// completes, then releases them; a late grant is released at once.
//
// Deadlock freedom: a process grants while requesting only to earlier
// requests, and a process that granted a request while not requesting
// stamps its own next request later (its clock has seen the request's),
// so a lock is always held by an earlier request than the locked
// process's own: the waits-for relation among requesters follows the
// timestamps and has no cycle.
//
// Crashes reach the machine through Crash, from the process's k side,
// which knows them from its detector and from CRASH messages
// (Algorithm 1, lines 37-45): a crashed process's grant is dropped, its
// locks on this process are cleared, its deferred request is forgotten,
// and no request is sent to it any more.
type Inclusion struct {
	i, n int32
	// l is the number of grants an exit needs.
	l     int32
	state cs.State
	// requesting: an Exit is in progress.
	requesting bool
	// H is the Lamport clock; last the current (or last) request's stamp.
	H, last int64
	// granted are the processes whose grant of the current request this
	// process holds; deferred the processes whose request waits for this
	// process's next Entry; crashed the processes known to have crashed.
	granted, deferred, crashed cs.Set
	// reqTS[j] is the stamp of j's deferred request; locks[j] the grants
	// this process gave j that j has not released. Index 0 is unused.
	reqTS []int64
	locks []int32
}

func newInclusion(i cs.ID, n, l int, s cs.State) *Inclusion {
	return &Inclusion{i: int32(i), n: int32(n), l: int32(l), state: s,
		reqTS: make([]int64, n+1), locks: make([]int32, n+1)}
}

// Self is P_i.
func (m *Inclusion) Self() cs.ID { return cs.ID(m.i) }

// State is the process's state in the l side.
func (m *Inclusion) State() cs.State { return m.state }

// Pending is cs.Exit while an exit waits for its grants, else cs.None.
func (m *Inclusion) Pending() cs.Op {
	if m.requesting {
		return cs.Exit
	}
	return cs.None
}

// Exit asks to leave: with l = 0 it completes at once, with no message;
// otherwise it sends REQUEST to every process not known to have crashed
// and waits for l grants and for no lock on this process.
func (m *Inclusion) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.requesting = true
	m.H++
	m.last = m.H
	m.granted.Clear()
	if m.l > 0 {
		for j := int32(1); j <= m.n; j++ {
			if j != m.i && !m.crashed.Has(cs.ID(j)) {
				env.Send(cs.ID(j), Request{TS: m.last})
			}
		}
	}
	m.tryExit(env)
	return nil
}

// tryExit completes the exit once l grants are held and no process holds
// a lock on this one; the grants are released.
func (m *Inclusion) tryExit(env cs.Env) {
	if !m.requesting || m.granted.Len() < int(m.l) {
		return
	}
	for _, c := range m.locks {
		if c != 0 {
			return
		}
	}
	m.requesting = false
	m.state = cs.OutCS
	for _, j := range m.granted.Members() {
		env.Send(j, Release{})
	}
	m.granted.Clear()
	env.Changed(cs.OutCS)
}

// Entry enters at once and grants every deferred request.
func (m *Inclusion) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.state = cs.InCS
	env.Changed(cs.InCS)
	for _, j := range m.deferred.Members() {
		m.grant(env, j, m.reqTS[j])
	}
	m.deferred.Clear()
	return nil
}

func (m *Inclusion) grant(env cs.Env, j cs.ID, ts int64) {
	m.locks[j]++
	m.reqTS[j] = 0
	env.Send(j, Grant{TS: ts})
}

// before reports whether request (a, i) precedes (b, j): Lamport's total
// order, ties broken by process id.
func before(a int64, i int32, b int64, j int32) bool {
	return a < b || (a == b && i < j)
}

// Receive handles REQUEST, GRANT and RELEASE.
func (m *Inclusion) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	j := int32(from)
	if j < 1 || j > m.n || j == m.i {
		return cs.Unexpected(m.Self(), from, msg)
	}
	if m.crashed.Has(from) {
		return nil // a known crashed process's messages are ignored (Algorithm 1, lines 23 and 29)
	}
	switch msg := msg.(type) {
	case Request:
		m.H = max(m.H, msg.TS)
		if m.state == cs.InCS && (!m.requesting || before(msg.TS, j, m.last, m.i)) {
			m.grant(env, from, msg.TS)
			return nil
		}
		m.deferred.Add(from)
		m.reqTS[j] = msg.TS
	case Grant:
		if m.requesting && msg.TS == m.last && !m.granted.Has(from) {
			m.granted.Add(from)
			m.tryExit(env)
			return nil
		}
		env.Send(from, Release{})
	case Release:
		if m.locks[j] == 0 {
			return fmt.Errorf("ftgcs: P%d got RELEASE from P%d, which holds no grant of it", m.i, j)
		}
		m.locks[j]--
		m.tryExit(env)
	default:
		return cs.Unexpected(m.Self(), from, msg)
	}
	return nil
}

// Crash tells the machine that j has crashed: its grant is dropped, its
// locks cleared, its deferred request forgotten. Repeats change nothing.
func (m *Inclusion) Crash(env cs.Env, j cs.ID) {
	if j < 1 || j > cs.ID(m.n) || j == cs.ID(m.i) || m.crashed.Has(j) {
		return
	}
	m.crashed.Add(j)
	m.granted.Remove(j)
	m.deferred.Remove(j)
	m.reqTS[j], m.locks[j] = 0, 0
	m.tryExit(env)
}

// Clone returns a deep copy (cs.Machine).
func (m *Inclusion) Clone() cs.Machine {
	c := *m
	c.granted, c.deferred, c.crashed = m.granted.Clone(), m.deferred.Clone(), m.crashed.Clone()
	c.reqTS = append([]int64(nil), m.reqTS...)
	c.locks = append([]int32(nil), m.locks...)
	return &c
}

// AppendState appends the canonical encoding of the machine's state.
func (m *Inclusion) AppendState(b []byte) []byte {
	b = append(b, byte(m.state))
	b = cs.AppendBool(b, m.requesting)
	b = cs.AppendInt(b, m.H)
	b = cs.AppendInt(b, m.last)
	for j := 1; j <= int(m.n); j++ {
		b = cs.AppendInt(b, m.reqTS[j])
		b = cs.AppendInt(b, int64(m.locks[j]))
	}
	for _, s := range []cs.Set{m.granted, m.deferred, m.crashed} {
		b = s.AppendBinary(b)
	}
	return b
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer).
func (m *Inclusion) ReadState(r *cs.Reader) {
	m.state = cs.State(r.Phase(byte(cs.InCS) + 1))
	m.requesting = r.Bool()
	m.H, m.last = r.Int(), r.Int()
	for j := 1; j <= int(m.n); j++ {
		m.reqTS[j], m.locks[j] = r.Int(), r.Int32()
	}
	for _, s := range []*cs.Set{&m.granted, &m.deferred, &m.crashed} {
		*s = r.Set(int(m.n))
	}
}

// String names the machine for reports.
func (m *Inclusion) String() string { return "ftgcs.Inclusion" }
