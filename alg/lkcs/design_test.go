package lkcs_test

import (
	"math/bits"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/critsec/critsec/alg/lkcs"
	"github.com/critsec/critsec/cs"
)

// designState is a state of the sidetrack design (designFrozen): the
// configuration (bit i-1: P_i InCS), the bounds m (bit m-1) whose member
// still lends its one grant above K_m (o1) or below L_m (o2), and the
// nominee holding each type's sidetrack (0: none).
type designState struct {
	c, o1, o2 uint64
	h1, h2    int8
}

// designFrozen explores every state reachable from p.Initial by any
// algorithm that keeps the invariant on which LKCS's safety rests (Lemma 4's
// proof, and lkcs's "Why each bound keeps its slack"), whatever it decides
// and in whatever order:
//
//   - a normal state change of P_p keeps every count of a bound m containing
//     P_p within L_m..K_m, or K_m+1 (L_m-1) while m lends its one grant above
//     the limit;
//   - a sidetrack state change is made by the leader or a neighbor q, only
//     while no sidetrack of that type is out, and while the other type's is
//     out only by its holder; every member of N_q ∪ {P_q} then lends one
//     grant (more than lkcs, which lends only where Cond fails);
//   - a member gives its grant back, at any moment it likes, once its count
//     is within its bounds again, and all of them do when q changes back;
//     the next sidetrack of that type waits until all have.
//
// That over-approximates lkcs (ordered acquisition, rollbacks, invitations
// and the leader's choice of nominee only remove transitions) and the
// paper's own argument (one Trigger at a time). With apart, a sidetrack of
// one type may also start while the other type's is out at another holder
// (each type still one at a time, and a member lends at most one grant of
// each type, so every count stays within l_m..k_m: still safe). It returns
// the processes that change state in no state explored, the number of
// states, and whether the answer is final: the exploration finished, or
// stopped early once every process had moved; when it stops at limit
// states first, the processes returned are those not seen to move yet. n
// must be at most 64.
func designFrozen(t *testing.T, p cs.Params, limit int, apart bool) (frozen []cs.ID, states int, complete bool) {
	t.Helper()
	pr, err := lkcs.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	n := p.N
	if n > 64 {
		t.Fatalf("designFrozen: n = %d > 64", n)
	}
	nb := make([]uint64, n) // closed neighborhood of bound m
	in := make([][]int, n)  // bounds whose neighborhood holds P_p
	nom := make([]bool, n)  // the leader and its neighbors
	for m := range n {
		nb[m] = 1 << m
		for _, q := range p.Neighbors[m] {
			nb[m] |= 1 << (q - 1)
		}
	}
	for m := range n {
		for q := range n {
			if nb[m]&(1<<q) != 0 {
				in[q] = append(in[q], m)
			}
		}
	}
	nom[pr.Leader-1] = true
	for _, q := range p.Neighbors[pr.Leader-1] {
		nom[q-1] = true
	}
	count := func(c uint64, m int) int { return bits.OnesCount64(c & nb[m]) }
	s0 := designState{h1: -1, h2: -1}
	for _, id := range p.Initial {
		s0.c |= 1 << (id - 1)
	}
	moved := make([]bool, n)
	seen := map[designState]bool{s0: true}
	queue := []designState{s0} // breadth-first: every process that can move soon moves
	push := func(s designState) {
		if !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	nmoved := 0
	move := func(q int) {
		if !moved[q] {
			moved[q] = true
			nmoved++
		}
	}
	for len(queue) > 0 && nmoved < n {
		if len(seen) > limit {
			break
		}
		s := queue[0]
		queue = queue[1:]
		for m := range n {
			if s.o1&(1<<m) != 0 && count(s.c, m) <= pr.K[m] {
				t := s
				if t.o1 &^= 1 << m; t.o1 == 0 {
					t.h1 = -1
				}
				push(t)
			}
			if s.o2&(1<<m) != 0 && count(s.c, m) >= pr.L[m] {
				t := s
				if t.o2 &^= 1 << m; t.o2 == 0 {
					t.h2 = -1
				}
				push(t)
			}
		}
		for q := range n {
			entering := s.c&(1<<q) == 0
			c := s.c ^ 1<<q
			ok := true
			for _, m := range in[q] {
				k := count(c, m)
				if entering && k > pr.K[m]+int(s.o1>>m&1) || !entering && k < pr.L[m]-int(s.o2>>m&1) {
					ok = false
					break
				}
			}
			if ok {
				t := s
				t.c = c
				if !entering && int(s.h1) == q {
					t.o1, t.h1 = 0, -1
				}
				if entering && int(s.h2) == q {
					t.o2, t.h2 = 0, -1
				}
				move(q)
				push(t)
			}
			if !nom[q] {
				continue
			}
			if entering && s.h1 == -1 && (apart || s.h2 == -1 || int(s.h2) == q) {
				t := s
				t.c, t.h1, t.o1 = c, int8(q), nb[q]
				if int(s.h2) == q {
					t.o2, t.h2 = 0, -1
				}
				move(q)
				push(t)
			}
			if !entering && s.h2 == -1 && (apart || s.h1 == -1 || int(s.h1) == q) {
				t := s
				t.c, t.h2, t.o2 = c, int8(q), nb[q]
				if int(s.h1) == q {
					t.o1, t.h1 = 0, -1
				}
				move(q)
				push(t)
			}
		}
	}
	for q, m := range moved {
		if !m {
			frozen = append(frozen, cs.ID(q+1))
		}
	}
	return frozen, len(seen), len(queue) == 0 || nmoved == n
}

// starvedRandom60 are the processes of random:60:0.15:7 with (0,3) that no
// algorithm keeping LKCS's sidetrack invariant under lkcs's one-sidetrack
// rule (both types only at one holder) can ever move from lkcs's default
// initial configuration (TestDesignFrozen): every one is two or
// three hops from the leader P15 (degree 17), and they are exactly the
// processes the corrected lkcs starves there (TestFixedSimulation).
var starvedRandom60 = []cs.ID{1, 2, 6, 8, 10, 11, 13, 14, 18, 19, 20, 21, 22, 24, 27, 28, 29, 33, 34, 36, 38, 39, 41, 42, 43, 44, 45, 48, 49, 51, 54, 58, 60}

// TestDesignFrozen: on the bowtie, the wheels and torus:6x6 every process can move under
// lkcs's one-sidetrack rule, and on random:60:0.15:7 (0,3) the 33 of
// starvedRandom60 can never change state, whatever a correction bound by
// that rule decides (docs/design/lkcs-fix.md, "Starvation on random graphs").
func TestDesignFrozen(t *testing.T) {
	for _, c := range []struct {
		spec string
		l, k int
	}{{"../testdata/bowtie.edges", 0, 3}, {"wheel:5", 0, 3}, {"wheel:12", 0, 3}, {"torus:6x6", 1, 4}} {
		p, _ := params(t, c.spec, c.l, c.k, 0)
		frozen, states, complete := designFrozen(t, p, 1_000_000, false)
		if !complete || len(frozen) > 0 {
			t.Errorf("%s (%d,%d): frozen %v after %d states (complete %v), want every process to move", c.spec, c.l, c.k, frozen, states, complete)
		}
	}
	if testing.Short() {
		t.Skip("random:60:0.15:7: about 430 000 states, skipped under -short")
	}
	p, _ := params(t, "random:60:0.15:7", 0, 3, 0)
	frozen, states, complete := designFrozen(t, p, 2_000_000, false)
	if !complete || !slices.Equal(frozen, starvedRandom60) {
		t.Fatalf("random:60:0.15:7 (0,3): frozen %v after %d states (complete %v), want %v", frozen, states, complete, starvedRandom60)
	}
	pr, err := lkcs.Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	dist := pr.Graph.Distances(pr.Leader)
	for _, id := range frozen {
		if dist[id-1] < 2 {
			t.Errorf("P%d is frozen at distance %d from the leader P%d: the sidetrack can move it", id, dist[id-1], pr.Leader)
		}
	}
	t.Logf("random:60:0.15:7 (0,3): %d states, %d processes frozen", states, len(frozen))
}

// TestDesignApart: on random:60:0.15:7 (0,3), with a MUTEX and a MUTIN
// sidetrack allowed at two different holders at once (designFrozen's
// apart), at least 12 of the 33 processes of starvedRandom60 move within
// 600 000 states: the one-sidetrack rule, not the safety invariant alone,
// freezes them. The search does not finish; CRITSEC_DESIGN_STATES sets its
// limit (3·10⁷ states, about 7 minutes and 5 GB: 18 of the 33 move).
func TestDesignApart(t *testing.T) {
	if testing.Short() {
		t.Skip("random:60:0.15:7: 600 000 states, skipped under -short")
	}
	limit := 600_000
	if v := os.Getenv("CRITSEC_DESIGN_STATES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CRITSEC_DESIGN_STATES=%q: want a number of states, e.g. 30000000", v)
		}
		limit = n
	}
	p, _ := params(t, "random:60:0.15:7", 0, 3, 0)
	frozen, states, complete := designFrozen(t, p, limit, true)
	var moved []cs.ID
	for _, id := range starvedRandom60 {
		if !slices.Contains(frozen, id) {
			moved = append(moved, id)
		}
	}
	if len(moved) < 12 {
		t.Errorf("random:60:0.15:7 (0,3), sidetracks apart: %d of the %d processes frozen under the one-sidetrack rule move within %d states (%v), want at least 12", len(moved), len(starvedRandom60), states, moved)
	}
	t.Logf("random:60:0.15:7 (0,3), sidetracks apart: %d states (complete %v), %d of the %d move: %v", states, complete, len(moved), len(starvedRandom60), moved)
}
