// Package cs is critsec's vocabulary: process ids, CS states, messages, the
// machine interface every algorithm implements, composition envelopes and the
// generic complement wrapper Co(A).
//
// The shape follows the "CS class" of Kamei and Kakugawa, "Asynchronous
// message-passing distributed algorithm for the global critical section
// problem" (2019), Definition 1: a CS object has a state per process (InCS or
// OutCS) and two methods, Entry (OutCS -> InCS) and Exit (InCS -> OutCS),
// invoked under the CS method invocation convention (CSMIC): Entry only when
// OutCS, Exit only when InCS. critsec also refuses a call while the previous
// one has not completed (one request at a time).
//
// A Machine is deterministic and does no I/O: it acts only through the Env
// passed into each call (send a message, report its own state change). The
// same machine is therefore model checked (package check), simulated (package
// sim) and deployed. "wait until C" in the papers' pseudo-code is a recorded
// waiting phase whose condition is re-tested by every handler that can make it
// true; a machine never blocks.
package cs

import (
	"errors"
	"fmt"
)

// ID identifies a process P_i. Ids run from 1 to n, as in the papers.
type ID int32

// State is a process's state in a CS object (Definition 1).
type State uint8

const (
	// OutCS: the process is out of the critical section.
	OutCS State = iota
	// InCS: the process is in the critical section.
	InCS
)

// String returns "OutCS" or "InCS".
func (s State) String() string {
	if s == InCS {
		return "InCS"
	}
	return "OutCS"
}

// Flip returns the other state; it is the complement transformation
// (Theorem 1 of the global paper) applied to one process's state.
func (s State) Flip() State { return 1 - s }

// Op names a method of the CS class, or none.
type Op uint8

const (
	// None: no request is in progress.
	None Op = iota
	// Entry: an Entry call (OutCS -> InCS) has been made and not completed.
	Entry
	// Exit: an Exit call (InCS -> OutCS) has been made and not completed.
	Exit
)

// String returns "none", "entry" or "exit", the names used in traces.
func (o Op) String() string {
	switch o {
	case Entry:
		return "entry"
	case Exit:
		return "exit"
	}
	return "none"
}

// Flip swaps Entry and Exit, as the complement transformation does.
func (o Op) Flip() Op {
	switch o {
	case Entry:
		return Exit
	case Exit:
		return Entry
	}
	return None
}

// Message is one protocol message. Messages are plain data: exported fields,
// no pointers into machine state, so any codec can carry them and every
// runtime can count them.
//
// Identity. Within one algorithm (a machine and the children it composes),
// a message is identified by its kind and its encoding together:
//
//   - Kind names one Go type: two messages an algorithm can send with the
//     same Kind have the same dynamic type (composed kinds such as
//     "lmin.mx.REQUEST" carry the path of tags, so children may reuse
//     names);
//   - AppendBinary is injective within a kind: equal messages of a kind
//     encode to equal bytes and different ones to different bytes.
//
// Different kinds may share bytes (raymond.Request and maekawa.Request both
// encode as 'Q' and a number), so runtimes key messages by AppendKind and
// AppendBinary together, never by the bytes alone: that is what the model
// checker interns, and what a decoder reads back.
type Message interface {
	// Kind is the message type name from the paper (REQUEST, Query, ...).
	Kind() string
	// Words is the message's size in words, counting every field the way the
	// token K-mutex paper counts information (Bulgannawar and Vaidya 1995,
	// section 3, Figure 5): source, destination and type are one word each,
	// plus one per payload field and one per element of a set.
	Words() int
	// AppendBinary appends a canonical encoding of the message to b: equal
	// messages, equal bytes. The model checker uses it to deduplicate states.
	AppendBinary(b []byte) []byte
}

// Env is what a machine can do to the world. The runtime supplies it to
// every call; a machine must not keep it after the call returns.
type Env interface {
	// Send queues m for delivery to process to.
	Send(to ID, m Message)
	// Changed reports that the machine's own state has just become s.
	Changed(s State)
}

// Machine is one process's part of a CS object.
//
// Entry and Exit start a request and may complete it at once (calling
// env.Changed) or later, from a Receive or Suspect call. A call that breaks the
// invocation convention returns an error wrapping ErrConvention and changes
// nothing. Receive returns an error (and changes nothing) for a message the
// machine cannot accept: a foreign kind or a sender that is not a participant.
type Machine interface {
	// Self is the id of the process this machine belongs to.
	Self() ID
	// State is the process's current state in this object.
	State() State
	// Pending is the request in progress, or None.
	Pending() Op
	// Entry asks to go from OutCS to InCS.
	Entry(env Env) error
	// Exit asks to go from InCS to OutCS.
	Exit(env Env) error
	// Receive handles one message from process from, atomically.
	Receive(env Env, from ID, m Message) error
	// Clone returns a deep copy that shares nothing mutable with the original.
	Clone() Machine
	// AppendState appends a canonical encoding of the machine's state to b:
	// equal states, equal bytes.
	AppendState(b []byte) []byte
}

