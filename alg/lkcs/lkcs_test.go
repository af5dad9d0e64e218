package lkcs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/lkcs"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
	"github.com/critsec/critsec/topology"
)

// params is the problem (l, k) on spec with the leader named (0: chosen)
// and LKCS's default initial configuration.
func params(t *testing.T, spec string, l, k, leader int) (cs.Params, *property.Property) {
	t.Helper()
	g, err := topology.ByName(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := topology.Uniform(g, l, k, true)
	if err != nil {
		t.Fatal(err)
	}
	p := cs.Params{N: g.N(), Neighbors: g.Lists(), Li: b.L, Ki: b.K, Options: cs.Options{"leader": leader}}
	if p.Initial, err = lkcs.Initial(p); err != nil {
		t.Fatal(err)
	}
	prop, err := property.Local(g.Lists(), b.L, b.K)
	if err != nil {
		t.Fatal(err)
	}
	return p, prop
}

func TestResolve(t *testing.T) {
	p, _ := params(t, "wheel:7", 0, 3, 0)
	pr, err := lkcs.Resolve(p)
	if err != nil || pr.Leader != 1 {
		t.Fatalf("wheel:7: leader %v, %v; want the hub P1", pr, err)
	}
	for i, near := range pr.Near {
		if !near || pr.L[i] != 1 || pr.K[i] != 2 {
			t.Errorf("P%d: near %v, L..K = %d..%d; want every process within two hops, 1..2", i+1, near, pr.L[i], pr.K[i])
		}
	}
	// Far from the leader the macros are the bounds themselves.
	p, _ = params(t, "torus:6x6", 0, 4, 0)
	pr, err = lkcs.Resolve(p)
	if err != nil || pr.Leader != 1 || pr.Near[21] || pr.L[21] != 0 || pr.K[21] != 4 || pr.K[1] != 3 {
		t.Fatalf("torus:6x6: %+v, %v", pr, err)
	}
	for _, c := range []struct {
		spec         string
		l, k, leader int
		want         string
	}{
		{"ring:8", 0, 3, 0, "no process has 4 neighbours (the largest degree is 2)"},
		{"wheel:7", 1, 3, 0, "P1 (degree 6) cannot: P1 is within two hops and has l_1 = 1, k_1 = 3"},
		{"wheel:7", 0, 3, 2, "leader P2: |N_2| = 3: the leader needs at least 4 neighbours"},
		{"wheel:7", 0, 3, 9, "leader = 9: no such process"},
		{"star:6", 0, 3, 0, "P2 is within two hops and has l_2 = 0, k_2 = 2"},
	} {
		g, _ := topology.ByName(c.spec)
		b, _ := topology.Uniform(g, c.l, c.k, true)
		p := cs.Params{N: g.N(), Neighbors: g.Lists(), Li: b.L, Ki: b.K, Options: cs.Options{"leader": c.leader}}
		_, err := lkcs.Resolve(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (%d,%d) leader %d: %v, want %q", c.spec, c.l, c.k, c.leader, err, c.want)
		}
		if c.leader != 9 && !errors.Is(err, lkcs.ErrAssumptions) {
			t.Errorf("%s: %v does not wrap ErrAssumptions", c.spec, err)
		}
	}
}

// TestPaperDeadlock: on the bowtie (two triangles sharing P1, the
// smallest graph the assumptions allow: |N_LDR| = 4 and |N_q|+1 >= 3 for
// the neighbours) with (l_i,k_i) = (0,3), the checker finds a global
// deadlock within one call per process. Every process waits; the leader P1
// sees Waiting_LDR = |N_LDR|+1 = 5 and calls TriggerNomination, but its
// MUTIN grants are at their limit |N_LDR| - L_LDR + 1 = 4, not at
// Algorithm 6's |N_LDR| - L_LDR = 3, and its MUTEX grants at K_LDR = 2, not
// K_LDR - 1: neither case holds, no Trigger is sent, and the leader waits
// for Waiting_LDR to fall, which never happens (docs/local-lk-cs.md,
// docs/traces/lkcs-paper-deadlock.jsonl).
func TestPaperDeadlock(t *testing.T) {
	p, prop := params(t, "../testdata/bowtie.edges", 0, 3, 0)
	ms, err := lkcs.New(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Run(check.Config{Machines: ms, Property: prop, Budget: 1, DepthFirst: true, MaxStates: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindDeadlock || !strings.Contains(res.Violation.Detail, "global deadlock") {
		t.Fatalf("lkcs-paper on the bowtie: %s %v", res.Verdict, res.Violation)
	}
	// The same in the simulator on the 6x6 torus (issue 11's acceptance
	// topology): a deadlock within the first 20 entries.
	p, prop = params(t, "torus:6x6", 1, 4, 0)
	ms, _ = lkcs.New(p)
	r, err := sim.Run(sim.Config{Machines: ms, Property: prop, Lambda: 0.1, E: 1, Tt: 1, Entries: 5000, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Violation == nil || r.Violation.Kind != sim.KindDeadlock || r.Entries > 20 {
		t.Errorf("lkcs-paper on torus:6x6: %d entries, %v", r.Entries, r.Violation)
	}
}

func TestNew(t *testing.T) {
	p, _ := params(t, "wheel:5", 0, 3, 0)
	if _, err := lkcs.New(p); err != nil {
		t.Fatal(err)
	}
	p.Initial = []cs.ID{1, 2, 3, 4}
	if _, err := lkcs.New(p); err == nil || !strings.Contains(err.Error(), "initial: N[1]={P1,P2,P3,P4,P5}: 4 InCS, outside the bounds 0..3") {
		t.Errorf("unsafe initial configuration: %v", err)
	}
}
