// Package maekawa implements Maekawa's quorum-based mutual exclusion:
// M. Maekawa, "A sqrt(N) algorithm for mutual exclusion in decentralized
// systems", ACM TOCS 3(2), 1985, on any family of pairwise intersecting
// quorums Q_1..Q_n (package coterie). It is the mutual-exclusion object mx
// inside MUTIN(l) in Kamei and Kakugawa's global (l,k)-CS paper (2019,
// section 3.4 and Lemma 8) and is also usable on its own (--alg maekawa).
//
// Source. The original paper is not among critsec's seeds and the stored
// sources hold no copy of it; this package follows the algorithm as it is
// restated, with the same message set, in secondary descriptions (the
// Wikipedia article "Maekawa's algorithm" and the textbook treatments it
// follows, which call LOCKED "grant" and RELINQUISH "yield"), and the
// corrections below. Each process P_i plays two roles: a requester that
// needs the lock of every member of Q_i, and an arbiter that holds one lock
// for the processes whose quorums contain P_i. Requests are ordered by
// Lamport timestamps (seq, i), the lower first ("precedes"). The steps, in
// the order of the published description (the numbers are critsec's):
//
//  1. Entry: P_i takes seq = 1 + the highest sequence number it has seen and
//     sends REQUEST(seq, i) to every member of Q_i.
//  2. An arbiter P_j receiving REQUEST r: if unlocked, it locks for r and
//     sends LOCKED. Otherwise it queues r (ordered by timestamp); if the
//     locking request or a queued one precedes r it sends FAILED to r's
//     owner, else it sends INQUIRE to the owner of the locking request,
//     unless an INQUIRE for the current lock is still unanswered.
//  3. A requester receiving INQUIRE answers RELINQUISH (and gives up that
//     lock) if it has received a FAILED for its current request; otherwise
//     it defers the INQUIRE until a FAILED arrives (then it relinquishes
//     every deferred lock) or it enters the critical section (then the
//     INQUIRE is answered by its later RELEASE).
//  4. An arbiter receiving RELINQUISH puts the relinquished request back in
//     its queue and locks for the queue's first request (LOCKED).
//  5. A requester holding LOCKED from every member of Q_i is InCS.
//  6. Exit: P_i sends RELEASE to every member of Q_i and is OutCS at once.
//  7. An arbiter receiving RELEASE unlocks and locks for its queue's first
//     request, if any (LOCKED).
//
// Sequence numbers: a process's highest seen sequence number is updated on
// every REQUEST its arbiter receives, so a process that has seen a request
// asks after it (Lamport's clock rule, as in the paper).
//
// Variants. Paper is steps 1-7 as above. It can deadlock, as Sanders
// ("The information structure of distributed mutual exclusion algorithms",
// ACM TOCS 5(3), 1987) pointed out for the published algorithm: step 2
// sends FAILED only to a request that arrives behind a preceding one, so a
// request that was first in an arbiter's queue when it arrived (it got no
// FAILED; an INQUIRE went out for it) and is then overtaken by a newer,
// preceding request waits behind it without ever being told. Its owner
// defers every INQUIRE while holding other locks, and a cycle of waits
// forms. The model checker finds it with 4 processes on the grid coterie
// (docs/maekawa.md; TestPaperDeadlocks replays it). Fixed adds one rule:
//
//   - Step 2, when a request r becomes the first of the queue and precedes
//     the locking request, the request it displaced from the head is sent
//     FAILED if it has not had one from this arbiter.
//
// Why Fixed cannot deadlock. Invariant at every arbiter: each queued
// request has been sent FAILED, or its owner relinquished this arbiter's
// lock (and so holds a FAILED, below), except possibly the first queued
// request when it precedes the locking request, and then an INQUIRE for the
// current lock has been sent. (Step 2 keeps it for the new request, the
// displacement rule for the old head; steps 4 and 7 lock for the first
// request, which leaves no queued request preceding the new lock.) A
// requester's FAILED flag lasts until its request ends, so a requester that
// relinquished a lock still answers later INQUIREs with RELINQUISH. (Later
// restatements add "or it has relinquished a lock and not been granted it
// again" to step 3's condition, the fix for a requester that would
// otherwise defer after relinquishing; here a requester relinquishes only
// after a FAILED, so that condition implies the first and both variants
// have it.) Now take a state where no message is
// in transit, no process is InCS and some request waits. Let r be the first pending request in
// timestamp order; at an arbiter whose lock it lacks it is first in the
// queue and precedes the lock holder k, so k received an INQUIRE it has not
// answered: k holds no FAILED, is not InCS, and waits at some arbiter whose
// lock it lacks; by the invariant k is first there and precedes that lock's
// holder, which therefore received an INQUIRE... This builds an infinite
// chain of requests of strictly decreasing priority among finitely many
// processes: a contradiction. The model checker confirms it for n = 3
// (majority) and n = 4 (grid) (maekawa_test.go).
//
// Further deviations and decisions (both variants):
//   - INQUIRE carries the sequence number of the request it is about; an
//     INQUIRE that arrives after that request ended (its owner is OutCS or
//     has started a newer request) is ignored: the RELEASE already sent
//     answers it. One arriving while its owner is InCS is ignored for the
//     same reason.
//   - P_i's own arbiter is reached without the network: a message P_i sends
//     to itself goes to a local FIFO queue that is emptied before the call
//     returns (a self-link with immediate delivery, one of the schedules of
//     the asynchronous model). Such messages are not counted: an uncontended
//     entry and exit cost 3(|Q_i|-1) messages when P_i is in Q_i (REQUEST,
//     LOCKED and RELEASE for each other member), 3|Q_i| when it is not.
//     Maekawa gives 3(K-1) to 5(K-1) per entry for quorums of size K.
//   - Q_i need not contain P_i, and the quorums need only intersect (the
//     constructor checks coterie.CheckIntersecting; minimality is not needed
//     for safety).
//   - Params.Initial may name one process InCS: it starts holding the lock
//     of every member of its quorum, as if it had just entered.
//   - Channels must be FIFO (the simulator's and the checker's default):
//     the requester relies on a FAILED never overtaking a later LOCKED from
//     the same arbiter, and an INQUIRE never overtaking its LOCKED.
//   - Messages a correct run never produces (a LOCKED for a request already
//     holding that lock, a FAILED or INQUIRE that contradicts the locks held,
//     a RELEASE or RELINQUISH from a process that does not hold the lock, a
//     second REQUEST from a process whose request is still known) are
//     refused as errors, so the model checker reports them.
package maekawa

