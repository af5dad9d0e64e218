package alg

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/critsec/critsec/alg/lkcs"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/sim"
)

// spy wraps a machine and records, for every message it sends or receives,
// the Go type of each kind and the message of each encoding: the two halves
// of a message's identity (cs.Message).
type spy struct {
	cs.Machine
	types map[string]reflect.Type
	seen  map[string]cs.Message // by kind, 0, encoding
	err   *error
}

type spyEnv struct {
	cs.Env
	s *spy
}

func (e spyEnv) Send(to cs.ID, m cs.Message) { e.s.see(m); e.Env.Send(to, m) }

func (s *spy) see(m cs.Message) {
	k, t := string(cs.AppendKind(nil, m)), innerType(m)
	if old, ok := s.types[k]; ok && old != t && *s.err == nil {
		*s.err = fmt.Errorf("kind %s is sent as both %v and %v", k, old, t)
	}
	s.types[k] = t
	key := string(m.AppendBinary(append(cs.AppendKind(nil, m), 0)))
	if old, ok := s.seen[key]; ok && !reflect.DeepEqual(old, m) && *s.err == nil {
		*s.err = fmt.Errorf("%#v and %#v have the same kind and encoding", old, m)
	}
	s.seen[key] = m
}

// innerType is the type of the message inside any envelopes.
func innerType(m cs.Message) reflect.Type {
	for {
		t, ok := m.(cs.Tagged)
		if !ok {
			return reflect.TypeOf(m)
		}
		m = t.Msg
	}
}

func (s *spy) Entry(env cs.Env) error { return s.Machine.Entry(spyEnv{env, s}) }
func (s *spy) Exit(env cs.Env) error  { return s.Machine.Exit(spyEnv{env, s}) }
func (s *spy) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	s.see(m)
	return s.Machine.Receive(spyEnv{env, s}, from, m)
}

// optionVariants returns the options to try a with: none (the defaults),
// and, when all is set, each choice of each option on its own.
func optionVariants(a Algorithm, all bool) []map[string]string {
	variants := []map[string]string{nil}
	for _, o := range a.Options {
		for _, c := range o.Choices {
			if all {
				variants = append(variants, map[string]string{o.Name: c})
			}
		}
	}
	return variants
}

// TestMessageKinds checks the contract of cs.Message on every registered
// algorithm with every option, on every message of a simulated run: within
// an algorithm a kind names one Go type, and two messages with the same
// kind and encoding are equal, so a runtime may key messages by kind and
// encoding (the model checker's interner, a network decoder).
func TestMessageKinds(t *testing.T) {
	for _, r := range messageRuns() {
		if r.err != nil || len(r.seen) == 0 {
			t.Errorf("%s %v: %d messages; %v", r.alg.Name, r.opts, len(r.seen), r.err)
		}
	}
}

// messageRun is runMessages's result for one algorithm and options.
type messageRun struct {
	alg  Algorithm
	opts map[string]string
	pr   *Problem
	seen map[string]cs.Message
	err  error
}

// messageRuns runs every registered algorithm with every option once per
// test binary (runMessages); TestMessageKinds, TestDecodeRoundTrip and
// FuzzDecode share the runs.
var messageRuns = sync.OnceValue(func() []messageRun {
	var runs []messageRun
	for _, a := range All() {
		for _, opts := range optionVariants(a, true) {
			pr, seen, err := runMessages(a, opts)
			runs = append(runs, messageRun{a, opts, pr, seen, err})
		}
	}
	return runs
})

// runMessages simulates a on 6 processes with options opts for 200
// entries and returns its problem and every message sent, by kind, 0 and
// encoding; the error is the first breach of the cs.Message contract, or
// a failure to build or run.
func runMessages(a Algorithm, opts map[string]string) (*Problem, map[string]cs.Message, error) {
	spec := a.SpecFor(6, 1, 3)
	if a.Name == lkcs.Name || a.Name == lkcs.Name+"-paper" {
		spec = a.SpecFor(6, 0, 3) // k_q - l_q >= 3 near the leader
	}
	spec.Options = opts
	pr, ms, err := Build(spec)
	if err != nil {
		return nil, nil, err
	}
	types, seen := map[string]reflect.Type{}, map[string]cs.Message{}
	var bad error
	for i, m := range ms {
		ms[i] = &spy{Machine: m, types: types, seen: seen, err: &bad}
	}
	if _, err := sim.Run(sim.Config{Machines: ms, Property: pr.Property, Lambda: 1, E: 1, Tt: 1, TransitDist: sim.Exp, Entries: 200, Seed: 1}); err != nil {
		return nil, nil, err
	}
	return pr, seen, bad
}
