// Package makki implements Makki et al.'s token-based K-mutual exclusion
// algorithm: K. Makki, P. Banta, K. Been, N. Pissinou and E. Park, "A token
// based distributed k mutual exclusion algorithm", Proc. IEEE Symposium on
// Parallel and Distributed Processing, 1992, pp. 408-411, one of the three
// baselines of Bulgannawar and Vaidya, "A distributed K-mutual exclusion
// algorithm" (ICDCS 1995), section 4.
//
// The 1992 paper itself was not reachable. What this package takes from
// where:
//
//   - From the 1992 abstract: one token is passed among the sites; attached
//     to it are a queue of the sites scheduled to receive it and a general
//     semaphore; a site may enter its CS when it receives the token with a
//     nonzero semaphore, or when it receives the token with a zero
//     semaphore and later receives a RELEASE message from a previous site;
//     except under extremely light traffic the messages per CS entry are a
//     small constant, approaching three under extremely heavy traffic.
//   - From Bulgannawar and Vaidya (section 4): at high load the token is
//     propagated through all other sites before it comes back, so the
//     system behaves like one with a single token and the delays are the
//     longest of the algorithms compared; at low load the messages per
//     entry are "quite large"; and the algorithm relies on a message and
//     its response taking 2*Tt, which holds only when Ts = Tr = 0 (the 1995
//     study "accelerated" responses otherwise).
//
// Reconstructed, so that the algorithm is correct in an asynchronous
// system (critsec's checker explores every interleaving, where no timing
// assumption holds):
//
//   - RELEASE. The token also carries a hop count, the number of times it
//     has been passed. Since the token always goes to the head of its queue
//     and new requesters join at the tail, a site that passes the token at
//     hop h with semaphore S and queue q_1..q_L knows that visit h+m is at
//     q_m, and that the token reaches q_m, m = min(S+1, L), without any
//     RELEASE from elsewhere (q_1..q_{m-1} each take a slot, and the last of
//     them passes the token when it exits at the latest): there it waits
//     with a zero semaphore, or rests with an empty queue. A site that passes the token
//     during its CS sends its RELEASE, when it exits, to that site for that
//     hop ("a previous site" of the abstract). A RELEASE that comes before
//     its visit is kept until the token comes; one that comes after the
//     token left is forwarded, for the next visit, to the site the token
//     was passed to: it follows the token's path and catches it where the
//     token waits. This replaces the 1992 timing assumption.
//   - REQUEST. How requests reach the token is not in the abstract; they
//     follow Naimi and Trehel's last pointers (the 1-mutex algorithm that
//     Bulgannawar and Vaidya extend): a requester sends REQUEST(i) to its
//     last and sets last to itself; a site that gets REQUEST(j) appends j
//     to the queue if it holds the token, keeps it for the token's queue if
//     it waits for the token itself, and forwards it to its last otherwise;
//     in every case last becomes j. A site that passes the token sets last
//     to the tail of the queue. A chase of the token's own path was tried
//     first: under heavy load the requests trailed the token one hop
//     behind, 25 to 28 messages per entry.
//   - Passing. The holder passes the token to the head of a non-empty
//     queue at once when it is not in its CS, and, in its CS, as soon as
//     the semaphore is nonzero (so others enter beside it); in its CS with
//     a zero semaphore it keeps the token until a RELEASE comes or it
//     exits, and an exit with the token here increments the semaphore
//     without a message. Passing at once with a zero semaphore was tried
//     first: the token then runs ahead with a zero semaphore, one RELEASE
//     catches it at each site and the other K-1 trail it, forwarded a hop
//     at a time (about 2+K messages per entry under heavy load).
//   - Initial placement: the token at P1 with an empty queue and semaphore
//     K, every last at P1 (one token, so one site; P1 as in Suzuki-Kasami's
//     TLA+ specification). No process starts InCS.
//
// Per entry this costs a REQUEST and its forwards, the TOKEN, and a RELEASE
// (and its forwards) when the site passed the token during its CS: about 3
// under heavy load, where the REQUEST goes straight to the tail of the
// queue, and 4 to 5 under light load, where it follows the last pointers
// (the 1992 abstract says the count is large only under extremely light
// traffic). Under heavy load the token visits every waiting site in turn,
// which is why the delays are the longest (Bulgannawar and Vaidya).
//
// Message sizes in words (cs.Message.Words; Bulgannawar and Vaidya,
// section 4, Figure 5): TOKEN is 5 + |Q| (source, destination, type,
// semaphore, hop count, the queue); REQUEST is 4 (requester); RELEASE
// is 4 (hop).
package makki

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/alg/internal/tokenk"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "makki"

// Token is the token: the queue Q of sites scheduled to receive it, the
// semaphore S (free CS slots) and Hop, the number of times it has been
// passed (this message's visit).
type Token struct {
	Q   []cs.ID
	S   int32
	Hop int64
}

