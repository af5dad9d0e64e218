// Package compose is the composition of the global (l,k)-CS algorithm of
// Kamei and Kakugawa, "Asynchronous message-passing distributed algorithm
// for the global critical section problem" (2019), section 5, Algorithm 3:
// a process owns an l-mutual inclusion object (the l side, the paper's
// lmin) and a k-mutual exclusion object (the k side, kmex). Exit is
// l.Exit() then k.Exit(), Entry is k.Entry() then l.Entry(); the process's
// own state changes right after the first call completes, before the
// second, which never blocks. Packages gcs and ftgcs embed Sides and add
// what is theirs (gcs: the children's constructors; ftgcs: the failure
// detector's input, the initialization and the fencing token).
//
// Deviations: a request stays pending until its second call has completed
// too (Sides.Pending), so a new request never overtakes it; and, for
// ftgcs only, an Exit may first wait for the k side's initialization
// (Config.Init) and each re-test may first update the l side (Config.Sync).
package compose

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// Tags of the sides' messages (cs.Tagged): the paper's names of the
// objects.
const (
	LTag = "lmin"
	KTag = "kmex"
)

// phase is the statement of Algorithm 3 a request is at.
type phase uint8

const (
	idle     phase = iota
	exitInit       // Exit: waiting for the k side's initialization (Config.Init)
	exitL          // Exit: l.Exit() in progress
	exitK          // Exit: k.Exit() in progress (the state is OutCS)
	entryK         // Entry: k.Entry() in progress
	entryL         // Entry: l.Entry() in progress (the state is InCS)
)

// Config is what an algorithm built on Sides chooses; its machines share
// one.
type Config struct {
	// Name is the algorithm's name, LName and KName its sides' names in
	// errors ("gcs: P1: lmin.Exit: ...").
	Name, LName, KName string
	// Init makes an Exit start the k side's initialization and wait for
	// it before l.Exit() (the k side implements Start(cs.Env) and
	// cs.Initializing; ftgcs).
	Init bool
	// KFirst makes AppendState write the k side before the l side.
	KFirst bool
	// Sync, when set, runs before every re-test of the wait, with the
	// l side's environment (ftgcs passes the k side's known crashes to
	// the l side).
	Sync func(env cs.Env, l, k cs.Machine)
}

// Validate checks p for the global (l,k)-CS problem: 0 <= l < k <= n and
// between l and k processes InCS initially (Definition 2 of the global
// paper). The sides check the rest.
func Validate(p cs.Params) error {
	if err := p.CheckSize(); err != nil {
		return err
	}
	return p.CheckInitial(p.L, p.K)
}

// starter is a k side with an initialization that an Exit starts.
type starter interface {
	cs.Initializing
	Start(env cs.Env)
}

// Sides is process P_i's part of the composition: its state, the phase
// of its request and its two sides.
type Sides struct {
	c     *Config
	i     cs.ID
	state cs.State
	phase phase
	l, k  cs.Machine
}

// New returns P_i's part, in state s, with sides l and k. With c.Init, k
// must implement Start(cs.Env) and cs.Initializing.
func New(c *Config, i cs.ID, s cs.State, l, k cs.Machine) (Sides, error) {
	if _, ok := k.(starter); c.Init && !ok {
		return Sides{}, fmt.Errorf("%s: P%d: the k side has no initialization to start (Start and Initialized)", c.Name, i)
	}
	return Sides{c: c, i: i, state: s, l: l, k: k}, nil
}

// With returns s with its sides replaced by l and k (a copy's).
func (s *Sides) With(l, k cs.Machine) Sides {
	c := *s
	c.l, c.k = l, k
	return c
}

// Copy returns a deep copy of s: each side is cloned.
func (s *Sides) Copy() Sides { return s.With(s.l.Clone(), s.k.Clone()) }

// L is the l side.
func (s *Sides) L() cs.Machine { return s.l }

// K is the k side.
func (s *Sides) K() cs.Machine { return s.k }

// Self is P_i.
func (s *Sides) Self() cs.ID { return s.i }

// State is the process's state.
func (s *Sides) State() cs.State { return s.state }

// Pending is the request in progress. It includes the non-blocking second
// call of each method, so a new request waits until both sides are idle.
func (s *Sides) Pending() cs.Op {
	switch s.phase {
	case exitInit, exitL, exitK:
		return cs.Exit
	case entryK, entryL:
		return cs.Entry
	}
	return cs.None
}

// LEnv is the l side's environment: its messages leave tagged LTag.
func (s *Sides) LEnv(env cs.Env) cs.Env { return cs.ChildEnv{Parent: env, Tag: LTag} }

// KEnv is the k side's environment: its messages leave tagged KTag.
func (s *Sides) KEnv(env cs.Env) cs.Env { return cs.ChildEnv{Parent: env, Tag: KTag} }

