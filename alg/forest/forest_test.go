package forest_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/forest"
	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/sim"
)

func build(t testing.TB, n, k int, o forest.Options) ([]cs.Machine, *property.Property) {
	t.Helper()
	ms, err := forest.New(cs.Params{N: n, K: k}, o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := property.Global(n, 0, k)
	if err != nil {
		t.Fatal(err)
	}
	return ms, p
}

// served runs a random schedule of changes state changes on net, then
// stops new requests and settles (deliveries, exits): every request must
// then have completed. It returns the first violation, or the process
// still waiting.
func served(net *testnet.Network, changes int) error {
	err := net.RunRandom(changes)
	if err == nil {
		err = net.Settle()
	}
	if err != nil {
		return err
	}
	for id := cs.ID(1); int(id) <= net.N(); id++ {
		if _, p, _ := net.State(id); p != cs.None {
			return fmt.Errorf("P%d still waits (%v) with nothing in transit and nobody InCS: its request is lost", id, p)
		}
	}
	return nil
}

// TestRandomSchedules: the corrected variant, both token choices, with and
// without INFORM messages, on random schedules (per-link FIFO, any
// interleaving): the bound 0..K after every step, and every request served
// once requests stop.
func TestRandomSchedules(t *testing.T) {
	seeds, changes := uint64(300), 600
	if testing.Short() {
		seeds, changes = 12, 300
	}
	for _, ch := range []forest.Choice{forest.LastSeen, forest.Random} {
		for _, nu := range []int{0, 1, 2} {
			for n := 3; n <= 6; n++ {
				for k := 1; k <= 3 && k < n; k++ {
					for seed := uint64(1); seed <= seeds; seed++ {
						ms, p := build(t, n, k, forest.Options{Choice: ch, Nu: nu})
						net := testnet.MustNew(t, ms, p, testnet.Options{Seed: seed})
						if err := served(net, changes); err != nil {
							t.Fatalf("choice %d nu=%d n=%d k=%d seed %d: %v", ch, nu, n, k, seed, err)
						}
					}
				}
			}
		}
	}
}

// TestPaperLosesRequests: the published variant, same schedules, loses
// requests after stale INFORM messages (testdata/scripts/
// paper_stale_inform.txt), and only with INFORM messages: with nu = 0 it
// serves every request.
func TestPaperLosesRequests(t *testing.T) {
	lost := 0
	for seed := uint64(1); seed <= 100; seed++ {
		for _, nu := range []int{0, 2} {
			ms, p := build(t, 3, 1, forest.Options{Nu: nu, Variant: forest.Paper})
			net := testnet.MustNew(t, ms, p, testnet.Options{Seed: seed})
			err := served(net, 400)
			switch {
			case err != nil && nu == 0:
				t.Fatalf("paper nu=0 seed %d: %v", seed, err)
			case err != nil && !strings.Contains(err.Error(), "request is lost"):
				t.Fatalf("paper nu=2 seed %d: %v", seed, err)
			case err != nil:
				lost++
			}
		}
	}
	if lost == 0 {
		t.Fatal("the published variant served every request on 100 schedules with nu = 2")
	}
	t.Logf("the published variant lost a request on %d of 100 schedules (n = 3, K = 1, nu = 2)", lost)
}

// TestCheck model checks the corrected variant exhaustively (every
// interleaving within the budget): the bound, the invocation convention
// and no deadlock. -short keeps the smaller spaces.
func TestCheck(t *testing.T) {
	cases := []struct {
		n, k, budget int
		o            forest.Options
	}{
		{3, 2, 3, forest.Options{Nu: 2}},
		{3, 1, 3, forest.Options{Nu: 2}},
		{4, 2, 2, forest.Options{Nu: 1, Choice: forest.Random}},
	}
	if !testing.Short() {
		cases = append(cases, []struct {
			n, k, budget int
			o            forest.Options
		}{
			{3, 1, 4, forest.Options{Nu: 2}},
			{4, 2, 2, forest.Options{Nu: 2}},
			{4, 3, 2, forest.Options{Nu: 2, Choice: forest.Random}},
		}...)
	}
	for _, c := range cases {
		ms, p := build(t, c.n, c.k, c.o)
		res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: c.budget})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != check.OK {
			t.Errorf("n=%d k=%d budget %d %+v: %s %v %s", c.n, c.k, c.budget, c.o, res.Verdict, res.Violation, res.Reason)
		}
	}
}