// Request is REQUEST(J): J wants to join the token's queue (J is not
// always the sender: requests are forwarded).
type Request struct{ J cs.ID }

// Release is RELEASE for the token's visit Hop at the receiver: one CS
// slot given back.
type Release struct{ Hop int64 }

// Kind is "TOKEN".
func (Token) Kind() string { return "TOKEN" }

// Kind is "REQUEST".
func (Request) Kind() string { return "REQUEST" }

// Kind is "RELEASE".
func (Release) Kind() string { return "RELEASE" }

// Words is 5 + |Q|: source, destination, type, semaphore, hop and one word
// per queue element.
func (m Token) Words() int { return 5 + len(m.Q) }

// Words is 4: source, destination, type and requester.
func (Request) Words() int { return 4 }

// Words is 4: source, destination, type and hop.
func (Release) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Token) AppendBinary(b []byte) []byte {
	b = cs.AppendIDs(append(b, 'T'), m.Q)
	b = cs.AppendInt(b, int64(m.S))
	return cs.AppendInt(b, m.Hop)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte {
	return cs.AppendInt(append(b, 'Q'), int64(m.J))
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Release) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'R'), m.Hop) }

// place is a visit of the token: the site and the hop.
type place struct {
	site cs.ID
	hop  int64
}

// Machine is site i's part of the algorithm.
type Machine struct {
	i, n, k int32
	phase   tokenk.Phase
	// has: the token is here, with queue q, semaphore s and hop.
	has bool
	q   []cs.ID
	s   int32
	hop int64
	// lastVisit is the hop of the token's latest visit here (-1: none);
	// next and lastPass are where and for which hop it was last passed on.
	lastVisit, lastPass int64
	next                cs.ID
	// last is the site i sends and forwards REQUESTs to: the latest
	// requester it knows of (Naimi and Trehel's last); absorbed are the
	// REQUESTs i took while waiting, for the token's queue when it comes.
	last     cs.ID
	absorbed []cs.ID
	// owes says i passed the token during its CS and sends its RELEASE to
	// release; kept are the hops of RELEASEs that came before their visit.
	release place
	owes    bool
	kept    []int64
}

// Validate checks p: 1 <= k <= n, l = 0, and no process InCS initially.
func Validate(p cs.Params) error { return tokenk.Validate(p, Name, "the token idle at P1") }

// New returns the machines of sites 1..n, in order, with the token at P1
// (empty queue, semaphore k, hop 0).
func New(p cs.Params) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	ms := make([]cs.Machine, p.N)
	for i := range ms {
		m := &Machine{i: int32(i + 1), n: int32(p.N), k: int32(p.K), lastVisit: -1, lastPass: -1, last: 1}
		if i == 0 {
			m.has, m.s, m.lastVisit = true, int32(p.K), 0
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

// HasToken reports whether the token is at the site.
func (m *Machine) HasToken() bool { return m.has }

// Entry uses the token if it is here; otherwise it sends REQUEST(i) to the
// token's last known place.
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.phase = tokenk.Waiting
	if m.has {
		m.serve(env)
		return nil
	}
	env.Send(m.last, Request{J: m.Self()})
	m.last = m.Self()
	return nil
}

// Exit gives the slot back: to the token's semaphore if the token is here,
// else by RELEASE to the place computed when the site passed it.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.phase = tokenk.Idle
	env.Changed(cs.OutCS)
	switch {
	case m.has:
		m.s++
		m.serve(env)
	case m.owes:
		m.owes = false
		env.Send(m.release.site, Release{Hop: m.release.hop})
	default:
		return fmt.Errorf("%s: P%d exits without the token and owes no RELEASE", Name, m.i)
	}
	return nil
}

// Receive handles TOKEN, REQUEST and RELEASE.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	j := int32(from)
	if j < 1 || j > m.n || j == m.i {
		return cs.Unexpected(m.Self(), from, msg)
	}
	switch msg := msg.(type) {
	case Token:
		if m.has || msg.Hop <= m.lastVisit || msg.S < 0 || msg.S > m.k {
			return fmt.Errorf("%s: P%d got an impossible TOKEN (semaphore %d, hop %d) from P%d (holding: %v, last visit %d)", Name, m.i, msg.S, msg.Hop, j, m.has, m.lastVisit)
		}
		m.has, m.q, m.s, m.hop, m.lastVisit = true, slices.Clone(msg.Q), msg.S, msg.Hop, msg.Hop
		for _, r := range m.absorbed {
			m.join(r)
		}
		m.absorbed = nil
		for _, h := range m.kept {
			if h != m.hop {
				return fmt.Errorf("%s: P%d kept a RELEASE for hop %d, but the token came with hop %d", Name, m.i, h, m.hop)
			}
			if err := m.released(); err != nil {
				return err
			}
		}
		m.kept = nil
		m.serve(env)
		return nil
	case Request:
		if msg.J < 1 || int32(msg.J) > m.n || msg.J == m.Self() {
			return fmt.Errorf("%s: P%d got REQUEST(%d) from P%d: not another site", Name, m.i, msg.J, j)
		}
		last := m.last
		m.last = msg.J
		switch {
		case m.has:
			m.join(msg.J)
			m.serve(env)
		case m.phase == tokenk.Waiting:
			m.absorbed = append(m.absorbed, msg.J)
		default:
			env.Send(last, msg)
		}
		return nil
	case Release:
		return m.route(env, msg.Hop)
	}
	return cs.Unexpected(m.Self(), from, msg)
}

