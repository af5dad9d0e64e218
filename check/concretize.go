package check

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/critsec/critsec/cs"
)

// Concretize looks for a run of the concrete system that shows the same
// violation as v, a counterexample found with children abstracted
// (compositional checking, abstract.go). abstract is the configuration v
// was found with (its machines hold ideal objects); concrete has the same
// parents with their real children. The parents cannot tell the two
// apart except through their children's grants, so Concretize searches,
// breadth-first over at most limit states, for a concrete path that makes
// the abstract path's parent steps in the same order (the same requests,
// the same parent messages delivered), delivers the children's own
// messages in between in any order, and has each child grant (become InCS
// after a delivery) exactly where the abstract path has the ideal object
// grant. The parents then receive the same inputs in the same order, so
// they act the same. The search is depth-first and tries the parents' next
// step first. A concrete violation met on the way (a step that fails
// before the abstract path's last) is returned as it is: it is real. The path found is replayed on the concrete system:
// for a bounds, convention or error violation its last step fails the
// same way; for a deadlock, the children's messages still in transit are
// delivered (granting nobody) and the state reached is decided by the
// checker's deadlock analysis. It returns the concrete violation, or nil
// with the reason none was found. Every violation it returns comes from a
// replay of the concrete system (Replay, or the deadlock analysis of the
// replayed last state), never from the abstract one.
func Concretize(concrete, abstract Config, v *Violation, limit int) (*Violation, string, error) {
	if err := concrete.Validate(); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := abstract.Validate(); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ax := newExplorer(abstract)
	if len(ax.x.ideals) == 0 {
		return nil, "", fmt.Errorf("%w: the abstract configuration has no ideal child", ErrConfig)
	}
	steps, err := ax.parentSteps(Actions(v.Path))
	if err != nil {
		return nil, "", err
	}
	if steps == nil {
		return nil, "paths with crashes or detector outputs are not replayed on the concrete system", nil
	}
	cx := newExplorer(concrete)
	if concrete.Unordered {
		return nil, "paths with unordered channels are not replayed on the concrete system", nil
	}
	c := &concretizer{e: cx, st: newStepper(cx.x), ideals: ax.x.ideals, steps: steps, drain: v.Kind == KindDeadlock}
	path, reason := c.search(limit)
	if path == nil {
		return nil, reason, nil
	}
	_, viol, err := Replay(concrete, path)
	if err != nil {
		return nil, "", err
	}
	if viol != nil {
		return viol, "", nil // real: Replay found it on the concrete system
	}
	if v.Kind != KindDeadlock {
		return nil, fmt.Sprintf("the concrete path does not fail as the abstract one (%s)", v.Kind), nil
	}
	end := newReplayer(cx.x, cx.root)
	for _, a := range path {
		end.step(a)
	}
	w := cx.workers[0]
	switch sv := w.analyzeStop(end.cur); sv.outcome {
	case deadlocked, violatedLater:
		for _, a := range sv.ext {
			end.step(a)
		}
		return &Violation{Kind: sv.prob.kind, Detail: sv.prob.detail, Path: end.path}, "", nil
	case undecided:
		return nil, "the concrete state the path reaches could not be decided: " + sv.prob.detail, nil
	}
	return nil, "on the concrete system the state the path reaches is not deadlocked: the real children let the request complete", nil
}

// parentStep is one step of an abstract path as the parents see it: a
// request, the delivery of a parent message (by its key), or a grant.
type parentStep struct {
	a   Action
	key []byte // Deliver: the delivered message's key (msgKey)
}

// parentSteps replays path on the abstract system and returns its steps
// with the keys of the messages delivered.
func (e *explorer) parentSteps(path []Action) ([]parentStep, error) {
	rp := newReplayer(e.x, e.root)
	var out []parentStep
	for _, a := range path {
		if err := rp.enabled(a); err != nil {
			return nil, err
		}
		ps := parentStep{a: a}
		switch a.Kind {
		case Deliver:
			m, _ := e.x.head(rp.cur, a.From, a.Node)
			ps.key = e.x.tab.msg(m).enc
		case Request, Grant:
		default:
			return nil, nil // crashes and detector outputs: not matched (no ideal child with them: validateIdeals)
		}
		out = append(out, ps)
		rp.step(a)
	}
	return out, nil
}

// concretizer is the search of Concretize.
type concretizer struct {
	e      *explorer
	st     *stepper
	ideals []idealChild
	steps  []parentStep
	// drain: a path must end with no child message in transit (a
	// deadlock's, whose last state is decided after it).
	drain bool
}

// node is a state of the search: a concrete state, how many abstract steps
// it has matched, and how it was reached.
type node struct {
	s      *gstate
	k      int
	parent *node
	a      Action
	failed bool // a property failed on the action into s
}

