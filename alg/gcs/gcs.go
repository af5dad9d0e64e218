// Package gcs implements (l,k)-GCS, the algorithm for the global (l,k)-critical
// section problem (at least l and at most k processes InCS, 0 <= l < k <= n)
// of Kamei and Kakugawa, "Asynchronous message-passing distributed algorithm
// for the global critical section problem" (2019), section 5, Algorithm 3.
//
// A process owns two CS objects: lmin = MUTIN(l) (package mutin) and
// kmex = Co(MUTIN(n-k)), k-mutual exclusion by the complementary theorem
// (package kmutex). Exit is lmin.Exit() then kmex.Exit(); Entry is
// kmex.Entry() then lmin.Entry(). As section 5 says, the process's own state
// changes right after lmin.Exit() (resp. kmex.Entry()) completes, before
// kmex.Exit() (resp. lmin.Entry()), which never block. In every configuration
// the invariant #G_i >= #L_i and #G_i <= #K_i of Lemma 8 holds, so
// l <= #L <= #G <= #K <= k.
//
// The children's messages travel in cs.Tagged envelopes with tags "lmin" and
// "kmex". GCS uses its children only through the CS interface, so it takes
// them as constructors (Options): the paper's are MUTIN(l) (package mutin)
// and Co(MUTIN(n-k)) (package kmutex), and any other l-mutual inclusion or
// k-mutual exclusion serves. Deviations: those of the children (the
// registry's mutin.Fixed forwards every Release to an outstanding Query; see
// docs/design/mutin-fix.md).
package gcs

import (
	"fmt"
	"iter"

	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "gcs"

// Tags of the children's messages.
const (
	LminTag = "lmin"
	KmexTag = "kmex"
)

// phase is the statement of Algorithm 3 a request is at.
type phase uint8

const (
	idle      phase = iota
	exitLmin        // Exit: lmin.Exit() in progress
	exitKmex        // Exit: kmex.Exit() in progress (state_i is OutCS)
	entryKmex       // Entry: kmex.Entry() in progress
	entryLmin       // Entry: lmin.Entry() in progress (state_i is InCS)
)

// Machine is process P_i's part of (l,k)-GCS.
type Machine struct {
	i          cs.ID
	state      cs.State
	phase      phase
	lmin, kmex cs.Machine
}

// Options are the constructors of the children. Each is called with the
// GCS parameters narrowed to its problem (Lmin: N, L, Quorums, Initial;
// Kmex: N, K, Quorums, Initial, Options) and must return n machines whose
// initial states are those of p.Initial.
type Options struct {
	// Lmin builds an l-mutual inclusion object (the paper: MUTIN(l)).
	Lmin func(p cs.Params) ([]cs.Machine, error)
	// Kmex builds a k-mutual exclusion object (the paper: Co(MUTIN(n-k))).
	Kmex func(p cs.Params) ([]cs.Machine, error)
}

// Validate checks p for (l,k)-GCS: 0 <= l < k <= n and between l and k
// processes are InCS initially. The children check the rest (the
// quorums).
func Validate(p cs.Params) error {
	if err := p.CheckSize(); err != nil {
		return err
	}
	return p.CheckInitial(p.L, p.K)
}

// New returns the machines of processes 1..n, in order, with children built
// by o. Initially GCS.state_i = lmin.state_i = kmex.state_i (section 5).
func New(p cs.Params, o Options) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	if o.Lmin == nil || o.Kmex == nil {
		return nil, fmt.Errorf("gcs: Options.Lmin and Options.Kmex must both be set")
	}
	lmin, err := o.Lmin(cs.Params{N: p.N, L: p.L, Quorums: p.Quorums, Initial: p.Initial, Options: p.Options})
	if err != nil {
		return nil, fmt.Errorf("gcs: lmin: %w", err)
	}
	kmex, err := o.Kmex(cs.Params{N: p.N, K: p.K, Quorums: p.Quorums, Initial: p.Initial, Options: p.Options})
	if err != nil {
		return nil, fmt.Errorf("gcs: kmex: %w", err)
	}
	for i := range p.N {
		if lmin[i].State() != kmex[i].State() {
			return nil, fmt.Errorf("gcs: P%d starts %s in lmin but %s in kmex: the children must start in the same states", i+1, lmin[i].State(), kmex[i].State())
		}
	}
	ms := make([]cs.Machine, p.N)
	for i := range ms {
		m := &Machine{i: cs.ID(i + 1), lmin: lmin[i], kmex: kmex[i]}
		m.state = m.lmin.State()
		ms[i] = m
	}
	return ms, nil
}

