// Package forest implements the K-token dynamic-forest algorithm for
// K-mutual exclusion of S. Bulgannawar and N. H. Vaidya, "A distributed
// K-mutual exclusion algorithm", ICDCS 1995, section 2 (its five
// procedures Entry_CS, Exit_CS, Handle_REQUEST, Handle_TOKEN and
// Handle_INFORM), with the decision mechanisms of section 3.
//
// There are K tokens; a node may enter the critical section only while it
// holds one. Token t starts at node t (t = 1..K) and pointer[t] = t at every
// node, so each forest starts as one tree rooted at the token. A request
// REQUEST(Y, t) travels pointer[t] towards token t; every node it passes
// points to Y afterwards (path reversal, as in Naimi and Trehel's algorithm,
// the paper's [6]). A node that holds a token queues the request on its own
// token's token-queue, whichever token was asked for; when it modifies the
// request that way (t ≠ its token) it tags the entry with its own id, the
// request-modifier tag, which the requester uses on receiving the token to
// repair its pointer for the token it asked for. A node waiting for t keeps
// the requests for t it receives in its node-queue and hands them on with
// the token (appended to the token-queue). On exit a node with a non-empty
// token-queue sends the token to the head and points to the last-unmodified
// node; with an empty one it keeps the token and sends INFORM(I, t) to ν
// nodes.
//
// With K = 1 the algorithm is Naimi and Trehel's (M. Naimi, M. Trehel, A.
// Arnold, "A log(N) distributed mutual exclusion algorithm based on path
// reversal", JPDC 34, 1996; the paper's [6] is the 1987 conference version)
// with the queue of waiting requests carried by the token instead of the
// next pointers: the first request of a node costs one REQUEST per hop and
// one TOKEN, and after a sequence of requests every pointer leads to the
// last requester (naimi_test.go works this out by hand).
//
// Decision mechanisms (section 3), as options: the token a node requests
// (Options.Choice: the last seen token, the paper's heuristic, or a random
// one), ν (Options.Nu, 2 in the paper's study) and the INFORM destinations
// (ν distinct other nodes chosen at random, as in the paper's simulations;
// at most every other node when ν ≥ n-1). Random choices come from a
// splitmix64 sequence per machine, seeded from its id and advanced at each
// draw: part of the machine's state, so a run repeats exactly.
//
// Where this code decides what the paper leaves open:
//   - the text of Handle_REQUEST's case 1 says "sets pointer[t] = Y"; the
//     pseudo-code sets pointer[token_id] = Y, the token actually sent. The
//     pseudo-code is followed: pointing to Y in forest t (a token Y has not
//     got) would make a cycle with Y's pointer[t], which Y sets to the
//     request modifier, this node.
//   - the last seen token before any is seen is ((I-1) mod K) + 1, which
//     spreads the first requests evenly.
//   - a node InCS initially (Params.Initial) must hold a token: Initial is
//     a subset of 1..K.
//
// Variants: Paper runs section 2 as published. It can lose a request
// (docs/design/forest-fix.md, "A stale INFORM"; testdata/scripts/
// paper_stale_inform.txt): an INFORM that arrives after the token it
// announces has moved on can close a cycle of pointers without a token; a
// request that runs around it comes back to its originator, which queues
// itself in its node-queue, or two waiting nodes queue each other's
// requests; either way nobody sends them a token again. Fixed (the
// default) counts each token's receptions (TOKEN carries Count), and
// every node keeps seen[t], the highest Count of token t it knows of: from
// the tokens it receives, the INFORM messages it applies, and the REQUEST
// messages it handles, which carry the highest seen[t] of the nodes they
// passed and leave it in their token-queue entry, so the requester learns
// it with the token, whichever token it gets. An INFORM(X, t) sent at
// Count c is applied only if c > seen[t]: otherwise the receiver knows of
// a later holder than X. The counts cost a word in INFORM and REQUEST and
// in TOKEN plus one per token-queue entry. This is checked (model checker
// and random schedules, docs/design/forest-fix.md), not proved.
package forest

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/critsec/critsec/alg/internal/variant"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "forest"

// Variant selects the published algorithm or the corrected one.
type Variant = variant.Variant

const (
	// Fixed is section 2 with stale INFORM messages dropped (the default).
	Fixed = variant.Fixed
	// Paper is section 2 as published.
	Paper = variant.Paper
)

// Choice is the heuristic of Entry_CS that chooses the token to request
// (section 3, "Heuristics for choosing a token").
type Choice uint8

const (
	// LastSeen requests the token the node last received, or last heard of
	// in an INFORM message ("new+heuristics" in the paper's figures).
	LastSeen Choice = iota
	// Random requests a token chosen uniformly ("new+random token").
	Random
)