import (
	"fmt"
	"slices"

	"github.com/critsec/critsec/alg/internal/variant"
	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces; the
// published variant is registered as Name + "-paper".
const Name = "maekawa"

// Variant selects the published algorithm or the corrected one (the zero
// value).
type Variant = variant.Variant

const (
	// Fixed also sends FAILED to a request displaced from the head of an
	// arbiter's queue (package doc).
	Fixed = variant.Fixed
	// Paper is steps 1-7 of the package doc as published; it can deadlock.
	Paper = variant.Paper
)

// stamp is a request's Lamport timestamp (seq, id); id 0 means none.
type stamp struct {
	seq int64
	id  cs.ID
}

// precedes reports whether a is ordered before b: lower sequence number
// first, ties broken by the lower id.
func (a stamp) precedes(b stamp) bool {
	return a.seq < b.seq || (a.seq == b.seq && a.id < b.id)
}

// waiting is a request queued at an arbiter.
type waiting struct {
	stamp
	// failed: this arbiter has sent FAILED to the request, or its owner
	// relinquished this arbiter's lock (either way the owner knows).
	failed bool
}

// phase is the requester's state.
type phase uint8

const (
	idle       phase = iota // OutCS, no request
	requesting              // Entry called, not every lock held yet
	inCS                    // every member of Q_i has locked for the request
)

// Machine is process P_i's part of Maekawa's algorithm: its requester and
// its arbiter.
type Machine struct {
	self    cs.ID
	n       int
	variant Variant
	// quorum is Q_i in increasing order; constant, shared between clones.
	quorum []cs.ID

	// clock is the highest sequence number P_i has seen or used.
	clock int64

	// Requester.
	phase phase
	seq   int64  // the current request's sequence number; 0 when idle
	held  cs.Set // members of Q_i whose lock the current request holds
	// failed: a FAILED arrived for the current request.
	failed bool
	// deferred: members of Q_i whose INQUIRE for the current request waits
	// for an answer (step 3).
	deferred cs.Set

	// Arbiter.
	lock stamp // the locking request; lock.id == 0: unlocked
	// inquired: an INQUIRE for the current lock is unanswered.
	inquired bool
	queue    []waiting // waiting requests, first = the one that precedes all

	// outbox holds messages to self not yet handled; empty between calls.
	outbox []cs.Message
}

// NewMachine returns process self's machine, OutCS, for n processes, with
// quorum Q_self. A parent that composes one Maekawa object per process
// (MUTIN's mx) builds them with it; the quorums of all processes must
// pairwise intersect for mutual exclusion (New checks that; NewMachine sees
// one quorum and checks only it).
func NewMachine(self cs.ID, n int, quorum []cs.ID, v Variant) (*Machine, error) {
	if n < 1 {
		return nil, fmt.Errorf("n = %d is out of range: need n >= 1", n)
	}
	if self < 1 || int(self) > n {
		return nil, fmt.Errorf("process id %d is out of range: ids run from 1 to n = %d", self, n)
	}
	if v != Paper && v != Fixed {
		return nil, fmt.Errorf("maekawa: unknown variant %d", v)
	}
	if len(quorum) == 0 {
		return nil, fmt.Errorf("Q_%d is empty: every quorum needs at least one process", self)
	}
	var s cs.Set
	for _, id := range quorum {
		if id < 1 || int(id) > n {
			return nil, fmt.Errorf("Q_%d holds unknown process id %d: ids run from 1 to n = %d", self, id, n)
		}
		if s.Has(id) {
			return nil, fmt.Errorf("Q_%d lists process %d twice", self, id)
		}
		s.Add(id)
	}
	return &Machine{self: self, n: n, variant: v, quorum: s.Members()}, nil
}

// Validate checks p for Maekawa's algorithm: n >= 1, l = 0, one quorum per
// process with pairwise intersecting quorums (coterie.CheckIntersecting),
// and at most one process InCS initially. p.K is not used: this is mutual
// exclusion, at most one process InCS.
func Validate(p cs.Params) error {
	if p.N < 1 {
		return fmt.Errorf("n = %d is out of range: need n >= 1", p.N)
	}
	if p.L != 0 {
		return fmt.Errorf("l = %d: maekawa solves mutual exclusion and guarantees no lower bound; use l = 0 (or --alg gcs for l > 0)", p.L)
	}
	if err := coterie.CheckIntersecting(p.Quorums, p.N); err != nil {
		return fmt.Errorf("quorums: %w", err)
	}
	return p.CheckInitial(0, 1)
}

// New returns the machines of processes 1..n, in order, running the Fixed
// variant on p.Quorums. It has the signature of mutin.Options.Mx.
func New(p cs.Params) ([]cs.Machine, error) { return build(p, Fixed) }

// NewPaper is New for the Paper variant (as published; it can deadlock).
func NewPaper(p cs.Params) ([]cs.Machine, error) { return build(p, Paper) }

func build(p cs.Params, v Variant) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	ms := make([]*Machine, p.N)
	for i := range ms {
		m, err := NewMachine(cs.ID(i+1), p.N, p.Quorum(cs.ID(i+1)), v)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	// A process InCS initially holds the lock of every member of its
	// quorum, with the timestamp (0, id), which precedes every request.
	for _, id := range p.Initial {
		holder := ms[id-1]
		holder.phase = inCS
		for _, a := range holder.quorum {
			holder.held.Add(a)
			ms[a-1].lock = stamp{0, id}
		}
	}
	out := make([]cs.Machine, p.N)
	for i, m := range ms {
		out[i] = m
	}
	return out, nil
}

// Self is P_i's id.
func (m *Machine) Self() cs.ID { return m.self }

// Quorum returns Q_i in increasing order (do not modify it).
func (m *Machine) Quorum() []cs.ID { return m.quorum }

// State is InCS once every member of Q_i has locked for the request.
func (m *Machine) State() cs.State {
	if m.phase == inCS {
		return cs.InCS
	}
	return cs.OutCS
}

// Pending is Entry while the request waits for locks; Exit completes at
// once.
func (m *Machine) Pending() cs.Op {
	if m.phase == requesting {
		return cs.Entry
	}
	return cs.None
}

// Entry is step 1: REQUEST(seq, i) to every member of Q_i.
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.clock++
	m.seq = m.clock
	m.phase = requesting
	m.held.Clear()
	m.deferred.Clear()
	m.failed = false
	for _, a := range m.quorum {
		m.send(env, a, Request{Seq: m.seq})
	}
	return m.flush(env)
}

