// Package ftraymond implements the fault-tolerant k-mutual exclusion
// algorithm of M. Bouillaguet, L. Arantes and P. Sens, "Fault tolerant
// k-mutual exclusion algorithm using failure detector" (INRIA research
// report inria-00128988, 2007), Algorithm 1 ("Raymond's extended
// algorithm"), sections 4 and 5.
//
// It is Raymond's algorithm (package raymond: REQUEST broadcast with a
// Lamport timestamp, n-k permissions, deferred REPLYs aggregated with a
// count) extended with a failure detector of class T (trusting, section 2):
//
//   - Initialization (lines 1-8): a process sends INIT to all; a process
//     that receives INIT(j) waits until its detector does not suspect j
//     (line 34), then adds j to trusted_i and answers ACK (lines 35-36); a
//     process may request once it has the ACKs it waits for (line 8).
//   - Crash detection (lines 43-45): when the detector suspects a process j
//     that i trusted, j has crashed (T's trusting accuracy); i drops j from
//     trusted_i and broadcasts CRASH(j).
//   - CRASH(j) (lines 37-42): j joins crashed_i, a permission j gave the
//     current request is cancelled, and n is decremented, so a request needs
//     one permission fewer; REQUEST and REPLY from a crashed process are
//     ignored (lines 23, 29).
//
// The detector's output T_i reaches the machine as cs.Detecting inputs:
// Suspect(j) adds j to T_i, Trust(j) removes it. T_i starts empty; a
// trusting detector's early suspicions of processes it has not trusted yet
// are Suspect inputs given before the first INIT arrives (package detector
// explains each class).
//
// Where critsec has to choose (each choice is in docs/fault-tolerance.md):
//
//   - Initialization starts at the process's first Entry or first received
//     message (critsec machines have no start call); a process that is sent
//     nothing and requests nothing has nothing to initialize for. An Entry
//     made before line 8 completes waits: lines 9-16 run when it does.
//   - Line 8 waits for an ACK from every other process: S_i is empty during
//     the initialization. S allows that output because the paper assumes
//     that no process crashes before the initialization ends (section 5),
//     so strong completeness asks nothing of S then, and weak accuracy holds.
//     The machine reports the end of line 8 through Initialized (the
//     cs.Initializing interface), which is how the model checker keeps
//     crashes within that assumption.
//   - "send CRASH(j) to all" (line 45) sends to every other process and
//     applies CRASH(j) at i itself, as if i had sent it one: the process
//     that detects a crash decrements its own n too (the paper's n messages
//     per detected crash: n-1 sent, one local).
//   - A REPLY carrying more permissions than the sender owes is refused
//     with an error (it cannot happen in a correct run), as in raymond.
//   - Not in the paper: every CS period gets a fencing token (Fence, the
//     cs.Fencing interface), the request's timestamp and crashed_i as line
//     16 found it, kept in fenced for the period because crashed_i grows
//     during it (docs/fencing.md, "Fencing tokens").
//
// Lines 9-32 are package raymond's, with the guards the extension adds
// (lines 23 and 29) and a variable n; the machine repeats them instead of
// wrapping a raymond.Machine because the CRASH handler (lines 40-42)
// changes the counters inside it.
//
// Messages: REQUEST and REPLY are raymond's (4 words); CRASH is 4 words
// (source, destination, type, the crashed process), INIT and ACK 3 (their
// field i is the sender).
package ftraymond

import (
	"fmt"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "ftraymond"

// Request is REQUEST(j, k) of Algorithm 1, line 13, and Reply is
// REPLY(j, x), lines 19 and 27: Raymond's messages, unchanged by the
// extension.
type (
	Request = raymond.Request
	Reply   = raymond.Reply
)

// Init is INIT(i) of Algorithm 1, line 7: a trust request.
type Init struct{}

// Ack is ACK(i) of Algorithm 1, line 36: the answer to INIT.
type Ack struct{}

// Crash is CRASH(j) of Algorithm 1, line 45: process Who has crashed.
type Crash struct{ Who cs.ID }

// Kind is "INIT".
func (Init) Kind() string { return "INIT" }

// Kind is "ACK".
func (Ack) Kind() string { return "ACK" }

// Kind is "CRASH".
func (Crash) Kind() string { return "CRASH" }

// Words is the message's size in words (cs.Message.Words).
func (Init) Words() int { return 3 }

// Words is the message's size in words (cs.Message.Words).
func (Ack) Words() int { return 3 }

// Words is the message's size in words (cs.Message.Words).
func (Crash) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Init) AppendBinary(b []byte) []byte { return append(b, 'I') }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Ack) AppendBinary(b []byte) []byte { return append(b, 'A') }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Crash) AppendBinary(b []byte) []byte {
	return cs.AppendInt(append(b, 'C'), int64(m.Who))
}

