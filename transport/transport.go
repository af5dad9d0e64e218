// Package transport is the network of critsec's networked runtime: it
// gives each ordered pair of nodes (i, j) a reliable FIFO channel of
// cs.Messages that survives the loss of connections, over TCP with mutual
// TLS 1.3 (docs/network.md).
//
// Channel i -> j is carried by a connection that node i dials to node j;
// j answers on the same connection with acknowledgements. Every message
// gets the next sequence number of its channel; i keeps it until j
// acknowledges it, and after a reconnect resends everything j has not
// acknowledged. j delivers sequence number s only after s-1, and drops
// what it has already delivered, so each message is delivered once and in
// order (the channel assumption of the papers, e.g. section 2 of the
// global (l,k)-CS paper). j acknowledges what the consumer has confirmed
// (Transport.Confirm), so a node that logs its inputs before confirming
// them loses nothing it acknowledged.
//
// Peers authenticate with certificates signed by the cluster's CA that
// name the node (NodeName); the first frame on a connection is a Hello
// carrying the cluster configuration's fingerprint, and a mismatch is
// refused on both sides naming the differing field. Frames have a length
// limit; a connection that brings an oversized, malformed or unknown
// frame or message is refused: logged, counted (Stats) and closed, and
// the node goes on serving its other links.
package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/critsec/critsec/cs"
)

// Field is one named part of a cluster configuration, reduced to a digest.
type Field struct {
	Name, Digest string
}

// Fingerprint identifies a cluster's configuration, field by field, so
// that a mismatch can name the field that differs.
type Fingerprint []Field

// Diff returns the name of the first field of f that differs from g's
// (missing on one side counts as differing), or "" when they agree.
func (f Fingerprint) Diff(g Fingerprint) string {
	for i := range max(len(f), len(g)) {
		switch {
		case i >= len(f):
			return g[i].Name
		case i >= len(g) || f[i] != g[i]:
			return f[i].Name
		}
	}
	return ""
}

// Config configures a Transport.
type Config struct {
	// Self is this node's id.
	Self cs.ID
	// Listener accepts the connections of the peers (already bound, so
	// that tests can listen on 127.0.0.1:0).
	Listener net.Listener
	// Peers are the other members' addresses by id.
	Peers map[cs.ID]string
	// Identity is this node's certificate and the cluster's CA.
	Identity Identity
	// Fingerprint is the cluster configuration's; peers must agree.
	Fingerprint Fingerprint
	// Decode reads the messages of the problem's algorithm
	// (alg.Problem.Decoder).
	Decode cs.Decoder
	// MaxFrame limits a frame's length; 0 means DefaultMaxFrame.
	MaxFrame int
	// MaxQueue limits the messages a channel holds unacknowledged; Send
	// fails beyond it. 0 means 1 << 16.
	MaxQueue int
	// MinBackoff and MaxBackoff bound the wait before a reconnection,
	// which doubles after each failure (with jitter); 0 means 20 ms and
	// 2 s.
	MinBackoff, MaxBackoff time.Duration
	// Heartbeat is the longest a connection stays silent; a connection
	// silent for three of them is closed. 0 means 1 s.
	Heartbeat time.Duration
	// DialTimeout bounds a dial with its TLS handshake and Welcome; 0
	// means 5 s. A node with a failure detector shortens it: a SYN lost
	// in a short cut is otherwise retried by the kernel only after a
	// second, and the link stays silent that long after the cut heals.
	DialTimeout time.Duration
	// Dial opens a connection; nil means a net.Dialer's DialContext on
	// "tcp" (tests wrap it to cut connections).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Logger receives the refusals and reconnections; nil means
	// slog.Default().
	Logger *slog.Logger
	// Restore, when not nil, is the state of the channels as the node's
	// log rebuilt it at a restart; nil starts every channel afresh.
	Restore *Channels
	// Refused, when not nil, is called when a peer refuses this node
	// because it declared this node crashed (see Refuse): this incarnation
	// of the node must stop.
	Refused func(peer cs.ID)
	// Votes, when not nil, returns the set this node puts in its pings
	// (its votes against peers, docs/fencing.md); a peer's latest is
	// Transport.Votes.
	Votes func() cs.Set
	// LogLost, when not nil, is called when a handshake with a peer shows
	// that this node's channels are behind the peer's memory of them: the
	// peer saw acknowledged, or confirmed, more than this node's log
	// holds (a torn tail after a power loss without fsync, or a deleted
	// log). The node must stop: resent or renumbered messages would be
	// lost or taken twice. The connection is refused or dropped.
	LogLost func(peer cs.ID, err error)
	// Rejoin, for a node whose log is new, adopts the peers' positions on
	// the channels they remember instead of calling LogLost: the next
	// message on each continues the peer's numbering. A node's operator
	// asks for it (critsec node --rejoin-with-empty-log).
	Rejoin bool
}

// RefusedCrashed is the reason a transport gives a peer it refuses after
// Refuse: the peer was declared crashed.
const RefusedCrashed = "declared crashed: this incarnation of the member may not rejoin"

// Channels is the state of a node's channels that its write-ahead log
// rebuilds after a restart (docs/network.md, "Durability"): the node
// replays its logged inputs through its deterministic machine, which
// sends again what it sent, in the same order, so with the same sequence
// numbers.
type Channels struct {
	// Out[j] is channel Self -> j (Self included): the messages after
	// sequence number Acked, which the peer may not have confirmed.
	Out map[cs.ID]Outgoing
	// In[j] is the highest sequence number of channel j -> Self that the
	// node logged, so delivered and confirmed (Self's channel is Out's).
	In map[cs.ID]uint64
}

