// Package srimanireddy implements Srimani and Reddy's K-privilege algorithm
// for K-mutual exclusion: P. K. Srimani and R. L. Reddy, "Another
// distributed algorithm for multiple entries to a critical section", Inf.
// Process. Lett. 41, 1992, pp. 51-57, one of the three baselines of
// Bulgannawar and Vaidya, "A distributed K-mutual exclusion algorithm"
// (ICDCS 1995), section 4.
//
// The 1992 paper itself was not reachable. What this package takes from
// where:
//
//   - From Suzuki and Kasami's broadcast algorithm (ACM TOCS 3(4), 1985;
//     the TLA+ specification SuzukiKasami.tla, markyuen/tlaplus-to-ivy, was
//     followed line by line), which Srimani and Reddy extend: the request
//     numbers RN[1..N] at every site; REQUEST(j, n) broadcast to the N-1
//     other sites by a site that holds no privilege; a PRIVILEGE message
//     carrying a FIFO queue Q and the last-served request numbers LN[1..N];
//     a request of j is outstanding when RN[j] > LN[j] (RN[j] = LN[j]+1 in
//     Suzuki-Kasami); on release, LN[i] := RN[i] and every outstanding j not
//     in Q is appended to Q (in increasing id order), and the privilege goes
//     to the head of Q; a site that holds an idle privilege sends it to a
//     requester with an outstanding request.
//   - From published summaries of the 1992 paper (its abstract and section
//     outline): K privilege messages, initially at K arbitrary sites; sites
//     store privilege messages locally, so one site may hold several; a
//     per-site array PLN, updated from the LN arrays of the privileges the
//     site has held, is used to update the queues and prevent redundant
//     transmissions; 0 messages per entry at best, N+K-1 at worst (N-1
//     REQUESTs and a privilege from each of the K holders), close to N-1 on
//     average.
//   - From Bulgannawar and Vaidya (section 4): the 1992 algorithm bounds its
//     request counters, which takes a third array in the privilege and
//     REPLY messages; the 1995 study removed that restriction with
//     unbounded counters. This package does the same: no REPLY messages and
//     no third array, int64 request numbers.
//
// Reconstructed (the exact rules of the 1992 paper are not known here):
//
//   - PLN[j] is the largest request number of j known to be served or
//     granted: it is merged both ways with a privilege's LN every time the
//     site dispatches that privilege, and when the site sends a privilege to
//     j for j's request RN[j], it sets LN[j] and PLN[j] to RN[j] at once
//     ("granted"), so a second idle privilege at the same site is not sent
//     for the same request. Privileges at different sites can still both go
//     to one requester (the N+K-1 worst case); the spare one stays resident
//     there and serves the next request it learns of.
//   - Dispatch, the one rule for idle privileges: whenever a site holds an
//     idle privilege (after it exits, after one arrives that it does not
//     need, after a REQUEST arrives) it merges PLN and LN, drops the queue
//     entries whose request is no longer outstanding, appends the
//     outstanding requesters, and sends the privilege to the head of the
//     queue, for each idle privilege in the order it holds them.
//   - A site that holds an idle privilege enters at once, without messages
//     and without a new request number (as in Suzuki-Kasami).
//   - Initial placement: privilege t at P_t, t = 1..K, the placement of the
//     K tokens in Bulgannawar and Vaidya's own algorithm (section 2), so the
//     two start alike. The first request of a site without a privilege then
//     costs N-1 REQUESTs and K PRIVILEGE messages (the N+K-1 worst case).
//     No process starts InCS.
//
// Message sizes in words (cs.Message.Words; Bulgannawar and Vaidya,
// section 4, Figure 5): REQUEST is 4 (source, destination, type, request
// number); PRIVILEGE is 3 + |Q| + N (the queue and LN; privileges are
// interchangeable and carry no identifier).
package srimanireddy

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/alg/internal/tokenk"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "srimani-reddy"

// Request is REQUEST(j, n): the sender j's request number n = RN_j[j].
type Request struct{ N int64 }

