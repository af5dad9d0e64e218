package check_test

import (
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/ideal"
)

// wrapper is the thinnest parent of an ideal object: its state is the
// child's, and it forwards every call and message.
type wrapper struct{ c cs.Machine }

func (w wrapper) Self() cs.ID                 { return w.c.Self() }
func (w wrapper) State() cs.State             { return w.c.State() }
func (w wrapper) Pending() cs.Op              { return w.c.Pending() }
func (w wrapper) Clone() cs.Machine           { return wrapper{w.c.Clone()} }
func (w wrapper) AppendState(b []byte) []byte { return w.c.AppendState(b) }
func (w wrapper) Entry(env cs.Env) error      { return w.c.Entry(wrapEnv{env}) }
func (w wrapper) Exit(env cs.Env) error       { return w.c.Exit(wrapEnv{env}) }
func (w wrapper) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	t, ok := m.(cs.Tagged)
	if !ok || t.Tag != "x" {
		return cs.Unexpected(w.Self(), from, m)
	}
	return w.c.Receive(wrapEnv{env}, from, t.Msg)
}
func (w wrapper) Children() iter.Seq2[string, cs.Machine] {
	return func(yield func(string, cs.Machine) bool) { yield("x", w.c) }
}

// wrapEnv forwards the child's state changes, which are the parent's.
type wrapEnv struct{ cs.Env }

// TestIdealGrants: the checker grants an ideal k-mutual exclusion object to
// at most k processes at once, and to every requester in every order: with
// n processes each entering once, every number of holders 0..k is reached
// (an assertion of k-1 fails) and k is never exceeded, and no request is
// left deadlocked.
func TestIdealGrants(t *testing.T) {
	for _, c := range []struct{ n, k int }{{3, 1}, {3, 2}, {4, 2}, {4, 3}} {
		objs, err := ideal.New(cs.Params{N: c.n, K: c.k})
		if err != nil {
			t.Fatal(err)
		}
		ms := make([]cs.Machine, c.n)
		for i, o := range objs {
			ms[i] = wrapper{o}
		}
		name := fmt.Sprintf("n=%d k=%d", c.n, c.k)
		res := mustRun(t, check.Config{Machines: ms, Property: global(t, c.n, 0, c.k), Budget: 2})
		if res.Verdict != check.OK {
			t.Fatalf("%s: %s %+v", name, res.Verdict, res.Violation)
		}
		// Each process: OutCS, waiting, InCS, OutCS again, and the
		// others' in any combination within k holders.
		res = mustRun(t, check.Config{Machines: ms, Property: global(t, c.n, 0, c.k-1), Budget: 2})
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindBounds {
			t.Fatalf("%s, at most %d asserted: %s %+v", name, c.k-1, res.Verdict, res.Violation)
		}
		grants := 0
		for _, s := range res.Violation.Path {
			if s.Action.Kind == check.Grant {
				grants++
				if !strings.HasPrefix(s.String(), fmt.Sprint(s.T)+": ideal x grants P") {
					t.Errorf("%s: step %q", name, s)
				}
			}
		}
		if grants != c.k {
			t.Errorf("%s: the shortest path to %d holders has %d grants", name, c.k, grants)
		}
	}
}