// Options are the decision mechanisms of section 3 and the variant.
type Options struct {
	// Choice is the token-choice heuristic.
	Choice Choice
	// Nu is ν, the number of INFORM messages sent on an exit that keeps the
	// token (the paper's study uses 2). Each goes to a different node, so
	// at most n-1 are sent.
	Nu int
	// Variant is Fixed or Paper.
	Variant Variant
}

// Machine is node I's part of the algorithm.
type Machine struct {
	self    cs.ID
	members []cs.ID // the nodes sharing the tokens, in increasing order; shared, never written
	k       int32
	opts    Options

	// tokenID is token_id, 0 for NULL; holding is holding; waitingFor is
	// waiting_for_token, 0 for NULL.
	tokenID    int32
	holding    bool
	waitingFor int32
	// pointer[t] is pointer[t] (index 0 unused).
	pointer []cs.ID
	// nodeQueue is node-queue (the entries' tags unused); queue is the
	// token-queue of the token held (empty when no token is held).
	nodeQueue []Entry
	queue     []Entry
	// lastSeen is the last seen token; rng the state of the random choices.
	lastSeen int32
	rng      uint64
	// seen[t] is the highest Count of token t this node has received in a
	// TOKEN or in an INFORM it applied (Fixed only; index 0 unused); count
	// is the Count of the token held.
	seen  []int64
	count int64
}

// Validate checks p for the algorithm: 1 <= k <= n, l = 0, and the nodes
// InCS initially among the first holders 1..k.
func Validate(p cs.Params) error {
	if err := p.CheckKExclusion(Name, ""); err != nil {
		return err
	}
	if err := p.CheckInitial(0, p.K); err != nil {
		return err
	}
	for _, id := range p.Initial {
		if int(id) > p.K {
			return fmt.Errorf("initial: process %d cannot start InCS: only the token holders 1..k = %d can", id, p.K)
		}
	}
	return nil
}

// New returns the machines of processes 1..n, in order: K tokens among all
// n nodes, token t at node t.
func New(p cs.Params, o Options) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	if o.Nu < 0 {
		return nil, fmt.Errorf("nu = %d: need nu >= 0", o.Nu)
	}
	members := make([]cs.ID, p.N)
	for i := range members {
		members[i] = cs.ID(i + 1)
	}
	ms := make([]cs.Machine, p.N)
	for i, id := range members {
		ms[i] = NewGroupMachine(id, members, p.K, p.InitiallyInCS(id), o)
	}
	return ms, nil
}

// NewGroupMachine returns node self's machine in a group of nodes sharing
// k tokens (members in increasing order, containing self, k <= len(members)):
// token t starts at members[t-1], and INFORM messages go to members only.
// The partitioning scheme (package partition) runs one group per cluster;
// New runs one group of all n nodes. inCS puts a token holder in the CS.
func NewGroupMachine(self cs.ID, members []cs.ID, k int, inCS bool, o Options) *Machine {
	m := &Machine{
		self: self, members: members, k: int32(k), opts: o,
		pointer: make([]cs.ID, k+1),
		rng:     uint64(self),
	}
	pos := int32(slices.Index(members, self))
	for t := 1; t <= k; t++ {
		m.pointer[t] = members[t-1]
	}
	if pos < m.k {
		m.tokenID = pos + 1
		m.holding = inCS
	}
	if o.Variant == Fixed {
		// Every node knows where each token starts: its Count 1 there.
		m.seen = make([]int64, k+1)
		for t := 1; t <= k; t++ {
			m.seen[t] = 1
		}
		if m.tokenID != 0 {
			m.count = 1
		}
	}
	m.lastSeen = pos%m.k + 1
	return m
}

// Self is node I.
func (m *Machine) Self() cs.ID { return m.self }

// State is InCS while holding.
func (m *Machine) State() cs.State {
	if m.holding {
		return cs.InCS
	}
	return cs.OutCS
}

// Pending is cs.Entry while the node waits for a token.
func (m *Machine) Pending() cs.Op {
	if m.waitingFor != 0 {
		return cs.Entry
	}
	return cs.None
}

// Pointer is pointer[t], node I's parent in the t-th forest (itself at a
// root), for t in 1..K; 0 for another t.
func (m *Machine) Pointer(t int) cs.ID {
	if t < 1 || t > int(m.k) {
		return 0
	}
	return m.pointer[t]
}

// Entry is Entry_CS.
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	if m.tokenID != 0 {
		m.holding = true
		env.Changed(cs.InCS)
		return nil
	}
	t := m.choose()
	env.Send(m.pointer[t], Request{Y: m.self, T: t, Seen: m.seenOf(t)})
	m.waitingFor = t
	return nil
}

