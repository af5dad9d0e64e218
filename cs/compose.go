package cs

import (
	"encoding/binary"
	"iter"
)

// Tagged is the envelope a parent machine puts around a child's message so the
// receiving parent can route it to the same child. Tag names the child in the
// parent (for example "mx" in MUTIN, "lmin" and "kmex" in (l,k)-GCS); nested
// composition nests envelopes.
type Tagged struct {
	Tag string
	Msg Message
}

// Kind is the child's kind prefixed by the tag, e.g. "lmin.mx.REQUEST".
func (t Tagged) Kind() string { return t.Tag + "." + t.Msg.Kind() }

// AppendKind appends m.Kind() to b without building the string of a
// composed kind: for Tagged envelopes, each tag and a '.', then the inner
// message's kind. It is the first half of a message's identity (see
// Message).
func AppendKind(b []byte, m Message) []byte {
	for {
		t, ok := m.(Tagged)
		if !ok {
			return append(b, m.Kind()...)
		}
		b = append(append(b, t.Tag...), '.')
		m = t.Msg
	}
}

// Words is the size of the inner message: the tag refines the message type
// field, which the inner size already counts.
func (t Tagged) Words() int { return t.Msg.Words() }

// AppendBinary appends the tag and the inner message's encoding.
func (t Tagged) AppendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(t.Tag)))
	b = append(b, t.Tag...)
	return t.Msg.AppendBinary(b)
}

// ChildEnv is the environment a parent passes to a child machine: each message
// the child sends leaves wrapped in Tagged{Tag, msg}. The child's state changes
// are not forwarded: after every call into a child the parent re-reads
// child.State() and re-tests the conditions it waits on, which is how "wait
// until child.state = InCS" is written without callbacks or re-entrancy.
type ChildEnv struct {
	Parent Env
	Tag    string
}

// Send wraps m and hands it to the parent's environment.
func (c ChildEnv) Send(to ID, m Message) { c.Parent.Send(to, Tagged{Tag: c.Tag, Msg: m}) }

// Changed does nothing; see ChildEnv.
func (c ChildEnv) Changed(State) {}

// Composite is implemented by a machine built from child CS objects that it
// uses only through the CS interface (Entry, Exit, Receive of the child's
// tagged messages, and the child's State and Pending): MUTIN's mx, GCS's
// lmin and kmex. Children yields each child with the tag its messages
// carry, in a fixed order. The model checker walks it to find the children
// it replaces by their specification (package ideal).
type Composite interface {
	Machine
	Children() iter.Seq2[string, Machine]
}

// Co returns the complement of a (Theorem 1 of the global paper, Theorem 2 of
// the local paper): the process states are swapped, so Co(a).Entry is a.Exit
// and Co(a).Exit is a.Entry. If a solves the (l,k)-CS problem, Co(a) solves
// the (n-k, n-l)-CS problem; k-mutual exclusion is Co(MUTIN(n-k)).
// Messages pass through unchanged. If a takes failure-detector input, so does
// the result.
func Co(a Machine) Machine {
	switch m := a.(type) {
	case Detecting:
		return coDetecting{co{m}}
	case Local:
		return coLocal{co{m}}
	}
	return co{a}
}

// coLocal is Co of a Local machine: it sends to the same neighbors.
type coLocal struct{ co }

func (c coLocal) Neighbors() []ID { return c.a.(Local).Neighbors() }

type co struct{ a Machine }

// coEnv flips the state changes the inner machine reports.
type coEnv struct{ Env }

func (e coEnv) Changed(s State) { e.Env.Changed(s.Flip()) }

func (c co) Self() ID                    { return c.a.Self() }
func (c co) State() State                { return c.a.State().Flip() }
func (c co) Pending() Op                 { return c.a.Pending().Flip() }
func (c co) Clone() Machine              { return Co(c.a.Clone()) }
func (c co) String() string              { return "Co(" + kindOf(c.a) + ")" }
func (c co) AppendState(b []byte) []byte { return c.a.AppendState(b) }

// ReadState implements Restorer when the wrapped machine does.
func (c co) ReadState(r *Reader) { ReadState(r, c.a) }

func (c co) Entry(env Env) error {
	if err := CheckCall(c, Entry); err != nil {
		return err
	}
	return c.a.Exit(coEnv{env})
}

func (c co) Exit(env Env) error {
	if err := CheckCall(c, Exit); err != nil {
		return err
	}
	return c.a.Entry(coEnv{env})
}

func (c co) Receive(env Env, from ID, m Message) error { return c.a.Receive(coEnv{env}, from, m) }

// Children yields the children of the wrapped machine, when it is a
// Composite: Co passes their messages through unchanged.
func (c co) Children() iter.Seq2[string, Machine] {
	return func(yield func(string, Machine) bool) {
		if p, ok := c.a.(Composite); ok {
			for tag, m := range p.Children() {
				if !yield(tag, m) {
					return
				}
			}
		}
	}
}

type coDetecting struct{ co }

func (c coDetecting) Clone() Machine { return Co(c.a.Clone()) }
func (c coDetecting) Suspect(env Env, id ID) error {
	return c.a.(Detecting).Suspect(coEnv{env}, id)
}
func (c coDetecting) Trust(env Env, id ID) error { return c.a.(Detecting).Trust(coEnv{env}, id) }

func kindOf(m Machine) string {
	if s, ok := m.(interface{ String() string }); ok {
		return s.String()
	}
	return "machine"
}
