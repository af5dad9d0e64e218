// Package causal measures the message complexity of the local paper
// (Kamei and Kakugawa 2017, section 2.3): "the number of message exchanges
// triggered by a pair of invocations of exit-sequence and entry-sequence".
// It wraps the machines of a run so that every message carries the id of
// the process whose Entry or Exit call started the chain of handlers that
// sent it: the messages an Entry or Exit sends are that process's; the
// messages a handler sends belong to whoever the handled message belonged
// to. A Grant that P_j sends on receiving P_i's Release is therefore P_i's,
// as in the worst case of Lemma 3, and a Preempt, the Relinquish it causes
// and the Grant after it belong to the requester whose Request started
// them.
//
// The wrapped machines count into a shared Counts, so they are for a
// simulation run (package sim), not for the model checker: Clone shares
// the counts.
package causal

import (
	"encoding/binary"

	"github.com/critsec/critsec/cs"
)

// Counts are a run's messages and requests per process (index id-1).
type Counts struct {
	// Messages[i] counts the messages caused by process i+1's calls.
	Messages []int64
	// ByKind[i] counts them by message kind.
	ByKind []map[string]int64
	// Entries and Exits count process i+1's completed state changes.
	Entries, Exits []int64
}

// Pairs is the number of Exit+Entry pairs process id made: the larger of
// its completed entries and exits, so that a request cut off by the end of
// the run counts as a pair begun.
func (c *Counts) Pairs(id cs.ID) int64 { return max(c.Entries[id-1], c.Exits[id-1]) }

// Wrap wraps each machine of ms so that it counts into the returned
// Counts. The machines keep their ids and behaviour; their messages travel
// inside Message envelopes.
func Wrap(ms []cs.Machine) ([]cs.Machine, *Counts) {
	n := len(ms)
	c := &Counts{Messages: make([]int64, n), ByKind: make([]map[string]int64, n), Entries: make([]int64, n), Exits: make([]int64, n)}
	out := make([]cs.Machine, n)
	for i, m := range ms {
		c.ByKind[i] = map[string]int64{}
		out[i] = &machine{Machine: m, c: c}
	}
	return out, c
}

// Message is a message with the process it is attributed to.
type Message struct {
	Cause cs.ID
	Msg   cs.Message
}

// Kind is the inner message's kind.
func (m Message) Kind() string { return m.Msg.Kind() }

// Words is the inner message's size.
func (m Message) Words() int { return m.Msg.Words() }

// AppendBinary appends the cause and the inner message's encoding.
func (m Message) AppendBinary(b []byte) []byte {
	return m.Msg.AppendBinary(binary.AppendVarint(b, int64(m.Cause)))
}

type machine struct {
	cs.Machine
	c *Counts
}

// env sends for cause and counts; it counts the state changes of self.
type env struct {
	cs.Env
	c           *Counts
	self, cause cs.ID
}

func (e env) Send(to cs.ID, m cs.Message) {
	e.c.Messages[e.cause-1]++
	e.c.ByKind[e.cause-1][m.Kind()]++
	e.Env.Send(to, Message{Cause: e.cause, Msg: m})
}

func (e env) Changed(s cs.State) {
	if s == cs.InCS {
		e.c.Entries[e.self-1]++
	} else {
		e.c.Exits[e.self-1]++
	}
	e.Env.Changed(s)
}

func (m *machine) envFor(e cs.Env, cause cs.ID) cs.Env {
	return env{Env: e, c: m.c, self: m.Self(), cause: cause}
}

func (m *machine) Entry(e cs.Env) error { return m.Machine.Entry(m.envFor(e, m.Self())) }
func (m *machine) Exit(e cs.Env) error  { return m.Machine.Exit(m.envFor(e, m.Self())) }

func (m *machine) Receive(e cs.Env, from cs.ID, msg cs.Message) error {
	w, ok := msg.(Message)
	if !ok {
		return cs.Unexpected(m.Self(), from, msg)
	}
	return m.Machine.Receive(m.envFor(e, w.Cause), from, w.Msg)
}

func (m *machine) Clone() cs.Machine { return &machine{Machine: m.Machine.Clone(), c: m.c} }