// choose is "Choose token t using some heuristics".
func (m *Machine) choose() int32 {
	if m.opts.Choice == Random {
		return int32(m.draw(uint64(m.k))) + 1
	}
	return m.lastSeen
}

// Exit is Exit_CS.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.holding = false
	env.Changed(cs.OutCS)
	t := m.tokenID
	if len(m.queue) > 0 {
		m.tokenID = 0
		m.pointer[t] = lastUnmodified(m.queue)
		q := m.queue
		m.queue = nil
		env.Send(q[0].ID, Token{T: t, Count: m.next(), Queue: q})
		return nil
	}
	m.inform(env, t)
	return nil
}

// lastUnmodified is the last node of q whose request-modifier tag is NULL,
// or the first node of q if there is none (section 2).
func lastUnmodified(q []Entry) cs.ID {
	for i := len(q) - 1; i >= 0; i-- {
		if q[i].Tag == 0 {
			return q[i].ID
		}
	}
	return q[0].ID
}

// inform sends INFORM(I, t) to ν distinct other members chosen at random
// (section 3: "the destination of INFORM messages are chosen randomly"),
// in the order drawn; to every other member, in id order, when ν is at
// least their number.
func (m *Machine) inform(env cs.Env, t int32) {
	others := make([]cs.ID, 0, len(m.members)-1)
	for _, id := range m.members {
		if id != m.self {
			others = append(others, id)
		}
	}
	if m.opts.Nu >= len(others) {
		for _, id := range others {
			env.Send(id, Inform{X: m.self, T: t, Count: m.count})
		}
		return
	}
	for i := range m.opts.Nu {
		j := i + int(m.draw(uint64(len(others)-i)))
		others[i], others[j] = others[j], others[i]
		env.Send(others[i], Inform{X: m.self, T: t, Count: m.count})
	}
}

// next is the Count of the token this node sends: one more than its own
// (0, not sent, in the published variant).
func (m *Machine) next() int64 {
	if m.opts.Variant == Paper {
		return 0
	}
	return m.count + 1
}

// draw returns a number in 0..n-1 from the machine's splitmix64 sequence.
func (m *Machine) draw(n uint64) uint64 {
	m.rng += 0x9e3779b97f4a7c15
	z := m.rng
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return z % n
}

// Receive handles REQUEST, TOKEN and INFORM from a member.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	if from == m.self || !slices.Contains(m.members, from) {
		return cs.Unexpected(m.self, from, msg)
	}
	switch msg := msg.(type) {
	case Request:
		if msg.T < 1 || msg.T > m.k || !slices.Contains(m.members, msg.Y) {
			return fmt.Errorf("forest: P%d got REQUEST(%d, %d) from P%d: no such node or token", m.self, msg.Y, msg.T, from)
		}
		m.handleRequest(env, msg.Y, msg.T, msg.Seen)
	case Token:
		return m.handleToken(env, from, msg)
	case Inform:
		if msg.T < 1 || msg.T > m.k || msg.X != from {
			return fmt.Errorf("forest: P%d got INFORM(%d, %d) from P%d: no such token, or not the sender's", m.self, msg.X, msg.T, from)
		}
		if m.opts.Variant == Fixed {
			// The correction: an INFORM about a reception of token t no
			// later than one this node knows of is stale: X no longer
			// holds t, and pointing to X could close a cycle of pointers
			// without the token (docs/design/forest-fix.md, "A stale INFORM").
			if msg.Count <= m.seen[msg.T] {
				return nil
			}
			m.seen[msg.T] = msg.Count
		}
		m.pointer[msg.T] = msg.X
		m.lastSeen = msg.T
	default:
		return cs.Unexpected(m.self, from, msg)
	}
	return nil
}

// seenOf is seen[t] in the corrected variant, 0 in the published one.
func (m *Machine) seenOf(t int32) int64 {
	if m.seen == nil {
		return 0
	}
	return m.seen[t]
}

// learn raises seen[t] to c (corrected variant).
func (m *Machine) learn(t int32, c int64) {
	if m.seen != nil {
		m.seen[t] = max(m.seen[t], c)
	}
}

// handleRequest is Handle_REQUEST(Y, t). In the corrected variant the
// request carries the highest Count of t known along its path (seen), and
// this node learns it and adds its own.
func (m *Machine) handleRequest(env cs.Env, y cs.ID, t int32, seen int64) {
	m.learn(t, seen)
	seen = m.seenOf(t)
	switch {
	case m.tokenID != 0: // case 1: node I has a token
		e := Entry{ID: y, Seen: seen}
		if m.tokenID != t {
			e.Tag = m.self
		}
		m.queue = append(m.queue, e)
		if !m.holding {
			u := m.tokenID
			q := m.queue
			m.queue = nil
			m.pointer[u] = y
			m.tokenID = 0
			env.Send(y, Token{T: u, Count: m.next(), Queue: q})
		}
	case m.waitingFor == t: // case 2
		m.nodeQueue = append(m.nodeQueue, Entry{ID: y, Seen: seen})
	default: // case 3
		env.Send(m.pointer[t], Request{Y: y, T: t, Seen: seen})
		m.pointer[t] = y
	}
}