// Exit is step 6: OutCS, and RELEASE to every member of Q_i, which also
// answers the INQUIREs deferred while waiting.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.phase = idle
	m.seq = 0
	m.held.Clear()
	env.Changed(cs.OutCS)
	for _, a := range m.quorum {
		m.send(env, a, Release{})
	}
	return m.flush(env)
}

// Receive handles one message, then every message it made P_i send to
// itself.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	if from < 1 || int(from) > m.n {
		return cs.Unexpected(m.self, from, msg)
	}
	if err := m.handle(env, from, msg); err != nil {
		m.outbox = m.outbox[:0]
		return err
	}
	return m.flush(env)
}

// send hands msg to the network, or to the local queue when it is for P_i.
func (m *Machine) send(env cs.Env, to cs.ID, msg cs.Message) {
	if to == m.self {
		m.outbox = append(m.outbox, msg)
		return
	}
	env.Send(to, msg)
}

// flush handles the messages P_i sent to itself, in order, until none is
// left.
func (m *Machine) flush(env cs.Env) error {
	for i := 0; i < len(m.outbox); i++ {
		if err := m.handle(env, m.self, m.outbox[i]); err != nil {
			m.outbox = m.outbox[:0]
			return fmt.Errorf("maekawa: P%d's message to itself: %w", m.self, err)
		}
	}
	m.outbox = m.outbox[:0]
	return nil
}

