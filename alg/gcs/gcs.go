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
// The children's messages travel in cs.Tagged envelopes with tags "lmin"
// and "kmex"; the composition is package compose, which ftgcs shares. GCS
// uses its children only through the CS interface, so it takes them as
// constructors (Options): the paper's are MUTIN(l) (package mutin) and
// Co(MUTIN(n-k)) (package kmutex), and any other l-mutual inclusion or
// k-mutual exclusion serves. Deviations: those of the children (the
// registry's mutin.Fixed forwards every Release to an outstanding Query;
// see docs/design/mutin-fix.md) and that of package compose (a new request
// waits until the second call of the last one has completed).
package gcs

import (
	"fmt"
	"iter"

	"github.com/critsec/critsec/alg/internal/compose"
	"github.com/critsec/critsec/cs"
)

// Name is the algorithm's name in the CLI, the registry and traces.
const Name = "gcs"

// Tags of the children's messages.
const (
	LminTag = compose.LTag
	KmexTag = compose.KTag
)

// config is the composition as GCS makes it (package compose).
var config = &compose.Config{Name: Name, LName: "lmin", KName: "kmex"}

// Machine is process P_i's part of (l,k)-GCS: the composition of Algorithm
// 3 with lmin as the l side and kmex as the k side.
type Machine struct{ compose.Sides }

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
func Validate(p cs.Params) error { return compose.Validate(p) }

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
		sides, err := compose.New(config, cs.ID(i+1), lmin[i].State(), lmin[i], kmex[i])
		if err != nil {
			return nil, err
		}
		ms[i] = &Machine{sides}
	}
	return ms, nil
}

// Children yields lmin and kmex (cs.Composite).
func (m *Machine) Children() iter.Seq2[string, cs.Machine] {
	return func(yield func(string, cs.Machine) bool) {
		_ = yield(LminTag, m.L()) && yield(KmexTag, m.K())
	}
}

// Clone returns a deep copy.
func (m *Machine) Clone() cs.Machine { return &Machine{m.Copy()} }
