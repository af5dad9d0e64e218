// Package node is critsec's networked runtime around one machine: it owns
// process P_id's cs.Machine and the transport to the other members, and
// drives the machine from one goroutine, like etcd-raft's node around its
// pure state machine (docs/network.md). The machine's inputs are the
// application's Entry and Exit calls and the messages the transport
// delivers; each is given with cs.Effects, and the effects are then
// applied in order: sends go to the transport, a state change completes
// the pending call.
//
// Every input the machine takes is first written to the node's
// write-ahead log (package wal, in DATA/node-I/wal); the effects of a
// group of inputs (sends, acknowledgements to the transport, completed
// calls) are acted on only once the group is committed, with one fsync
// for the group. A node killed at any point and restarted replays its
// log through its deterministic machine, which rebuilds its state and
// the messages it sent, and continues as if it had been slow
// (docs/network.md, "Durability"). Applications use a node through
// Enter, Exit, Status and Watch, or its control socket (docs/network.md,
// "The application API and the control socket"); it exports Prometheus
// metrics (docs/network.md, "Observability"). For the algorithms that take
// failure-detector input it runs the network failure detector
// (DetectorConfig; docs/network.md, "Failure detection").
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
	"github.com/critsec/critsec/wal"
)

// ErrCrashed: a peer refuses this node because its failure detector
// declared it crashed; the node stops (docs/network.md, "Failure
// detection").
var ErrCrashed = errors.New("declared crashed")

// Errors of the application calls.
var (
	// ErrClosed: the node is closed, or stopped on an error (Err says
	// which).
	ErrClosed = errors.New("node closed")
	// ErrInvalid: the call breaks the CS invocation convention (Enter
	// while InCS or with a request pending, Exit while OutCS); it also
	// wraps cs.ErrConvention. Nothing happened.
	ErrInvalid = errors.New("invalid call")
	// ErrPending: the call's context ended after the machine took the
	// request. The request is in the log and stays pending: the node
	// completes it later (Status and Watch show when), and it cannot be
	// withdrawn (after an entry, exit once InCS). It wraps the context's
	// error.
	ErrPending = errors.New("the request stays pending")
	// ErrDropped: the call's context ended before the machine took the
	// request: nothing happened, and the call may be made again. It
	// wraps the context's error.
	ErrDropped = errors.New("the request was not taken")
)

// Status is a node's state as the application sees it.
type Status struct {
	// State is InCS or OutCS; Pending the request not completed yet
	// (None, Entry or Exit).
	State   cs.State
	Pending cs.Op
	// Changes counts the state changes since the node started (a watcher
	// that sees it jump by more than one missed some).
	Changes uint64
	// WaitingOn, while a request is pending, lists the peers the node
	// sent a message to since the request began and that have sent
	// nothing back since that message, in id order. Machines do not
	// say whom they wait for; this is what the node sees: for a
	// permission-based algorithm (raymond, kmutex, maekawa) the peers
	// whose reply is missing, for a token-based one (forest) where the
	// request went, which need not be where the token comes from.
	WaitingOn []cs.ID
	// Fence, while InCS, is the fencing token of the CS period, for an
	// algorithm that gives tokens (cs.Fencing; docs/fencing.md); nil
	// otherwise.
	Fence *cs.Fence
}