// Outgoing is the restored state of one outgoing channel.
type Outgoing struct {
	// Acked is a sequence number the peer is known to have confirmed
	// (for Self's channel: delivered and logged); Queue holds the
	// messages Acked+1, Acked+2, ...
	Acked uint64
	Queue []cs.Message
}

// Delivery is a message delivered on channel From -> Self, with its
// sequence number on that channel (1, 2, ...).
type Delivery struct {
	From cs.ID
	Seq  uint64
	Msg  cs.Message
}

// Stats are a transport's counters since it started.
type Stats struct {
	// Sent counts the messages given to Send; Delivered those handed to
	// the consumer.
	Sent, Delivered int64
	// Retransmitted counts Data frames sent again after a reconnect;
	// Duplicates counts received frames dropped as already delivered.
	Retransmitted, Duplicates int64
	// Reconnects counts the connections dialed after the first on a
	// channel.
	Reconnects int64
	// RefusedConns counts the connections refused: failed TLS
	// handshakes (no certificate, or one the CA did not sign), wrong node
	// identities, bad Hellos and fingerprint mismatches.
	RefusedConns int64
	// RefusedFrames counts the frames refused after a Hello: oversized,
	// malformed, of unknown type, out of sequence, or carrying a message
	// the decoder refuses.
	RefusedFrames int64
	// Returned counts the connections of peers declared crashed
	// (Refuse), each refused with RefusedCrashed: a false suspicion, or
	// a restart of a crashed member.
	Returned int64
}

// Errors of Send.
var (
	// ErrClosed: the transport is closed.
	ErrClosed = errors.New("transport closed")
	// ErrQueueFull: the channel holds MaxQueue unacknowledged messages.
	ErrQueueFull = errors.New("channel queue full")
	// ErrLogLost: a peer remembers more of the channels than this node
	// (Config.LogLost).
	ErrLogLost = errors.New("log behind the peers")
)

// Transport is one node's end of the channels to and from every peer.
type Transport struct {
	cfg    Config
	log    *slog.Logger
	out    map[cs.ID]*link    // channels Self -> peer
	in     map[cs.ID]*inbound // channels peer -> Self
	self   *selfLink
	inbox  chan Delivery
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex // guards conns and preFrom
	conns map[net.Conn]struct{}
	pre   chan struct{} // a slot per connection not yet past its Hello
	// preFrom counts those connections by remote address (IP).
	preFrom map[string]int

	// welcomed counts the peers that have welcomed a connection;
	// allWelcomed is closed when it reaches their number (Welcomed).
	welcomed    atomic.Int64
	allWelcomed chan struct{}

	// epoch is when the transport started: the times below are
	// monotonic durations since it, so that a step of the wall clock
	// cannot make a peer look silent.
	epoch time.Time
	peer  map[cs.ID]*peerState

	sent, delivered, retransmitted, duplicates, reconnects, refusedConns, refusedFrames, returned atomic.Int64
}