// phase is state_i of Algorithm 1.
type phase uint8

const (
	notRequesting phase = iota
	requesting
	inCS
)

// Machine is process i's part of Algorithm 1.
type Machine struct {
	// i is the process; size the number of participants |Π|, which the
	// arrays span; n is the paper's n, the participants not known to have
	// crashed (decremented at line 42); k the number of resources.
	i, size, n, k int32
	state         phase
	// started: lines 1-7 have run; initialized: line 8 is over.
	started, initialized bool
	// waiting: Entry was called before line 8 was over; lines 9-16 run
	// when it is.
	waiting bool
	// H is the Lamport clock H_i; last is last_i.
	H, last int64
	// permCount is perm_count_i.
	permCount int32
	// replyCount[j] and deferCount[j] are reply_count_i[j] and
	// defer_count_i[j]; index 0 is unused.
	replyCount, deferCount []int32
	// trusted and crashed are trusted_i and crashed_i; suspected is the
	// detector's output T_i; acked the processes whose ACK line 8 has
	// received; initWait the processes whose INIT waits at line 34.
	trusted, crashed, suspected, acked, initWait cs.Set
	// fenced is crashed_i when the current CS period began (the token's
	// Crashed, cs.Fencing); empty outside the CS.
	fenced cs.Set
	// fixed: line 15 waits for |Π|-k permissions instead of n-k, so that
	// line 42 does not move it (NewFixed).
	fixed bool
}

// Validate checks p: 1 <= k <= n, l = 0, and at most k processes InCS
// initially.
func Validate(p cs.Params) error {
	if err := p.CheckKExclusion(Name, ""); err != nil {
		return err
	}
	return p.CheckInitial(0, p.K)
}

// New returns the machines of processes 1..n, in order, before their
// initialization (lines 1-6 hold).
func New(p cs.Params) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	ms := make([]cs.Machine, p.N)
	for i := range ms {
		id := cs.ID(i + 1)
		m := &Machine{
			i: int32(id), size: int32(p.N), n: int32(p.N), k: int32(p.K),
			replyCount: make([]int32, p.N+1),
			deferCount: make([]int32, p.N+1),
		}
		if p.InitiallyInCS(id) {
			m.state = inCS
		}
		ms[i] = m
	}
	return ms, nil
}

// NewFixed returns the machines of New with a threshold that does not
// decay: line 15 waits for |Π|-k permissions whatever n has become
// (line 42 still decrements n, and line 41 still cancels a crashed
// replier's permission). It is not the paper's algorithm: package ftgcs
// builds on its complement one of the designs it dropped, and keeps it so
// that the counterexample stays replayable (docs/ft-global-lk-cs.md).
func NewFixed(p cs.Params) ([]cs.Machine, error) {
	ms, err := New(p)
	for _, m := range ms {
		m.(*Machine).fixed = true
	}
	return ms, err
}

// Self is P_i.
func (m *Machine) Self() cs.ID { return cs.ID(m.i) }

// State is the process's state in the CS object.
func (m *Machine) State() cs.State {
	if m.state == inCS {
		return cs.InCS
	}
	return cs.OutCS
}

// Pending is the request in progress, or cs.None.
func (m *Machine) Pending() cs.Op {
	if m.state == requesting || m.waiting {
		return cs.Entry
	}
	return cs.None
}

// Initialized reports whether the initialization (lines 1-8) is over
// (cs.Initializing).
func (m *Machine) Initialized() bool { return m.initialized }

// N is the paper's n at this process: the participants it does not know
// to have crashed.
func (m *Machine) N() int { return int(m.n) }

// Start runs lines 1-7 if they have not run: the initialization starts.
// A machine starts by itself at its first Entry or received message; a
// composite whose own call must wait for the initialization starts it
// with Start.
func (m *Machine) Start(env cs.Env) { m.start(env) }

// HasCrashed reports whether j is in crashed_i: i has handled CRASH(j)
// (lines 37-42), sent by another process or by itself (line 45).
func (m *Machine) HasCrashed(j cs.ID) bool { return m.crashed.Has(j) }

// start runs lines 1-7 once: send INIT(i) to all.
func (m *Machine) start(env cs.Env) {
	if m.started {
		return
	}
	m.started = true
	for j := int32(1); j <= m.size; j++ {
		if j != m.i {
			env.Send(cs.ID(j), Init{})
		}
	}
	m.checkInit(env)
}

// checkInit is line 8: wait until ACK from all j not in S_i (S_i is empty
// during the initialization, see the package doc). Then an Entry that
// waited runs.
func (m *Machine) checkInit(env cs.Env) {
	if m.initialized || m.acked.Len() < int(m.size)-1 {
		return
	}
	m.initialized = true
	if m.waiting {
		m.waiting = false
		m.request(env)
	}
}

