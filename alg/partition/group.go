package partition

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// The scheme of section 5 over any 1-mutex A_1: "partition the system
// into K clusters containing approximately N/K nodes each, and executing
// algorithm A_1 (i.e., A_K with K = 1) within each cluster". The paper
// works it out for two of the baselines of section 4: Srimani and Reddy's
// algorithm, about N - 1 messages per entry, then about N/K - 1, and
// Raymond's, about 2(N - 1), then about 2(N/K - 1).

// Build returns the m machines of one cluster of m processes running A_1,
// numbered 1..m as if the cluster were the whole system, with the
// processes initial (numbered so) InCS.
type Build func(m int, initial []cs.ID) ([]cs.Machine, error)

// Of returns the machines of processes 1..n, in order: each cluster
// (Clusters) runs build's machines, which know their cluster's members
// only, as 1..m; Member renames them to the cluster's ids. p.Initial may
// hold at most one process of each cluster (K = 1 within it); build
// checks whatever else its algorithm requires.
func Of(p cs.Params, name string, build Build) ([]cs.Machine, error) {
	if err := p.CheckKExclusion(name, ""); err != nil {
		return nil, err
	}
	if err := p.CheckInitial(0, p.K); err != nil {
		return nil, err
	}
	ms := make([]cs.Machine, 0, p.N)
	for _, c := range Clusters(p.N, p.K) {
		base := c[0]
		var initial []cs.ID
		for _, id := range p.Initial {
			if id >= base && id < base+cs.ID(len(c)) {
				initial = append(initial, id-base+1)
			}
		}
		if len(initial) > 1 {
			return nil, fmt.Errorf("initial: processes %d and %d are in one cluster (%d..%d), which runs a 1-mutex: give at most one InCS per cluster", initial[0]+base-1, initial[1]+base-1, base, c[len(c)-1])
		}
		inner, err := build(len(c), initial)
		if err != nil {
			return nil, fmt.Errorf("cluster %d..%d: %w", base, c[len(c)-1], err)
		}
		for _, m := range inner {
			ms = append(ms, &Member{inner: m, base: base, size: cs.ID(len(c))})
		}
	}
	return ms, nil
}

// Member is one process's machine in a cluster: the inner machine of A_1
// numbers the cluster's processes 1..size, and Member adds base-1 to every
// id it gives out (its own, its messages' destinations) and takes it from
// every id it is given (its messages' senders). Messages pass through
// unchanged: they name processes, if at all, in the cluster's numbering,
// and only the cluster's members read them.
type Member struct {
	inner      cs.Machine
	base, size cs.ID
}

// shifted is the environment of the inner machine: it sends to the
// cluster member of the local id.
type shifted struct {
	cs.Env
	off cs.ID
}

// Send sends m to the process of local id to.
func (e shifted) Send(to cs.ID, m cs.Message) { e.Env.Send(to+e.off, m) }

func (m *Member) env(env cs.Env) cs.Env { return shifted{env, m.base - 1} }

// Self is the process's id in the whole system.
func (m *Member) Self() cs.ID { return m.inner.Self() + m.base - 1 }

// State is the inner machine's.
func (m *Member) State() cs.State { return m.inner.State() }

// Pending is the inner machine's.
func (m *Member) Pending() cs.Op { return m.inner.Pending() }

// Entry is the inner machine's Entry.
func (m *Member) Entry(env cs.Env) error { return m.inner.Entry(m.env(env)) }

// Exit is the inner machine's Exit.
func (m *Member) Exit(env cs.Env) error { return m.inner.Exit(m.env(env)) }

// Receive hands msg to the inner machine from the sender's local id; a
// sender outside the cluster is refused.
func (m *Member) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	if from < m.base || from >= m.base+m.size {
		return fmt.Errorf("P%d: %s from P%d, outside its cluster %d..%d", m.Self(), msg.Kind(), from, m.base, m.base+m.size-1)
	}
	return m.inner.Receive(m.env(env), from-m.base+1, msg)
}

// Clone copies the inner machine.
func (m *Member) Clone() cs.Machine {
	return &Member{inner: m.inner.Clone(), base: m.base, size: m.size}
}

// AppendState is the inner machine's state: the cluster is fixed by n and
// k.
func (m *Member) AppendState(b []byte) []byte { return m.inner.AppendState(b) }

// ReadState restores the inner machine (cs.Restorer).
func (m *Member) ReadState(r *cs.Reader) { cs.ReadState(r, m.inner) }

// String names the inner algorithm.
func (m *Member) String() string { return fmt.Sprintf("partition(%v)", m.inner) }

// Decoder returns the decoder of the messages of the scheme over an
// algorithm whose decoder depends on the number of processes: dec(m) for a
// cluster of m. Clusters differ in size by at most one; a message is read
// as one of a cluster of the smaller size, else of the larger.
func Decoder(n, k int, dec func(m int) cs.Decoder) cs.Decoder {
	lo, hi := dec(n/k), dec((n+k-1)/k)
	return func(kind string, b []byte) (cs.Message, error) {
		msg, err := lo(kind, b)
		if err != nil && n%k != 0 {
			return hi(kind, b)
		}
		return msg, err
	}
}