// Options are a node's settings that are not the cluster's.
type Options struct {
	// Listener, when set, is used instead of listening on the member's
	// address (tests listen on 127.0.0.1:0).
	Listener net.Listener
	// Logger receives the node's and the transport's logs; nil means
	// slog.Default().
	Logger *slog.Logger
	// Transport adjusts the transport's settings (backoff, heartbeat)
	// before it starts; the cluster's fields are set already.
	Transport func(*transport.Config)
	// NoSync turns off the log's fsync: a commit then survives the
	// process's death (kill -9) but not the machine's (power loss).
	NoSync bool
	// BeforeExit, when not nil, is called by Exit (from the application
	// or the control socket) before the exit request goes to the machine,
	// when the node is InCS with nothing pending: critsec run stops its
	// command there, so the command never runs outside the CS. An error
	// fails the Exit, and the node stays InCS.
	BeforeExit func(ctx context.Context) error
	// CompactEvery is the number of records at which the log is
	// compacted: a snapshot of the machine and its channels replaces the
	// records (docs/network.md, "Log compaction"). 0 means
	// DefaultCompactEvery; a negative value never compacts, which keeps the
	// whole history for TraceFromLog.
	CompactEvery int
	// RejoinWithEmptyLog lets a node whose log is new (empty or missing)
	// start although its peers remember the member: it continues the
	// channels where the peers are, from the machine's initial state
	// (lostlog.go; docs/network.md, "A lost log"). Without it such a node
	// stops with ErrLogLost.
	RejoinWithEmptyLog bool
}

// DefaultCompactEvery is Options.CompactEvery when it is 0.
const DefaultCompactEvery = 1 << 16

// maxBatch bounds the inputs of one group commit.
const maxBatch = 256

// ackEvery: the driver logs a peer's acknowledgement once it has
// advanced by this many messages, so that a restart forgets them.
const ackEvery = 256

// Node is one running member of a cluster.
type Node struct {
	id       cs.ID
	log      *slog.Logger
	machine  cs.Machine
	tr       *transport.Transport
	wal      *wal.Log
	peers    []cs.ID
	logged   map[cs.ID]uint64 // the acknowledgement last logged per peer
	logStats struct{ inputs, commits, syncs, syncNanos, compactions, records atomic.Int64 }
	// rp follows the log's records as a restart would replay them (its
	// machine is the node's, stepped by the driver): the channels' state
	// a snapshot records.
	rp         *replay
	beforeExit func(context.Context) error
	// The failure detector (detect.go): its settings, whether the log
	// was new (the first outputs suspect every peer), when it started,
	// and the peers whose transport reports that they refuse this node.
	det          DetectorConfig
	detFresh     bool
	detStart     time.Time
	lastDetect   time.Time // when the detector last ran (driver only)
	resumed      time.Time // its last late round (driver only)
	refused      <-chan cs.ID
	lost         chan error              // the transport found the log behind a peer's memory (lostlog.go)
	rejoin       bool                    // a new log that may rejoin (Options.RejoinWithEmptyLog)
	compactEvery int                     // records; 0: never
	fresh        func() (*replay, error) // a replay with a fresh machine (loadsBack)
	nextCompact  int                     // the log's size at which to compact next
	metrics      *metrics
	called       time.Time // when the pending call was taken (driver only)
	calls        chan call
	done         chan struct{} // closed by Close
	stopped      chan struct{} // closed when the driver returns
	close        sync.Once

	mu       sync.Mutex // guards the fields below, which the driver writes
	state    cs.State
	pending  cs.Op
	changes  uint64
	fence    *cs.Fence      // Status.Fence
	awaited  map[cs.ID]bool // Status.WaitingOn
	waiting  chan error     // the pending call's completion
	err      error          // why the driver stopped
	watchers map[chan Status]struct{}
	cut      cs.Set // the peers this node's detector declared crashed (Lease)
	voted    *votes // the votes logged, which the pings carry (majority mode)
}

// call is an Entry or Exit request for the driver.
type call struct {
	op    cs.Op
	reply chan error    // the call's result: nil once complete, or why not
	taken chan struct{} // closed once the machine took the call
}

