// Package ftgcs implements a fault-tolerant algorithm for the global
// (l,k)-critical section problem under crash-stop failures: at most k live
// processes InCS, and no exit that leaves fewer than l InCS, counting the
// processes that crashed InCS without the exiter's detector having
// reported it (docs/ft-global-lk-cs.md states the problem: S1, S2, L, R).
// The global (l,k)-CS paper (Kamei and Kakugawa 2019) leaves such an
// algorithm as future work (section 6).
//
// The structure is the paper's (section 5, Algorithm 3): a process owns an
// l-mutual inclusion object (the l side) and a k-mutual exclusion object
// (the k side); Exit is lside.Exit() then kside.Exit(), Entry is
// kside.Entry() then lside.Entry(), the process's own state changing right
// after the first call completes, the second never blocking.
//
//   - The k side is the fault-tolerant k-mutex of Bouillaguet, Arantes and
//     Sens (2007), Algorithm 1 (package ftraymond), unchanged: S1 and entry
//     liveness with a trusting detector T and up to n-1 crashes.
//   - The l side is Inclusion: the complement's shape (Theorem 1 of the
//     global paper) with locks instead of Raymond's permissions, because a
//     permission from a process that leaves afterwards is stale once a crash
//     takes away the processes that kept the count (Inclusion explains it;
//     docs/ft-global-lk-cs.md, "Dropped designs", has the counterexamples).
//
// Where the papers are silent, critsec chooses (docs/ft-global-lk-cs.md,
// "The algorithm"):
//
//   - One detector, one initialization, one CRASH broadcast: the failure
//     detector's outputs go to the k side, whose INIT/ACK exchange
//     (Algorithm 1, lines 1-8 and 33-36) is the process's initialization,
//     and whose crashed_i (lines 37-45: its own detections and the CRASH
//     messages of others) is passed to the l side after every input.
//   - An Exit made before the initialization is over starts it and waits
//     for it (as an Entry of Algorithm 1 does, line 8): no l-side message
//     leaves a process before then, which keeps the model checker's
//     trust-first reduction sound (cs.TrustGated).
//   - The dropped designs stay selectable (option lside) so that their
//     counterexamples can be replayed: "complement" is Co(Algorithm 1) with
//     K = n-l, whose threshold decays by one permission per crash, and
//     "complement-fixed" the same with a threshold that does not decay,
//     which a stale permission still breaks.
//
// Every CS period's fencing token is the k side's (cs.Fencing).
package ftgcs