// Entry is Request_resource (lines 9-16), after the initialization.
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.start(env)
	if !m.initialized {
		m.waiting = true
		return nil
	}
	m.request(env)
	return nil
}

// request is lines 9-16.
func (m *Machine) request(env cs.Env) {
	m.state = requesting
	m.last = m.H + 1
	m.permCount = 0
	for j := int32(1); j <= m.size; j++ {
		if j == m.i {
			continue
		}
		env.Send(cs.ID(j), Request{Last: m.last})
		m.replyCount[j]++
	}
	m.tryEnter(env)
}

// tryEnter is lines 15-16: wait until perm_count_i >= n-k; state_i := CS.
func (m *Machine) tryEnter(env cs.Env) {
	need := m.n - m.k
	if m.fixed {
		need = m.size - m.k
	}
	if m.state == requesting && m.permCount >= need {
		m.state = inCS
		m.fenced = m.crashed.Clone()
		env.Changed(cs.InCS)
	}
}

// Exit is Release_resource (lines 17-20).
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.state = notRequesting
	m.fenced = cs.Set{}
	env.Changed(cs.OutCS)
	for j := int32(1); j <= m.size; j++ {
		if c := m.deferCount[j]; c != 0 {
			env.Send(cs.ID(j), Reply{Count: c})
			m.deferCount[j] = 0
		}
	}
	return nil
}

// Receive handles REQUEST (lines 21-27), REPLY (28-32), INIT (33-36), ACK
// (line 8) and CRASH (37-42). The first message received starts the
// initialization.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	j := int32(from)
	if j < 1 || j > m.size || j == m.i {
		return cs.Unexpected(m.Self(), from, msg)
	}
	switch msg := msg.(type) {
	case Request:
		m.start(env)
		m.H = max(m.H, msg.Last)
		if !m.crashed.Has(from) {
			if m.state == inCS || (m.state == requesting && before(m.last, m.i, msg.Last, j)) {
				m.deferCount[j]++
			} else {
				env.Send(from, Reply{Count: 1})
			}
		}
	case Reply:
		m.start(env)
		if m.crashed.Has(from) {
			return nil
		}
		if msg.Count < 1 || msg.Count > m.replyCount[j] {
			return fmt.Errorf("ftraymond: P%d got REPLY(%d) from P%d, which owes only %d permissions", m.i, msg.Count, j, m.replyCount[j])
		}
		m.replyCount[j] -= msg.Count
		if m.state == requesting && m.replyCount[j] == 0 {
			m.permCount++
			m.tryEnter(env)
		}
	case Init:
		m.start(env)
		if m.suspected.Has(from) {
			m.initWait.Add(from) // line 34: wait until j not in T_i
			return nil
		}
		m.trust(env, from)
	case Ack:
		m.start(env)
		m.acked.Add(from)
		m.checkInit(env)
	case Crash:
		m.start(env)
		if msg.Who < 1 || msg.Who > cs.ID(m.size) {
			return fmt.Errorf("ftraymond: P%d got CRASH(%d) from P%d: no such process", m.i, msg.Who, j)
		}
		m.crash(env, msg.Who)
	default:
		return cs.Unexpected(m.Self(), from, msg)
	}
	return nil
}

// trust is lines 35-36, once line 34's wait is over.
func (m *Machine) trust(env cs.Env, j cs.ID) {
	m.trusted.Add(j)
	env.Send(j, Ack{})
}

// crash is lines 37-42: the handling of CRASH(j).
func (m *Machine) crash(env cs.Env, j cs.ID) {
	if m.crashed.Has(j) {
		return
	}
	m.crashed.Add(j)
	if m.state == requesting && j != cs.ID(m.i) && m.replyCount[j] == 0 {
		m.permCount-- // line 41: j's permission is cancelled
	}
	m.n--
	m.tryEnter(env) // n decreased: line 15 may now hold
}

// Suspect is the detector adding j to T_i; line 43: if j is in trusted_i,
// j has crashed (lines 44-45).
func (m *Machine) Suspect(env cs.Env, j cs.ID) error {
	if err := m.checkPeer(j); err != nil {
		return err
	}
	m.suspected.Add(j)
	if m.trusted.Has(j) {
		m.trusted.Remove(j)
		for o := int32(1); o <= m.size; o++ {
			if o != m.i {
				env.Send(cs.ID(o), Crash{Who: j})
			}
		}
		m.crash(env, j) // "to all" includes i itself
	}
	return nil
}

// Trust is the detector removing j from T_i: an INIT from j waiting at
// line 34 goes on.
func (m *Machine) Trust(env cs.Env, j cs.ID) error {
	if err := m.checkPeer(j); err != nil {
		return err
	}
	m.suspected.Remove(j)
	if m.initWait.Has(j) {
		m.initWait.Remove(j)
		m.trust(env, j)
	}
	return nil
}