// Start builds process id's machine from cfg, loads its TLS files, starts
// the transport and the driver.
func Start(cfg *Config, id cs.ID, o Options) (*Node, error) {
	n := cfg.Problem.Params.N
	if id < 1 || int(id) > n {
		return nil, fmt.Errorf("--id %d is not a member: ids run from 1 to n = %d", id, n)
	}
	ms, err := cfg.Problem.Machines()
	if err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	fp := cfg.Fingerprint()
	rp := newReplay(id, n, fp, ms[id-1], cfg.Problem.Decoder())
	wl, rc, err := wal.Open(LogPath(cfg, id), !o.NoSync, rp.record)
	if err != nil {
		return nil, fmt.Errorf("write-ahead log: %w", err)
	}
	if rp.declaredBy != 0 {
		wl.Close()
		return nil, fmt.Errorf("%w: member %d was declared crashed by P%d, and its log says so: it cannot rejoin this cluster "+
			"(the others went on without it); to bring it back, start a new cluster with fresh logs", ErrCrashed, id, rp.declaredBy)
	}
	if rc.Records == 0 {
		wl.Add(appendHeader(nil, id, fp))
		if err := wl.Commit(); err != nil {
			wl.Close()
			return nil, err
		}
	} else {
		log.Info("restored from the write-ahead log", "node", int(id), "records", rc.Records, "snapshot", rp.snapshots > 0,
			"torn_bytes", rc.Torn, "state", rp.state.String(), "pending", rp.machine.Pending().String())
	}
	nd, err := start(cfg, id, o, log, rp, wl, rc.Records == 0)
	if err != nil {
		wl.Close()
	}
	return nd, err
}

func start(cfg *Config, id cs.ID, o Options, log *slog.Logger, rp *replay, wl *wal.Log, fresh bool) (*Node, error) {
	ident, err := transport.LoadIdentity(NodeFile(cfg.CA, id), NodeFile(cfg.Cert, id), NodeFile(cfg.Key, id))
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	ln := o.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Members[id-1]); err != nil {
			return nil, err
		}
	}
	peers := map[cs.ID]string{}
	for i, a := range cfg.Members {
		if cs.ID(i+1) != id {
			peers[cs.ID(i+1)] = a
		}
	}
	refused := make(chan cs.ID, len(peers))
	voted := &votes{set: rp.votes.Clone()} // in the transport's pings from its start
	tc := transport.Config{
		Self: id, Listener: ln, Peers: peers, Identity: ident,
		Fingerprint: rp.fp, Decode: cfg.Problem.Decoder(), Logger: log, Restore: rp.channels(),
	}
	if cfg.Detector.Heartbeat > 0 {
		tc.Heartbeat = cfg.Detector.Heartbeat
		// A link cut for less than the timeout must be back before the
		// timeout: redial at least every heartbeat, not after a backoff
		// of seconds that would make a short cut look like a crash.
		tc.MaxBackoff = min(cfg.Detector.Heartbeat, 2*time.Second)
		tc.DialTimeout = max(3*cfg.Detector.Heartbeat, 100*time.Millisecond)
		tc.Votes = voted.get
		tc.Refused = func(peer cs.ID) {
			select {
			case refused <- peer:
			default:
			}
		}
	}
	lost := make(chan error, 1)
	tc.LogLost = func(_ cs.ID, err error) {
		select {
		case lost <- err:
		default:
		}
	}
	tc.Rejoin = fresh && o.RejoinWithEmptyLog
	if o.Transport != nil {
		o.Transport(&tc)
	}
	tr, err := transport.New(tc)
	if err != nil {
		ln.Close()
		return nil, err
	}
	nd := &Node{
		id: id, log: log.With("node", int(id)), machine: rp.machine, tr: tr, wal: wl, rp: rp, fresh: freshReplay(cfg, rp),
		peers: slices.Sorted(maps.Keys(peers)), logged: map[cs.ID]uint64{},
		calls: make(chan call), done: make(chan struct{}), stopped: make(chan struct{}),
		watchers: map[chan Status]struct{}{}, awaited: map[cs.ID]bool{},
		det: cfg.Detector, detFresh: fresh, refused: refused, detStart: time.Now(), lost: lost, rejoin: tc.Rejoin,
	}
	for _, j := range rp.crashed.Members() {
		tr.Refuse(j) // declared crashed before the restart: still crashed
	}
	nd.cut = rp.crashed.Clone()
	nd.voted = voted
	for _, j := range rp.votes.Members() {
		tr.Mute(j) // voted against before the restart: no echo, for good
	}
	for _, j := range nd.peers {
		nd.logged[j] = rp.out[j].Acked
	}
	switch {
	case o.CompactEvery == 0:
		nd.compactEvery = DefaultCompactEvery
	case o.CompactEvery > 0:
		nd.compactEvery = o.CompactEvery
	}
	nd.nextCompact = nd.compactEvery
	nd.beforeExit = o.BeforeExit
	nd.metrics = newMetrics(nd)
	nd.metrics.state.Set(float64(rp.state))
	nd.metrics.pending.Set(float64(rp.machine.Pending()))
	nd.state, nd.pending = rp.state, rp.machine.Pending()
	nd.fence = fenceOf(rp.machine)
	go nd.drive()
	return nd, nil
}