// New validates cfg and starts the transport: it accepts on cfg.Listener
// and dials every peer. Close stops it.
func New(cfg Config) (*Transport, error) {
	switch {
	case cfg.Self < 1:
		return nil, fmt.Errorf("transport: self = %d: node ids start at 1", cfg.Self)
	case cfg.Listener == nil:
		return nil, errors.New("transport: no listener")
	case cfg.Decode == nil:
		return nil, errors.New("transport: no decoder")
	case cfg.Identity.CA == nil || len(cfg.Identity.Cert.Certificate) == 0:
		return nil, errors.New("transport: no TLS identity (CA and certificate)")
	}
	if _, ok := cfg.Peers[cfg.Self]; ok {
		return nil, fmt.Errorf("transport: node %d is listed among its own peers", cfg.Self)
	}
	if cfg.MaxFrame == 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.MaxQueue == 0 {
		cfg.MaxQueue = 1 << 16
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 20 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		return nil, fmt.Errorf("transport: MaxBackoff (%s) is less than MinBackoff (%s)", cfg.MaxBackoff, cfg.MinBackoff)
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = time.Second
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	t := &Transport{
		cfg:   cfg,
		log:   cfg.Logger,
		out:   map[cs.ID]*link{},
		in:    map[cs.ID]*inbound{},
		inbox: make(chan Delivery, 256),
		conns: map[net.Conn]struct{}{}, preFrom: map[string]int{},
		pre:   make(chan struct{}, maxUnauthenticated),
		epoch: time.Now(), peer: map[cs.ID]*peerState{},
		allWelcomed: make(chan struct{}),
	}
	if len(cfg.Peers) == 0 {
		close(t.allWelcomed)
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	t.log = t.log.With("node", int(cfg.Self))
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.self = &selfLink{wake: make(chan struct{}, 1)}
	for _, id := range slices.Sorted(maps.Keys(cfg.Peers)) {
		t.out[id] = &link{t: t, to: id, addr: cfg.Peers[id], wake: make(chan struct{}, 1)}
		t.in[id] = &inbound{wake: make(chan struct{}, 1)}
		t.peer[id] = &peerState{}
	}
	if err := t.restore(cfg.Restore); err != nil {
		return nil, err
	}
	t.wg.Add(2 + len(t.out))
	go t.accept()
	go t.self.run(t)
	for _, l := range t.out {
		go l.run()
	}
	return t, nil
}

// restore sets the channels' state from r.
func (t *Transport) restore(r *Channels) error {
	if r == nil {
		return nil
	}
	for id, o := range r.Out {
		switch l := t.out[id]; {
		case id == t.cfg.Self:
			t.self.queue = slices.Clone(o.Queue)
			t.self.delivered = o.Acked
			t.self.seq = o.Acked + uint64(len(o.Queue))
		case l == nil:
			return fmt.Errorf("transport: restored channel to P%d, which is not a peer", id)
		default:
			l.queue = slices.Clone(o.Queue)
			l.acked = o.Acked
			l.highest = o.Acked + uint64(len(o.Queue))
		}
	}
	for id, seq := range r.In {
		in := t.in[id]
		if in == nil {
			return fmt.Errorf("transport: restored channel from P%d, which is not a peer", id)
		}
		in.delivered, in.confirmed = seq, seq
	}
	return nil
}

// Acked returns the highest sequence number of channel Self -> to that
// the peer has acknowledged (confirmed in its own log).
func (t *Transport) Acked(to cs.ID) uint64 {
	l := t.out[to]
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked
}

// Unacked returns how many messages this node sent that their receivers
// have not yet acknowledged (confirmed in their logs), over every channel.
func (t *Transport) Unacked() int {
	n := 0
	for _, l := range t.out {
		if l == nil {
			continue
		}
		l.mu.Lock()
		n += len(l.queue)
		l.mu.Unlock()
	}
	return n
}

// peerState is what the transport knows of one peer's liveness.
type peerState struct {
	// mu orders a ping's hearing and echo against the refusal of the
	// peer (RefuseIf), so that no echo leaves for a ping heard after the
	// peer was found silent.
	mu      sync.Mutex
	heard   atomic.Int64  // when a frame last came from it (since epoch, ns; 0: never)
	refused atomic.Bool   // set by Refuse
	echo    atomic.Uint64 // the stamp of its latest ping, for the acker to echo (0: none)
	echoed  atomic.Int64  // the stamp of this node's latest ping that it echoed (since epoch, ns; 0: none)
	muted   atomic.Bool   // set by MuteIf: its pings are no longer echoed
	votes   atomic.Value  // the cs.Set in its latest ping
}

// since returns the time at d after the transport's epoch, or the zero
// time for 0.
func (t *Transport) since(d int64) time.Time {
	if d == 0 {
		return time.Time{}
	}
	return t.epoch.Add(time.Duration(d))
}

// stamp is now, as a duration since the epoch (at least 1).
func (t *Transport) stamp() int64 { return max(int64(time.Since(t.epoch)), 1) }

// Confirmed returns the highest sequence number of channel from -> Self
// that the consumer has confirmed (or that Restore or Rejoin set).
func (t *Transport) Confirmed(from cs.ID) uint64 {
	in := t.in[from]
	if in == nil {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.confirmed
}

// Welcomed is closed once every peer has welcomed a connection of this
// node, so the handshakes have compared this node's channels with every
// peer's memory of them, both ways (a node on a new log waits for it).
func (t *Transport) Welcomed() <-chan struct{} { return t.allWelcomed }

// LastHeard returns when a frame last came from peer j, on either of its
// two connections (data, pings, acknowledgements: a live peer sends one
// per Heartbeat at least), or the zero time if never since the transport
// started. The time carries a monotonic reading.
func (t *Transport) LastHeard(j cs.ID) time.Time {
	p := t.peer[j]
	if p == nil {
		return time.Time{}
	}
	return t.since(p.heard.Load())
}

// Echoed returns when this node sent the latest of its pings that peer j
// echoed (in an acknowledgement on channel Self -> j), or the zero time
// if none since the transport started. Peer j heard from this node at
// that time or later, and a peer that declares this node crashed after a
// silence of T (RefuseIf) does so at least T after it: the lease of
// docs/fencing.md.
func (t *Transport) Echoed(j cs.ID) time.Time {
	p := t.peer[j]
	if p == nil {
		return time.Time{}
	}
	return t.since(p.echoed.Load())
}

func (t *Transport) hear(j cs.ID) {
	if p := t.peer[j]; p != nil {
		p.heard.Store(t.stamp())
	}
}

// hearPing records a ping from peer j with its stamp, to be echoed
// unless j is muted, and its votes; it reports false if j is refused
// (nothing is recorded then).
func (t *Transport) hearPing(j cs.ID, stamp uint64, votes cs.Set) bool {
	p := t.peer[j]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused.Load() {
		return false
	}
	p.heard.Store(t.stamp())
	if !p.muted.Load() {
		p.echo.Store(stamp)
	}
	p.votes.Store(votes)
	return true
}

// Votes returns the set in peer j's latest ping (Config.Votes), empty if
// none.
func (t *Transport) Votes(j cs.ID) cs.Set {
	if p := t.peer[j]; p != nil {
		if v, ok := p.votes.Load().(cs.Set); ok {
			return v
		}
	}
	return cs.Set{}
}

// MuteIf stops echoing peer j's pings, for good, if silent(LastHeard(j))
// holds, and reports whether it did (or had already): the test and the
// muting are one step against j's pings, as in RefuseIf. Its connections
// and messages go on; only its lease no longer counts on this node.
func (t *Transport) MuteIf(j cs.ID, silent func(lastHeard time.Time) bool) bool {
	p := t.peer[j]
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.muted.Load() {
		return true
	}
	if !silent(t.since(p.heard.Load())) {
		return false
	}
	p.muted.Store(true)
	p.echo.Store(0)
	return true
}

// Mute stops echoing peer j's pings, for good (a restart's MuteIf).
func (t *Transport) Mute(j cs.ID) { t.MuteIf(j, func(time.Time) bool { return true }) }

// RefuseIf refuses peer j (Refuse) if silent(LastHeard(j)) holds, and
// reports whether it did. The test and the refusal are one step against
// the pings from j: once it has decided, no echo leaves for a ping heard
// after the LastHeard it tested.
func (t *Transport) RefuseIf(j cs.ID, silent func(lastHeard time.Time) bool) bool {
	p := t.peer[j]
	if p == nil {
		return false
	}
	p.mu.Lock()
	if p.refused.Load() || !silent(t.since(p.heard.Load())) {
		p.mu.Unlock()
		return false
	}
	p.refused.Store(true)
	p.mu.Unlock()
	t.cutOff(j)
	return true
}

// Refuse cuts peer j off for good: the connections to and from it are
// closed, its connections are refused with RefusedCrashed, and the link
// to it keeps dialing it only to tell it so (so that, if it is alive after
// all, it learns that it was declared crashed and stops); messages sent
// to it are dropped. A node calls it when its failure detector declares
// j crashed, or learns that another member did.
func (t *Transport) Refuse(j cs.ID) {
	p := t.peer[j]
	if p == nil {
		return
	}
	p.mu.Lock()
	was := p.refused.Swap(true)
	p.mu.Unlock()
	if !was {
		t.cutOff(j)
	}
}

// cutOff closes the connections of peer j, just refused.
func (t *Transport) cutOff(j cs.ID) {
	t.log.Warn("peer declared crashed: refusing it from now on", "peer", int(j))
	in := t.in[j]
	in.mu.Lock()
	if in.current != nil {
		in.current.Close()
	}
	in.mu.Unlock()
	poke(t.out[j].wake) // its session notices and ends
}

func (t *Transport) isRefused(j cs.ID) bool {
	p := t.peer[j]
	return p != nil && p.refused.Load()
}

// Inbox is the channel of deliveries, in order per sender. The consumer
// confirms each (Confirm) once it has made it durable.
func (t *Transport) Inbox() <-chan Delivery { return t.inbox }

// Send queues m on the channel to node to (Self included: a node's
// messages to itself are delivered through Inbox too, in order) and
// returns its sequence number. It does not block.
func (t *Transport) Send(to cs.ID, m cs.Message) (uint64, error) {
	if t.ctx.Err() != nil {
		return 0, ErrClosed
	}
	if to == t.cfg.Self {
		t.sent.Add(1)
		return t.self.send(m), nil
	}
	l := t.out[to]
	if l == nil {
		return 0, fmt.Errorf("transport: send to P%d, which is not a member", to)
	}
	if t.isRefused(to) {
		return 0, nil // declared crashed: nothing will reach it
	}
	frameBytes := appendData(nil, 0, m) // checked against the limit with a zero seq
	if len(frameBytes)-4+binaryMaxVarint > t.cfg.MaxFrame {
		return 0, fmt.Errorf("transport: %s to P%d is %d bytes, over the frame limit %d", m.Kind(), to, len(frameBytes), t.cfg.MaxFrame)
	}
	seq, err := l.push(m)
	if err == nil {
		t.sent.Add(1)
	}
	return seq, err
}

// binaryMaxVarint is the longest varint of a sequence number.
const binaryMaxVarint = 10

// Confirm tells the transport that the consumer has made the deliveries
// from node from up to seq durable: they may be acknowledged, and the
// sender may forget them.
func (t *Transport) Confirm(from cs.ID, seq uint64) {
	in := t.in[from]
	if in == nil {
		return // Self's channel needs no acknowledgement
	}
	in.mu.Lock()
	if seq > in.confirmed && seq <= in.delivered {
		in.confirmed = seq
	}
	in.mu.Unlock()
	poke(in.wake)
}

// Stats returns the counters.
func (t *Transport) Stats() Stats {
	return Stats{
		Sent: t.sent.Load(), Delivered: t.delivered.Load(),
		Retransmitted: t.retransmitted.Load(), Duplicates: t.duplicates.Load(),
		Reconnects: t.reconnects.Load(), RefusedConns: t.refusedConns.Load(), RefusedFrames: t.refusedFrames.Load(),
		Returned: t.returned.Load(),
	}
}

// Addr is the address the transport listens on.
func (t *Transport) Addr() net.Addr { return t.cfg.Listener.Addr() }

// Close stops the transport: the listener, every connection and every
// goroutine. Messages not acknowledged are dropped.
func (t *Transport) Close() error {
	t.cancel()
	err := t.cfg.Listener.Close()
	t.mu.Lock()
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return err
}

// track registers c to be closed by Close, or closes it at once if the
// transport is closing; it reports whether c may be used.
func (t *Transport) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx.Err() != nil {
		c.Close()
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *Transport) untrack(c net.Conn) {
	c.Close()
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
}

// deliver hands d to the consumer, unless the transport closes first.
func (t *Transport) deliver(d Delivery) bool {
	t.delivered.Add(1) // before the handover, so that a consumer that has it sees it counted
	select {
	case t.inbox <- d:
		return true
	case <-t.ctx.Done():
		t.delivered.Add(-1)
		return false
	}
}

// poke wakes the goroutine waiting on w, if any, without blocking.
func poke(w chan struct{}) {
	select {
	case w <- struct{}{}:
	default:
	}
}

// link is channel Self -> to, seen from the sender.
type link struct {
	t    *Transport
	to   cs.ID
	addr string
	wake chan struct{} // new messages or acknowledgements

	welcomed bool // a connection was welcomed once (session's goroutine)

	mu      sync.Mutex
	queue   []cs.Message // unacknowledged, sequence numbers acked+1...
	acked   uint64       // highest acknowledged sequence number
	highest uint64       // highest sequence number ever written
}

// push appends m to the queue and returns its sequence number.
func (l *link) push(m cs.Message) (uint64, error) {
	l.mu.Lock()
	if len(l.queue) >= l.t.cfg.MaxQueue {
		l.mu.Unlock()
		return 0, fmt.Errorf("%w: %d messages to P%d unacknowledged", ErrQueueFull, len(l.queue), l.to)
	}
	l.queue = append(l.queue, m)
	seq := l.acked + uint64(len(l.queue))
	l.mu.Unlock()
	poke(l.wake)
	return seq, nil
}

// ack drops the messages up to seq.
func (l *link) ack(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq <= l.acked {
		return nil
	}
	if seq > l.highest {
		return fmt.Errorf("%w: acknowledgement of %d, but only %d sent", errFrame, seq, l.highest)
	}
	n := int(seq - l.acked)
	clear(l.queue[:n])
	l.queue = l.queue[n:]
	l.acked = seq
	return nil
}

// run keeps a connection to the peer open, reconnecting with exponential
// backoff, until the transport closes.
func (l *link) run() {
	defer l.t.wg.Done()
	backoff := l.t.cfg.MinBackoff
	for first := true; ; first = false {
		if !first {
			l.t.reconnects.Add(1)
		}
		established, err := l.session()
		if l.t.ctx.Err() != nil {
			return
		}
		if established && !l.t.isRefused(l.to) {
			backoff = l.t.cfg.MinBackoff
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		l.t.log.Info("connection lost, reconnecting", "peer", int(l.to), "addr", l.addr, "in", wait, "err", err)
		select {
		case <-time.After(wait):
		case <-l.t.ctx.Done():
			return
		}
		backoff = min(2*backoff, l.t.cfg.MaxBackoff)
	}
}

// session dials the peer, says Hello and sends the queue until the
// connection fails; established reports whether the peer welcomed it.
func (l *link) session() (established bool, err error) {
	t := l.t
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.DialTimeout)
	raw, err := t.cfg.Dial(ctx, l.addr)
	cancel()
	if err != nil {
		return false, err
	}
	if !t.track(raw) {
		return false, ErrClosed
	}
	defer t.untrack(raw)
	conn := tls.Client(raw, t.cfg.Identity.clientConfig(l.to))
	raw.SetDeadline(time.Now().Add(t.cfg.DialTimeout))
	if err := conn.HandshakeContext(t.ctx); err != nil {
		return false, fmt.Errorf("TLS handshake: %w", err)
	}
	w := bufio.NewWriter(conn)
	r := bufio.NewReader(conn)
	l.mu.Lock()
	acked := l.acked
	l.mu.Unlock()
	w.Write(appendHello(nil, hello{from: t.cfg.Self, to: l.to, fingerprint: t.cfg.Fingerprint, acked: acked}))
	if err := w.Flush(); err != nil {
		return false, err
	}
	f, err := readFrame(r, t.cfg.MaxFrame)
	if err != nil {
		return false, err
	}
	switch f.typ {
	case frameRefuse:
		t.refusedConns.Add(1)
		t.log.Error("peer refused the connection", "peer", int(l.to), "reason", string(f.body))
		if string(f.body) == RefusedCrashed && t.cfg.Refused != nil {
			t.cfg.Refused(l.to)
		}
		return false, errors.New("refused: " + string(f.body))
	case frameWelcome:
	default:
		return false, fmt.Errorf("%w: frame type %d instead of a welcome", errFrame, f.typ)
	}
	if t.isRefused(l.to) {
		// Declared crashed here: tell it, in case it is alive after all
		// and has not learnt it from a refused connection of its own.
		conn.Write(appendFrame(nil, frameRefuse, []byte(RefusedCrashed)))
		return false, errors.New("peer declared crashed: told it so")
	}
	t.hear(l.to)
	wel, err := parseWelcome(f.body)
	if err == nil {
		err = l.checkWelcome(wel)
	}
	if err == nil {
		err = l.ack(wel.confirmed)
	}
	if err != nil {
		t.log.Error("bad welcome", "peer", int(l.to), "err", err)
		return false, err
	}
	confirmed := wel.confirmed
	raw.SetDeadline(time.Time{})
	if !l.welcomed {
		l.welcomed = true
		if t.welcomed.Add(1) == int64(len(t.out)) {
			close(t.allWelcomed)
		}
	}

	// The reader takes acknowledgements; it ends the session on error.
	done := make(chan error, 1)
	go func() {
		for {
			raw.SetReadDeadline(time.Now().Add(3 * t.cfg.Heartbeat))
			f, err := readFrame(r, t.cfg.MaxFrame)
			if err == nil && f.typ != frameAck {
				err = fmt.Errorf("%w: frame type %d from the receiver", errFrame, f.typ)
			}
			var seq, echo uint64
			if err == nil {
				t.hear(l.to)
				seq, echo, err = parseAck(f.body)
			}
			if err == nil {
				err = l.ack(seq)
			}
			if err == nil && echo > 0 {
				if p := t.peer[l.to]; int64(echo) > p.echoed.Load() && int64(echo) <= t.stamp() {
					p.echoed.Store(int64(echo))
				}
			}
			if err != nil {
				if errors.Is(err, errFrame) {
					t.refusedFrames.Add(1)
					t.log.Error("refused a frame", "peer", int(l.to), "err", err)
				}
				done <- err
				raw.Close()
				return
			}
		}
	}()
	defer func() { raw.Close(); <-done }()

	next := confirmed + 1 // the next sequence number to write
	// A ping every half heartbeat, whether or not data flows: its stamp,
	// echoed by the peer, renews this node's lease (Echoed).
	tick := time.NewTicker(t.cfg.Heartbeat / 2)
	defer tick.Stop()
	var buf []byte
	for {
		l.mu.Lock()
		next = max(next, l.acked+1)
		buf = buf[:0]
		for seq := next; seq <= l.acked+uint64(len(l.queue)); seq++ {
			buf = appendData(buf, seq, l.queue[seq-l.acked-1])
			if seq <= l.highest {
				t.retransmitted.Add(1)
			}
			next = seq + 1
		}
		l.highest = max(l.highest, next-1)
		l.mu.Unlock()
		if len(buf) > 0 {
			raw.SetWriteDeadline(time.Now().Add(3 * t.cfg.Heartbeat))
			if _, err := conn.Write(buf); err != nil {
				return true, err
			}
		}
		if t.isRefused(l.to) {
			return true, errors.New("peer declared crashed")
		}
		select {
		case <-l.wake:
		case <-tick.C:
			raw.SetWriteDeadline(time.Now().Add(3 * t.cfg.Heartbeat))
			var votes cs.Set
			if t.cfg.Votes != nil {
				votes = t.cfg.Votes()
			}
			if _, err := conn.Write(appendPing(nil, uint64(t.stamp()), votes)); err != nil {
				return true, err
			}
		case err := <-done:
			done <- err
			return true, err
		case <-t.ctx.Done():
			return true, ErrClosed
		}
	}
}

// checkWelcome compares the peer's memory of the two channels between
// this node and it (its Welcome) with this node's: a peer that confirms
// less than it acknowledged lost its log's tail (an error naming it, and
// the session is not counted as established, so redials back off); one
// that confirms more than this node sent, or saw acknowledged more than
// this node confirmed, remembers what this node's log lost (LogLost, or
// with Rejoin on a new log, the peer's numbering is adopted).
func (l *link) checkWelcome(w welcome) error {
	t := l.t
	l.mu.Lock()
	acked, sent := l.acked, l.acked+uint64(len(l.queue))
	if w.confirmed < acked {
		l.mu.Unlock()
		return fmt.Errorf("P%d's log lost messages it acknowledged: it confirms %d on channel %d -> %d, after acknowledging %d; "+
			"it must be restarted on its intact log, or rejoin (docs/network.md, \"A lost log\")", l.to, w.confirmed, t.cfg.Self, l.to, acked)
	}
	lostOut := w.confirmed > sent
	if lostOut && t.cfg.Rejoin && sent == 0 {
		l.acked, l.highest, lostOut = w.confirmed, w.confirmed, false
		t.log.Warn("rejoining: channel continues the peer's numbering", "peer", int(l.to), "to", int(l.to), "after", w.confirmed)
	}
	l.mu.Unlock()
	if lostOut {
		return t.logLost(l.to, fmt.Errorf("P%d confirmed %d messages on channel %d -> %d, but this node's log sent only %d",
			l.to, w.confirmed, t.cfg.Self, l.to, sent))
	}
	return t.checkInbound(l.to, w.acked)
}

// checkInbound compares acked, what peer saw acknowledged on channel
// peer -> Self, with what this node confirmed: more means this node's
// log lost deliveries it acknowledged (LogLost, or with Rejoin on a new
// channel, the peer's numbering is adopted).
func (t *Transport) checkInbound(peer cs.ID, acked uint64) error {
	in := t.in[peer]
	in.mu.Lock()
	confirmed := in.confirmed
	if acked > confirmed && t.cfg.Rejoin && in.delivered == 0 {
		in.delivered, in.confirmed, confirmed = acked, acked, acked
		t.log.Warn("rejoining: channel continues the peer's numbering", "peer", int(peer), "from", int(peer), "after", acked)
	}
	in.mu.Unlock()
	if acked > confirmed {
		return t.logLost(peer, fmt.Errorf("P%d saw %d messages acknowledged on channel %d -> %d, but this node's log holds only %d",
			peer, acked, peer, t.cfg.Self, confirmed))
	}
	return nil
}

// logLost reports that this node's log lost records peer remembers
// (Config.LogLost) and returns the error, which says how to recover.
func (t *Transport) logLost(peer cs.ID, err error) error {
	err = fmt.Errorf("%w: %w: this member's log lost records (a torn tail after a power loss with fsync off, or a deleted log); "+
		"restore the log, or start the member on an empty log with --rejoin-with-empty-log (docs/network.md, \"A lost log\")", ErrLogLost, err)
	t.log.Error("log behind a peer's memory of it", "peer", int(peer), "err", err)
	if t.cfg.LogLost != nil {
		t.cfg.LogLost(peer, err)
	}
	return err
}

// inbound is channel peer -> Self, seen from the receiver.
type inbound struct {
	wake chan struct{} // confirmations

	// session serialises the connections from the peer: a new one closes
	// the old one and waits for it to end, so deliveries never race.
	session sync.Mutex
	current net.Conn

	mu        sync.Mutex
	delivered uint64 // highest sequence number handed to the consumer
	confirmed uint64 // highest sequence number the consumer confirmed
}

// accept serves each incoming connection on its own goroutine.
func (t *Transport) accept() {
	defer t.wg.Done()
	for {
		c, err := t.cfg.Listener.Accept()
		if err != nil {
			if t.ctx.Err() == nil {
				t.log.Error("accept failed; no longer listening", "err", err)
			}
			return
		}
		if !t.track(c) {
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer t.untrack(c)
			t.serve(c)
		}()
	}
}

// maxUnauthenticated bounds the connections in their TLS handshake or
// before their Hello, each for at most handshakeTimeout, so that
// strangers cannot hold more than that many goroutines and buffers; more
// are refused at once. maxUnauthenticatedFrom bounds those from one
// remote address (IP), so that one stranger holding idle connections
// cannot take every slot and starve the members' handshakes.
const (
	maxUnauthenticated     = 64
	maxUnauthenticatedFrom = 16
	handshakeTimeout       = 5 * time.Second
)

// remoteIP is the address of c's remote end without its port.
func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

// admit takes a slot for a connection not yet past its Hello, from the
// global ones and from those of its remote address ip; it returns why
// not when none is free.
func (t *Transport) admit(ip string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.preFrom[ip] >= maxUnauthenticatedFrom {
		return fmt.Sprintf("%d connections from %s already wait for their handshake", maxUnauthenticatedFrom, ip)
	}
	select {
	case t.pre <- struct{}{}:
	default:
		return fmt.Sprintf("%d connections already wait for their handshake", maxUnauthenticated)
	}
	t.preFrom[ip]++
	return ""
}

// unadmit frees the slots admit took.
func (t *Transport) unadmit(ip string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	<-t.pre
	if t.preFrom[ip]--; t.preFrom[ip] == 0 {
		delete(t.preFrom, ip)
	}
}

// lost reports whether err is the connection's loss (closed or reset by
// either side) rather than a refusal.
func lost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrDeadlineExceeded)
}

// refuse logs and counts a refused connection.
func (t *Transport) refuse(c net.Conn, why string, args ...any) {
	t.refusedConns.Add(1)
	t.log.Warn("refused a connection: "+why, append([]any{"remote", c.RemoteAddr().String()}, args...)...)
}

// serve authenticates one incoming connection, checks its Hello and
// receives its channel's messages until it fails.
func (t *Transport) serve(raw net.Conn) {
	ip := remoteIP(raw)
	if why := t.admit(ip); why != "" {
		t.refuse(raw, why)
		return
	}
	released := false
	release := func() {
		if !released {
			released = true
			t.unadmit(ip)
		}
	}
	defer release()
	raw.SetDeadline(time.Now().Add(handshakeTimeout))
	conn := tls.Server(raw, t.cfg.Identity.serverConfig())
	if err := conn.HandshakeContext(t.ctx); err != nil {
		if lost(err) {
			t.log.Info("connection lost during the TLS handshake", "remote", raw.RemoteAddr().String(), "err", err)
			return
		}
		t.refuse(raw, "TLS handshake failed", "err", err)
		return
	}
	peer, err := nodeID(conn.ConnectionState().PeerCertificates[0])
	if err != nil {
		t.refuse(raw, "no node identity", "err", err)
		return
	}
	in := t.in[peer]
	if in == nil {
		t.refuse(raw, "certificate of a node that is not a member", "peer", int(peer))
		return
	}
	r := bufio.NewReader(conn)
	f, err := readFrame(r, t.cfg.MaxFrame)
	var h hello
	if err == nil && f.typ != frameHello {
		err = fmt.Errorf("%w: frame type %d instead of a hello", errFrame, f.typ)
	}
	if err == nil {
		h, err = parseHello(f.body)
	}
	if err != nil && lost(err) {
		t.log.Info("connection lost before its hello", "peer", int(peer), "err", err)
		return
	}
	if err != nil {
		t.refuse(raw, "bad hello", "peer", int(peer), "err", err)
		return
	}
	if h.from != peer || h.to != t.cfg.Self {
		t.refuse(raw, "wrong node identity", "peer", int(peer), "claims", int(h.from), "to", int(h.to))
		return
	}
	if field := t.cfg.Fingerprint.Diff(h.fingerprint); field != "" {
		t.refuse(raw, "configuration differs", "peer", int(peer), "field", field)
		conn.Write(appendFrame(nil, frameRefuse, []byte("configuration field "+field+" differs")))
		return
	}
	if t.isRefused(peer) {
		t.returned.Add(1)
		t.refuse(raw, "peer declared crashed", "peer", int(peer))
		conn.Write(appendFrame(nil, frameRefuse, []byte(RefusedCrashed)))
		return
	}
	if err := t.checkInbound(peer, h.acked); err != nil {
		t.refuse(raw, "this node's log is behind the peer's", "peer", int(peer))
		conn.Write(appendFrame(nil, frameRefuse, fmt.Appendf(nil, "P%d's log lost messages it acknowledged to you (channel %d -> %d: you saw %d acknowledged); it stops",
			t.cfg.Self, peer, t.cfg.Self, h.acked)))
		return
	}

	release()

	// One session per peer at a time.
	in.mu.Lock()
	old := in.current
	in.current = raw
	in.mu.Unlock()
	if old != nil {
		old.Close()
	}
	in.session.Lock()
	defer in.session.Unlock()
	in.mu.Lock()
	confirmed := in.confirmed
	in.mu.Unlock()
	back := t.out[peer]
	back.mu.Lock()
	backAcked := back.acked
	back.mu.Unlock()
	if _, err := conn.Write(appendWelcome(nil, welcome{confirmed: confirmed, acked: backAcked})); err != nil {
		return
	}
	raw.SetDeadline(time.Time{})

	// The acker writes acknowledgements as the consumer confirms, and one
	// per heartbeat at least.
	stop := make(chan struct{})
	acked := make(chan struct{})
	go func() {
		defer close(acked)
		tick := time.NewTicker(t.cfg.Heartbeat)
		defer tick.Stop()
		last, echoed := confirmed, uint64(0)
		p := t.peer[peer]
		for {
			beat := false
			select {
			case <-in.wake:
			case <-tick.C:
				beat = true // write even if nothing changed
			case <-stop:
				return
			}
			in.mu.Lock()
			c := in.confirmed
			in.mu.Unlock()
			echo := p.echo.Load()
			if c == last && echo == echoed && !beat {
				continue
			}
			last, echoed = c, echo
			if t.isRefused(peer) {
				raw.Close()
				return
			}
			raw.SetWriteDeadline(time.Now().Add(3 * t.cfg.Heartbeat))
			if _, err := conn.Write(appendAck(nil, c, echo)); err != nil {
				raw.Close()
				return
			}
		}
	}()
	defer func() { close(stop); <-acked }()

	for {
		raw.SetReadDeadline(time.Now().Add(3 * t.cfg.Heartbeat))
		f, err := readFrame(r, t.cfg.MaxFrame)
		if err != nil {
			if errors.Is(err, errFrame) {
				t.refuseFrame(peer, err)
			}
			return
		}
		if f.typ == framePing {
			stamp, votes, err := parsePing(f.body, len(t.peer)+1)
			if err != nil {
				t.refuseFrame(peer, err)
				return
			}
			if !t.hearPing(peer, stamp, votes) {
				return
			}
			poke(in.wake) // the acker echoes it
			continue
		}
		if t.isRefused(peer) {
			return
		}
		t.hear(peer)
		switch f.typ {
		case frameRefuse:
			t.refusedConns.Add(1)
			t.log.Error("peer says it declared this node crashed", "peer", int(peer), "reason", string(f.body))
			if string(f.body) == RefusedCrashed && t.cfg.Refused != nil {
				t.cfg.Refused(peer)
			}
			return
		case frameData:
			if err := t.receive(in, peer, f.body); err != nil {
				if !errors.Is(err, ErrClosed) {
					t.refuseFrame(peer, err)
				}
				return
			}
		default:
			t.refuseFrame(peer, fmt.Errorf("%w: frame type %d from a sender", errFrame, f.typ))
			return
		}
	}
}

// refuseFrame logs and counts a refused frame; the caller closes the
// connection.
func (t *Transport) refuseFrame(peer cs.ID, err error) {
	t.refusedFrames.Add(1)
	t.log.Warn("refused a frame; closing the connection", "peer", int(peer), "err", err)
}

// receive checks one Data frame's sequence number, decodes its message
// and delivers it, or drops it as a duplicate.
func (t *Transport) receive(in *inbound, peer cs.ID, body []byte) error {
	seq, kind, enc, err := parseData(body)
	if err != nil {
		return err
	}
	in.mu.Lock()
	delivered := in.delivered
	in.mu.Unlock()
	switch {
	case seq <= delivered:
		t.duplicates.Add(1)
		return nil
	case seq != delivered+1:
		return fmt.Errorf("%w: sequence number %d after %d", errFrame, seq, delivered)
	}
	m, err := t.cfg.Decode(kind, enc)
	if err != nil {
		return err
	}
	// Counted delivered before the handover: the consumer may confirm it
	// before this goroutine runs again, and Confirm takes only what was
	// delivered (a confirmation that came first was dropped, and the
	// channel's last message stayed unacknowledged for good).
	in.mu.Lock()
	in.delivered = seq
	in.mu.Unlock()
	if !t.deliver(Delivery{From: peer, Seq: seq, Msg: m}) {
		return ErrClosed
	}
	return nil
}

// selfLink is channel Self -> Self: messages go straight to the inbox, in
// order, from one goroutine, so that Send never blocks.
type selfLink struct {
	wake      chan struct{}
	mu        sync.Mutex
	queue     []cs.Message
	seq       uint64 // sequence number of the last message queued
	delivered uint64 // sequence number of the last message delivered (the run goroutine's)
}

func (s *selfLink) send(m cs.Message) uint64 {
	s.mu.Lock()
	s.queue = append(s.queue, m)
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	poke(s.wake)
	return seq
}

func (s *selfLink) run(t *Transport) {
	defer t.wg.Done()
	delivered := s.delivered
	for {
		s.mu.Lock()
		q := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, m := range q {
			delivered++
			if !t.deliver(Delivery{From: t.cfg.Self, Seq: delivered, Msg: m}) {
				return
			}
		}
		select {
		case <-s.wake:
		case <-t.ctx.Done():
			return
		}
	}
}