// TrustGated declares cs.TrustGated. Line 8 waits for an ACK from every
// other process P_j, which P_j's line 36 sends only once P_j trusts P_i, so
// while some process has never trusted P_i, line 8 is not over: P_i sends
// no REQUEST, and gets none from a j it suspects (P_j cannot have completed
// its own line 8 without P_i's ACK), so on the channel to such a j it sends
// only its INIT, first, and the ACK.
// Trust(j) removes j from T_i and, if INIT(j) waits at line 34, runs lines
// 35-36 for it; no other input reads T_i or touches that wait (only INIT(j)
// starts it, and INIT(j) then Trust(j) ends where Trust(j) then INIT(j)
// does).
func (*Machine) TrustGated() {}

func (m *Machine) checkPeer(j cs.ID) error {
	if j < 1 || j > cs.ID(m.size) || j == cs.ID(m.i) {
		return fmt.Errorf("ftraymond: P%d's detector output names P%d: need another process id in 1..%d", m.i, j, m.size)
	}
	return nil
}

// before reports whether timestamp (a, i) precedes (b, j): Lamport's total
// order, ties broken by process id (line 24).
func before(a int64, i int32, b int64, j int32) bool {
	return a < b || (a == b && i < j)
}

// Clone returns a deep copy (cs.Machine).
func (m *Machine) Clone() cs.Machine {
	c := *m
	r := len(m.replyCount)
	counts := make([]int32, r+len(m.deferCount))
	c.replyCount = counts[:r:r]
	c.deferCount = counts[r:]
	copy(c.replyCount, m.replyCount)
	copy(c.deferCount, m.deferCount)
	c.trusted, c.crashed, c.suspected = m.trusted.Clone(), m.crashed.Clone(), m.suspected.Clone()
	c.acked, c.initWait, c.fenced = m.acked.Clone(), m.initWait.Clone(), m.fenced.Clone()
	return &c
}

// AppendState appends the canonical encoding of the machine's state.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state))
	b = cs.AppendBool(b, m.started)
	b = cs.AppendBool(b, m.initialized)
	b = cs.AppendBool(b, m.waiting)
	b = cs.AppendInt(b, m.H)
	b = cs.AppendInt(b, m.last)
	b = cs.AppendInt(b, int64(m.permCount))
	b = cs.AppendInt(b, int64(m.n))
	for j := 1; j <= int(m.size); j++ {
		b = cs.AppendInt(b, int64(m.replyCount[j]))
		b = cs.AppendInt(b, int64(m.deferCount[j]))
	}
	for _, s := range []cs.Set{m.trusted, m.crashed, m.suspected, m.acked, m.initWait, m.fenced} {
		b = s.AppendBinary(b)
	}
	return b
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer).
func (m *Machine) ReadState(r *cs.Reader) {
	m.state = phase(r.Phase(byte(inCS) + 1))
	m.started, m.initialized, m.waiting = r.Bool(), r.Bool(), r.Bool()
	m.H, m.last = r.Int(), r.Int()
	m.permCount, m.n = r.Int32(), r.Int32()
	for j := 1; j <= int(m.size); j++ {
		m.replyCount[j], m.deferCount[j] = r.Int32(), r.Int32()
	}
	for _, s := range []*cs.Set{&m.trusted, &m.crashed, &m.suspected, &m.acked, &m.initWait} {
		*s = r.Set(int(m.size))
	}
	// A snapshot written before the machine had tokens ends here. Its
	// token, if InCS, takes crashed_i: every process in it was declared
	// crashed, so naming them all keeps both fencing guarantees.
	m.fenced = cs.Set{}
	switch {
	case r.Len() > 0:
		m.fenced = r.Set(int(m.size))
	case m.state == inCS:
		m.fenced = m.crashed.Clone()
	}
}

// Fence is the token of the current CS period (cs.Fencing): Seq is the
// request's timestamp (last_i, i) of line 10 in Lamport's total order
// (line 24), and Crashed is crashed_i when line 16 ran. With k = 1 an entry
// has the permission of every process outside crashed_i, each given after
// it saw the request (lines 15 and 41), and the processes in crashed_i
// have crashed (T's trusting accuracy, or P's strong accuracy), so every
// later request of another process is stamped after it (the process's own
// next one may keep the stamp: line 10 does not advance H_i). With any k,
// a process that seemed crashed and was InCS is named by the entries made
// after its CRASH was handled (docs/fencing.md).
func (m *Machine) Fence() cs.Fence {
	return cs.Fence{Seq: cs.FenceSeq(m.last, cs.ID(m.i), int(m.size)), Crashed: m.fenced.Clone()}
}

// String names the machine for reports.
func (m *Machine) String() string { return Name }