import (
	"fmt"

	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "ftgcs"

// Tags of the two sides' messages: those of (l,k)-GCS.
const (
	LsideTag = "lmin"
	KsideTag = "kmex"
)

// The designs of the l side (option lside).
const (
	// Locks is Inclusion, the design ftgcs uses.
	Locks = "locks"
	// Complement is Co(Algorithm 1) with K = n-l (dropped: the lower bound
	// decays with each crash).
	Complement = "complement"
	// ComplementFixed is Co(Algorithm 1) with K = n-l and a threshold
	// that does not decay (dropped: a stale permission breaks S2).
	ComplementFixed = "complement-fixed"
)

// phase is the statement of Algorithm 3 a request is at.
type phase uint8

const (
	idle     phase = iota
	exitInit       // Exit: waiting for the initialization
	exitL          // Exit: lside.Exit() in progress
	exitK          // Exit: kside.Exit() in progress (state is OutCS)
	entryK         // Entry: kside.Entry() in progress
	entryL         // Entry: lside.Entry() in progress (state is InCS)
)

// Machine is process P_i's part of ftgcs.
type Machine struct {
	i     cs.ID
	state cs.State
	phase phase
	kside *ftraymond.Machine
	// lside is an *Inclusion, or, for the dropped designs, cs.Co(dropped):
	// the complement of an Algorithm 1 machine, whose initialization the
	// machine reads (cs.Co does not pass cs.Initializing on).
	lside   cs.Machine
	dropped *ftraymond.Machine
}

// gated is a Machine with the Locks design, which declares cs.TrustGated.
type gated struct{ *Machine }

// Validate checks p: 0 <= l < k <= n and between l and k processes InCS
// initially (Definition 2 of the global paper).
func Validate(p cs.Params) error {
	if err := p.CheckSize(); err != nil {
		return err
	}
	return p.CheckInitial(p.L, p.K)
}

// New returns the machines of processes 1..n, in order, with the l side
// named by design (Locks, Complement or ComplementFixed).
func New(p cs.Params, design string) ([]cs.Machine, error) {
	if err := Validate(p); err != nil {
		return nil, err
	}
	kp := cs.Params{N: p.N, K: p.K, Initial: p.Initial}
	ks, err := ftraymond.New(kp)
	if err != nil {
		return nil, fmt.Errorf("ftgcs: k side: %w", err)
	}
	var ls []cs.Machine
	switch design {
	case Locks:
	case Complement, ComplementFixed:
		// Co(Algorithm 1) with K = n-l: its processes InCS are ftgcs's
		// processes OutCS.
		var out []cs.ID
		for id := cs.ID(1); int(id) <= p.N; id++ {
			if !p.InitiallyInCS(id) {
				out = append(out, id)
			}
		}
		build := ftraymond.New
		if design == ComplementFixed {
			build = ftraymond.NewFixed
		}
		if ls, err = build(cs.Params{N: p.N, K: p.N - p.L, Initial: out}); err != nil {
			return nil, fmt.Errorf("ftgcs: l side: %w", err)
		}
	default:
		return nil, fmt.Errorf("ftgcs: l side %q: choose %s, %s or %s", design, Locks, Complement, ComplementFixed)
	}
	ms := make([]cs.Machine, p.N)
	for i := range ms {
		id := cs.ID(i + 1)
		m := &Machine{i: id, kside: ks[i].(*ftraymond.Machine), state: ks[i].State()}
		if ls == nil {
			m.lside = newInclusion(id, p.N, p.L, m.state)
			ms[i] = gated{m}
			continue
		}
		m.dropped = ls[i].(*ftraymond.Machine)
		m.lside = cs.Co(m.dropped)
		ms[i] = m
	}
	return ms, nil
}

// Self is P_i.
func (m *Machine) Self() cs.ID { return m.i }

// State is the process's state.
func (m *Machine) State() cs.State { return m.state }

// Pending is the request in progress, including the non-blocking second
// call of each method, so a new request waits until both sides are idle
// (as in (l,k)-GCS, docs/global-lk-cs.md).
func (m *Machine) Pending() cs.Op {
	switch m.phase {
	case exitInit, exitL, exitK:
		return cs.Exit
	case entryK, entryL:
		return cs.Entry
	}
	return cs.None
}

// Initialized reports whether the initialization is over (cs.Initializing):
// the k side's, and the l side's too for the dropped designs, which run
// their own.
func (m *Machine) Initialized() bool {
	if m.dropped != nil && !m.dropped.Initialized() {
		return false
	}
	return m.kside.Initialized()
}

func (m *Machine) lenv(env cs.Env) cs.Env { return cs.ChildEnv{Parent: env, Tag: LsideTag} }
func (m *Machine) kenv(env cs.Env) cs.Env { return cs.ChildEnv{Parent: env, Tag: KsideTag} }

// Exit is Exit() of Algorithm 3: lside.Exit(), then kside.Exit(); before
// the initialization is over it starts it and waits.
func (m *Machine) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.kside.Start(m.kenv(env))
	m.phase = exitInit
	return m.advance(env)
}

// Entry is Entry() of Algorithm 3: kside.Entry(), then lside.Entry().
func (m *Machine) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	if err := m.kside.Entry(m.kenv(env)); err != nil {
		return fmt.Errorf("ftgcs: P%d: kside.Entry: %w", m.i, err)
	}
	m.phase = entryK
	return m.advance(env)
}

// advance passes the k side's known crashes to the l side, re-tests the
// call the request waits on and, when it has completed, performs the next
// statement of Algorithm 3.
func (m *Machine) advance(env cs.Env) error {
	if inc, ok := m.lside.(*Inclusion); ok {
		for j := cs.ID(1); j <= cs.ID(inc.n); j++ {
			if m.kside.HasCrashed(j) {
				inc.Crash(m.lenv(env), j)
			}
		}
	}
	for {
		switch {
		case m.phase == exitInit && m.kside.Initialized():
			if err := m.lside.Exit(m.lenv(env)); err != nil {
				return fmt.Errorf("ftgcs: P%d: lside.Exit: %w", m.i, err)
			}
			m.phase = exitL
		case m.phase == exitL && cs.Settled(m.lside, cs.OutCS):
			m.state = cs.OutCS
			env.Changed(cs.OutCS)
			if err := m.kside.Exit(m.kenv(env)); err != nil {
				return fmt.Errorf("ftgcs: P%d: kside.Exit: %w", m.i, err)
			}
			m.phase = exitK
		case m.phase == exitK && cs.Settled(m.kside, cs.OutCS):
			m.phase = idle
		case m.phase == entryK && cs.Settled(m.kside, cs.InCS):
			m.state = cs.InCS
			env.Changed(cs.InCS)
			if err := m.lside.Entry(m.lenv(env)); err != nil {
				return fmt.Errorf("ftgcs: P%d: lside.Entry: %w", m.i, err)
			}
			m.phase = entryL
		case m.phase == entryL && cs.Settled(m.lside, cs.InCS):
			m.phase = idle
		default:
			return nil
		}
	}
}