// Privilege is one of the K privilege messages: the queue Q of sites
// scheduled to receive it and LN[1..N] (LN[j-1] is LN[j]), the request
// number of each site's last request served or granted.
type Privilege struct {
	Q  []cs.ID
	LN []int64
}

// Kind is "REQUEST".
func (Request) Kind() string { return "REQUEST" }

// Kind is "PRIVILEGE".
func (Privilege) Kind() string { return "PRIVILEGE" }

// Words is 4: source, destination, type and the request number.
func (Request) Words() int { return 4 }

// Words is 3 + |Q| + N: source, destination, type, one word per queue
// element and one per entry of LN.
func (m Privilege) Words() int { return 3 + len(m.Q) + len(m.LN) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), m.N) }

// AppendBinary appends the message's canonical encoding (cs.Message): the
// queue with its length, then LN with its length.
func (m Privilege) AppendBinary(b []byte) []byte {
	b = cs.AppendIDs(append(b, 'V'), m.Q)
	b = cs.AppendInt(b, int64(len(m.LN)))
	for _, v := range m.LN {
		b = cs.AppendInt(b, v)
	}
	return b
}

// privilege is a privilege held by a site: its own copy of the message's
// queue and LN, never shared with a message.
type privilege struct {
	q  []cs.ID
	ln []int64
}

func (p privilege) clone() privilege {
	return privilege{q: slices.Clone(p.q), ln: slices.Clone(p.ln)}
}

// Machine is site i's part of the algorithm.
type Machine struct {
	i, n  int32
	phase tokenk.Phase
	// rn[j-1] is RN_i[j]; pln[j-1] is PLN_i[j].
	rn, pln []int64
	// held are the idle privileges resident at i, in the order i got
	// them; use is the privilege i is in the CS with (phase == inCS).
	held []privilege
	use  privilege
}

// Validate checks p: 1 <= k <= n, l = 0, and no process InCS initially.
func Validate(p cs.Params) error { return tokenk.Validate(p, Name, "privilege t idle at P_t") }

// New returns the machines of sites 1..n, in order, with privilege t at
// P_t for t = 1..k.
func New(p cs.Params) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	ms := make([]cs.Machine, p.N)
	for i := range ms {
		m := &Machine{i: int32(i + 1), n: int32(p.N), rn: make([]int64, p.N), pln: make([]int64, p.N)}
		if i < p.K {
			m.held = []privilege{{ln: make([]int64, p.N)}}
		}
		ms[i] = m
	}
	return ms, nil
}

// Self is P_i.
func (m *Machine) Self() cs.ID { return cs.ID(m.i) }

// State is the process's state in the CS object.
func (m *Machine) State() cs.State { return m.phase.State() }

// Pending is the request in progress, or cs.None.
func (m *Machine) Pending() cs.Op { return m.phase.Pending() }

// Held is the number of privileges at the site: idle ones and the one it
// is in the CS with.
func (m *Machine) Held() int {
	if m.phase == tokenk.InCS {
		return len(m.held) + 1
	}
	return len(m.held)
}

// Entry enters at once with an idle resident privilege; otherwise it takes
// the next request number and broadcasts REQUEST(i, RN[i]).
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	if len(m.held) > 0 {
		m.use = m.held[0]
		m.held = slices.Delete(m.held, 0, 1)
		m.phase = tokenk.InCS
		env.Changed(cs.InCS)
		return nil
	}
	m.phase = tokenk.Waiting
	m.rn[m.i-1]++
	for j := int32(1); j <= m.n; j++ {
		if j != m.i {
			env.Send(cs.ID(j), Request{N: m.rn[m.i-1]})
		}
	}
	return nil
}

// Exit releases the privilege: LN[i] := RN[i], and the privilege, now
// idle, is dispatched with the others.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.phase = tokenk.Idle
	env.Changed(cs.OutCS)
	m.use.ln[m.i-1] = max(m.use.ln[m.i-1], m.rn[m.i-1])
	m.held = append(m.held, m.use)
	m.use = privilege{}
	m.dispatch(env)
	return nil
}

