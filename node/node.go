// Package node is critsec's networked runtime around one machine: it owns
// process P_id's cs.Machine and the transport to the other members, and
// drives the machine from one goroutine, like etcd-raft's node around its
// pure state machine (docs/network.md). The machine's inputs are the
// application's Entry and Exit calls and the messages the transport
// delivers; each is given with cs.Effects, and the effects are then
// applied in order: sends go to the transport, a state change completes
// the pending call.
//
// This is the skeleton of issue 15: no write-ahead log yet (a delivered
// message is confirmed to the transport once the machine has taken it, so
// a node that crashes loses its state), no failure detector, no metrics.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
)

// Errors of the application calls.
var (
	// ErrClosed: the node is closed, or stopped on an error (Err says
	// which).
	ErrClosed = errors.New("node closed")
)

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
}

// Node is one running member of a cluster.
type Node struct {
	id      cs.ID
	log     *slog.Logger
	machine cs.Machine
	tr      *transport.Transport
	calls   chan call
	done    chan struct{} // closed by Close
	stopped chan struct{} // closed when the driver returns
	close   sync.Once

	mu      sync.Mutex // guards the fields below, which the driver writes
	state   cs.State
	pending cs.Op
	waiting chan error // the pending call's completion
	err     error      // why the driver stopped
}

// call is an Entry or Exit request for the driver.
type call struct {
	op    cs.Op
	reply chan error // the call's result: nil once complete, or why not
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
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	peers := map[cs.ID]string{}
	for i, a := range cfg.Members {
		if cs.ID(i+1) != id {
			peers[cs.ID(i+1)] = a
		}
	}
	tc := transport.Config{
		Self: id, Listener: ln, Peers: peers, Identity: ident,
		Fingerprint: cfg.Fingerprint(), Decode: cfg.Problem.Decoder(), Logger: log,
	}
	if o.Transport != nil {
		o.Transport(&tc)
	}
	tr, err := transport.New(tc)
	if err != nil {
		ln.Close()
		return nil, err
	}
	nd := &Node{
		id: id, log: log.With("node", int(id)), machine: ms[id-1], tr: tr,
		calls: make(chan call), done: make(chan struct{}), stopped: make(chan struct{}),
	}
	nd.state = nd.machine.State()
	go nd.drive()
	return nd, nil
}

// drive is the one goroutine that touches the machine.
func (nd *Node) drive() {
	defer close(nd.stopped)
	var eff cs.Effects
	for {
		select {
		case c := <-nd.calls:
			err := eff.Step(nd.machine, cs.Call(c.op))
			if err != nil {
				c.reply <- err // refused: nothing happened
				continue
			}
			nd.mu.Lock()
			nd.pending, nd.waiting = c.op, c.reply
			nd.mu.Unlock()
			if err := nd.apply(&eff); err != nil {
				nd.stop(err)
				return
			}
		case d := <-nd.tr.Inbox():
			if err := eff.Step(nd.machine, cs.Deliver(d.From, d.Msg)); err != nil {
				nd.stop(fmt.Errorf("P%d: machine refused %s from P%d (seq %d): %w", nd.id, d.Msg.Kind(), d.From, d.Seq, err))
				return
			}
			if err := nd.apply(&eff); err != nil {
				nd.stop(err)
				return
			}
			nd.tr.Confirm(d.From, d.Seq)
		case <-nd.done:
			nd.stop(ErrClosed)
			return
		}
	}
}

// apply acts on one step's effects in order: sends to the transport, a
// state change completes the pending call.
func (nd *Node) apply(eff *cs.Effects) error {
	for _, e := range eff.List {
		if e.IsSend() {
			if _, err := nd.tr.Send(e.To, e.Msg); err != nil {
				return fmt.Errorf("P%d: send %s to P%d: %w", nd.id, e.Msg.Kind(), e.To, err)
			}
			continue
		}
		nd.mu.Lock()
		nd.state = e.State
		w := nd.waiting
		nd.pending, nd.waiting = nd.machine.Pending(), nil
		nd.mu.Unlock()
		nd.log.Debug("state", "state", e.State.String())
		if w != nil {
			w <- nil
		}
	}
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

// Entry asks to enter the critical section and waits until the node is
// InCS, the context ends, or the node stops. A call that breaks the
// invocation convention fails at once with an error wrapping
// cs.ErrConvention. If ctx ends first the request stays pending: the
// node enters later, and State shows when.
func (nd *Node) Entry(ctx context.Context) error { return nd.do(ctx, cs.Entry) }

// Exit asks to leave the critical section and waits until the node is
// OutCS, as Entry does.
func (nd *Node) Exit(ctx context.Context) error { return nd.do(ctx, cs.Exit) }

func (nd *Node) do(ctx context.Context, op cs.Op) error {
	c := call{op: op, reply: make(chan error, 1)}
	select {
	case nd.calls <- c:
	case <-nd.stopped:
		return nd.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-c.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// State returns the node's state and its pending request.
func (nd *Node) State() (cs.State, cs.Op) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.state, nd.pending
}

// Done is closed when the node has stopped: closed, or on an error (Err).
func (nd *Node) Done() <-chan struct{} { return nd.stopped }

// Err returns why the node stopped, or nil while it runs.
func (nd *Node) Err() error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.err
}

// Stats returns the transport's counters.
func (nd *Node) Stats() transport.Stats { return nd.tr.Stats() }

// Close stops the driver and the transport.
func (nd *Node) Close() error {
	nd.close.Do(func() { close(nd.done) })
	<-nd.stopped
	return nd.tr.Close()
}