// Self is P_i.
func (m *Machine) Self() cs.ID { return m.i }

// State is state_i.
func (m *Machine) State() cs.State { return m.state }

// Pending is the request in progress. It includes the non-blocking second
// call of each method, so a new request waits until both children are idle.
func (m *Machine) Pending() cs.Op {
	switch m.phase {
	case exitLmin, exitKmex:
		return cs.Exit
	case entryKmex, entryLmin:
		return cs.Entry
	}
	return cs.None
}

// Children yields lmin and kmex (cs.Composite).
func (m *Machine) Children() iter.Seq2[string, cs.Machine] {
	return func(yield func(string, cs.Machine) bool) {
		_ = yield(LminTag, m.lmin) && yield(KmexTag, m.kmex)
	}
}

func (m *Machine) lminEnv(env cs.Env) cs.Env { return cs.ChildEnv{Parent: env, Tag: LminTag} }
func (m *Machine) kmexEnv(env cs.Env) cs.Env { return cs.ChildEnv{Parent: env, Tag: KmexTag} }

// Exit is Exit() of Algorithm 3: lmin.Exit() (Request), then kmex.Exit()
// (Release).
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	if err := m.lmin.Exit(m.lminEnv(env)); err != nil {
		return fmt.Errorf("gcs: P%d: lmin.Exit: %w", m.i, err)
	}
	m.phase = exitLmin
	return m.advance(env)
}

// Entry is Entry() of Algorithm 3: kmex.Entry() (Request), then lmin.Entry()
// (Release).
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	if err := m.kmex.Entry(m.kmexEnv(env)); err != nil {
		return fmt.Errorf("gcs: P%d: kmex.Entry: %w", m.i, err)
	}
	m.phase = entryKmex
	return m.advance(env)
}

// advance re-tests the child call the request waits on and, when it has
// completed, performs the next statement of Algorithm 3.
func (m *Machine) advance(env cs.Env) error {
	for {
		switch {
		case m.phase == exitLmin && cs.Settled(m.lmin, cs.OutCS):
			m.state = cs.OutCS
			env.Changed(cs.OutCS)
			if err := m.kmex.Exit(m.kmexEnv(env)); err != nil {
				return fmt.Errorf("gcs: P%d: kmex.Exit: %w", m.i, err)
			}
			m.phase = exitKmex
		case m.phase == exitKmex && cs.Settled(m.kmex, cs.OutCS):
			m.phase = idle
		case m.phase == entryKmex && cs.Settled(m.kmex, cs.InCS):
			m.state = cs.InCS
			env.Changed(cs.InCS)
			if err := m.lmin.Entry(m.lminEnv(env)); err != nil {
				return fmt.Errorf("gcs: P%d: lmin.Entry: %w", m.i, err)
			}
			m.phase = entryLmin
		case m.phase == entryLmin && cs.Settled(m.lmin, cs.InCS):
			m.phase = idle
		default:
			return nil
		}
	}
}

// Receive routes a child's message by its tag, then re-tests the wait.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	t, ok := msg.(cs.Tagged)
	if !ok {
		return cs.Unexpected(m.i, from, msg)
	}
	var err error
	switch t.Tag {
	case LminTag:
		err = m.lmin.Receive(m.lminEnv(env), from, t.Msg)
	case KmexTag:
		err = m.kmex.Receive(m.kmexEnv(env), from, t.Msg)
	default:
		return cs.Unexpected(m.i, from, msg)
	}
	if err != nil {
		return err
	}
	return m.advance(env)
}

// Clone returns a deep copy.
func (m *Machine) Clone() cs.Machine {
	c := *m
	c.lmin = m.lmin.Clone()
	c.kmex = m.kmex.Clone()
	return &c
}

// AppendState appends state_i, the request's phase and both children's
// states (each child's encoding is self-delimiting).
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state), byte(m.phase))
	b = m.lmin.AppendState(b)
	return m.kmex.AppendState(b)
}

// ReadState sets the machine and its two objects to the state
// AppendState wrote (cs.Restorer).
func (m *Machine) ReadState(r *cs.Reader) {
	m.state = cs.State(r.Phase(byte(cs.InCS) + 1))
	m.phase = phase(r.Phase(byte(entryLmin) + 1))
	cs.ReadState(r, m.lmin)
	cs.ReadState(r, m.kmex)
}

// String names the algorithm.
func (m *Machine) String() string { return Name }