// refusedCrashed is why a node that peer refuses as crashed stops.
func refusedCrashed(peer cs.ID) error {
	return fmt.Errorf("%w: P%d refuses this node: it declared it crashed, and a member declared crashed cannot rejoin "+
		"(ftraymond and ftgcs have no join protocol): the cluster goes on without it", ErrCrashed, peer)
}

// action is what the driver does for one input once the input's group
// is committed to the log.
type action struct {
	effects []cs.Effect
	pending cs.Op      // the machine's pending request after the input
	reply   chan error // a call's completion, or nil
	from    cs.ID      // a delivery's channel and sequence number to confirm,
	seq     uint64     // or seq 0
	kind    string     // a delivery's message kind
	at      time.Time  // when the machine took the input
}

// drive is the one goroutine that touches the machine and the log. It
// takes a group of inputs (the first it waits for, then those already
// waiting, up to maxBatch), gives each to the machine and adds it to the
// log, commits the group with one fsync, and only then acts on the
// effects: the group commit that keeps fsync from capping throughput.
func (nd *Node) drive() {
	defer close(nd.stopped)
	var (
		eff  cs.Effects
		acts []action
		rec  []byte
	)
	// take gives one input to the machine and logs it; false stops the
	// driver.
	take := func(c *call, d *transport.Delivery, fd *cs.Input) bool {
		if fd != nil {
			if err := eff.Step(nd.machine, *fd); err != nil {
				nd.stop(fmt.Errorf("P%d: machine refused its detector's %s: %w", nd.id, fd, err))
				return false
			}
			rec = appendDetect(rec[:0], time.Now().UnixNano(), *fd)
			nd.rp.detected(*fd)
		} else if c != nil {
			if err := eff.Step(nd.machine, cs.Call(c.op)); err != nil {
				c.reply <- err // refused: nothing happened, nothing to log
				return true
			}
			close(c.taken)
			rec = appendCall(rec[:0], time.Now().UnixNano(), c.op)
		} else {
			if err := eff.Step(nd.machine, cs.Deliver(d.From, d.Msg)); err != nil {
				nd.stop(fmt.Errorf("P%d: machine refused %s from P%d (seq %d): %w", nd.id, d.Msg.Kind(), d.From, d.Seq, err))
				return false
			}
			rec = appendDeliver(rec[:0], time.Now().UnixNano(), *d)
			if err := nd.rp.delivered(d.From, d.Seq); err != nil {
				nd.stop(fmt.Errorf("P%d: %w", nd.id, err))
				return false
			}
		}
		nd.rp.setTime(time.Now().UnixNano())
		if err := nd.rp.track(eff.List); err != nil {
			nd.stop(err)
			return false
		}
		if err := nd.wal.Add(rec); err != nil {
			nd.stop(err)
			return false
		}
		a := action{effects: slices.Clone(eff.List), pending: nd.machine.Pending(), at: time.Now()}
		switch {
		case c != nil:
			a.reply = c.reply
		case d != nil:
			a.from, a.seq, a.kind = d.From, d.Seq, d.Msg.Kind()
		}
		acts = append(acts, a)
		return true
	}
	if nd.detFresh && !nd.awaitPeers() {
		return
	}
	tick, fds := nd.detectTicker()
	defer tick.Stop()
	for {
		acts = acts[:0]
		if len(fds) == 0 {
			select {
			case c := <-nd.calls:
				if !take(&c, nil, nil) {
					return
				}
			case d := <-nd.tr.Inbox():
				if !take(nil, &d, nil) {
					return
				}
			case <-tick.C:
				var votes []cs.ID
				fds, votes = nd.detect()
				for _, j := range votes {
					nd.wal.Add(appendVote(rec[:0], time.Now().UnixNano(), j))
					nd.rp.votes.Add(j)
				}
				if len(votes) > 0 { // logged before the pings carry them
					if err := nd.wal.Commit(); err != nil {
						nd.stop(err)
						return
					}
					nd.publish()
				}
			case err := <-nd.lost:
				nd.stop(err)
				return
			case peer := <-nd.refused:
				// Logged first, so that a restart does not resume InCS.
				nd.wal.Add(appendDeclared(rec[:0], time.Now().UnixNano(), peer))
				if err := nd.wal.Commit(); err != nil {
					nd.log.Error("could not log that this member was declared crashed", "err", err)
				}
				nd.stop(refusedCrashed(peer))
				return
			case <-nd.done:
				nd.stop(ErrClosed)
				return
			}
		}
		for _, in := range fds {
			if !take(nil, nil, &in) {
				return
			}
			if in.Kind == cs.InSuspect && nd.rp.crashed.Has(in.Who) {
				nd.declared(in.Who)
			}
		}
		fds = fds[:0]
	more:
		for len(acts) < maxBatch {
			select {
			case c := <-nd.calls:
				if !take(&c, nil, nil) {
					return
				}
			case d := <-nd.tr.Inbox():
				if !take(nil, &d, nil) {
					return
				}
			default:
				break more
			}
		}
		for _, j := range nd.peers {
			if a := nd.tr.Acked(j); a >= nd.logged[j]+ackEvery {
				nd.wal.Add(appendAcked(rec[:0], j, a))
				nd.rp.acked(j, a)
				nd.logged[j] = a
			}
		}
		syncs, took := nd.wal.Syncs, nd.wal.SyncTime
		if err := nd.wal.Commit(); err != nil {
			nd.stop(err)
			return
		}
		nd.logStats.inputs.Add(int64(len(acts)))
		nd.logStats.commits.Add(1)
		nd.logStats.syncs.Add(int64(nd.wal.Syncs - syncs))
		nd.logStats.syncNanos.Add(int64(nd.wal.SyncTime - took))
		if nd.wal.Syncs > syncs {
			nd.metrics.fsync.Observe((nd.wal.SyncTime - took).Seconds())
		}
		nd.metrics.group.Observe(float64(len(acts)))
		nd.publish()
		for i := range acts {
			if err := nd.apply(&acts[i]); err != nil {
				nd.stop(err)
				return
			}
			acts[i] = action{}
		}
		if nd.compactEvery > 0 && nd.wal.Records >= nd.nextCompact {
			if err := nd.compact(); err != nil {
				nd.stop(err)
				return
			}
		}
		nd.logStats.records.Store(int64(nd.wal.Records))
	}
}

