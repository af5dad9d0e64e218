// Package raymond implements Raymond's k-mutual exclusion algorithm:
// K. Raymond, "A distributed algorithm for multiple entries to a critical
// section", Inf. Process. Lett. 30(4), 1989, as restated in section 3 of
// Bouillaguet, Arantes and Sens, "Fault tolerant k-mutual exclusion algorithm
// using failure detector" (2007), and written down as lines 1-32 of their
// Algorithm 1 without the failure-detector extension (lines 6-8 and 33-45;
// the INIT/ACK/CRASH handling belongs to the fault-tolerant variant).
//
// A requesting process broadcasts REQUEST with a Lamport timestamp
// (last_i, i) and enters after n-k permissions. A process that is in the CS,
// or is requesting with a timestamp that takes priority, defers its REPLY; on
// exit it sends one REPLY per deferring peer carrying defer_count[j], the
// number of permissions aggregated in it. reply_count[j] counts the
// permissions still owed by j for all of i's requests so far, so a late REPLY
// to an earlier request is never counted for the current one (line 31: a
// permission from j counts only when j has answered every request of i).
//
// With k = 1 this is Ricart and Agrawala's algorithm (with deferred replies
// aggregated). A process may start InCS (Params.Initial, at most k of them):
// it defers requests until it exits, exactly as if it had entered normally.
//
// Not in the paper: every CS period gets a fencing token (Fence, the
// cs.Fencing interface): the request's timestamp (docs/fencing.md).
//
// Messages: REQUEST and REPLY are 4 words each (source, destination, type and
// one field), the size the token K-mutex paper reports for Raymond's
// algorithm (Bulgannawar and Vaidya 1995, Figure 5).
package raymond

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "raymond"

// Request is REQUEST(j, k) of Algorithm 1, line 13: the sender's request
// timestamp last_j (the sender id is the envelope's).
type Request struct{ Last int64 }

// Reply is REPLY(j, x) of Algorithm 1, lines 19 and 27: Count permissions.
type Reply struct{ Count int32 }

// Kind is "REQUEST".
func (Request) Kind() string { return "REQUEST" }

// Kind is "REPLY".
func (Reply) Kind() string { return "REPLY" }

// Words is the message's size in words (cs.Message.Words).
func (Request) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Reply) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte {
	return cs.AppendInt(append(b, 'Q'), m.Last)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Reply) AppendBinary(b []byte) []byte {
	return cs.AppendInt(append(b, 'P'), int64(m.Count))
}

// phase is state_i of Algorithm 1.
type phase uint8

const (
	notRequesting phase = iota
	requesting
	inCS
)

// Machine is process i's part of Raymond's algorithm.
type Machine struct {
	i, n, k int32
	state   phase
	// H is the Lamport clock H_i; last is last_i, the timestamp of i's
	// latest REQUEST.
	H, last int64
	// permCount is perm_count_i.
	permCount int32
	// replyCount[j] and deferCount[j] are reply_count_i[j] and
	// defer_count_i[j]; index 0 is unused.
	replyCount, deferCount []int32
}

// Validate checks p for Raymond's algorithm: 1 <= k <= n, l = 0, and at most
// k processes InCS initially.
func Validate(p cs.Params) error {
	if err := p.CheckKExclusion(Name, " (or --alg gcs for l > 0)"); err != nil {
		return err
	}
	return p.CheckInitial(0, p.K)
}

// New returns the machines of processes 1..n, in order.
func New(p cs.Params) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	ms := make([]cs.Machine, p.N)
	for i := range ms {
		id := cs.ID(i + 1)
		m := &Machine{
			i: int32(id), n: int32(p.N), k: int32(p.K),
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
	if m.state == requesting {
		return cs.Entry
	}
	return cs.None
}

// Entry is Request_resource (Algorithm 1, lines 9-16).
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.state = requesting
	m.last = m.H + 1
	m.permCount = 0
	for j := int32(1); j <= m.n; j++ {
		if j == m.i {
			continue
		}
		env.Send(cs.ID(j), Request{Last: m.last})
		m.replyCount[j]++
	}
	m.tryEnter(env)
	return nil
}

// tryEnter is line 15-16: wait until perm_count_i >= n-k; state_i := CS.
func (m *Machine) tryEnter(env cs.Env) {
	if m.state == requesting && m.permCount >= m.n-m.k {
		m.state = inCS
		env.Changed(cs.InCS)
	}
}

// Exit is Release_resource (Algorithm 1, lines 17-20).
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.state = notRequesting
	env.Changed(cs.OutCS)
	for j := int32(1); j <= m.n; j++ {
		if c := m.deferCount[j]; c != 0 {
			env.Send(cs.ID(j), Reply{Count: c})
			m.deferCount[j] = 0
		}
	}
	return nil
}

// Receive handles REQUEST (lines 21-27) and REPLY (lines 28-32).
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	j := int32(from)
	if j < 1 || j > m.n || j == m.i {
		return cs.Unexpected(m.Self(), from, msg)
	}
	switch msg := msg.(type) {
	case Request:
		m.H = max(m.H, msg.Last)
		if m.state == inCS || (m.state == requesting && before(m.last, m.i, msg.Last, j)) {
			m.deferCount[j]++
		} else {
			env.Send(from, Reply{Count: 1})
		}
	case Reply:
		if msg.Count < 1 || msg.Count > m.replyCount[j] {
			return fmt.Errorf("raymond: P%d got REPLY(%d) from P%d, which owes only %d permissions", m.i, msg.Count, j, m.replyCount[j])
		}
		m.replyCount[j] -= msg.Count
		if m.state == requesting && m.replyCount[j] == 0 {
			m.permCount++
			m.tryEnter(env)
		}
	default:
		return cs.Unexpected(m.Self(), from, msg)
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
	// One backing array for both counters: the model checker clones a
	// machine on every transition, and allocations are most of its cost.
	r := len(m.replyCount)
	counts := make([]int32, r+len(m.deferCount))
	c.replyCount = counts[:r:r]
	c.deferCount = counts[r:]
	copy(c.replyCount, m.replyCount)
	copy(c.deferCount, m.deferCount)
	return &c
}

// AppendState appends the canonical encoding of the machine's state.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state))
	b = cs.AppendInt(b, m.H)
	b = cs.AppendInt(b, m.last)
	b = cs.AppendInt(b, int64(m.permCount))
	for j := 1; j <= int(m.n); j++ {
		b = cs.AppendInt(b, int64(m.replyCount[j]))
		b = cs.AppendInt(b, int64(m.deferCount[j]))
	}
	return b
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer).
func (m *Machine) ReadState(r *cs.Reader) {
	m.state = phase(r.Phase(byte(inCS) + 1))
	m.H, m.last = r.Int(), r.Int()
	m.permCount = r.Int32()
	for j := 1; j <= int(m.n); j++ {
		m.replyCount[j], m.deferCount[j] = r.Int32(), r.Int32()
	}
}

// Fence is the token of the current CS period (cs.Fencing): the Seq of
// the request's timestamp (last_i, i), Lamport's total order of line 24.
// With k = 1 (Ricart and Agrawala) an entry has the permission of every
// other process, each given after it saw the request, so every later
// request of another process is stamped after it; the process's own next
// request may keep the stamp (line 10 does not advance H_i). Raymond's
// algorithm does not act on suspicions, so Crashed is empty.
func (m *Machine) Fence() cs.Fence { return cs.Fence{Seq: cs.FenceSeq(m.last, cs.ID(m.i), int(m.n))} }

// String names the machine for reports.
func (m *Machine) String() string { return Name }
