// Package ideal holds the specification of a k-mutual exclusion object as a
// machine, for compositional model checking
// (docs/design/compositional-checking.md). MUTIN (Kamei and Kakugawa 2019,
// Algorithms 1-2) uses its mutual-exclusion object mx only through the CS
// interface: it calls mx.Entry and mx.Exit and waits until mx.state_i changes.
// The model checker can therefore replace mx by what mx promises, and explore
// the parent against every behaviour of that promise instead of against one
// implementation's messages.
//
// One Object per process. Entry only records the request; nothing is sent.
// The model checker grants it (delivers Grant, an action of its own) at any
// step at which fewer than K processes' objects of the same child are InCS,
// to any of the requesters, in any order: "at most K holders, every request
// eventually granted". Exit completes at once, as it does in Maekawa's and
// Ricart-Agrawala's algorithms. Outside the model checker nothing grants, so
// an Object never enters: it is not an algorithm.
//
// The checker finds Objects by walking cs.Composite parents. An Object
// wrapped in cs.Co is not found (Co yields its inner machine's children,
// not the machine): abstract the object inside, as kmex = Co(MUTIN) is
// abstracted through MUTIN's mx.
package ideal

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// Object is process P_i's part of an ideal k-mutual exclusion object.
type Object struct {
	i       cs.ID
	k       int
	state   cs.State
	pending cs.Op
}

// New returns the objects of processes 1..p.N with capacity p.K (at most K
// InCS), the processes of p.Initial InCS.
func New(p cs.Params) ([]cs.Machine, error) {
	if p.N < 1 || p.K < 1 || p.K > p.N {
		return nil, fmt.Errorf("ideal: n = %d, k = %d: need 1 <= k <= n", p.N, p.K)
	}
	if len(p.Initial) > p.K {
		return nil, fmt.Errorf("ideal: %d processes InCS initially, more than k = %d", len(p.Initial), p.K)
	}
	ms := make([]cs.Machine, p.N)
	for i := range ms {
		o := &Object{i: cs.ID(i + 1), k: p.K}
		if p.InitiallyInCS(o.i) {
			o.state = cs.InCS
		}
		ms[i] = o
	}
	return ms, nil
}

// Capacity is K: the most processes the object lets be InCS at once.
func (o *Object) Capacity() int { return o.k }

// Self implements cs.Machine.
func (o *Object) Self() cs.ID { return o.i }

// State implements cs.Machine.
func (o *Object) State() cs.State { return o.state }

// Pending implements cs.Machine.
func (o *Object) Pending() cs.Op { return o.pending }

// Entry records the request; the grant comes from outside (Grant).
func (o *Object) Entry(cs.Env) error {
	if err := cs.CheckCall(o, cs.Entry); err != nil {
		return err
	}
	o.pending = cs.Entry
	return nil
}

// Exit completes at once.
func (o *Object) Exit(env cs.Env) error {
	if err := cs.CheckCall(o, cs.Exit); err != nil {
		return err
	}
	o.state = cs.OutCS
	env.Changed(cs.OutCS)
	return nil
}

// Receive takes Grant, from the process itself, while an Entry is pending.
func (o *Object) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	if _, ok := m.(Grant); !ok || from != o.i || o.pending != cs.Entry {
		return cs.Unexpected(o.i, from, m)
	}
	o.state, o.pending = cs.InCS, cs.None
	env.Changed(cs.InCS)
	return nil
}

// Clone implements cs.Machine.
func (o *Object) Clone() cs.Machine { c := *o; return &c }

// AppendState appends 'I', the state and the pending request.
func (o *Object) AppendState(b []byte) []byte {
	return append(b, 'I', byte(o.state), byte(o.pending))
}

// ReadState implements cs.Restorer.
func (o *Object) ReadState(r *cs.Reader) {
	r.Expect('I')
	o.state = cs.State(r.Phase(byte(cs.InCS)))
	o.pending = cs.Op(r.Phase(byte(cs.Exit)))
}

// String names the object in messages.
func (o *Object) String() string { return fmt.Sprintf("ideal(%d)", o.k) }

// Grant is the model checker's grant of an Object to a requester. It never
// travels between processes.
type Grant struct{}

// Kind implements cs.Message.
func (Grant) Kind() string { return "GRANT" }

// Words implements cs.Message.
func (Grant) Words() int { return 3 }

// AppendBinary implements cs.Message.
func (Grant) AppendBinary(b []byte) []byte { return append(b, 'G') }
