package check_test

import (
	"fmt"
	"math/bits"

	"github.com/critsec/critsec/cs"
)

// ra is a small Ricart-Agrawala mutual exclusion machine kept for the
// checker's own tests. With greedy set it is deliberately broken: a
// requesting process defers every REQUEST whatever its timestamp, so two
// concurrent requesters wait for each other forever (a real deadlock). It
// implements cs.Detecting: a suspected process counts as having replied,
// which makes it tolerate crashes under a perfect failure detector.
type ra struct {
	i, n   int
	greedy bool
	testPhase
	h, last  int64
	replied  uint64 // bit j: j granted (or is suspected) for the current request
	deferred uint64
	suspects uint64
}

type raReq struct{ TS int64 }
type raRep struct{}

func (raReq) Kind() string                   { return "REQUEST" }
func (raRep) Kind() string                   { return "REPLY" }
func (raReq) Words() int                     { return 4 }
func (raRep) Words() int                     { return 3 }
func (m raReq) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), m.TS) }
func (raRep) AppendBinary(b []byte) []byte   { return append(b, 'P') }

func newRA(n int, greedy bool) []cs.Machine {
	ms := make([]cs.Machine, n)
	for i := range ms {
		ms[i] = &ra{i: i + 1, n: n, greedy: greedy}
	}
	return ms
}

func (m *ra) Self() cs.ID { return cs.ID(m.i) }

// testPhase is the phase of the test machines here and in liveness_test.go:
// 0 out, 1 requesting (an Entry pending), 2 in.
type testPhase struct{ phase uint8 }

func (p testPhase) State() cs.State {
	if p.phase == 2 {
		return cs.InCS
	}
	return cs.OutCS
}

func (p testPhase) Pending() cs.Op {
	if p.phase == 1 {
		return cs.Entry
	}
	return cs.None
}
func (m *ra) others() uint64 { return (uint64(1)<<(m.n+1) - 2) &^ (1 << m.i) }

func (m *ra) Entry(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Entry); err != nil {
		return err
	}
	m.phase, m.last, m.replied = 1, m.h+1, m.suspects
	for j := 1; j <= m.n; j++ {
		if j != m.i && m.suspects&(1<<j) == 0 {
			env.Send(cs.ID(j), raReq{m.last})
		}
	}
	m.try(env)
	return nil
}

func (m *ra) try(env cs.Env) {
	if m.phase == 1 && m.replied&m.others() == m.others() {
		m.phase = 2
		env.Changed(cs.InCS)
	}
}

func (m *ra) Exit(env cs.Env) error {
	if err := cs.CheckCall(m, cs.Exit); err != nil {
		return err
	}
	m.phase = 0
	env.Changed(cs.OutCS)
	for d := m.deferred; d != 0; d &= d - 1 {
		env.Send(cs.ID(bits.TrailingZeros64(d)), raRep{})
	}
	m.deferred = 0
	return nil
}

func (m *ra) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	j := int(from)
	switch msg := msg.(type) {
	case raReq:
		m.h = max(m.h, msg.TS)
		mine := m.last < msg.TS || (m.last == msg.TS && m.i < j)
		if m.phase == 2 || (m.phase == 1 && (m.greedy || mine)) {
			m.deferred |= 1 << j
		} else {
			env.Send(from, raRep{})
		}
	case raRep:
		if m.suspects&(1<<j) != 0 {
			return nil // already counted when j was suspected
		}
		if m.phase != 1 {
			return fmt.Errorf("ra: P%d got a REPLY from P%d with no request", m.i, j)
		}
		m.replied |= 1 << j
		m.try(env)
	default:
		return cs.Unexpected(m.Self(), from, msg)
	}
	return nil
}

func (m *ra) Suspect(env cs.Env, id cs.ID) error {
	m.suspects |= 1 << id
	m.deferred &^= 1 << id
	m.replied |= 1 << id
	m.try(env)
	return nil
}

func (m *ra) Trust(env cs.Env, id cs.ID) error {
	m.suspects &^= 1 << id
	return nil
}

func (m *ra) Clone() cs.Machine { c := *m; return &c }

func (m *ra) AppendState(b []byte) []byte {
	b = append(b, m.phase)
	b = cs.AppendInt(b, m.h)
	b = cs.AppendInt(b, m.last)
	b = cs.AppendInt(b, int64(m.replied))
	b = cs.AppendInt(b, int64(m.deferred))
	return cs.AppendInt(b, int64(m.suspects))
}
