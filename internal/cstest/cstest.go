// Package cstest is an in-memory network for unit tests of machines: it
// delivers messages in a seeded random order (FIFO per link), lets idle
// processes call Entry and Exit, and checks the bounds on #InCS after every
// step. It is deliberately small; the simulator (package sim) and the model
// checker (package check) are the real runtimes.
package cstest

import (
	"fmt"
	"math/rand/v2"

	"critsec/cs"
)

type envelope struct {
	from cs.ID
	msg  cs.Message
}

// Net runs a set of machines, one per process, ids 1..n.
type Net struct {
	Machines []cs.Machine
	Lo, Hi   int
	// links[from][to] is the FIFO queue of messages in transit.
	links [][][]envelope
	rng   *rand.Rand
	// Sent counts every message sent; Entries and Exits count completed
	// state changes.
	Sent, Entries, Exits int
	inCS                 int
	cur                  cs.ID
	err                  error
}

// New returns a network of ms (ms[i] is process i+1) that checks
// lo <= #InCS <= hi.
func New(ms []cs.Machine, lo, hi int, seed uint64) *Net {
	n := len(ms)
	net := &Net{Machines: ms, Lo: lo, Hi: hi, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
	net.links = make([][][]envelope, n+1)
	for i := range net.links {
		net.links[i] = make([][]envelope, n+1)
	}
	for _, m := range ms {
		if m.State() == cs.InCS {
			net.inCS++
		}
	}
	return net
}

// Send implements cs.Env for the machine being called.
func (net *Net) Send(to cs.ID, m cs.Message) {
	net.Sent++
	net.links[net.cur][to] = append(net.links[net.cur][to], envelope{net.cur, m})
}

// Changed implements cs.Env and checks the bounds.
func (net *Net) Changed(s cs.State) {
	if s == cs.InCS {
		net.inCS++
		net.Entries++
	} else {
		net.inCS--
		net.Exits++
	}
	if (net.inCS < net.Lo || net.inCS > net.Hi) && net.err == nil {
		net.err = fmt.Errorf("bounds violated: %d processes InCS after P%d became %s, want %d..%d", net.inCS, net.cur, s, net.Lo, net.Hi)
	}
}

// InCS is the number of processes InCS now.
func (net *Net) InCS() int { return net.inCS }

// Step performs one random action: deliver the head of a random non-empty
// link, or (with budget left) let a random idle process call Entry or Exit.
// It returns false when nothing is enabled.
func (net *Net) Step(requests bool) (bool, error) {
	type action struct{ from, to cs.ID }
	var acts []action
	for f := range net.links {
		for t, q := range net.links[f] {
			if len(q) > 0 {
				acts = append(acts, action{cs.ID(f), cs.ID(t)})
			}
		}
	}
	if requests {
		for _, m := range net.Machines {
			if m.Pending() == cs.None {
				acts = append(acts, action{0, m.Self()})
			}
		}
	}
	if len(acts) == 0 {
		return false, net.err
	}
	a := acts[net.rng.IntN(len(acts))]
	m := net.Machines[a.to-1]
	net.cur = a.to
	var err error
	if a.from == 0 {
		if m.State() == cs.OutCS {
			err = m.Entry(net)
		} else {
			err = m.Exit(net)
		}
	} else {
		q := net.links[a.from][a.to]
		e := q[0]
		net.links[a.from][a.to] = q[1:]
		err = m.Receive(net, e.from, e.msg)
	}
	if err != nil {
		return false, err
	}
	return true, net.err
}

// Run takes random steps, requests allowed, until want state changes have
// completed. It fails on a bound violation, a machine error, or when nothing
// is enabled.
func (net *Net) Run(want int) error {
	for net.Entries+net.Exits < want {
		ok, err := net.Step(true)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("stuck after %d state changes: nothing enabled", net.Entries+net.Exits)
		}
	}
	return nil
}