// apply acts on one input's effects in order, once the input is in the
// log: sends to the transport, a state change completes the pending
// call; then a delivery is confirmed to the transport.
func (nd *Node) apply(a *action) error {
	if a.reply != nil {
		nd.called = a.at
	} else {
		nd.metrics.received.WithLabelValues(a.kind, peerLabel(a.from)).Inc()
	}
	nd.metrics.pending.Set(float64(a.pending))
	nd.mu.Lock()
	if a.reply != nil {
		nd.pending, nd.waiting = a.pending, a.reply
		clear(nd.awaited)
		nd.notify()
	} else if nd.awaited[a.from] {
		delete(nd.awaited, a.from)
		nd.notify()
	}
	nd.mu.Unlock()
	for _, e := range a.effects {
		if e.IsSend() {
			if _, err := nd.tr.Send(e.To, e.Msg); err != nil {
				return fmt.Errorf("P%d: send %s to P%d: %w", nd.id, e.Msg.Kind(), e.To, err)
			}
			nd.metrics.sent.WithLabelValues(e.Msg.Kind(), peerLabel(e.To)).Inc()
			if e.To != nd.id {
				nd.mu.Lock()
				if nd.pending != cs.None && !nd.awaited[e.To] {
					nd.awaited[e.To] = true
					nd.notify()
				}
				nd.mu.Unlock()
			}
			continue
		}
		nd.mu.Lock()
		nd.state, nd.fence = e.State, fenceOf(nd.machine)
		nd.changes++
		clear(nd.awaited)
		w := nd.waiting
		nd.pending, nd.waiting = a.pending, nil
		nd.notify()
		nd.mu.Unlock()
		nd.metrics.state.Set(float64(e.State))
		wait := nd.metrics.enterWait
		if e.State == cs.OutCS {
			wait = nd.metrics.exitWait
		}
		if !nd.called.IsZero() {
			wait.Observe(time.Since(nd.called).Seconds())
			nd.called = time.Time{}
		}
		nd.log.Debug("state", "state", e.State.String())
		if w != nil {
			w <- nil
		}
	}
	if a.seq != 0 {
		nd.tr.Confirm(a.from, a.seq)
	}
	return nil
}