// Receive routes a side's message by its tag, then re-tests the wait.
func (m *Machine) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	t, ok := msg.(cs.Tagged)
	if !ok {
		return cs.Unexpected(m.i, from, msg)
	}
	var err error
	switch t.Tag {
	case LsideTag:
		err = m.lside.Receive(m.lenv(env), from, t.Msg)
	case KsideTag:
		err = m.kside.Receive(m.kenv(env), from, t.Msg)
	default:
		return cs.Unexpected(m.i, from, msg)
	}
	if err != nil {
		return err
	}
	return m.advance(env)
}

// Suspect passes the detector's output to the k side (Algorithm 1, lines
// 43-45), and to the l side too in the dropped designs, which run their
// own Algorithm 1.
func (m *Machine) Suspect(env cs.Env, j cs.ID) error {
	if err := m.kside.Suspect(m.kenv(env), j); err != nil {
		return err
	}
	if d, ok := m.lside.(cs.Detecting); ok {
		if err := d.Suspect(m.lenv(env), j); err != nil {
			return err
		}
	}
	return m.advance(env)
}

// Trust passes the detector's output as Suspect does.
func (m *Machine) Trust(env cs.Env, j cs.ID) error {
	if err := m.kside.Trust(m.kenv(env), j); err != nil {
		return err
	}
	if d, ok := m.lside.(cs.Detecting); ok {
		if err := d.Trust(m.lenv(env), j); err != nil {
			return err
		}
	}
	return m.advance(env)
}

// Fence is the k side's token (cs.Fencing): the process is InCS exactly
// when its k side is.
func (m *Machine) Fence() cs.Fence { return m.kside.Fence() }

// Clone returns a deep copy.
func (m *Machine) Clone() cs.Machine { return m.clone() }

func (m *Machine) clone() *Machine {
	c := *m
	c.kside = m.kside.Clone().(*ftraymond.Machine)
	if m.dropped != nil {
		c.dropped = m.dropped.Clone().(*ftraymond.Machine)
		c.lside = cs.Co(c.dropped)
	} else {
		c.lside = m.lside.Clone()
	}
	return &c
}

// AppendState appends the state, the request's phase and both sides'
// states (each side's encoding is self-delimiting).
func (m *Machine) AppendState(b []byte) []byte {
	b = append(b, byte(m.state), byte(m.phase))
	b = m.kside.AppendState(b)
	return m.lside.AppendState(b)
}

// ReadState sets the machine and its two sides to the state AppendState
// wrote (cs.Restorer).
func (m *Machine) ReadState(r *cs.Reader) {
	m.state = cs.State(r.Phase(byte(cs.InCS) + 1))
	m.phase = phase(r.Phase(byte(entryL) + 1))
	m.kside.ReadState(r)
	cs.ReadState(r, m.lside)
}

// String names the algorithm.
func (m *Machine) String() string { return Name }

// Clone returns a deep copy that keeps the declaration.
func (g gated) Clone() cs.Machine { return gated{g.clone()} }

// TrustGated declares cs.TrustGated. The k side's declaration
// (ftraymond.Machine.TrustGated) covers its own inputs; the l side sends
// nothing before the initialization is over (Exit waits for it, and an
// Entry completes only after the k side's, which waits for it too), and
// its answers to others' requests go to their senders, which have
// initialized and were therefore trusted by this process (their line 8
// waited for its ACK). So while some process has never trusted this one,
// a Trust(j) for a j it never trusted sends only on the channel to j,
// which no l-side input of the moment uses, and touches no l-side state.
func (gated) TrustGated() {}