// TestCheckTooStrong: asserting at most K-1 InCS finds K processes InCS
// (the token holders enter at once).
func TestCheckTooStrong(t *testing.T) {
	ms, _ := build(t, 3, 2, forest.Options{Nu: 2})
	p, _ := property.Global(3, 0, 1)
	res, err := check.Run(t.Context(), check.Config{Machines: ms, Property: p, Budget: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != check.Violated || res.Violation.Kind != check.KindBounds || len(res.Violation.Path) != 2 {
		t.Fatalf("assert max 1 with k = 2: %s %v", res.Verdict, res.Violation)
	}
}

// TestSimulation: n = 30, K = 3 (the paper's study) over seeds and request
// rates, random transit times: the bound after every event, and every
// request served after the drain.
func TestSimulation(t *testing.T) {
	seeds, entries := uint64(8), int64(3000)
	if testing.Short() {
		seeds, entries = 2, 600
	}
	for _, ch := range []forest.Choice{forest.LastSeen, forest.Random} {
		for _, lambda := range []float64{0.01, 0.1, 1, 10} {
			for seed := uint64(1); seed <= seeds; seed++ {
				ms, p := build(t, 30, 3, forest.Options{Nu: 2, Choice: ch})
				res, err := sim.Run(sim.Config{
					Machines: ms, Property: p, Lambda: lambda, E: 1, Ts: 0.1, Tr: 0.1,
					Tt: 0.8, TransitDist: sim.Exp, Entries: entries, Drain: true, Seed: seed,
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Violation != nil || res.Pending != 0 || res.Entries < entries || res.MaxInCS > 3 {
					t.Errorf("choice %d lambda %g seed %d: violation %v, %d pending, %d entries, max %d InCS",
						ch, lambda, seed, res.Violation, res.Pending, res.Entries, res.MaxInCS)
				}
			}
		}
	}
}

// TestTokenWords: the sizes of section 3 (Figure 5): 3 words of header, 2
// fields for REQUEST and INFORM, the token id and a node and a tag per
// entry for TOKEN; the corrected variant's counts add a word each.
func TestTokenWords(t *testing.T) {
	for _, c := range []struct {
		m    cs.Message
		want int
	}{
		{forest.Request{Y: 4, T: 1}, 5},
		{forest.Inform{X: 4, T: 1}, 5},
		{forest.Token{T: 2, Queue: []forest.Entry{{ID: 3}, {ID: 7, Tag: 2}, {ID: 9}}}, 10},
		{forest.Request{Y: 4, T: 1, Seen: 3}, 6},
		{forest.Inform{X: 4, T: 1, Count: 3}, 6},
		{forest.Token{T: 2, Count: 5, Queue: []forest.Entry{{ID: 3, Seen: 1}, {ID: 7, Tag: 2, Seen: 4}}}, 11},
	} {
		if got := c.m.Words(); got != c.want {
			t.Errorf("%#v: %d words, want %d", c.m, got, c.want)
		}
	}
}

// TestLastUnmodified: the example of section 2 (Figure 1, missing from
// the text, is known by what the text says of it): node I holds token 2
// with a token-queue starting with node 3, in which 9 is the last node
// whose request-modifier tag is NULL, and 7 comes before it; on exit I
// sends the token to 3 and sets pointer[2] to 9; had the tags of 7 and 9
// not been NULL, the last-unmodified node would be 3. Here I = 2, and the
// queue is 3 (asked for token 1, tag 2), 7, 9, 5 (asked for token 1).
func TestLastUnmodified(t *testing.T) {
	for _, c := range []struct {
		t79  int32 // the token 7 and 9 ask for: 2 leaves their tags NULL
		want cs.ID
	}{{2, 9}, {1, 3}} {
		ms, _ := build(t, 9, 2, forest.Options{})
		holder := ms[1] // node 2 holds token 2
		var env cs.Effects
		if err := holder.Entry(&env); err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			y cs.ID
			t int32
		}{{3, 1}, {7, c.t79}, {9, c.t79}, {5, 1}} {
			if err := holder.Receive(&env, r.y, forest.Request{Y: r.y, T: r.t}); err != nil {
				t.Fatal(err)
			}
		}
		env = cs.Effects{}
		if err := holder.Exit(&env); err != nil {
			t.Fatal(err)
		}
		last := env.List[len(env.List)-1]
		tok, ok := last.Msg.(forest.Token)
		if !ok || last.To != 3 || tok.T != 2 || len(tok.Queue) != 4 {
			t.Fatalf("exit sent %+v, want TOKEN(2) to node 3 with four entries", env.List)
		}
		if got := holder.(*forest.Machine).Pointer(2); got != c.want {
			t.Errorf("7 and 9 ask for token %d: pointer[2] = %d, want the last-unmodified node %d", c.t79, got, c.want)
		}
	}
}

// TestBadInput: parameters, calls and messages a machine refuses.
func TestBadInput(t *testing.T) {
	for _, p := range []cs.Params{
		{N: 3, K: 0}, {N: 3, K: 4}, {N: 3, L: 1, K: 2}, {N: 3, K: 2, Initial: []cs.ID{3}},
	} {
		if _, err := forest.New(p, forest.Options{}); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	if _, err := forest.New(cs.Params{N: 3, K: 1}, forest.Options{Nu: -1}); err == nil {
		t.Error("nu = -1 accepted")
	}
	ms, _ := build(t, 3, 1, forest.Options{})
	var env cs.Effects
	m := ms[1]
	if err := m.Exit(&env); !errors.Is(err, cs.ErrConvention) {
		t.Errorf("exit while OutCS: %v", err)
	}
	for _, c := range []struct {
		from cs.ID
		msg  cs.Message
	}{
		{9, forest.Request{Y: 1, T: 1}},
		{2, forest.Request{Y: 1, T: 1}},                         // from itself
		{1, forest.Request{Y: 1, T: 2}},                         // no token 2
		{1, forest.Inform{X: 3, T: 1}},                          // not the sender's
		{1, forest.Token{T: 1, Queue: []forest.Entry{{ID: 2}}}}, // not waiting
		{1, forest.Token{T: 1, Queue: []forest.Entry{{ID: 3}}}}, // not for P2
	} {
		before := m.AppendState(nil)
		if err := m.Receive(&env, c.from, c.msg); err == nil {
			t.Errorf("P2 accepted %#v from P%d", c.msg, c.from)
		}
		if !slices.Equal(before, m.AppendState(nil)) {
			t.Errorf("P2 changed on refusing %#v", c.msg)
		}
	}
}

// TestClone: a clone shares nothing mutable with its original.
func TestClone(t *testing.T) {
	ms, _ := build(t, 4, 1, forest.Options{Nu: 2})
	var env cs.Effects
	m := ms[0]
	if err := m.Entry(&env); err != nil {
		t.Fatal(err)
	}
	if err := m.Receive(&env, 2, forest.Request{Y: 2, T: 1, Seen: 1}); err != nil {
		t.Fatal(err)
	}
	before := m.AppendState(nil)
	c := m.Clone()
	if err := c.Receive(&env, 3, forest.Request{Y: 3, T: 1, Seen: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.Exit(&env); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, m.AppendState(nil)) {
		t.Fatal("changing the clone changed the original")
	}
}
