// Package lkcs implements LKCS, the algorithm for the generalized local
// (l_i,k_i)-CS problem of Kamei and Kakugawa, "An asynchronous
// message-passing distributed algorithm for the generalized local critical
// section problem" (Algorithms 10(2):38, 2017), section 5, Algorithms 3-7:
// at least l_i and at most k_i of P_i and its neighbors N_i are InCS.
//
// LKCS runs l_i-LMUTIN (type MUTIN: grants to leave the CS) and
// k_i-LMUTEX (type MUTEX: grants to enter it) side by side, with one state
// and one timestamp per process. Exit asks for MUTIN grants, then gives its
// MUTEX grants back; Entry asks for MUTEX grants, then gives its MUTIN
// grants back. Chains of processes waiting on each other can deadlock this
// composition, so a leader P_LDR with |N_LDR| >= 4 watches its own
// neighborhood: the processes within two hops of it keep one grant of
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
// Variant Paper is Algorithms 3-7 as published, registered as lkcs-paper:
// the model checker finds a global deadlock on the smallest graph the
// paper's assumptions allow (Algorithm 6 nominates no trigger when the
// leader's grants are full). Variant Fixed, registered as lkcs, is the
// correction (docs/design/lkcs-fix.md, "The correction"); it changes three
// things, each an addition beyond the paper:
//   - Ordered acquisition with rollback, instead of preemption: a request
//     asks the members of N_i ∪ {P_i} one at a time in id order; a member
//     whose grants of that type are all held by processes at rest answers
//     Full, and the requester gives back the grants it holds (Release with
//     Rollback) and waits for that member's Retry. So no waiting process
//     holds a grant another one needs while it waits on a process at rest,
//     the hold-and-wait that deadlocks the published composition far from
//     the leader. Preempt and Relinquish are not used.
//   - One sidetrack of each type at a time (Trigger ... Done), its slack
//     (one grant above Cond_i at each member of the nominee's
//     neighborhood, over) handed back by Return when that grant becomes
//     a normal one or is released; while one type's sidetrack is out, only
//     its holder may get the other type's. Grants are given only within
//     Cond_i, so the slack is the sidetrack's alone.
//   - The leader counts as waiting the neighbors that rolled back
//     (Blocked) and nominates the oldest request (by timestamp) among the
//     processes it sees waiting, whenever its own request waits and
//     Waiting_LDR = |N_LDR|+1, or its own request was told Full.
//   - Priority by timestamp, kept across rollbacks: a member gives room
//     to the oldest of its pending requests and watchers; a watcher is
//     invited (Retry) with one grant of room promised to it, which younger
//     requests may not take (they are told Full) and an older one may.
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

// Variant selects the published algorithm or the corrected one. The zero
// value is the corrected one.
type Variant uint8

const (
	// Fixed is the corrected LKCS (see the package comment and
	// docs/design/lkcs-fix.md, "The correction").
	Fixed Variant = iota
	// Paper is Algorithms 3-7 exactly as published (it deadlocks).
	Paper
	// NoSidetrack is Fixed with a leader that never nominates: the
	// two sub-protocols alone under the tightened bounds. It is not
	// registered; tests and experiments use it to tell whether the
	// sidetrack breaks real deadlocks.
	NoSidetrack
)