func (m *Machine) handle(env cs.Env, from cs.ID, msg cs.Message) error {
	switch msg := msg.(type) {
	case Request:
		return m.onRequest(env, stamp{msg.Seq, from})
	case Relinquish:
		return m.onRelinquish(env, from)
	case Release:
		return m.onRelease(env, from)
	case Locked:
		return m.onLocked(env, from)
	case Failed:
		return m.onFailed(env, from)
	case Inquire:
		return m.onInquire(env, from, msg.Seq)
	}
	return cs.Unexpected(m.self, from, msg)
}

// The arbiter.

// onRequest is step 2.
func (m *Machine) onRequest(env cs.Env, r stamp) error {
	if m.lock.id == r.id || slices.ContainsFunc(m.queue, func(w waiting) bool { return w.id == r.id }) {
		return fmt.Errorf("maekawa: P%d got REQUEST(%d) from P%d, whose request (%d) it still holds", m.self, r.seq, r.id, m.requestOf(r.id))
	}
	m.clock = max(m.clock, r.seq)
	if m.lock.id == 0 {
		m.lock, m.inquired = r, false
		m.send(env, r.id, Locked{})
		return nil
	}
	pos, _ := slices.BinarySearchFunc(m.queue, r, func(w waiting, r stamp) int {
		if w.precedes(r) {
			return -1
		}
		return 1
	})
	m.queue = slices.Insert(m.queue, pos, waiting{stamp: r})
	if pos > 0 || m.lock.precedes(r) {
		m.queue[pos].failed = true
		m.send(env, r.id, Failed{})
		return nil
	}
	// r precedes the lock and every queued request.
	if m.variant == Fixed && len(m.queue) > 1 && !m.queue[1].failed {
		m.queue[1].failed = true
		m.send(env, m.queue[1].id, Failed{})
	}
	if !m.inquired {
		m.inquired = true
		m.send(env, m.lock.id, Inquire{Seq: m.lock.seq})
	}
	return nil
}

// requestOf returns the sequence number of id's request held here.
func (m *Machine) requestOf(id cs.ID) int64 {
	if m.lock.id == id {
		return m.lock.seq
	}
	for _, w := range m.queue {
		if w.id == id {
			return w.seq
		}
	}
	return 0
}

// onRelinquish is step 4.
func (m *Machine) onRelinquish(env cs.Env, from cs.ID) error {
	if m.lock.id != from || !m.inquired || len(m.queue) == 0 {
		return fmt.Errorf("maekawa: P%d got RELINQUISH from P%d, which it did not ask to (lock %v, INQUIRE sent %v, %d waiting)", m.self, from, m.lock, m.inquired, len(m.queue))
	}
	back := waiting{stamp: m.lock, failed: true}
	pos, _ := slices.BinarySearchFunc(m.queue, back.stamp, func(w waiting, r stamp) int {
		if w.precedes(r) {
			return -1
		}
		return 1
	})
	m.queue = slices.Insert(m.queue, pos, back)
	m.grantFirst(env)
	return nil
}

// onRelease is step 7.
func (m *Machine) onRelease(env cs.Env, from cs.ID) error {
	if m.lock.id != from {
		return fmt.Errorf("maekawa: P%d got RELEASE from P%d, which does not hold its lock (held by P%d)", m.self, from, m.lock.id)
	}
	m.lock = stamp{}
	m.inquired = false
	if len(m.queue) > 0 {
		m.grantFirst(env)
	}
	return nil
}

// grantFirst locks for the first queued request.
func (m *Machine) grantFirst(env cs.Env) {
	m.lock, m.inquired = m.queue[0].stamp, false
	m.queue = slices.Delete(m.queue, 0, 1)
	m.send(env, m.lock.id, Locked{})
}