// handleToken is Handle_TOKEN(t). A token that comes to a node not
// waiting, or whose queue does not start with the receiver, is a step the
// paper leaves undefined ("pointer[waiting_for_token]" with NULL); it is
// refused with an error.
func (m *Machine) handleToken(env cs.Env, from cs.ID, msg Token) error {
	t := msg.T
	if t < 1 || t > m.k || len(msg.Queue) == 0 || msg.Queue[0].ID != m.self {
		return fmt.Errorf("forest: P%d got TOKEN(%d) from P%d with queue %v: not a token, or not for this node", m.self, t, from, msg.Queue)
	}
	if m.waitingFor == 0 || m.tokenID != 0 {
		return fmt.Errorf("forest: P%d got TOKEN(%d) from P%d without waiting for a token: Handle_TOKEN is undefined here", m.self, t, from)
	}
	q := slices.Clone(msg.Queue)
	tag := cs.ID(0)
	if m.waitingFor != t {
		// Case 1: I had requested another token; its request was modified
		// by the tag's node, and so were the requests in its node-queue.
		tag = q[0].Tag
		m.pointer[m.waitingFor] = tag
	}
	// What the node's request learned of its token on the way.
	m.learn(m.waitingFor, q[0].Seen)
	for _, e := range m.nodeQueue {
		q = append(q, Entry{ID: e.ID, Tag: tag, Seen: e.Seen})
	}
	m.nodeQueue = nil
	m.queue = q[1:]
	m.waitingFor = 0
	m.tokenID = t
	m.pointer[t] = m.self
	m.holding = true
	m.lastSeen = t
	if m.opts.Variant == Fixed {
		m.count = msg.Count
		m.seen[t] = max(m.seen[t], msg.Count)
	}
	env.Changed(cs.InCS)
	return nil
}

// Clone returns a deep copy (cs.Machine).
func (m *Machine) Clone() cs.Machine {
	c := *m
	c.pointer = slices.Clone(m.pointer)
	c.nodeQueue = slices.Clone(m.nodeQueue)
	c.queue = slices.Clone(m.queue)
	c.seen = slices.Clone(m.seen)
	return &c
}

// AppendState appends the canonical encoding of the machine's state.
func (m *Machine) AppendState(b []byte) []byte {
	b = cs.AppendInt(b, int64(m.tokenID))
	b = cs.AppendBool(b, m.holding)
	b = cs.AppendInt(b, int64(m.waitingFor))
	b = cs.AppendIDs(b, m.pointer[1:])
	b = appendQueue(b, m.nodeQueue)
	b = appendQueue(b, m.queue)
	if m.opts.Choice == LastSeen {
		b = cs.AppendInt(b, int64(m.lastSeen))
	}
	b = binary.AppendUvarint(b, m.rng)
	for _, c := range m.seen {
		b = cs.AppendInt(b, c)
	}
	return cs.AppendInt(b, m.count)
}

// ReadState sets the machine to the state AppendState wrote
// (cs.Restorer), with the messages' ranges: tokens 1..k (0: none), nodes
// up to the highest member's id.
func (m *Machine) ReadState(r *cs.Reader) {
	n, k := int(m.members[len(m.members)-1]), int(m.k)
	token := func() int32 {
		t := r.Int()
		if r.Err() == nil && (t < 0 || t > int64(k)) {
			r.Fail("token id out of range")
		}
		return int32(t)
	}
	m.tokenID, m.holding, m.waitingFor = token(), r.Bool(), token()
	if c := r.Uint(); r.Err() == nil && c != uint64(k) {
		r.Fail("pointer does not have k entries")
	}
	for t := 1; t <= k && r.Err() == nil; t++ {
		m.pointer[t] = readID(r, 1, n)
	}
	m.nodeQueue = readQueue(r, n, m.opts.Variant)
	m.queue = readQueue(r, n, m.opts.Variant)
	if m.opts.Choice == LastSeen {
		m.lastSeen = token()
	}
	m.rng = r.Uint()
	for t := range m.seen {
		m.seen[t] = readCounter(r, m.opts.Variant)
	}
	m.count = readCounter(r, m.opts.Variant)
}

// String names the machine for reports.
func (m *Machine) String() string { return Name }