// Exit is Exit() of Algorithm 3: l.Exit() (Request), then k.Exit()
// (Release). With Config.Init it first starts the k side's initialization
// and waits for it.
func (s *Sides) Exit(env cs.Env) error {
	if err := cs.CheckCall(s, cs.Exit); err != nil {
		return err
	}
	if s.c.Init {
		s.k.(starter).Start(s.KEnv(env))
		s.phase = exitInit
		return s.Advance(env)
	}
	if err := s.l.Exit(s.LEnv(env)); err != nil {
		return s.fail(s.c.LName, "Exit", err)
	}
	s.phase = exitL
	return s.Advance(env)
}

// Entry is Entry() of Algorithm 3: k.Entry() (Request), then l.Entry()
// (Release).
func (s *Sides) Entry(env cs.Env) error {
	if err := cs.CheckCall(s, cs.Entry); err != nil {
		return err
	}
	if err := s.k.Entry(s.KEnv(env)); err != nil {
		return s.fail(s.c.KName, "Entry", err)
	}
	s.phase = entryK
	return s.Advance(env)
}

// fail wraps err from a side's call.
func (s *Sides) fail(side, call string, err error) error {
	return fmt.Errorf("%s: P%d: %s.%s: %w", s.c.Name, s.i, side, call, err)
}

// Advance runs Config.Sync, re-tests the call the request waits on and,
// when it has completed, performs the next statement of Algorithm 3.
func (s *Sides) Advance(env cs.Env) error {
	if s.c.Sync != nil {
		s.c.Sync(s.LEnv(env), s.l, s.k)
	}
	for {
		switch {
		case s.phase == exitInit && s.k.(starter).Initialized():
			if err := s.l.Exit(s.LEnv(env)); err != nil {
				return s.fail(s.c.LName, "Exit", err)
			}
			s.phase = exitL
		case s.phase == exitL && cs.Settled(s.l, cs.OutCS):
			s.state = cs.OutCS
			env.Changed(cs.OutCS)
			if err := s.k.Exit(s.KEnv(env)); err != nil {
				return s.fail(s.c.KName, "Exit", err)
			}
			s.phase = exitK
		case s.phase == exitK && cs.Settled(s.k, cs.OutCS):
			s.phase = idle
		case s.phase == entryK && cs.Settled(s.k, cs.InCS):
			s.state = cs.InCS
			env.Changed(cs.InCS)
			if err := s.l.Entry(s.LEnv(env)); err != nil {
				return s.fail(s.c.LName, "Entry", err)
			}
			s.phase = entryL
		case s.phase == entryL && cs.Settled(s.l, cs.InCS):
			s.phase = idle
		default:
			return nil
		}
	}
}

// Receive routes a side's message by its tag, then re-tests the wait.
func (s *Sides) Receive(env cs.Env, from cs.ID, msg cs.Message) error {
	t, ok := msg.(cs.Tagged)
	if !ok {
		return cs.Unexpected(s.i, from, msg)
	}
	var err error
	switch t.Tag {
	case LTag:
		err = s.l.Receive(s.LEnv(env), from, t.Msg)
	case KTag:
		err = s.k.Receive(s.KEnv(env), from, t.Msg)
	default:
		return cs.Unexpected(s.i, from, msg)
	}
	if err != nil {
		return err
	}
	return s.Advance(env)
}

// AppendState appends the state, the request's phase and both sides'
// states (each side's encoding is self-delimiting), the l side first
// unless Config.KFirst. Node snapshots keep these bytes, so the phase is
// numbered as each algorithm always has: without Config.Init, which
// never enters exitInit, from exitL = 1.
func (s *Sides) AppendState(b []byte) []byte {
	p := byte(s.phase)
	if !s.c.Init && s.phase != idle {
		p--
	}
	b = append(b, byte(s.state), p)
	first, second := s.l, s.k
	if s.c.KFirst {
		first, second = s.k, s.l
	}
	b = first.AppendState(b)
	return second.AppendState(b)
}

// ReadState sets the process and its two sides to the state AppendState
// wrote (cs.Restorer).
func (s *Sides) ReadState(r *cs.Reader) {
	s.state = cs.State(r.Phase(byte(cs.InCS) + 1))
	if s.c.Init {
		s.phase = phase(r.Phase(byte(entryL) + 1))
	} else if s.phase = phase(r.Phase(byte(entryL))); s.phase != idle {
		s.phase++
	}
	first, second := s.l, s.k
	if s.c.KFirst {
		first, second = s.k, s.l
	}
	cs.ReadState(r, first)
	cs.ReadState(r, second)
}

// String names the algorithm.
func (s *Sides) String() string { return s.c.Name }