// String returns "fixed", "paper" or "no-sidetrack".
func (v Variant) String() string {
	switch v {
	case Fixed:
		return "fixed"
	case NoSidetrack:
		return "no-sidetrack"
	}
	return "paper"
}

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
	v      Variant

	state cs.State
	phase phase
	// waitTrigger: the leader nominated and waits until
	// Waiting_LDR < |N_LDR|+1 (Paper only).
	waitTrigger bool

	// The local variables of Algorithm 3, named as in the paper and
	// indexed by At.
	ts            int64
	nGrants       [2]cs.Set
	grantedTo     [2]stamp.Set
	pendingReq    [2]stamp.Set
	preemptingNow [2]stamp.Stamp // ID 0 is nil

	// The corrected variant's additions (docs/design/lkcs-fix.md). out[at]
	// (leader only): the process holding the sidetrack of type at, from
	// the Trigger until its Done (0: none). byTrigger[at]: P_i's request of
	// type at is being completed by the sidetrack. over[at]: the process
	// whose sidetrack grant is P_i's one grant of type at above Cond_i's
	// limit, the slack (0: the slack is free). returned[at]: the members
	// that have sent Return for P_i's sidetrack.
	out       [2]cs.ID
	byTrigger [2]bool
	over      [2]cs.ID
	returned  [2]cs.Set
	// watchers[at]: the requests told Full, by their timestamps, to be
	// told Retry when room appears, the oldest first. invited[at]: the
	// watchers told Retry, each with one grant of room promised until its
	// Request arrives or it answers Pass. invitedBy[at]: the member whose
	// Retry P_i's request of type at is using (0: none). rolled[at]
	// (leader): neighbors that rolled back a request of type at and have
	// not asked again, with the request's timestamp.
	watchers  [2]stamp.Set
	invited   [2]stamp.Set
	invitedBy [2]cs.ID
	rolled    [2]stamp.Set

	// stats counts the sidetrack's use; it is not part of the state.
	stats Stats
}

// Stats counts how often the sidetrack fires over a run (not part of any
// machine's state, so the model checker ignores it).
type Stats struct {
	// Nominated counts the leader's Triggers, by type (index At).
	Nominated [2]int64
	// Accepted counts the Triggers acted on (RequestByTrigger sent): the
	// nominee was still waiting on that request.
	Accepted [2]int64
	// Over counts the RequestByTrigger grants that took the slack (granted
	// above Cond_i's limit); the others fitted within it.
	Over [2]int64
}

// Sidetracks sums the Stats of LKCS machines (other machines count
// nothing).
func Sidetracks(ms []cs.Machine) Stats {
	var s Stats
	for _, m := range ms {
		if m, ok := m.(*Machine); ok {
			for at := range 2 {
				s.Nominated[at] += m.stats.Nominated[at]
				s.Accepted[at] += m.stats.Accepted[at]
				s.Over[at] += m.stats.Over[at]
			}
		}
	}
	return s
}