// search returns the concrete actions of a path matching every step, or nil
// and why none was found. It is depth-first and tries the next abstract
// step before the children's deliveries, so it delivers a child message
// only when the parents' steps cannot go on without it, which finds a path
// quickly when the children's order does not matter; it backtracks into
// the other orders.
func (c *concretizer) search(limit int) ([]Action, string) {
	seen := map[[2]uint64]bool{}
	stack := [][]*node{{{s: c.e.root}}}
	explored := 0
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(*top) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		n := (*top)[0]
		*top = (*top)[1:]
		if n.failed || n.k == len(c.steps) && (!c.drain || !c.childInFlight(n.s)) {
			var path []Action
			for p := n; p.parent != nil; p = p.parent {
				path = append(path, p.a)
			}
			slices.Reverse(path)
			return path, ""
		}
		fp := fingerprintOf(n.s)
		key := [2]uint64{fp.a ^ uint64(n.k)<<48, fp.b}
		if seen[key] {
			continue
		}
		seen[key] = true
		if explored++; explored > limit {
			return nil, fmt.Sprintf("the search for a concrete path stopped at its limit of %d states", limit)
		}
		stack = append(stack, c.moves(n))
	}
	return nil, "no concrete path makes the same parent steps in the same order with the real children granting after a delivery where the ideal object granted (every order of their messages was tried); the abstract counterexample may need an order of grants the real children cannot produce, or another order of the parents' steps"
}

// moves returns the successors of n: the next abstract step when the
// concrete system can take it, and the delivery of each child message at
// the head of its channel that grants nobody, or grants exactly as the
// next abstract step does.
func (c *concretizer) moves(n *node) []*node {
	x := c.e.x
	var out []*node
	var next *parentStep
	if n.k < len(c.steps) {
		next = &c.steps[n.k]
	}
	if next != nil && next.a.Kind != Grant {
		if a, ok := c.enabled(n.s, next); ok {
			// A property that fails ends the path: a concrete violation,
			// even before the abstract path's last step.
			failed := c.st.apply(n.s, a) != nil
			out = append(out, &node{s: c.st.materialize(), k: n.k + 1, parent: n, a: a, failed: failed})
		}
	}
	for i := 0; i < len(n.s.flight); {
		l := n.s.flight[i].link
		head := n.s.flight[i].m
		for i < len(n.s.flight) && n.s.flight[i].link == l {
			i++
		}
		if !c.isChild(x.tab.msg(head).msg) {
			continue
		}
		from, to := x.ends(l)
		a := Action{Kind: Deliver, Node: to, From: from}
		before := c.granted(n.s, to)
		if c.st.apply(n.s, a) != nil {
			out = append(out, &node{s: c.st.materialize(), k: n.k, parent: n, a: a, failed: true})
			continue
		}
		after := c.granted(&c.st.next, to)
		k := n.k
		if g := after &^ before; g != 0 {
			if next == nil || next.a.Kind != Grant || next.a.Node != to || g != 1<<next.a.Index {
				continue // a grant the abstract path does not make here
			}
			k++
		}
		out = append(out, &node{s: c.st.materialize(), k: k, parent: n, a: a})
	}
	return out
}

// enabled returns the concrete action of abstract step p in s, if s
// enables it: a request by an idle process, or the delivery of the same
// parent message at the head of its channel.
func (c *concretizer) enabled(s *gstate, p *parentStep) (Action, bool) {
	x := c.e.x
	a, ok := x.stillEnabled(s, p.a)
	if ok && a.Kind == Deliver {
		m, _ := x.head(s, a.From, a.Node)
		ok = bytes.Equal(x.tab.msg(m).enc, p.key)
	}
	return a, ok
}

// isChild reports whether m is a message of an abstracted child: its kind
// starts with the child's path.
func (c *concretizer) isChild(m cs.Message) bool {
	kind := string(cs.AppendKind(nil, m))
	for _, d := range c.ideals {
		if strings.HasPrefix(kind, d.name+".") {
			return true
		}
	}
	return false
}

// childInFlight reports whether a child message is in transit in s.
func (c *concretizer) childInFlight(s *gstate) bool {
	for _, f := range s.flight {
		if c.isChild(c.e.x.tab.msg(f.m).msg) {
			return true
		}
	}
	return false
}

// granted returns, as a bit set over the abstract ideals' indices, which
// of process id's concrete children at those paths are InCS in s.
func (c *concretizer) granted(s *gstate, id cs.ID) uint32 {
	m := c.e.x.tab.machine(s.procs[id-1].m).m
	var g uint32
	for i, d := range c.ideals {
		if ch := childAt(m, strings.Split(d.name, ".")); ch != nil && ch.State() == cs.InCS {
			g |= 1 << i
		}
	}
	return g
}

// childAt follows path from m through cs.Composite children.
func childAt(m cs.Machine, path []string) cs.Machine {
	for _, tag := range path {
		p, ok := m.(cs.Composite)
		if !ok {
			return nil
		}
		var found cs.Machine
		for t, ch := range p.Children() {
			if t == tag {
				found = ch
				break
			}
		}
		if found == nil {
			return nil
		}
		m = found
	}
	return m
}