// The requester.

func (m *Machine) member(a cs.ID) bool {
	_, ok := slices.BinarySearch(m.quorum, a)
	return ok
}

// onLocked is steps 2/4/7 seen by the requester, and step 5.
func (m *Machine) onLocked(env cs.Env, from cs.ID) error {
	if m.phase != requesting || !m.member(from) || m.held.Has(from) {
		return fmt.Errorf("maekawa: P%d got LOCKED from P%d while %s (holding %v of Q = %v)", m.self, from, m.describe(), m.held.Members(), m.quorum)
	}
	m.held.Add(from)
	if m.held.Len() == len(m.quorum) {
		// Deferred INQUIREs are answered by the RELEASE at exit; the FAILED
		// flag has served its request.
		m.phase = inCS
		m.failed = false
		m.deferred.Clear()
		env.Changed(cs.InCS)
	}
	return nil
}

// onFailed is step 3's trigger: relinquish every deferred lock.
func (m *Machine) onFailed(env cs.Env, from cs.ID) error {
	if m.phase != requesting || !m.member(from) || m.held.Has(from) {
		return fmt.Errorf("maekawa: P%d got FAILED from P%d while %s (holding %v of Q = %v)", m.self, from, m.describe(), m.held.Members(), m.quorum)
	}
	m.failed = true
	for _, a := range m.deferred.Members() {
		m.relinquish(env, a)
	}
	m.deferred.Clear()
	return nil
}

// onInquire is step 3.
func (m *Machine) onInquire(env cs.Env, from cs.ID, seq int64) error {
	if !m.member(from) {
		return fmt.Errorf("maekawa: P%d got INQUIRE from P%d, which is not in Q = %v", m.self, from, m.quorum)
	}
	if m.phase != requesting || seq != m.seq {
		// About a request that has entered or ended: the RELEASE answers it.
		return nil
	}
	if !m.held.Has(from) || m.deferred.Has(from) {
		return fmt.Errorf("maekawa: P%d got INQUIRE(%d) from P%d, whose lock it does not hold or was already asked for", m.self, seq, from)
	}
	if m.failed {
		m.relinquish(env, from)
	} else {
		m.deferred.Add(from)
	}
	return nil
}

func (m *Machine) relinquish(env cs.Env, a cs.ID) {
	m.held.Remove(a)
	m.send(env, a, Relinquish{})
}

func (m *Machine) describe() string {
	switch m.phase {
	case requesting:
		return fmt.Sprintf("requesting (seq %d)", m.seq)
	case inCS:
		return "InCS"
	}
	return "idle"
}

// Clone returns a deep copy.
func (m *Machine) Clone() cs.Machine {
	c := *m
	c.held = m.held.Clone()
	c.deferred = m.deferred.Clone()
	c.queue = slices.Clone(m.queue)
	c.outbox = nil
	return &c
}

// AppendState appends a canonical encoding of the requester's and the
// arbiter's variables.
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.phase))
	b = cs.AppendBool(b, m.failed)
	b = cs.AppendBool(b, m.inquired)
	b = cs.AppendInt(b, m.clock)
	b = cs.AppendInt(b, m.seq)
	b = m.held.AppendBinary(b)
	b = m.deferred.AppendBinary(b)
	b = cs.AppendInt(b, m.lock.seq)
	b = cs.AppendInt(b, int64(m.lock.id))
	b = cs.AppendInt(b, int64(len(m.queue)))
	for _, w := range m.queue {
		b = cs.AppendInt(b, w.seq)
		b = cs.AppendInt(b, int64(w.id))
		b = cs.AppendBool(b, w.failed)
	}
	return b
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer).
func (m *Machine) ReadState(r *cs.Reader) {
	m.phase = phase(r.Phase(byte(inCS) + 1))
	m.failed, m.inquired = r.Bool(), r.Bool()
	m.clock, m.seq = r.Int(), r.Int()
	m.held, m.deferred = r.Set(m.n), r.Set(m.n)
	m.lock = stamp{seq: r.Int(), id: r.ID(m.n)}
	c := r.Count("queue")
	m.queue = nil
	for range c {
		if r.Err() != nil {
			break
		}
		m.queue = append(m.queue, waiting{stamp: stamp{seq: r.Int(), id: r.ID(m.n)}, failed: r.Bool()})
	}
}

// String is the algorithm's name with its variant, e.g. "maekawa-paper".
func (m *Machine) String() string {
	if m.variant == Paper {
		return Name + "-paper"
	}
	return Name
}
