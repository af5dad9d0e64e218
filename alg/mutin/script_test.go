package mutin_test

import (
	"testing"

	"critsec/cs"
)

// script is a network whose schedule the test writes down: which process
// calls, which link delivers its head message. Links are FIFO.
type script struct {
	t     testing.TB
	ms    []cs.Machine
	links [][][]cs.Message // links[from][to]
	cur   cs.ID
}

func newScript(t testing.TB, ms []cs.Machine) *script {
	s := &script{t: t, ms: ms, links: make([][][]cs.Message, len(ms)+1)}
	for i := range s.links {
		s.links[i] = make([][]cs.Message, len(ms)+1)
	}
	return s
}

func (s *script) Send(to cs.ID, m cs.Message) { s.links[s.cur][to] = append(s.links[s.cur][to], m) }
func (s *script) Changed(cs.State)            {}

// call makes P_i call Exit if it is InCS and Entry otherwise.
func (s *script) call(i cs.ID) {
	s.t.Helper()
	s.cur = i
	m := s.ms[i-1]
	var err error
	if m.State() == cs.InCS {
		err = m.Exit(s)
	} else {
		err = m.Entry(s)
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

// deliver hands the head of link from->to to its receiver.
func (s *script) deliver(from, to cs.ID) {
	s.t.Helper()
	q := s.links[from][to]
	if len(q) == 0 {
		s.t.Fatalf("link P%d->P%d is empty", from, to)
	}
	s.links[from][to] = q[1:]
	s.cur = to
	if err := s.ms[to-1].Receive(s, from, q[0]); err != nil {
		s.t.Fatal(err)
	}
}

// drain delivers messages, lowest (from, to) link first, until every link
// but the held ones is empty.
func (s *script) drain(held ...[2]cs.ID) {
	s.t.Helper()
	for {
		progress := false
		for f := range s.links {
			for to := range s.links[f] {
				if len(s.links[f][to]) == 0 || holds(held, cs.ID(f), cs.ID(to)) {
					continue
				}
				s.deliver(cs.ID(f), cs.ID(to))
				progress = true
			}
		}
		if !progress {
			return
		}
	}
}

func holds(held [][2]cs.ID, f, to cs.ID) bool {
	for _, h := range held {
		if h == [2]cs.ID{f, to} {
			return true
		}
	}
	return false
}

// deadlocked reports a global deadlock: no message in transit and every
// process blocked in a request.
func (s *script) deadlocked() bool {
	for f := range s.links {
		for _, q := range s.links[f] {
			if len(q) > 0 {
				return false
			}
		}
	}
	for _, m := range s.ms {
		if m.Pending() == cs.None {
			return false
		}
	}
	return true
}
