package check

import (
	"io"
	"slices"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
)

// violation turns a phase-1 finding into a Violation with its path,
// replaying the actions from the initial state to record their events.
func (e *explorer) violation(base int, f *finding) *Violation {
	var codes []uint32
	for id := base + f.from; id != 0; id = int(e.parent[id]) {
		codes = append(codes, e.act[id])
	}
	slices.Reverse(codes)
	return e.replayViolation(codes, f)
}

// replayViolation replays the actions codes from the initial state, then
// f's failing action and continuation, and returns the violation with the
// path's events.
func (e *explorer) replayViolation(codes []uint32, f *finding) *Violation {
	rp := newReplayer(e.x, e.root)
	for _, c := range codes {
		rp.step(decodeAct(c, rp.cur))
	}
	if f.act != noAction {
		rp.step(decodeAct(f.act, rp.cur))
	}
	for _, a := range f.ext {
		rp.step(a)
	}
	return &Violation{Kind: f.prob.kind, Detail: f.prob.detail, Path: rp.path}
}

// replayer re-executes a path and records each step's events.
type replayer struct {
	st   *stepper
	cur  *gstate
	path []Step
}

func newReplayer(x *model, root *gstate) *replayer {
	st := newStepper(x)
	st.record = true
	st.memo = nil // paths are replayed on real machine calls
	return &replayer{st: st, cur: root}
}

func (r *replayer) step(a Action) {
	r.st.t = float64(len(r.path) + 1)
	r.st.events = nil
	r.st.apply(r.cur, a)
	r.cur = r.st.materialize()
	if a.Kind == Deliver && len(r.st.events) > 0 {
		a.Msg = r.st.events[0].Msg
	}
	if a.Kind == Grant {
		a.Msg = r.st.x.ideals[a.Index].name
	}
	r.path = append(r.path, Step{T: len(r.path) + 1, Action: a, Events: r.st.events})
}

// Replay executes path (its actions only) on clones of cfg.Machines under
// cfg's rules and returns the steps with their events, plus the first
// property failure on the way (nil if none). Deadlocks are not re-checked.
// Algorithm tests use it to confirm that a counterexample is real.
func Replay(cfg Config, path []Action) ([]Step, *Violation, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	e := newExplorer(cfg)
	rp := newReplayer(e.x, e.root)
	for _, a := range path {
		if err := rp.enabled(a); err != nil {
			return rp.path, nil, err
		}
		rp.step(a)
		if p := rp.st.prob; p != nil {
			return rp.path, &Violation{Kind: p.kind, Detail: p.detail, Path: rp.path}, nil
		}
	}
	return rp.path, nil, nil
}

// enabled returns an error unless a is one of the actions enabled now or a
// call an unlimited budget would allow.
func (r *replayer) enabled(a Action) error {
	acts := r.st.actions(refill(r.cur), nil)
	for _, b := range acts {
		if b.Kind == a.Kind && b.Node == a.Node && b.From == a.From && b.Index == a.Index && b.Who == a.Who && (b.Op == a.Op || a.Op == cs.None) {
			return nil
		}
	}
	if a.Kind == Deliver && a.Index > 0 {
		return nil // a repeated message in an unordered channel: same successor as its first copy
	}
	return &replayError{a}
}

type replayError struct{ a Action }

func (e *replayError) Error() string {
	return "check: replay: action " + e.a.String() + " is not enabled"
}

// Actions returns the actions of path.
func Actions(path []Step) []Action {
	as := make([]Action, len(path))
	for i, s := range path {
		as[i] = s.Action
	}
	return as
}

// WriteTrace writes path in critsec's trace format (docs/trace.md): the
// header h with Runtime "check", then every step's events, with t the step
// number. A trusting detector's initial suspicions are not events (the
// header names the detector).
func WriteTrace(w io.Writer, h trace.Header, path []Step) error {
	h.Runtime = "check"
	tw := trace.NewWriter(w, h)
	for _, s := range path {
		for _, ev := range s.Events {
			tw.Event(ev)
		}
	}
	return tw.Flush()
}