// compact replaces the log by its header and a snapshot of the machine
// and channels (docs/network.md, "Log compaction"). It runs in the driver
// between groups, when every logged input's effects have been handed to
// the transport, so the snapshot holds exactly what a replay of the log
// would rebuild. A snapshot the log cannot hold, or a rewrite that fails
// before replacing the log, is logged and retried later; an error is
// returned only when the log is unusable.
func (nd *Node) compact() error {
	defer func() { nd.nextCompact = nd.wal.Records + nd.compactEvery }()
	for _, j := range nd.peers { // forget what the peers confirmed since the last 'A' record
		if a := nd.tr.Acked(j); a > nd.logged[j] {
			if err := nd.rp.acked(j, a); err != nil {
				return err
			}
			nd.logged[j] = a
		}
	}
	before := nd.wal.Records
	snap := nd.rp.appendSnapshot(nil)
	if len(snap) > wal.MaxRecord {
		nd.log.Warn("log not compacted: the snapshot is larger than a record may be (messages waiting for a peer?)",
			"bytes", len(snap), "max", wal.MaxRecord)
		return nil
	}
	if err := loadsBack(nd.rp, nd.fresh, snap); err != nil {
		nd.log.Warn("log not compacted, and compaction turned off: the snapshot does not load back", "err", err)
		nd.compactEvery = 0
		return nil
	}
	if err := nd.wal.Rewrite([][]byte{appendHeader(nil, nd.id, nd.rp.fp), snap}); err != nil {
		if nd.wal.Err() != nil {
			return err
		}
		nd.log.Warn("log not compacted", "err", err)
		return nil
	}
	nd.logStats.compactions.Add(1)
	nd.log.Debug("log compacted", "records_before", before, "snapshot_bytes", len(snap))
	return nil
}

// stop records why the driver stopped and fails the pending call.
func (nd *Node) stop(err error) {
	nd.mu.Lock()
	nd.err = err
	w := nd.waiting
	nd.waiting = nil
	nd.mu.Unlock()
	if w != nil {
		w <- err
	}
	if !errors.Is(err, ErrClosed) {
		nd.log.Error("node stopped", "err", err)
	}
}

// Open reads the cluster configuration at path and starts member id
// (Start).
func Open(path string, id cs.ID, o Options) (*Node, error) {
	cfg, err := ReadConfig(path)
	if err != nil {
		return nil, err
	}
	return Start(cfg, id, o)
}

// Enter asks to enter the critical section and waits until the node is
// InCS, the context ends, or the node stops (ErrClosed). A call that
// breaks the invocation convention fails at once with an error wrapping
// ErrInvalid and cs.ErrConvention. Once the request is in the log it
// survives a crash of the node: if ctx ends first, or the node is killed
// and restarted, the request stays pending and the node enters later
// (State and Watch show when).
func (nd *Node) Enter(ctx context.Context) error { return nd.do(ctx, cs.Entry) }

