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
// after the first call completes, the second never blocking (package
// alg/internal/compose, which gcs shares).
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
	"github.com/critsec/critsec/alg/internal/compose"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "ftgcs"

// Tags of the two sides' messages: those of (l,k)-GCS.
const (
	LsideTag = compose.LTag
	KsideTag = compose.KTag
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

// config is the composition as ftgcs makes it (package compose): an Exit
// waits for the initialization, and the l side learns the k side's known
// crashes after every input.
var config = &compose.Config{Name: Name, LName: "lside", KName: "kside", Init: true, KFirst: true, Sync: passCrashes}

// Machine is process P_i's part of ftgcs: the composition of Algorithm 3
// of (l,k)-GCS with the sides above.
type Machine struct {
	compose.Sides
	// dropped is set for the dropped designs, whose l side is
	// cs.Co(dropped): the complement of an Algorithm 1 machine, whose
	// initialization the machine reads (cs.Co does not pass
	// cs.Initializing on).
	dropped *ftraymond.Machine
}

// gated is a Machine with the Locks design, which declares cs.TrustGated.
type gated struct{ *Machine }

// Validate checks p: 0 <= l < k <= n and between l and k processes InCS
// initially (Definition 2 of the global paper).
func Validate(p cs.Params) error { return compose.Validate(p) }

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
		id, state := cs.ID(i+1), ks[i].State()
		m := &Machine{}
		var lside cs.Machine
		if ls == nil {
			lside = newInclusion(id, p.N, p.L, state)
			ms[i] = gated{m}
		} else {
			m.dropped = ls[i].(*ftraymond.Machine)
			lside = cs.Co(m.dropped)
			ms[i] = m
		}
		if m.Sides, err = compose.New(config, id, state, lside, ks[i]); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// Initialized reports whether the initialization is over (cs.Initializing):
// the k side's, and the l side's too for the dropped designs, which run
// their own.
func (m *Machine) Initialized() bool {
	if m.dropped != nil && !m.dropped.Initialized() {
		return false
	}
	return m.kside().Initialized()
}

// kside is the k side, an Algorithm 1 machine.
func (m *Machine) kside() *ftraymond.Machine { return m.K().(*ftraymond.Machine) }

// passCrashes passes the k side's known crashes (crashed_i of Algorithm
// 1) to the l side when it is an Inclusion (config.Sync).
func passCrashes(env cs.Env, lside, kside cs.Machine) {
	inc, ok := lside.(*Inclusion)
	if !ok {
		return
	}
	k := kside.(*ftraymond.Machine)
	for j := cs.ID(1); j <= cs.ID(inc.n); j++ {
		if k.HasCrashed(j) {
			inc.Crash(env, j)
		}
	}
}

// Suspect passes the detector's output to the k side (Algorithm 1, lines
// 43-45), and to the l side too in the dropped designs, which run their
// own Algorithm 1.
func (m *Machine) Suspect(env cs.Env, j cs.ID) error {
	return m.detect(env, j, cs.Detecting.Suspect)
}

// Trust passes the detector's output as Suspect does.
func (m *Machine) Trust(env cs.Env, j cs.ID) error {
	return m.detect(env, j, cs.Detecting.Trust)
}

// detect makes call (Suspect or Trust) on the k side, then on the l side
// when it takes detector input, then re-tests the wait.
func (m *Machine) detect(env cs.Env, j cs.ID, call func(cs.Detecting, cs.Env, cs.ID) error) error {
	if err := call(m.kside(), m.KEnv(env), j); err != nil {
		return err
	}
	if d, ok := m.L().(cs.Detecting); ok {
		if err := call(d, m.LEnv(env), j); err != nil {
			return err
		}
	}
	return m.Advance(env)
}

// Fence is the k side's token (cs.Fencing): the process is InCS exactly
// when its k side is.
func (m *Machine) Fence() cs.Fence { return m.kside().Fence() }

// Clone returns a deep copy.
func (m *Machine) Clone() cs.Machine { return m.clone() }

func (m *Machine) clone() *Machine {
	if m.dropped == nil {
		return &Machine{Sides: m.Copy()}
	}
	c := &Machine{dropped: m.dropped.Clone().(*ftraymond.Machine)}
	c.Sides = m.With(cs.Co(c.dropped), m.K().Clone())
	return c
}

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
