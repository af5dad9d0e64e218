package alg

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/sim"
)

// TestRestoreState snapshots every machine of a simulated run of every
// registered algorithm with every option before each of its inputs,
// restores the snapshot into a fresh machine (cs.RestoreState, what a
// networked node does after log compaction), and requires the restored
// machine to be the original: the same AppendState, State and Pending, and
// on the input the original takes next the same effects (messages, to
// whom, in order, and state changes) and the same state after it. The
// fault-tolerant algorithm runs with crashes, so its detector's state is
// in the snapshots too.
func TestRestoreState(t *testing.T) {
	for _, r := range restoreRuns() {
		if r.err != nil {
			t.Errorf("%s %v: %v", r.pr.Alg.Name, r.opts, r.err)
		}
		if r.inputs[cs.InEntry] == 0 || r.inputs[cs.InReceive] == 0 {
			t.Errorf("%s %v: inputs checked %v: need entries and receptions", r.pr.Alg.Name, r.opts, r.inputs)
		}
		if r.pr.Alg.Name == "ftraymond" && r.inputs[cs.InSuspect] == 0 {
			t.Errorf("%s: no failure-detector input checked", r.pr.Alg.Name)
		}
	}
}

// FuzzRestoreState: any bytes given to a fresh machine of any algorithm
// as a snapshot are refused with an error or accepted as a state that
// encodes back to the same bytes; nothing panics.
func FuzzRestoreState(f *testing.F) {
	runs := restoreRuns()
	for sel, r := range runs {
		for i, s := range r.snaps {
			if i%50 == 0 {
				f.Add(uint8(sel), s)
			}
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		r := runs[int(sel)%len(runs)]
		ms, err := r.pr.Machines()
		if err != nil {
			t.Fatal(err)
		}
		m := ms[len(ms)-1]
		if err := cs.RestoreState(m, b); err != nil {
			if !errors.Is(err, cs.ErrMalformed) {
				t.Fatalf("%s: %x: error %v does not wrap ErrMalformed", r.pr.Alg.Name, b, err)
			}
			return
		}
		if got := m.AppendState(nil); !bytes.Equal(got, b) {
			t.Fatalf("%s: %x restored as a state that encodes as %x", r.pr.Alg.Name, b, got)
		}
	})
}

// restoreRun is one simulated run of TestRestoreState: the problem, the
// snapshots taken and the first failure.
type restoreRun struct {
	pr     *Problem
	opts   map[string]string
	snaps  [][]byte
	inputs map[cs.InputKind]int
	err    error
}

// restoreRuns simulates every registered algorithm with every option for
// 200 entries on 6 processes, checking snapshots before every input
// (restoreSpy); once per test binary.
var restoreRuns = sync.OnceValue(func() []restoreRun {
	var runs []restoreRun
	for _, a := range All() {
		for _, opts := range optionVariants(a, true) {
			spec := a.SpecFor(6, 1, 3)
			if a.Name == "lkcs" || a.Name == "lkcs-paper" {
				spec = a.SpecFor(6, 0, 3)
			}
			spec.Options = opts
			run := restoreRun{opts: opts, inputs: map[cs.InputKind]int{}}
			pr, ms, err := Build(spec)
			if err != nil {
				run.err = err
				runs = append(runs, run)
				continue
			}
			run.pr = pr
			_, detecting := ms[0].(cs.Detecting)
			for i, m := range ms {
				ms[i] = &restoreSpy{Machine: m, fresh: m.Clone(), run: &run}
				if detecting {
					ms[i] = detectingSpy{ms[i].(*restoreSpy)}
				}
			}
			cfg := sim.Config{Machines: ms, Property: pr.Property, Lambda: 1, E: 1, Tt: 1,
				TransitDist: sim.Exp, Entries: 200, Seed: 3}
			if detecting {
				cfg.Crashes = []sim.Crash{{At: 40, Node: 2}, {At: 80, Node: 5}}
				cfg.Detector = detector.T
				cfg.DetectDelay = 2
			}
			if _, err := sim.Run(cfg); err != nil && run.err == nil {
				run.err = err
			}
			runs = append(runs, run)
		}
	}
	return runs
})

// restoreSpy checks, before each input of its machine, that a snapshot
// restored into a clone of fresh (the machine as built) continues as the
// machine does.
type restoreSpy struct {
	cs.Machine
	fresh cs.Machine
	run   *restoreRun
}

func (s *restoreSpy) Entry(env cs.Env) error { s.check(cs.Call(cs.Entry)); return s.Machine.Entry(env) }
func (s *restoreSpy) Exit(env cs.Env) error  { s.check(cs.Call(cs.Exit)); return s.Machine.Exit(env) }
func (s *restoreSpy) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	s.check(cs.Deliver(from, m))
	return s.Machine.Receive(env, from, m)
}

// detectingSpy is a restoreSpy of a machine that takes failure-detector
// input, which it checks too.
type detectingSpy struct{ *restoreSpy }

func (s detectingSpy) Suspect(env cs.Env, id cs.ID) error {
	s.check(cs.Input{Kind: cs.InSuspect, Who: id})
	return s.Machine.(cs.Detecting).Suspect(env, id)
}

func (s detectingSpy) Trust(env cs.Env, id cs.ID) error {
	s.check(cs.Input{Kind: cs.InTrust, Who: id})
	return s.Machine.(cs.Detecting).Trust(env, id)
}

func (s *restoreSpy) check(in cs.Input) {
	if s.run.err != nil {
		return
	}
	fail := func(format string, args ...any) {
		s.run.err = fmt.Errorf("P%d before %s: "+format, append([]any{s.Self(), in}, args...)...)
	}
	snap := s.AppendState(nil)
	s.run.snaps = append(s.run.snaps, snap)
	s.run.inputs[in.Kind]++
	restored := s.fresh.Clone()
	if err := cs.RestoreState(restored, snap); err != nil {
		fail("restoring its snapshot %x: %v", snap, err)
		return
	}
	if got := restored.AppendState(nil); !bytes.Equal(got, snap) {
		fail("restored state encodes as %x, the original as %x", got, snap)
		return
	}
	if restored.State() != s.State() || restored.Pending() != s.Pending() {
		fail("restored machine is %v pending %v, the original %v pending %v",
			restored.State(), restored.Pending(), s.State(), s.Pending())
		return
	}
	var want, got cs.Effects
	errWant, errGot := want.Step(s.Machine.Clone(), in), got.Step(restored, in)
	if (errWant == nil) != (errGot == nil) {
		fail("the original returns %v, the restored machine %v", errWant, errGot)
		return
	}
	if w, g := effectsKey(want.List), effectsKey(got.List); w != g {
		fail("the original's effects are %s, the restored machine's %s", w, g)
	}
}

// effectsKey is a comparable form of effects: each send's destination,
// kind and encoding, each state change.
func effectsKey(es []cs.Effect) string {
	var b []byte
	for _, e := range es {
		if e.IsSend() {
			b = fmt.Appendf(b, "send to P%d %s %x; ", e.To, cs.AppendKind(nil, e.Msg), e.Msg.AppendBinary(nil))
		} else {
			b = fmt.Appendf(b, "state %v; ", e.State)
		}
	}
	return string(b)
}
