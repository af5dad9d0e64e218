package lmutin_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/lmutex"
	"github.com/critsec/critsec/alg/lmutin"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/topology"
)

// problem builds l_i-LMUTIN (or k_i-LMUTEX when mutex) of variant v on the
// topology spec with uniform bounds clamped to each neighborhood, from
// the default initial configuration, and its property.
func problem(t *testing.T, spec string, l, k int, mutex bool, v lmutin.Variant) ([]cs.Machine, *property.Property) {
	t.Helper()
	g, err := topology.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	var b topology.Bounds
	if mutex {
		b, err = topology.Uniform(g, l, k, true)
	} else {
		b, err = topology.UniformFunc(g, l, func(size int) int { return size }, true)
	}
	if err != nil {
		t.Fatal(err)
	}
	initial, err := topology.SafeInitial(g, b)
	if err != nil {
		t.Fatal(err)
	}
	p := cs.Params{N: g.N(), Neighbors: g.Lists(), Li: b.L, Ki: b.K, Initial: initial}
	var ms []cs.Machine
	if mutex {
		ms, err = lmutex.New(p, v)
	} else {
		ms, err = lmutin.New(p, v)
	}
	if err != nil {
		t.Fatal(err)
	}
	prop, err := property.Local(g.Lists(), b.L, b.K)
	if err != nil {
		t.Fatal(err)
	}
	return ms, prop
}

func run(t *testing.T, ms []cs.Machine, prop *property.Property, budget int) check.Result {
	t.Helper()
	res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: prop, Budget: budget, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPaperUndefinedStep: Algorithms 1-2 as published, on two processes
// linked to each other with l = 1 (one grant out per process). P2 exits
// while P1 is exiting; P2 preempts its own grant for P1's older request,
// but its Preempt (to itself) arrives after P2 has left and entered the
// CS again. P2 is InCS, so it relinquishes; its Release, already on the
// way, has emptied grantedTo_2 of P2, and the Relinquish finds no item to
// re-queue. The shortest path has 14 steps (docs/design/lmutin-fix.md,
// docs/traces/lmutin-paper-undefined.jsonl).
func TestPaperUndefinedStep(t *testing.T) {
	ms, prop := problem(t, "path:2", 1, 2, false, lmutin.Paper)
	res := run(t, ms, prop, 2)
	v := res.Violation
	if res.Verdict != check.Violated || v.Kind != check.KindError || !strings.Contains(v.Detail, "undefined step") || len(v.Path) != 14 {
		t.Fatalf("lmutin-paper path:2 l=1: %s %v", res.Verdict, v)
	}
	if got := v.Path[len(v.Path)-1].String(); !strings.Contains(got, "P2->P2 Relinquish") {
		t.Errorf("last step %q, want the Relinquish", got)
	}
	// k_i-LMUTEX inherits it through the complement: local mutual
	// exclusion on two processes.
	ms, prop = problem(t, "path:2", 0, 1, true, lmutin.Paper)
	res = run(t, ms, prop, 2)
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindError || !strings.Contains(res.Violation.Detail, "undefined step") {
		t.Fatalf("lmutex-paper path:2 k=1: %s %v", res.Verdict, res.Violation)
	}
}

// TestPaperLenientBreaksSafety: reading the undefined step leniently (no
// item deleted; the oldest pending request granted anyway) hands out one
// grant more than |N_i|-l_i+1, and on P3 with l_i = |N_i| the checker
// finds a neighborhood with fewer than l_i processes InCS.
func TestPaperLenientBreaksSafety(t *testing.T) {
	ms, prop := problem(t, "path:3", 99, 0, false, lmutin.PaperLenient)
	res := run(t, ms, prop, 2)
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindBounds {
		t.Fatalf("lenient lmutin-paper path:3 l_i=|N_i|: %s %v", res.Verdict, res.Violation)
	}
	if !strings.Contains(res.Violation.Detail, "outside the bounds 2..3") {
		t.Errorf("detail %q, want P2's bound 2..3 broken", res.Violation.Detail)
	}
}

// TestFixedSmall: the corrected variant on the smallest graphs; the
// evidence on every graph of 3 and 4 processes is alg.TestLocalSmallGraphs.
func TestFixedSmall(t *testing.T) {
	for _, spec := range []string{"path:2", "path:3"} {
		for _, l := range []int{0, 1, 2} {
			ms, prop := problem(t, spec, l, 0, false, lmutin.Fixed)
			if res := run(t, ms, prop, 2); res.Verdict != check.OK {
				t.Errorf("lmutin %s l=%d: %s %v", spec, l, res.Verdict, res.Violation)
			}
			ms, prop = problem(t, spec, 0, l+1, true, lmutin.Fixed)
			if res := run(t, ms, prop, 2); res.Verdict != check.OK {
				t.Errorf("lmutex %s k=%d: %s %v", spec, l+1, res.Verdict, res.Violation)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	base := cs.Params{N: 3, Neighbors: [][]cs.ID{{2}, {1, 3}, {2}}, Li: []int{1, 1, 1}, Initial: []cs.ID{2}}
	if _, err := lmutin.New(base, lmutin.Fixed); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(p *cs.Params)
		want string
	}{
		{func(p *cs.Params) { p.Neighbors = [][]cs.ID{{2}, {1}, {2}} }, "P3 lists P2 as a neighbor, but not the other way round"},
		{func(p *cs.Params) { p.Neighbors = [][]cs.ID{{1}, {1, 3}, {2}} }, "self-loop"},
		{func(p *cs.Params) { p.Li = []int{2, 1, 1} }, "P1 (degree 1): l = 2 is out of range"},
		{func(p *cs.Params) { p.Ki = []int{2, 2, 2} }, "k must be 3"},
		{func(p *cs.Params) { p.Initial = []cs.ID{1} }, "initial: N[3]={P2,P3}: 0 InCS, outside the bounds 1..2"},
		{func(p *cs.Params) { p.Initial = []cs.ID{7} }, "unknown process id 7"},
	} {
		p := base
		c.edit(&p)
		_, err := lmutin.New(p, lmutin.Fixed)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	ms, _ := lmutin.New(base, lmutin.Fixed)
	if err := ms[0].Receive(nil, 3, lmutin.Grant{}); !errors.Is(err, cs.ErrUnexpected) {
		t.Errorf("a Grant from a non-neighbor: %v", err)
	}
	if err := ms[0].Exit(nil); !errors.Is(err, cs.ErrConvention) {
		t.Errorf("Exit while OutCS: %v", err)
	}
}