// route handles a RELEASE for the token's visit hop here: used at once if
// that visit is the current one, kept if it has not happened yet,
// forwarded along the token's path if the token has left.
func (m *Machine) route(env cs.Env, hop int64) error {
	switch {
	case m.lastVisit < hop:
		m.kept = append(m.kept, hop)
	case m.has:
		if err := m.released(); err != nil {
			return err
		}
		m.serve(env)
	default:
		env.Send(m.next, Release{Hop: m.lastPass})
	}
	return nil
}

// released adds a RELEASE's slot to the semaphore of the token held here.
func (m *Machine) released() error {
	if m.s >= m.k {
		return fmt.Errorf("%s: P%d got a RELEASE with the semaphore at k = %d", Name, m.i, m.k)
	}
	m.s++
	return nil
}

// join appends requester j to the queue of the token held here.
func (m *Machine) join(j cs.ID) {
	if !slices.Contains(m.q, j) {
		m.q = append(m.q, j)
	}
}

// serve is what the token's holder does: a waiting site enters when the
// semaphore is nonzero (and otherwise waits for a RELEASE); a site not
// waiting passes the token to the head of the queue, computing where the
// token will stop (and, in its CS, where its RELEASE goes).
func (m *Machine) serve(env cs.Env) {
	if m.phase == tokenk.Waiting {
		if m.s == 0 {
			return
		}
		m.s--
		m.phase = tokenk.InCS
		env.Changed(cs.InCS)
	}
	if len(m.q) == 0 || (m.phase == tokenk.InCS && m.s == 0) {
		return
	}
	// The token visits q_m at hop+m and reaches q_steps without a RELEASE;
	// the tail of the queue is the latest requester.
	steps := min(int(m.s)+1, len(m.q))
	if m.phase == tokenk.InCS {
		m.owes, m.release = true, place{site: m.q[steps-1], hop: m.hop + int64(steps)}
	}
	m.last = m.q[len(m.q)-1]
	dest := m.q[0]
	m.lastPass, m.next = m.hop+1, dest
	env.Send(dest, Token{Q: slices.Clone(m.q[1:]), S: m.s, Hop: m.hop + 1})
	m.has, m.q, m.s, m.hop = false, nil, 0, 0
}

// Clone returns a deep copy (cs.Machine).
func (m *Machine) Clone() cs.Machine {
	c := *m
	c.q = slices.Clone(m.q)
	c.kept = slices.Clone(m.kept)
	c.absorbed = slices.Clone(m.absorbed)
	return &c
}

// AppendState appends the canonical encoding of the machine's state.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.phase))
	b = cs.AppendBool(b, m.has)
	b = cs.AppendIDs(b, m.q)
	b = cs.AppendInt(b, int64(m.s))
	b = cs.AppendInt(b, m.hop)
	b = cs.AppendInt(b, m.lastVisit)
	b = cs.AppendInt(b, m.lastPass)
	b = cs.AppendInt(b, int64(m.next))
	b = cs.AppendInt(b, int64(m.last))
	b = cs.AppendIDs(b, m.absorbed)
	b = cs.AppendBool(b, m.owes)
	b = cs.AppendInt(b, int64(m.release.site))
	b = cs.AppendInt(b, m.release.hop)
	b = cs.AppendInt(b, int64(len(m.kept)))
	for _, h := range m.kept {
		b = cs.AppendInt(b, h)
	}
	return b
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer).
func (m *Machine) ReadState(r *cs.Reader) {
	n := int(m.n)
	m.phase = tokenk.Phase(r.Phase(byte(tokenk.InCS) + 1))
	m.has, m.q = r.Bool(), r.Queue(n)
	m.s, m.hop = r.Int32(), r.Int()
	m.lastVisit, m.lastPass = r.Int(), r.Int()
	m.next, m.last = r.ID(n), r.ID(n)
	m.absorbed, m.owes = r.Queue(n), r.Bool()
	m.release = place{site: r.ID(n), hop: r.Int()}
	c := r.Count("kept")
	m.kept = nil
	for range c {
		if r.Err() != nil {
			break
		}
		m.kept = append(m.kept, r.Int())
	}
}

// String names the machine for reports.
func (m *Machine) String() string { return Name }
