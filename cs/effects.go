package cs

import "fmt"

// InputKind names the kinds of input a machine takes.
type InputKind uint8

const (
	// InEntry is a call of Entry.
	InEntry InputKind = iota + 1
	// InExit is a call of Exit.
	InExit
	// InReceive is the delivery of Msg from process From.
	InReceive
	// InSuspect is the local failure detector starting to suspect Who.
	InSuspect
	// InTrust is the local failure detector ceasing to suspect Who.
	InTrust
)

// String returns "entry", "exit", "receive", "suspect" or "trust".
func (k InputKind) String() string {
	switch k {
	case InEntry:
		return "entry"
	case InExit:
		return "exit"
	case InReceive:
		return "receive"
	case InSuspect:
		return "suspect"
	case InTrust:
		return "trust"
	}
	return fmt.Sprintf("input(%d)", uint8(k))
}

// Input is one input to a machine: a method call, a delivered message or a
// failure-detector output. A machine is deterministic, so the sequence of
// its inputs determines its state and its effects; that is what the model
// checker explores, what the simulator schedules and what a networked node
// logs before it acts.
type Input struct {
	Kind InputKind
	// From and Msg are the sender and the message of an InReceive.
	From ID
	Msg  Message
	// Who is the process an InSuspect or InTrust is about.
	Who ID
}

// Call returns the input that invokes op (Entry or Exit).
func Call(op Op) Input {
	if op == Exit {
		return Input{Kind: InExit}
	}
	return Input{Kind: InEntry}
}

// Deliver returns the input that delivers m from process from.
func Deliver(from ID, m Message) Input { return Input{Kind: InReceive, From: from, Msg: m} }

// Op returns the method an InEntry or InExit input calls, else None.
func (in Input) Op() Op {
	switch in.Kind {
	case InEntry:
		return Entry
	case InExit:
		return Exit
	}
	return None
}

// String is the readable form: "entry", "receive REQUEST from P3",
// "suspect P2".
func (in Input) String() string {
	switch in.Kind {
	case InReceive:
		kind := "<nil>"
		if in.Msg != nil {
			kind = in.Msg.Kind()
		}
		return fmt.Sprintf("receive %s from P%d", kind, in.From)
	case InSuspect, InTrust:
		return fmt.Sprintf("%s P%d", in.Kind, in.Who)
	}
	return in.Kind.String()
}

// Apply gives input in to machine m with environment env. Failure-detector
// inputs to a machine that does not implement Detecting are refused with an
// error wrapping ErrUnexpected, as is an input of unknown kind.
func Apply(m Machine, env Env, in Input) error {
	switch in.Kind {
	case InEntry:
		return m.Entry(env)
	case InExit:
		return m.Exit(env)
	case InReceive:
		return m.Receive(env, in.From, in.Msg)
	case InSuspect, InTrust:
		d, ok := m.(Detecting)
		if !ok {
			return fmt.Errorf("%w: P%d takes no failure-detector input (%s)", ErrUnexpected, m.Self(), in)
		}
		if in.Kind == InSuspect {
			return d.Suspect(env, in.Who)
		}
		return d.Trust(env, in.Who)
	}
	return fmt.Errorf("%w: P%d: %s", ErrUnexpected, m.Self(), in)
}

// Effect is one thing a machine did during a call: a send of Msg to To,
// or (Msg == nil) a change of its own state to State.
type Effect struct {
	To    ID
	Msg   Message
	State State
}

// IsSend reports whether e is a send (else it is a state change).
func (e Effect) IsSend() bool { return e.Msg != nil }

// Effects is an Env that records what a machine does, in order, instead of
// doing it: the runtime makes the call, then acts on the list (charges and
// schedules the sends, checks the state change, logs). It plays the part of
// etcd-raft's Ready: one list of a step's effects, the same for the
// simulator, the model checker, the networked runtime and the tests.
//
// The zero value is an empty list, ready to use.
type Effects struct {
	List []Effect
}

// Send implements Env: it records the send.
func (e *Effects) Send(to ID, m Message) { e.List = append(e.List, Effect{To: to, Msg: m}) }

// Changed implements Env: it records the state change.
func (e *Effects) Changed(s State) { e.List = append(e.List, Effect{State: s}) }

// Reset empties the list, keeping its storage, and drops the references to
// the messages so they can be collected.
func (e *Effects) Reset() {
	clear(e.List)
	e.List = e.List[:0]
}

// Step resets e, gives input in to m with e as its environment and returns
// the call's error; e.List then holds the call's effects in order.
func (e *Effects) Step(m Machine, in Input) error {
	e.Reset()
	return Apply(m, e, in)
}