// Detecting is implemented by machines that take failure-detector input
// (the fault-tolerant algorithms). Suspect reports that the local detector
// now suspects id; Trust that it no longer does.
type Detecting interface {
	Machine
	Suspect(env Env, id ID) error
	Trust(env Env, id ID) error
}

// Initializing is implemented by machines whose fault model assumes that no
// process crashes before their initialization is over (the fault-tolerant
// k-mutex paper, Bouillaguet, Arantes and Sens 2007, section 5: "processes
// do not crash before the initialization phase"). Initialized reports
// whether this process's initialization has completed; the model checker
// enables crashes only once every process's has.
type Initializing interface {
	Machine
	Initialized() bool
}

// TrustGated is implemented by machines whose initialization waits on the
// failure detector: a process answers another's INIT only once its detector
// does not suspect it (the fault-tolerant k-mutex paper, Bouillaguet,
// Arantes and Sens 2007, Algorithm 1, line 34). TrustGated declares that
//
//   - this process cannot complete its initialization (Initializing) while
//     some other process has never trusted it, and
//   - while some other process has never trusted it, the input Trust(j) for
//     a j it has never trusted commutes with every other input it can get
//     then (either order leaves the same machine state and the same messages
//     on each channel).
//
// With a trusting detector, the model checker's partial-order reduction then
// explores a cycle of such first trusts alone
// (docs/design/partial-order-reduction.md, "Trust first"), and reports an error
// where a state it meets contradicts the declaration.
type TrustGated interface {
	Detecting
	Initializing
	TrustGated()
}

// Local is implemented by the machines of the local algorithms, in which a
// process communicates with its neighbors only (Kamei and Kakugawa,
// Algorithms 10(2):38, 2017, section 2.1: the topology is a graph G = (V, E)
// of communication links and N_i = {P_j | (P_i, P_j) ∈ E}; the local
// problems count only N_i ∪ {P_i}). Neighbors returns N_i: the processes other than
// itself that the machine may ever send to; it does not change. The model
// checker reports a send outside N_i ∪ {P_i} as an error, and its
// partial-order reduction relies on that: a process that never sends to P_q
// cannot enable a new delivery at P_q.
type Local interface {
	Machine
	Neighbors() []ID
}

// Settled reports whether m has completed its request and is in state s:
// how a composite reads "wait until child.state = s" (the global paper,
// Algorithm 3) after every call into the child.
func Settled(m Machine, s State) bool { return m.Pending() == None && m.State() == s }

// ErrConvention is wrapped by every error returned for a call that breaks the
// CS method invocation convention.
var ErrConvention = errors.New("CS method invocation convention violated")

// CheckCall returns nil when op may be invoked on m now, and otherwise an
// error wrapping ErrConvention that says why. Every machine's Entry and Exit
// start with it; it reads only m's id, state and pending request, so a part
// of a machine that keeps them may call it too.
func CheckCall(m interface {
	Self() ID
	State() State
	Pending() Op
}, op Op) error {
	if p := m.Pending(); p != None {
		return fmt.Errorf("%w: P%d called %s while its %s request is still pending", ErrConvention, m.Self(), op, p)
	}
	switch s := m.State(); {
	case op == Entry && s != OutCS:
		return fmt.Errorf("%w: P%d called entry while InCS (entry is allowed only when OutCS)", ErrConvention, m.Self())
	case op == Exit && s != InCS:
		return fmt.Errorf("%w: P%d called exit while OutCS (exit is allowed only when InCS)", ErrConvention, m.Self())
	}
	return nil
}

// ErrUnexpected is wrapped by errors for messages a machine cannot accept.
var ErrUnexpected = errors.New("unexpected message")

// Unexpected returns an error wrapping ErrUnexpected for message m from
// process from at machine self.
func Unexpected(self, from ID, m Message) error {
	kind := "<nil>"
	if m != nil {
		kind = m.Kind()
	}
	return fmt.Errorf("%w: P%d cannot handle %s (%T) from P%d", ErrUnexpected, self, kind, m, from)
}
