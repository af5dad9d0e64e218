package lmutin_test

import (
	"slices"
	"testing"

	"github.com/critsec/critsec/alg/lmutin"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// net is a hand-driven network of LMUTIN machines: one FIFO channel per
// ordered pair, messages delivered only when a test says so.
type net struct {
	t    *testing.T
	ms   []cs.Machine
	prop *property.Property
	ch   map[[2]cs.ID][]cs.Message
	sent map[string]int // messages sent, by kind
}

type netEnv struct {
	n    *net
	self cs.ID
}

func (e netEnv) Send(to cs.ID, m cs.Message) {
	k := [2]cs.ID{e.self, to}
	e.n.ch[k] = append(e.n.ch[k], m)
	e.n.sent[m.Kind()]++
}

func (e netEnv) Changed(cs.State) {}

// newNet builds l_i-LMUTIN of variant v on the graph neighbors, with
// bounds l and the processes initial InCS.
func newNet(t *testing.T, neighbors [][]cs.ID, l []int, initial []cs.ID, v lmutin.Variant) *net {
	t.Helper()
	ms, err := lmutin.New(cs.Params{N: len(neighbors), Neighbors: neighbors, Li: l, Initial: initial}, v)
	if err != nil {
		t.Fatal(err)
	}
	k := make([]int, len(neighbors))
	for i, ns := range neighbors {
		k[i] = len(ns) + 1
	}
	prop, err := property.Local(neighbors, l, k)
	if err != nil {
		t.Fatal(err)
	}
	return &net{t: t, ms: ms, prop: prop, ch: map[[2]cs.ID][]cs.Message{}, sent: map[string]int{}}
}

type view []bool

func (v view) InCS(id cs.ID) bool { return v[id] }

// allowed reports whether the processes out leaving the CS together, from
// the current states, would keep every bound l_i.
func (n *net) allowed(out ...cs.ID) bool {
	v := make(view, len(n.ms)+1)
	for _, m := range n.ms {
		v[m.Self()] = m.State() == cs.InCS && !slices.Contains(out, m.Self())
	}
	return n.prop.Check(v) == nil
}

// call makes process id call op.
func (n *net) call(id cs.ID, op cs.Op) {
	n.t.Helper()
	m, env := n.ms[id-1], netEnv{n, id}
	var err error
	if op == cs.Exit {
		err = m.Exit(env)
	} else {
		err = m.Entry(env)
	}
	if err != nil {
		n.t.Fatalf("P%d %s: %v", id, op, err)
	}
}

// deliver hands the oldest message from -> to to its receiver.
func (n *net) deliver(from, to cs.ID) {
	n.t.Helper()
	k := [2]cs.ID{from, to}
	q := n.ch[k]
	if len(q) == 0 {
		n.t.Fatalf("nothing in transit from P%d to P%d", from, to)
	}
	m := q[0]
	n.ch[k] = q[1:]
	if err := n.ms[to-1].Receive(netEnv{n, to}, from, m); err != nil {
		n.t.Fatalf("P%d receiving %s from P%d: %v", to, m.Kind(), from, err)
	}
}

// flush delivers every message, links in order of (sender, receiver),
// until nothing is in transit.
func (n *net) flush() {
	n.t.Helper()
	for {
		var keys [][2]cs.ID
		for k, q := range n.ch {
			if len(q) > 0 {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return
		}
		slices.SortFunc(keys, func(a, b [2]cs.ID) int {
			if a[0] != b[0] {
				return int(a[0]) - int(b[0])
			}
			return int(a[1]) - int(b[1])
		})
		n.deliver(keys[0][0], keys[0][1])
	}
}

// states returns, per process 1..n, "in", "out" or "exiting" (InCS and
// waiting to exit).
func (n *net) states() []string {
	var s []string
	for _, m := range n.ms {
		switch {
		case m.Pending() == cs.Exit:
			s = append(s, "exiting")
		case m.State() == cs.InCS:
			s = append(s, "in")
		default:
			s = append(s, "out")
		}
	}
	return s
}

func (n *net) want(what string, s ...string) {
	n.t.Helper()
	if got := n.states(); !slices.Equal(got, s) {
		n.t.Fatalf("%s: states %v, want %v", what, got, s)
	}
}

// TestExitWaitsOnAnOlderHeldExit is the smallest configuration in which a
// drained run of l_i-LMUTIN ends with an exit that no bound holds
// (docs/design/lmutin-fix.md, "Exits that no bound holds after a drain"):
// path P1-P2-P3 with l = 1, C_0 = {P2} InCS. P1 enters; P2 exits, and P1 and P2 grant its
// request (1,P2) while P3, OutCS, holds its only grant itself; then P1
// exits with the younger (2,P1). By Algorithm 2 nothing more happens: P2
// waits for P3's grant, which the bound of N_3 = {P2,P3} withholds while P3
// is out, and P1 waits for the grants of P1 and P2, both held by the older
// (1,P2): a Request younger than every grant out preempts none. Yet P1's
// exit alone would leave P2 InCS in N_1 and N_2. Lemma 2 (liveness) does
// not promise more: it assumes every OutCS process eventually enters
// (section 2.2), and once P3 does, P2 exits, and once P2 enters again, P1
// does. The published variant behaves the same.
func TestExitWaitsOnAnOlderHeldExit(t *testing.T) {
	for _, v := range []lmutin.Variant{lmutin.Fixed, lmutin.Paper} {
		n := newNet(t, [][]cs.ID{{2}, {1, 3}, {2}}, []int{1, 1, 1}, []cs.ID{2}, v)
		n.call(1, cs.Entry)
		n.flush()
		n.call(2, cs.Exit)
		n.flush()
		n.call(1, cs.Exit)
		n.flush()
		n.want(v.String()+": after P1 enters, P2 exits, P1 exits", "exiting", "exiting", "out")
		if n.sent["Preempt"] != 0 {
			t.Fatalf("%s: %d Preempts, want none: every grant out is older than P1's request", v, n.sent["Preempt"])
		}
		if !n.allowed(1) || n.allowed(2) {
			t.Fatalf("%s: P1's exit alone allowed %v, P2's %v; want P1's only", v, n.allowed(1), n.allowed(2))
		}
		// The paper's assumption: an OutCS process eventually enters.
		n.call(3, cs.Entry)
		n.flush()
		n.want(v.String()+": after P3 enters", "exiting", "out", "in")
		n.call(2, cs.Entry)
		n.flush()
		n.want(v.String()+": after P2 enters", "out", "in", "in")
	}
}

// TestStalePreemptBlocksPreemption: complete:3 with l = 1, everybody InCS;
// P3, P1 and P2 exit at once with (1,P3), (1,P1), (1,P2). P1 and P3 grant
// (1,P3) and (1,P1), P2 grants (1,P3) and (1,P2) (limit |N_i|-l_i+1 = 2);
// the third request at each finds no room and preempts the youngest grant
// out, (1,P3) at P1 and P2, (1,P3) at P3 for P2's request. P3 gets its
// three grants and leaves before the Preempts arrive; they are stale, and
// P3 ignores them (the published variant too: P3 is OutCS). preemptingNow
// stays P3 everywhere until P3's next Release, so P2 never preempts its own
// grant to the younger (1,P2) for the older (1,P1), which Lemma 2's proof
// assumes ("P_j's permission is preempted"): P1 waits with 2 grants, P2 with
// 1, no message in transit, although either exit alone keeps 1 of 3 InCS.
// Once P3 enters (the paper's assumption), its Release clears
// preemptingNow and frees a grant at every process, and both exits
// complete. A drained complete:3 run reaches this configuration
// (critsec sim --alg lmutin --topology complete:3 --l 1 --lambda 1
// --tt-dist exp --entries 2 --seed 192).
func TestStalePreemptBlocksPreemption(t *testing.T) {
	for _, v := range []lmutin.Variant{lmutin.Fixed, lmutin.Paper} {
		k3 := [][]cs.ID{{2, 3}, {1, 3}, {1, 2}}
		n := newNet(t, k3, []int{1, 1, 1}, []cs.ID{1, 2, 3}, v)
		n.call(3, cs.Exit)
		n.call(1, cs.Exit)
		n.call(2, cs.Exit)
		// Requests: P2 and P3 get P3's first, P1 P1's first; P3's grants
		// reach it before anything else moves.
		for _, d := range [][2]cs.ID{
			{3, 1}, {1, 1}, {2, 1},
			{3, 2}, {2, 2}, {1, 2},
			{3, 3}, {1, 3}, {2, 3},
		} {
			n.deliver(d[0], d[1])
		}
		if n.sent["Preempt"] != 3 {
			t.Fatalf("%s: %d Preempts, want 3 (one at each process)", v, n.sent["Preempt"])
		}
		n.deliver(1, 3)
		n.deliver(2, 3)
		n.deliver(3, 3)
		n.want(v.String()+": P3 has its grants", "exiting", "exiting", "out")
		n.flush()
		n.want(v.String()+": quiet", "exiting", "exiting", "out")
		if n.sent["Preempt"] != 3 || n.sent["Relinquish"] != 0 {
			t.Fatalf("%s: %d Preempts and %d Relinquishes, want the 3 stale Preempts only", v, n.sent["Preempt"], n.sent["Relinquish"])
		}
		if !n.allowed(1) || !n.allowed(2) || n.allowed(1, 2) {
			t.Fatalf("%s: exits allowed: P1 %v, P2 %v, both %v; want either alone, not both", v, n.allowed(1), n.allowed(2), n.allowed(1, 2))
		}
		n.call(3, cs.Entry)
		n.flush()
		n.want(v.String()+": after P3 enters", "out", "out", "in")
	}
}