// New validates p (a connected graph, bounds with a leader that satisfies
// section 5.1's assumptions, see Resolve, and a safe initial
// configuration) and returns the machines of processes 1..n, in order,
// running variant v. The corrected variants need an initial configuration
// safe for the tightened bounds L_i..K_i, so that the sidetrack's slack is
// free at the start.
func New(p cs.Params, v Variant) ([]cs.Machine, error) {
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
	if v != Paper {
		if err := topology.CheckInitial(p.Neighbors, pr.L, pr.K, p.Initial); err != nil {
			return nil, fmt.Errorf("lkcs: %w under the bounds L_i = l_i+1, K_i = k_i-1 within two hops of the leader P%d: the corrected LKCS starts with the sidetrack's slack free; leave --initial out for a configuration that is", err, pr.Leader)
		}
	}
	ms := make([]cs.Machine, p.N)
	for idx, ns := range p.Neighbors {
		id := cs.ID(idx + 1)
		closed := topology.Closed(id, ns)
		member := cs.NewSet(closed...)
		m := &Machine{i: id, closed: closed, member: &member, macroL: pr.L[idx], macroK: pr.K[idx], ldr: pr.Leader, v: v, ts: 1}
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

// Neighbors returns N_i (cs.Local): P_i sends to N_i ∪ {P_i} only.
func (m *Machine) Neighbors() []cs.ID {
	return topology.Open(m.i, m.closed)
}

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
	m.byTrigger[at] = false
	m.phase = ph
	if m.v != Paper {
		m.requestNext(env, at)
		return m.advance(env)
	}
	for _, j := range m.closed {
		env.Send(j, Request{At: at, TS: m.ts})
	}
	return m.advance(env)
}

// requestNext sends the corrected variant's next Request: P_i asks the
// members of N_i ∪ {P_i} one at a time, in increasing id order, the next
// one once the previous one's Grant is in (ordered acquisition; see
// docs/design/lkcs-fix.md).
func (m *Machine) requestNext(env cs.Env, at At) {
	if w, ok := m.waitingFor(); !ok || w != at || m.byTrigger[at] {
		return
	}
	for _, j := range m.closed {
		if !m.nGrants[at].Has(j) {
			env.Send(j, Request{At: at, TS: m.ts})
			return
		}
	}
}

// waitingFor is the type of the request in progress.
func (m *Machine) waitingFor() (At, bool) {
	switch m.phase {
	case exiting:
		return Mutin, true
	case entering:
		return Mutex, true
	}
	return 0, false
}

// advance runs the while loop of the sequence in progress as far as it
// goes: the leader's nomination (and, as published, its wait), and the
// completion.
func (m *Machine) advance(env cs.Env) error {
	for {
		at, ok := m.waitingFor()
		if !ok {
			return nil
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
		// The corrected leader also nominates when its own request was
		// told Full (it is in its own rolled[at] until it asks itself
		// again): a bound of L..K is really reached where it waits, and
		// the sidetrack is the only way past it (wheel:12's hub).
		blocked := m.v == Fixed && m.rolled[at].HasID(m.i)
		if m.i != m.ldr || (m.waiting() != size && !blocked) {
			return nil
		}
		// The configuration may be in a deadlock.
		switch m.v {
		case Paper:
			if err := m.nominatePaper(env); err != nil {
				return err
			}
			m.waitTrigger = true
		case Fixed:
			m.nominate(env)
			return nil
		default:
			return nil
		}
	}
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
	if m.v != Paper {
		var w cs.Set
		for at := range 2 {
			for _, h := range m.pendingReq[at] {
				w.Add(h.ID)
			}
			for _, h := range m.watchers[at] {
				w.Add(h.ID)
			}
			for _, h := range m.rolled[at] {
				w.Add(h.ID)
			}
		}
		for _, id := range m.grantLDR() {
			w.Add(id)
		}
		return w.Len()
	}
	return len(m.pendingReq[Mutin]) + len(m.pendingReq[Mutex]) + len(m.grantLDR())
}

// nominatePaper is TriggerNomination() (Algorithm 6) as published.
func (m *Machine) nominatePaper(env cs.Env) error {
	// Algorithm 6 tests |grantedTo[MUTIN]| = |N_LDR| - L_LDR and
	// |grantedTo[MUTEX]| = K_LDR - 1, one below the normal limits; the
	// proof of Lemma 5 speaks of the limits themselves (docs/design/lkcs-fix.md).
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
	m.stats.Nominated[at]++
	env.Send(h.ID, Trigger{At: at, TS: h.TS})
	return nil
}

// nominate is the corrected TriggerNomination(). A sidetrack of type at is
// nominated only while none of that type is out (out[at], from the Trigger
// until the nominee's Done), and while the other type's is out only its
// holder may get this one: two processes each holding one type's slack
// and waiting on the other type's would deadlock. The type the proof of
// Lemma 5 names comes first (MUTIN when the leader's MUTEX grants are at
// their limit, else MUTEX); the nominee is the oldest request (nominee), a
// type with no nominee is skipped instead of taking min of an empty set,
// and a pending request stays in pendingReq (the RequestByTrigger deletes
// it).
func (m *Machine) nominate(env cs.Env) {
	order := []At{Mutex, Mutin}
	if !m.cond(Mutex) && m.cond(Mutin) {
		order = []At{Mutin, Mutex}
	}
	for _, at := range order {
		if m.out[at] != 0 {
			continue
		}
		h, ok := m.nominee(at, m.out[1-at])
		if !ok {
			continue
		}
		m.out[at] = h.ID
		m.stats.Nominated[at]++
		env.Send(h.ID, Trigger{At: at, TS: h.TS})
		return
	}
}

// nominee is the oldest request, by timestamp, that the leader sees
// waiting on type at: in pendingReq[at], watchers[at] or rolled[at], or in
// Grant_LDR (guess); only P_only if P_only is not 0. The oldest first,
// not the lowest id: a process's timestamp grows with each of its exits,
// so every waiting request becomes the oldest in time.
func (m *Machine) nominee(at At, only cs.ID) (stamp.Stamp, bool) {
	var cand stamp.Set
	cand = append(cand, m.pendingReq[at]...)
	cand = append(cand, m.watchers[at]...)
	cand = append(cand, m.rolled[at]...)
	for _, j := range m.grantLDR() {
		if h, w := m.guess(j); w == at {
			cand = append(cand, h)
		}
	}
	if len(cand) == 0 {
		return stamp.Stamp{}, false
	}
	best := cand[0]
	for _, h := range cand {
		if only != 0 && h.ID == only {
			return h, true
		}
		if h.Less(best) {
			best = h
		}
	}
	if only != 0 {
		return stamp.Stamp{}, false
	}
	return best, true
}

// guess is the type P_j, a member of Grant_LDR, seems to wait on and the
// stamp of that grant: exiting if its MUTIN grant is the newer (an exit
// takes ts_j+1 after the entry's ts_j; a sidetrack grant has timestamp 0),
// entering otherwise. A wrong guess costs a stale Trigger and its Done.
func (m *Machine) guess(j cs.ID) (stamp.Stamp, At) {
	var in, ex stamp.Stamp
	for _, s := range m.grantedTo[Mutin] {
		if s.ID == j {
			in = s
		}
	}
	for _, s := range m.grantedTo[Mutex] {
		if s.ID == j {
			ex = s
		}
	}
	if in.TS > ex.TS {
		return in, Mutin
	}
	return ex, Mutex
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

// granted is the number of P_i's grants of type at that Cond_i counts: all
// of grantedTo_i[at], less the sidetrack grant above the limit (corrected
// variants).
func (m *Machine) granted(at At) int {
	n := len(m.grantedTo[at])
	if m.over[at] != 0 {
		n--
	}
	return n
}

// cond is Cond_i for type at (Algorithm 3).
func (m *Machine) cond(at At) bool {
	if at == Mutex {
		return m.granted(Mutex) < m.macroK
	}
	return m.granted(Mutin) < len(m.closed)-m.macroL
}

// Receive handles the messages of Algorithms 5 and 7, and the corrected
// variant's Return and Done.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	if !m.member.Has(from) {
		return fmt.Errorf("%w: P%d got %s from P%d, which is not in N_%d ∪ {P%d}", cs.ErrUnexpected, m.i, kind(msg), from, m.i, m.i)
	}
	var err error
	switch msg := msg.(type) {
	case Request:
		m.rolled[msg.At], _, _ = m.rolled[msg.At].Take(from)
		m.request(env, from, msg)
	case Grant:
		m.nGrants[msg.At].Add(from)
		if m.invitedBy[msg.At] == from {
			m.invitedBy[msg.At] = 0
		}
		if m.v != Paper {
			m.requestNext(env, msg.At)
		}
	case Release:
		if msg.Rollback {
			for _, h := range m.grantedTo[msg.At] {
				if h.ID == from {
					m.rolled[msg.At], _, _ = m.rolled[msg.At].Take(from)
					m.rolled[msg.At] = m.rolled[msg.At].Insert(h)
				}
			}
		}
		err = m.release(env, from, msg.At)
	case Preempt:
		if m.v != Paper {
			return cs.Unexpected(m.i, from, msg) // the corrected variant does not preempt
		}
		m.preempt(env, from, msg)
	case Relinquish:
		if m.v != Paper {
			return cs.Unexpected(m.i, from, msg)
		}
		err = m.relinquish(env, from, msg.At)
	case Trigger:
		err = m.trigger(env, from, msg)
	case RequestByTrigger:
		err = m.requestByTrigger(env, from, msg.At)
	case Full:
		if w, ok := m.waitingFor(); ok && w == msg.At && !m.byTrigger[msg.At] {
			// Roll back: give every grant of this request back, and let
			// the leader know that P_i waits.
			for _, j := range m.closed {
				if m.nGrants[msg.At].Has(j) {
					env.Send(j, Release{At: msg.At, Rollback: true})
				} else if j == m.ldr {
					env.Send(j, Blocked{At: msg.At, TS: m.ts})
				}
			}
			m.nGrants[msg.At].Clear()
			// A Retry taken from another member is passed on: P_i
			// will not come for that room before that member's Retry.
			if by := m.invitedBy[msg.At]; by != 0 && by != from {
				env.Send(by, Pass(msg))
			}
			m.invitedBy[msg.At] = 0
		}
	case Pass:
		if m.v == Paper {
			return cs.Unexpected(m.i, from, msg)
		}
		m.invited[msg.At], _, _ = m.invited[msg.At].Take(from)
		m.fill(env, msg.At)
	case Blocked:
		if m.v == Paper || m.i != m.ldr {
			return cs.Unexpected(m.i, from, msg)
		}
		m.rolled[msg.At], _, _ = m.rolled[msg.At].Take(from)
		m.rolled[msg.At] = m.rolled[msg.At].Insert(stamp.Stamp{TS: msg.TS, ID: from})
	case Retry:
		if w, ok := m.waitingFor(); ok && w == msg.At && !m.byTrigger[msg.At] {
			m.invitedBy[msg.At] = from
			m.requestNext(env, msg.At)
		}
	case Return:
		if m.v == Paper {
			return cs.Unexpected(m.i, from, msg)
		}
		m.returned[msg.At].Add(from)
		if m.returned[msg.At].Len() == len(m.closed) {
			m.returned[msg.At].Clear()
			env.Send(m.ldr, Done(msg))
		}
	case Done:
		if m.v == Paper || m.i != m.ldr || m.out[msg.At] != from {
			return fmt.Errorf("%w: P%d got Done(%s) from P%d, which holds no sidetrack of the leader's of that type", cs.ErrUnexpected, m.i, msg.At, from)
		}
		m.out[msg.At] = 0
	default:
		return cs.Unexpected(m.i, from, msg)
	}
	if err != nil {
		return err
	}
	return m.advance(env)
}

// request handles ⟨Request, at, ts_j, P_j⟩ (Algorithm 5).
func (m *Machine) request(env cs.Env, from cs.ID, msg Request) {
	at := msg.At
	m.pendingReq[at] = m.pendingReq[at].Insert(stamp.Stamp{TS: msg.TS, ID: from})
	if m.v != Paper {
		m.fill(env, at)
		return
	}
	if m.cond(at) {
		m.grantNext(env, at)
	} else if m.preemptingNow[at].ID == 0 {
		h := m.grantedTo[at].Max()
		if (stamp.Stamp{TS: msg.TS, ID: from}).Less(h) {
			m.preemptingNow[at] = h
			env.Send(h.ID, Preempt{At: at})
		}
	}
}

// release handles ⟨Release, at, P_j⟩ (Algorithm 5). As published it
// grants the oldest pending request whatever Cond_i says (a Release frees
// a grant); the corrected variant grants only within Cond_i, so that a
// grant above the limit (the sidetrack's) is not handed on, and a released
// sidetrack grant above the limit frees the slack.
func (m *Machine) release(env cs.Env, from cs.ID, at At) error {
	if m.preemptingNow[at].ID == from {
		m.preemptingNow[at] = stamp.Stamp{}
	}
	var ok bool
	m.grantedTo[at], _, ok = m.grantedTo[at].Take(from)
	if m.v == Paper {
		if len(m.pendingReq[at]) > 0 {
			m.grantNext(env, at)
		}
		return nil
	}
	if !ok {
		return fmt.Errorf("lkcs: P%d got Release(%s) from P%d, which holds no %s grant of P%d's (an invariant of the corrected LKCS)", m.i, at, from, at, m.i)
	}
	if m.over[at] == from {
		m.over[at] = 0
		env.Send(from, Return{At: at})
	}
	m.fill(env, at)
	// P_j's state changed: its grant of the other type, a reservation
	// until now, is held at rest.
	m.fill(env, 1-at)
	return nil
}

// preempt handles ⟨Preempt, at, P_j⟩ (Algorithm 5, published variant).
func (m *Machine) preempt(env cs.Env, from cs.ID, msg Preempt) {
	at := msg.At
	if (at == Mutex && m.state == cs.OutCS) || (at == Mutin && m.state == cs.InCS) {
		m.nGrants[at].Remove(from)
		env.Send(from, Relinquish{At: at})
	}
}

// relinquish handles ⟨Relinquish, at, P_j⟩ (Algorithm 5, published
// variant).
func (m *Machine) relinquish(env cs.Env, from cs.ID, at At) error {
	m.preemptingNow[at] = stamp.Stamp{}
	var gone stamp.Stamp
	var ok bool
	if m.grantedTo[at], gone, ok = m.grantedTo[at].Take(from); !ok {
		return fmt.Errorf("lkcs-paper: P%d got Relinquish(%s) from P%d, which holds no %s grant of P%d's: Algorithm 5 re-queues \"the deleted item\", and there is none (an undefined step)", m.i, at, from, at, m.i)
	}
	m.pendingReq[at] = m.pendingReq[at].Insert(gone)
	m.grantNext(env, at)
	return nil
}

// trigger handles ⟨Trigger, at, ts⟩ (Algorithm 7): if P_i still waits on
// the request of type at and timestamp ts, it asks N_i ∪ {P_i} again by
// RequestByTrigger. The corrected variant hands a stale trigger's
// sidetrack straight back (Done).
func (m *Machine) trigger(env cs.Env, from cs.ID, msg Trigger) error {
	if from != m.ldr {
		return fmt.Errorf("%w: P%d got Trigger from P%d, which is not the leader P%d", cs.ErrUnexpected, m.i, from, m.ldr)
	}
	at := msg.At
	ok := msg.TS == m.ts && m.nGrants[at].Len() < len(m.closed) &&
		((m.state == cs.InCS && at == Mutin) || (m.state == cs.OutCS && at == Mutex))
	if m.v != Paper {
		// Any request of type at still waiting may take the sidetrack:
		// safety rests on the token, not on the timestamp.
		w, waiting := m.waitingFor()
		ok = waiting && w == at && !m.byTrigger[at]
	}
	if !ok {
		if m.v != Paper {
			env.Send(m.ldr, Done{At: at})
		}
		return nil
	}
	m.stats.Accepted[at]++
	m.byTrigger[at] = true
	m.invitedBy[at] = 0 // the RequestByTrigger withdraws it
	m.nGrants[at].Clear()
	for _, j := range m.closed {
		env.Send(j, RequestByTrigger{At: at})
	}
	return nil
}

// requestByTrigger handles ⟨RequestByTrigger, at, P_j⟩ (Algorithm 7): the
// grant (0, P_j), at once. In the corrected variant it is a normal grant
// when Cond_i holds (the slack is returned at once), otherwise P_i's one
// grant above the limit (over[at], the slack), until a normal grant frees
// (fill) or P_j releases it; then Return tells P_j.
func (m *Machine) requestByTrigger(env cs.Env, from cs.ID, at At) error {
	m.watchers[at], _, _ = m.watchers[at].Take(from)
	m.invited[at], _, _ = m.invited[at].Take(from)
	m.rolled[at], _, _ = m.rolled[at].Take(from)
	m.pendingReq[at], _, _ = m.pendingReq[at].Take(from)
	m.grantedTo[at], _, _ = m.grantedTo[at].Take(from)
	if m.v != Paper {
		switch {
		case m.cond(at):
			env.Send(from, Return{At: at})
		case m.over[at] != 0:
			return fmt.Errorf("lkcs: P%d got RequestByTrigger(%s) from P%d while P%d's sidetrack grant is still above its limit (two sidetracks of one type at once)", m.i, at, from, m.over[at])
		default:
			m.over[at] = from
			m.stats.Over[at]++
		}
	}
	m.grantedTo[at] = m.grantedTo[at].Insert(stamp.Stamp{TS: 0, ID: from})
	env.Send(from, Grant{At: at})
	return nil
}

// fill grants within Cond_i (corrected variants), oldest request first
// (timestamps as in Algorithm 6): the sidetrack grant above the limit
// becomes a normal one when there is room (its slack is returned); an
// invited request that has arrived takes the room promised to it, a
// pending request older than an invited one takes that one's room (the
// invitation is withdrawn); room not promised goes to the oldest of the
// pending requests and the watchers, a watcher being invited (Retry) and
// promised one grant. Requests still pending are told Full and become
// watchers, so that they give back what they hold, when the room left is
// promised to older requests or every holder is at rest (not reserved).
func (m *Machine) fill(env cs.Env, at At) {
	if m.over[at] != 0 && m.cond(at) {
		env.Send(m.over[at], Return{At: at})
		m.over[at] = 0 // now counted by Cond_i
	}
	for k := 0; k < len(m.pendingReq[at]) && m.cond(at); {
		h := m.pendingReq[at][k]
		var ok bool
		if m.invited[at], _, ok = m.invited[at].Take(h.ID); !ok {
			k++
			continue
		}
		m.pendingReq[at], _, _ = m.pendingReq[at].Take(h.ID)
		m.grantedTo[at] = m.grantedTo[at].Insert(h)
		env.Send(h.ID, Grant{At: at})
	}
	for len(m.pendingReq[at]) > 0 && len(m.invited[at]) > 0 && m.cond(at) && m.pendingReq[at][0].Less(m.invited[at].Max()) {
		m.invited[at] = m.invited[at][:len(m.invited[at])-1]
		m.grantNext(env, at)
	}
	for m.free(at) {
		switch {
		case len(m.watchers[at]) > 0 && (len(m.pendingReq[at]) == 0 || m.watchers[at][0].Less(m.pendingReq[at][0])):
			var h stamp.Stamp
			m.watchers[at], h = m.watchers[at].DeleteMin()
			m.invited[at] = m.invited[at].Insert(h)
			env.Send(h.ID, Retry{At: at})
			continue
		case len(m.pendingReq[at]) > 0:
			m.grantNext(env, at)
			continue
		}
		break
	}
	if len(m.pendingReq[at]) == 0 || (!m.cond(at) && m.reserved(at)) {
		return
	}
	// Full of holders at rest, or the room left promised to older
	// requests: every pending request waits for room, and holds nothing
	// meanwhile.
	for len(m.pendingReq[at]) > 0 {
		var h stamp.Stamp
		m.pendingReq[at], h = m.pendingReq[at].DeleteMin()
		m.invited[at], _, _ = m.invited[at].Take(h.ID)
		m.watchers[at] = m.watchers[at].Insert(h)
		env.Send(h.ID, Full{At: at})
	}
}

// free reports room for type at that is not promised to an invited
// watcher: Cond_i with the invitations counted as grants.
func (m *Machine) free(at At) bool {
	n := m.granted(at) + len(m.invited[at])
	if at == Mutex {
		return n < m.macroK
	}
	return n < len(m.closed)-m.macroL
}

// reserved reports whether a holder of P_i's grants of type at is still
// waiting on that type (a reservation that its completion or rollback
// frees), guessed as for Grant_LDR.
func (m *Machine) reserved(at At) bool {
	for _, h := range m.grantedTo[at] {
		if !m.grantedTo[1-at].HasID(h.ID) {
			continue
		}
		if _, w := m.guess(h.ID); w == at || h.TS == 0 {
			return true
		}
	}
	return false
}

// grantNext grants the oldest pending request of type at.
func (m *Machine) grantNext(env cs.Env, at At) {
	var h stamp.Stamp
	m.pendingReq[at], h = m.pendingReq[at].DeleteMin()
	m.grantedTo[at] = m.grantedTo[at].Insert(h)
	env.Send(h.ID, Grant{At: at})
}

// name is the algorithm's registered name for variant v.
func (m *Machine) name() string {
	if m.v == Paper {
		return Name + "-paper"
	}
	return Name
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
		c.returned[at] = m.returned[at].Clone()
		c.watchers[at] = m.watchers[at].Clone()
		c.invited[at] = m.invited[at].Clone()
		c.rolled[at] = m.rolled[at].Clone()
	}
	return &c
}