// Receive handles REQUEST (RN[j] := max(RN[j], n), then dispatch) and
// PRIVILEGE (enter with it if waiting, otherwise keep it; then dispatch).
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	j := int32(from)
	if j < 1 || j > m.n || j == m.i {
		return cs.Unexpected(m.Self(), from, msg)
	}
	switch msg := msg.(type) {
	case Request:
		m.rn[j-1] = max(m.rn[j-1], msg.N)
	case Privilege:
		if len(msg.LN) != int(m.n) {
			return fmt.Errorf("%s: P%d got a PRIVILEGE with %d LN entries from P%d, want %d", Name, m.i, len(msg.LN), j, m.n)
		}
		p := privilege{q: slices.Clone(msg.Q), ln: slices.Clone(msg.LN)}
		if m.phase == tokenk.Waiting {
			m.use = p
			m.phase = tokenk.InCS
			env.Changed(cs.InCS)
		} else {
			m.held = append(m.held, p)
		}
	default:
		return cs.Unexpected(m.Self(), from, msg)
	}
	m.dispatch(env)
	return nil
}

// dispatch sends each idle privilege to the head of its queue once the
// queue is brought up to date: PLN and LN merged, requests no longer
// outstanding dropped, outstanding requesters appended in increasing id
// order. A privilege with an empty queue stays resident.
func (m *Machine) dispatch(env cs.Env) {
	for x := 0; x < len(m.held); {
		t := &m.held[x]
		for j := range t.ln {
			v := max(t.ln[j], m.pln[j])
			t.ln[j], m.pln[j] = v, v
		}
		t.q = slices.DeleteFunc(t.q, func(j cs.ID) bool { return m.rn[j-1] <= t.ln[j-1] })
		for j := int32(1); j <= m.n; j++ {
			if j != m.i && m.rn[j-1] > t.ln[j-1] && !slices.Contains(t.q, cs.ID(j)) {
				t.q = append(t.q, cs.ID(j))
			}
		}
		if len(t.q) == 0 {
			x++
			continue
		}
		h := t.q[0]
		t.ln[h-1], m.pln[h-1] = m.rn[h-1], m.rn[h-1]
		env.Send(h, Privilege{Q: slices.Clone(t.q[1:]), LN: slices.Clone(t.ln)})
		m.held = slices.Delete(m.held, x, x+1)
	}
}

// Clone returns a deep copy (cs.Machine).
func (m *Machine) Clone() cs.Machine {
	c := *m
	c.rn, c.pln = slices.Clone(m.rn), slices.Clone(m.pln)
	c.held = make([]privilege, len(m.held))
	for x, p := range m.held {
		c.held[x] = p.clone()
	}
	if m.phase == tokenk.InCS {
		c.use = m.use.clone()
	}
	return &c
}

// AppendState appends the canonical encoding of the machine's state.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.phase))
	for j := range m.rn {
		b = cs.AppendInt(b, m.rn[j])
		b = cs.AppendInt(b, m.pln[j])
	}
	b = cs.AppendInt(b, int64(len(m.held)))
	for _, p := range m.held {
		b = appendPrivilege(b, p)
	}
	if m.phase == tokenk.InCS {
		b = appendPrivilege(b, m.use)
	}
	return b
}

func appendPrivilege(b []byte, p privilege) []byte {
	return Privilege{Q: p.q, LN: p.ln}.AppendBinary(b)
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer); a privilege reads as the PRIVILEGE message's decoder
// reads it.
func (m *Machine) ReadState(r *cs.Reader) {
	n := int(m.n)
	m.phase = tokenk.Phase(r.Phase(byte(tokenk.InCS) + 1))
	for j := range m.rn {
		m.rn[j], m.pln[j] = r.Int(), r.Int()
	}
	c := r.Count("privileges")
	m.held = nil
	for range c {
		if r.Err() != nil {
			break
		}
		m.held = append(m.held, readPrivilege(r, n))
	}
	m.use = privilege{}
	if m.phase == tokenk.InCS {
		m.use = readPrivilege(r, n)
	}
}

// String names the machine for reports.
func (m *Machine) String() string { return Name }