// Exit asks to leave the critical section and waits until the node is
// OutCS, as Enter does; Options.BeforeExit, if set, runs first.
func (nd *Node) Exit(ctx context.Context) error {
	if nd.beforeExit != nil {
		if s, p := nd.State(); s == cs.InCS && p == cs.None {
			if err := nd.beforeExit(ctx); err != nil {
				if ctx.Err() != nil { // the exit was not asked for
					return fmt.Errorf("%w: before the exit: %w", ErrDropped, err)
				}
				return fmt.Errorf("before the exit: %w", err)
			}
		}
	}
	return nd.do(ctx, cs.Exit)
}

func (nd *Node) do(ctx context.Context, op cs.Op) error {
	c := call{op: op, reply: make(chan error, 1), taken: make(chan struct{})}
	select {
	case nd.calls <- c:
	case <-nd.stopped:
		return fmt.Errorf("%w: %v", ErrClosed, nd.Err())
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrDropped, ctx.Err())
	}
	var err error
	select {
	case err = <-c.reply:
	case <-ctx.Done():
		// The driver has the call: it either refuses it at once or takes
		// it, and then the request stays pending.
		select {
		case err = <-c.reply:
		case <-c.taken:
			select {
			case err = <-c.reply: // completed meanwhile
			default:
				return fmt.Errorf("%w: %w", ErrPending, ctx.Err())
			}
		case <-nd.stopped:
			return fmt.Errorf("%w: %v", ErrClosed, nd.Err())
		}
	}
	if errors.Is(err, cs.ErrConvention) {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// Lease is how long this node may run a command fenced by its peers'
// failure detectors (docs/fencing.md): until Until, when Bounded.
type Lease struct {
	// Bounded is false when nothing limits it: the algorithm takes no
	// failure-detector input (no peer ever acts on a suspicion of this
	// node), or every peer is declared crashed.
	Bounded bool
	// Until is when the lease ends: the fence time F after the latest
	// ping of this node that every peer not declared crashed has echoed.
	// Zero when some such peer has echoed none since the node started.
	Until time.Time
}

// Valid reports whether the lease holds at time now.
func (l Lease) Valid(now time.Time) bool { return !l.Bounded || now.Before(l.Until) }

// Lease returns the node's lease now. A peer declares this node crashed
// only after hearing nothing from it for the detector's timeout, and
// every ping it heard it echoed (transport.Echoed); so a peer can act on
// a suspicion of this node no sooner than the timeout after the stamp of
// the last echo, and a command stopped by Until plus the grace is gone
// by then (DetectorConfig.Fence).
func (nd *Node) Lease() Lease {
	if nd.det.Heartbeat == 0 {
		return Lease{}
	}
	if nd.det.Mode == ModeMajority {
		return nd.majorityLease()
	}
	nd.mu.Lock()
	cut := nd.cut.Clone()
	nd.mu.Unlock()
	l := Lease{}
	for _, j := range nd.peers {
		if cut.Has(j) {
			continue
		}
		e := nd.tr.Echoed(j)
		if e.IsZero() {
			return Lease{Bounded: true}
		}
		if until := e.Add(nd.det.Fence); !l.Bounded || until.Before(l.Until) {
			l = Lease{Bounded: true, Until: until}
		}
	}
	return l
}

// publish puts the votes logged in the pings (driver only: after a
// commit).
func (nd *Node) publish() {
	if nd.voted.put(nd.rp.votes) {
		nd.log.Warn("voted against a silent peer: it is declared crashed once a majority of the members vote so",
			"votes", nd.rp.votes.Members())
	}
}

// votes is the set of votes a node's pings carry, read by the transport's
// links and replaced by the driver.
type votes struct {
	mu  sync.Mutex
	set cs.Set
}

func (v *votes) get() cs.Set {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.set.Clone()
}

// put replaces the set with s and reports whether it changed.
func (v *votes) put(s cs.Set) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.set.Equal(s) {
		return false
	}
	v.set = s.Clone()
	return true
}