// AppendState appends state_i, the phase, the variables of Algorithm 3 and
// the corrected variant's additions (Stats excepted).
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state), byte(m.phase))
	b = cs.AppendBool(b, m.waitTrigger)
	b = cs.AppendInt(b, m.ts)
	for at := range 2 {
		b = m.nGrants[at].AppendBinary(b)
		b = m.grantedTo[at].AppendBinary(b)
		b = m.pendingReq[at].AppendBinary(b)
		b = cs.AppendInt(cs.AppendInt(b, m.preemptingNow[at].TS), int64(m.preemptingNow[at].ID))
		b = cs.AppendBool(b, m.byTrigger[at])
		b = cs.AppendInt(cs.AppendInt(b, int64(m.over[at])), int64(m.out[at]))
		b = m.returned[at].AppendBinary(b)
		b = m.watchers[at].AppendBinary(b)
		b = m.invited[at].AppendBinary(b)
		b = cs.AppendInt(b, int64(m.invitedBy[at]))
		b = m.rolled[at].AppendBinary(b)
	}
	return b
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer); every process it names is at most the highest id of P_i's
// closed neighborhood.
func (m *Machine) ReadState(r *cs.Reader) {
	n := int(m.closed[len(m.closed)-1])
	m.state = cs.State(r.Phase(byte(cs.InCS) + 1))
	m.phase = phase(r.Phase(byte(entering) + 1))
	m.waitTrigger = r.Bool()
	m.ts = r.Int()
	for at := range 2 {
		m.nGrants[at] = r.Set(n)
		m.grantedTo[at], m.pendingReq[at] = stamp.Read(r, n), stamp.Read(r, n)
		m.preemptingNow[at] = stamp.Stamp{TS: r.Int(), ID: r.ID(n)}
		m.byTrigger[at] = r.Bool()
		m.over[at] = r.ID(n)
		// out names the sidetrack's holder, which may be two hops away.
		if m.out[at] = cs.ID(r.Int32()); m.out[at] < 0 {
			r.Fail("negative process id")
		}
		m.returned[at], m.watchers[at] = r.Set(n), stamp.Read(r, n)
		m.invited[at] = stamp.Read(r, n)
		m.invitedBy[at] = r.ID(n)
		m.rolled[at] = stamp.Read(r, n)
	}
}

// String names the algorithm and the macros, e.g. "lkcs(L_3=1,K_3=2)".
func (m *Machine) String() string {
	return fmt.Sprintf("%s(L_%d=%d,K_%d=%d)", m.name(), m.i, m.macroL, m.i, m.macroK)
}
