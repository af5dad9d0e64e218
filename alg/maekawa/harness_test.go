package maekawa_test

import (
	"fmt"
	"testing"

	"critsec/cs"
)

// harness is a scripted network for unit tests: the test decides which
// message is delivered when. Links are FIFO; #InCS <= 1 is checked after
// every state change.
type harness struct {
	t     *testing.T
	ms    []cs.Machine
	links [][][]cs.Message // links[from][to]
	cur   cs.ID
	// sent counts network messages; inCS the processes InCS now.
	sent, inCS int
}

func newHarness(t *testing.T, ms []cs.Machine) *harness {
	h := &harness{t: t, ms: ms, links: make([][][]cs.Message, len(ms)+1)}
	for i := range h.links {
		h.links[i] = make([][]cs.Message, len(ms)+1)
	}
	for _, m := range ms {
		if m.State() == cs.InCS {
			h.inCS++
		}
	}
	return h
}

func (h *harness) Send(to cs.ID, m cs.Message) {
	h.sent++
	h.links[h.cur][to] = append(h.links[h.cur][to], m)
}

func (h *harness) Changed(s cs.State) {
	if s == cs.InCS {
		h.inCS++
	} else {
		h.inCS--
	}
	if h.inCS > 1 {
		h.t.Fatalf("mutual exclusion violated: %d processes InCS after P%d entered", h.inCS, h.cur)
	}
}

func (h *harness) m(i cs.ID) cs.Machine { return h.ms[i-1] }

func (h *harness) entry(i cs.ID) {
	h.t.Helper()
	h.cur = i
	if err := h.m(i).Entry(h); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) exit(i cs.ID) {
	h.t.Helper()
	h.cur = i
	if err := h.m(i).Exit(h); err != nil {
		h.t.Fatal(err)
	}
}

// deliver delivers the oldest message on the link from -> to, which must be
// of the given kind.
func (h *harness) deliver(from, to cs.ID, kind string) {
	h.t.Helper()
	if err := h.try(from, to, kind); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) try(from, to cs.ID, kind string) error {
	q := h.links[from][to]
	if len(q) == 0 {
		return fmt.Errorf("no message in transit P%d -> P%d (want %s)", from, to, kind)
	}
	if q[0].Kind() != kind {
		return fmt.Errorf("next message P%d -> P%d is %s, want %s", from, to, q[0].Kind(), kind)
	}
	h.links[from][to] = q[1:]
	h.cur = to
	return h.m(to).Receive(h, from, q[0])
}

// inTransit lists the messages in transit as "P1->P2 KIND".
func (h *harness) inTransit() []string {
	var out []string
	for f := range h.links {
		for t, q := range h.links[f] {
			for _, m := range q {
				out = append(out, fmt.Sprintf("P%d->P%d %s", f, t, m.Kind()))
			}
		}
	}
	return out
}

// settle delivers messages (lowest link first) and lets every process that
// is InCS exit, until nothing is in transit and nobody is InCS.
func (h *harness) settle() {
	h.t.Helper()
	for steps := 0; ; steps++ {
		if steps > 100000 {
			h.t.Fatal("settle: no quiescence after 100000 steps")
		}
		moved := false
		for _, m := range h.ms {
			if m.State() == cs.InCS && m.Pending() == cs.None {
				h.exit(m.Self())
				moved = true
			}
		}
		for f := range h.links {
			for to, q := range h.links[f] {
				if len(q) > 0 {
					h.deliver(cs.ID(f), cs.ID(to), q[0].Kind())
					moved = true
				}
			}
		}
		if !moved {
			return
		}
	}
}