// majorityLease is Lease in majority mode: the fence time after the
// (n − Quorum)-th latest echo among all the peers, so that any majority
// of voters includes a peer whose echo it counts on.
func (nd *Node) majorityLease() Lease {
	need := len(nd.peers) + 1 - nd.det.Quorum(len(nd.peers)+1)
	if need <= 0 {
		return Lease{} // nobody can gather the votes to declare this node
	}
	var ends []time.Time
	for _, j := range nd.peers {
		if e := nd.tr.Echoed(j); !e.IsZero() {
			ends = append(ends, e.Add(nd.det.Fence))
		}
	}
	if len(ends) < need {
		return Lease{Bounded: true}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return b.Compare(a) })
	return Lease{Bounded: true, Until: ends[need-1]}
}

// Detector returns the failure detector's settings (Heartbeat 0: none).
func (nd *Node) Detector() DetectorConfig { return nd.det }

// State returns the node's state and its pending request.
func (nd *Node) State() (cs.State, cs.Op) {
	s := nd.Status()
	return s.State, s.Pending
}

// Status returns the node's state, its pending request and the number of
// state changes so far.
func (nd *Node) Status() Status {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.status()
}

func (nd *Node) status() Status {
	s := Status{State: nd.state, Pending: nd.pending, Changes: nd.changes, Fence: nd.fence}
	if len(nd.awaited) > 0 {
		s.WaitingOn = slices.Sorted(maps.Keys(nd.awaited))
	}
	return s
}

// Watch returns a channel that receives the node's Status now and after
// every change of its state or pending request, until ctx ends or the
// node stops; then it is closed. It holds only the latest status: a slow
// reader never holds the node up, it skips to the newest (Changes says
// how many state changes it missed).
func (nd *Node) Watch(ctx context.Context) <-chan Status {
	w := make(chan Status, 1)
	nd.mu.Lock()
	w <- nd.status()
	nd.watchers[w] = struct{}{}
	nd.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-nd.stopped:
		}
		nd.mu.Lock()
		delete(nd.watchers, w)
		close(w)
		nd.mu.Unlock()
	}()
	return w
}

// notify gives every watcher the current status, replacing the one it
// has not read; nd.mu is held.
func (nd *Node) notify() {
	s := nd.status()
	for w := range nd.watchers {
		select {
		case <-w:
		default:
		}
		w <- s
	}
}

// ID is the node's process id.
func (nd *Node) ID() cs.ID { return nd.id }

// Done is closed when the node has stopped: closed, or on an error (Err).
func (nd *Node) Done() <-chan struct{} { return nd.stopped }

// Err returns why the node stopped, or nil while it runs.
func (nd *Node) Err() error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.err
}

// LogStats are the counters of a node's write-ahead log since it
// started.
type LogStats struct {
	// Inputs counts the inputs logged, Commits the groups they were
	// committed in (group commit: Inputs/Commits inputs per write),
	// Syncs the fsyncs and SyncTime their total duration.
	Inputs, Commits, Syncs int64
	SyncTime               time.Duration
	// Compactions counts the snapshots that replaced the log's records;
	// Records is the number of records the log holds now.
	Compactions, Records int64
}

// LogStats returns the log's counters.
func (nd *Node) LogStats() LogStats {
	return LogStats{Inputs: nd.logStats.inputs.Load(), Commits: nd.logStats.commits.Load(),
		Syncs: nd.logStats.syncs.Load(), SyncTime: time.Duration(nd.logStats.syncNanos.Load()),
		Compactions: nd.logStats.compactions.Load(), Records: nd.logStats.records.Load()}
}

// Stats returns the transport's counters.
func (nd *Node) Stats() transport.Stats { return nd.tr.Stats() }

// Close stops the driver, the transport and the log.
func (nd *Node) Close() error {
	nd.close.Do(func() { close(nd.done) })
	<-nd.stopped
	err := nd.tr.Close()
	if werr := nd.wal.Close(); err == nil {
		err = werr
	}
	return err
}