// abstracted returns the machines of spec with its children tags replaced
// by ideal objects, and the property.
func abstracted(t *testing.T, spec alg.Spec, tags ...string) check.Config {
	t.Helper()
	pr, err := alg.Resolve(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range tags {
		if err := pr.Abstract(tag); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := pr.Machines()
	if err != nil {
		t.Fatal(err)
	}
	return check.Config{Machines: ms, Property: pr.Property, Budget: 2}
}

// TestAbstractAgrees: for every algorithm with a mutual-exclusion child,
// at n = 3 on majority(3), the run with mx
// replaced by the ideal object (and, for gcs, kmex too) agrees with the
// concrete run: ok with the algorithm's own bounds, a bounds violation
// with a bound one tighter; and it has fewer states.
func TestAbstractAgrees(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		spec alg.Spec
		tags []string
	}{
		{alg.Spec{Alg: "mutin", N: 3, L: intp(1), Coterie: "majority"}, []string{"mx"}},
		{alg.Spec{Alg: "mutin", N: 3, L: intp(2), Coterie: "majority"}, []string{"mx"}},
		{alg.Spec{Alg: "kmutex", N: 3, K: intp(2), Coterie: "majority"}, []string{"mx"}},
		{alg.Spec{Alg: "gcs", N: 3, L: intp(1), K: intp(2), Coterie: "majority"}, []string{"mx"}},
		{alg.Spec{Alg: "gcs", N: 3, L: intp(1), K: intp(2), Coterie: "majority"}, []string{"mx", "kmex"}},
		{alg.Spec{Alg: "gcs", N: 3, L: intp(0), K: intp(2), Coterie: "majority", Options: map[string]string{"mx": "ra"}}, []string{"mx"}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s n=%d %v %v abstract %v", c.spec.Alg, c.spec.N, c.spec.Coterie, c.spec.Options, c.tags)
		if testing.Short() && c.spec.Alg == "gcs" && len(c.tags) == 1 {
			continue // the concrete gcs runs take a few seconds each
		}
		concrete := abstracted(t, c.spec)
		abstract := abstracted(t, c.spec, c.tags...)
		for _, tighter := range []bool{false, true} {
			if tighter {
				lo, hi := concrete.Property.GlobalBounds()
				if lo <= hi-1 {
					hi--
				} else {
					lo++
				}
				concrete.Property = global(t, c.spec.N, lo, hi)
				abstract.Property = concrete.Property
			}
			cr := mustRun(t, concrete)
			ar := mustRun(t, abstract)
			t.Logf("%s tighter=%v: concrete %s %d states, abstract %s %d states", name, tighter, cr.Verdict, cr.States, ar.Verdict, ar.States)
			want := check.OK
			if tighter {
				want = check.Violated
			}
			if cr.Verdict != want || ar.Verdict != want {
				t.Errorf("%s tighter=%v: concrete %s %+v, abstract %s %+v; want %s", name, tighter, cr.Verdict, cr.Violation, ar.Verdict, ar.Violation, want)
				continue
			}
			if want == check.Violated && (cr.Violation.Kind != check.KindBounds || ar.Violation.Kind != check.KindBounds) {
				t.Errorf("%s: violations %s and %s, want bounds", name, cr.Violation.Kind, ar.Violation.Kind)
			}
			if want == check.OK && ar.States >= cr.States {
				t.Errorf("%s: %d states abstract, %d concrete", name, ar.States, cr.States)
			}
		}
	}
}

// TestAbstractKeepsCounterexamples: the published MUTIN's deadlocks
// (docs/design/mutin-fix.md) are found with mx abstracted, where the
// abstraction adds no behaviour the parent's deadlock needs: the lost
// Release on the arcs of five processes (l = 4) and gcs-paper on
// majority(4).
func TestAbstractKeepsCounterexamples(t *testing.T) {
	intp := func(v int) *int { return &v }
	arcs := [][]cs.ID{{1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 1}, {5, 1, 2}}
	for _, spec := range []alg.Spec{
		{Alg: "mutin-paper", N: 5, L: intp(4), Quorums: arcs},
		{Alg: "gcs-paper", N: 4, L: intp(1), K: intp(2), Coterie: "majority"},
	} {
		cfg := abstracted(t, spec, "mx")
		cfg.Search, cfg.MaxStates = check.DepthFirst, 5_000_000
		res := mustRun(t, cfg)
		if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock {
			t.Fatalf("%s n=%d: %s after %d states %+v", spec.Alg, spec.N, res.Verdict, res.States, res.Violation)
		}
		if _, v, err := check.Replay(cfg, check.Actions(res.Violation.Path)); err != nil || (v != nil && v.Kind != check.KindDeadlock) {
			t.Fatalf("%s: replay: %v %+v", spec.Alg, err, v)
		}
		t.Logf("%s n=%d: %d states, %d steps: %s", spec.Alg, spec.N, res.States, len(res.Violation.Path), res.Violation.Detail)
	}
}

// TestConcretize: the abstract counterexamples of the published MUTIN are
// replayed on the concrete system, with Maekawa's algorithm as mx: the
// concrete path makes the same parent steps, with Maekawa's messages in
// between, and ends in a deadlock the concrete checker confirms; the
// bounds violation of an assertion one tighter replays too.
func TestConcretize(t *testing.T) {
	intp := func(v int) *int { return &v }
	arcs := [][]cs.ID{{1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 1}, {5, 1, 2}}
	for _, spec := range []alg.Spec{
		{Alg: "mutin-paper", N: 5, L: intp(4), Quorums: arcs},
		{Alg: "gcs-paper", N: 4, L: intp(1), K: intp(2), Coterie: "majority"},
	} {
		abs := abstracted(t, spec, "mx")
		abs.Search = check.DepthFirst
		res := mustRun(t, abs)
		if res.Verdict != check.Violated {
			t.Fatalf("%s: %s", spec.Alg, res.Verdict)
		}
		conc := abstracted(t, spec)
		v, why, err := check.Concretize(conc, abs, res.Violation, 1_000_000)
		if err != nil || v == nil {
			t.Fatalf("%s: %v %s", spec.Alg, err, why)
		}
		if v.Kind != check.KindDeadlock {
			t.Fatalf("%s: concrete %s: %s", spec.Alg, v.Kind, v.Detail)
		}
		mx := 0
		for _, s := range v.Path {
			if s.Action.Kind == check.Grant {
				t.Fatalf("%s: a grant in the concrete path: %s", spec.Alg, s)
			}
			if strings.Contains(s.Action.Msg, "mx.") {
				mx++
			}
		}
		if mx == 0 {
			t.Fatalf("%s: no mx message in the concrete path", spec.Alg)
		}
		t.Logf("%s: abstract %d steps, concrete %d steps (%d mx deliveries): %s", spec.Alg, len(res.Violation.Path), len(v.Path), mx, v.Detail)
	}
	// The shortest abstract deadlock of the published MUTIN on the arcs of
	// five processes grants mx in an order Maekawa's algorithm cannot
	// follow: no concrete path makes its parent steps.
	if !testing.Short() {
		spec := alg.Spec{Alg: "mutin-paper", N: 5, L: intp(4), Quorums: arcs}
		abs := abstracted(t, spec, "mx")
		res := mustRun(t, abs)
		v, why, err := check.Concretize(abstracted(t, spec), abs, res.Violation, 2_000_000)
		if err != nil || v != nil || !strings.Contains(why, "every order of their messages was tried") {
			t.Fatalf("shortest abstract deadlock: %v %+v %s", err, v, why)
		}
	}
	// A bounds violation: MUTIN(1) asserted to keep 2 InCS.
	spec := alg.Spec{Alg: "mutin", N: 3, L: intp(1), Coterie: "majority"}
	abs, conc := abstracted(t, spec, "mx"), abstracted(t, spec)
	abs.Property, conc.Property = global(t, 3, 1, 2), global(t, 3, 1, 2)
	res := mustRun(t, abs)
	v, why, err := check.Concretize(conc, abs, res.Violation, 1_000_000)
	if err != nil || v == nil || v.Kind != check.KindBounds {
		t.Fatalf("bounds: %v %s %+v", err, why, v)
	}
}

// pair is a parent of two ideal objects, a (its state) and b (never
// used); swap yields them in the other order, which must not matter: an
// object is one path in every process, whatever its position.
type pair struct {
	a, b cs.Machine
	swap bool
}

func (p pair) Self() cs.ID                 { return p.a.Self() }
func (p pair) State() cs.State             { return p.a.State() }
func (p pair) Pending() cs.Op              { return p.a.Pending() }
func (p pair) Clone() cs.Machine           { return pair{p.a.Clone(), p.b.Clone(), p.swap} }
func (p pair) AppendState(b []byte) []byte { return p.b.AppendState(p.a.AppendState(b)) }
func (p pair) Entry(env cs.Env) error      { return p.a.Entry(wrapEnv{env}) }
func (p pair) Exit(env cs.Env) error       { return p.a.Exit(wrapEnv{env}) }
func (p pair) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	t, ok := m.(cs.Tagged)
	switch {
	case ok && t.Tag == "a":
		return p.a.Receive(wrapEnv{env}, from, t.Msg)
	case ok && t.Tag == "b":
		return p.b.Receive(cs.ChildEnv{Parent: env, Tag: "b"}, from, t.Msg)
	}
	return cs.Unexpected(p.Self(), from, m)
}
func (p pair) Children() iter.Seq2[string, cs.Machine] {
	return func(yield func(string, cs.Machine) bool) {
		if p.swap {
			_ = yield("b", p.b) && yield("a", p.a)
			return
		}
		_ = yield("a", p.a) && yield("b", p.b)
	}
}

// TestIdealChildrenByPath: ideal children are one object per path whatever
// order each process yields them in; processes with different ones, and
// ideal children with crashes or a detector, are refused.
func TestIdealChildrenByPath(t *testing.T) {
	as, _ := ideal.New(cs.Params{N: 2, K: 1})
	bs, _ := ideal.New(cs.Params{N: 2, K: 2})
	ms := []cs.Machine{pair{as[0], bs[0], false}, pair{as[1], bs[1], true}}
	res := mustRun(t, check.Config{Machines: ms, Property: global(t, 2, 0, 1), Budget: 2})
	if res.Verdict != check.OK {
		t.Fatalf("%s %+v", res.Verdict, res.Violation)
	}
	bad := []cs.Machine{pair{as[0], bs[0], false}, wrapper{as[1]}}
	if _, err := check.Run(t.Context(), check.Config{Machines: bad, Property: global(t, 2, 0, 1), Budget: 2}); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Errorf("different ideal children: %v", err)
	}
	if _, err := check.Run(t.Context(), check.Config{Machines: ms, Property: global(t, 2, 0, 1), Budget: 2, Crashes: 1}); err == nil || !strings.Contains(err.Error(), "crashes") {
		t.Errorf("ideal children with crashes: %v", err)
	}
}
