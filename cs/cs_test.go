package cs_test

import (
	"bytes"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/critsec/critsec/cs"
)

// toggle is a minimal machine for testing the core: Entry and Exit complete
// at once, except that Entry waits for one "go" message when hold is set.
type toggle struct {
	self    cs.ID
	state   cs.State
	pending cs.Op
	hold    bool
}

type goMsg struct{}

func (goMsg) Kind() string                 { return "GO" }
func (goMsg) Words() int                   { return 3 }
func (goMsg) AppendBinary(b []byte) []byte { return append(b, 'g') }

func (t *toggle) Self() cs.ID       { return t.self }
func (t *toggle) State() cs.State   { return t.state }
func (t *toggle) Pending() cs.Op    { return t.pending }
func (t *toggle) Clone() cs.Machine { c := *t; return &c }
func (t *toggle) AppendState(b []byte) []byte {
	return append(b, byte(t.state), byte(t.pending))
}
func (t *toggle) Entry(env cs.Env) error {
	if err := cs.CheckCall(t, cs.Entry); err != nil {
		return err
	}
	if t.hold {
		t.pending = cs.Entry
		env.Send(t.self, goMsg{})
		return nil
	}
	t.state = cs.InCS
	env.Changed(cs.InCS)
	return nil
}
func (t *toggle) Exit(env cs.Env) error {
	if err := cs.CheckCall(t, cs.Exit); err != nil {
		return err
	}
	t.state = cs.OutCS
	env.Changed(cs.OutCS)
	return nil
}
func (t *toggle) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	if _, ok := m.(goMsg); !ok || t.pending != cs.Entry {
		return cs.Unexpected(t.self, from, m)
	}
	t.pending, t.state = cs.None, cs.InCS
	env.Changed(cs.InCS)
	return nil
}

type recEnv struct {
	sent    []cs.Message
	changes []cs.State
}

func (r *recEnv) Send(_ cs.ID, m cs.Message) { r.sent = append(r.sent, m) }
func (r *recEnv) Changed(s cs.State)         { r.changes = append(r.changes, s) }

func TestCheckCallRefusesConventionBreaks(t *testing.T) {
	env := &recEnv{}
	m := &toggle{self: 1}
	if err := m.Exit(env); !errors.Is(err, cs.ErrConvention) {
		t.Fatalf("Exit while OutCS: got %v, want ErrConvention", err)
	}
	if err := m.Entry(env); err != nil {
		t.Fatal(err)
	}
	if err := m.Entry(env); !errors.Is(err, cs.ErrConvention) {
		t.Fatalf("Entry while InCS: got %v, want ErrConvention", err)
	}
	h := &toggle{self: 2, hold: true}
	if err := h.Entry(env); err != nil {
		t.Fatal(err)
	}
	if err := h.Exit(env); !errors.Is(err, cs.ErrConvention) {
		t.Fatalf("Exit while entry pending: got %v, want ErrConvention", err)
	}
}

func TestCoSwapsStateOpsAndChanges(t *testing.T) {
	inner := &toggle{self: 3, hold: true}
	c := cs.Co(inner)
	if c.State() != cs.InCS {
		t.Fatalf("Co of an OutCS machine is %v, want InCS", c.State())
	}
	env := &recEnv{}
	if err := c.Entry(env); !errors.Is(err, cs.ErrConvention) {
		t.Fatalf("Co.Entry while InCS: got %v", err)
	}
	// Co.Exit is inner.Entry, which waits for a GO message.
	if err := c.Exit(env); err != nil {
		t.Fatal(err)
	}
	if c.Pending() != cs.Exit || inner.Pending() != cs.Entry {
		t.Fatalf("pending: Co %v inner %v, want exit/entry", c.Pending(), inner.Pending())
	}
	clone := c.Clone()
	if err := c.Receive(env, 3, env.sent[0]); err != nil {
		t.Fatal(err)
	}
	if c.State() != cs.OutCS || len(env.changes) != 1 || env.changes[0] != cs.OutCS {
		t.Fatalf("after GO: Co state %v, changes %v; want OutCS, [OutCS]", c.State(), env.changes)
	}
	if clone.State() != cs.InCS || clone.Pending() != cs.Exit {
		t.Fatal("Clone shares state with the original")
	}
}

func TestTaggedEnvelope(t *testing.T) {
	env := &recEnv{}
	ce := cs.ChildEnv{Parent: env, Tag: "mx"}
	ce.Send(2, goMsg{})
	ce.Changed(cs.InCS)
	if len(env.changes) != 0 {
		t.Fatal("ChildEnv forwarded a child's state change")
	}
	tg, ok := env.sent[0].(cs.Tagged)
	if !ok || tg.Kind() != "mx.GO" || tg.Words() != 3 {
		t.Fatalf("got %#v, want Tagged mx.GO of 3 words", env.sent[0])
	}
	a := cs.Tagged{Tag: "a", Msg: goMsg{}}.AppendBinary(nil)
	b := cs.Tagged{Tag: "b", Msg: goMsg{}}.AppendBinary(nil)
	if bytes.Equal(a, b) {
		t.Fatal("different tags encode equally")
	}
}

func TestSet(t *testing.T) {
	s := cs.NewSet(1, 5, 70)
	if !s.Has(5) || s.Has(4) || !s.Has(70) || s.Len() != 3 {
		t.Fatalf("set %v", s.Members())
	}
	u := cs.NewSet(2)
	u.Union(s)
	if got := u.Members(); len(got) != 4 || got[0] != 1 || got[3] != 70 {
		t.Fatalf("union members %v", got)
	}
	u.Remove(70)
	if !u.Equal(cs.NewSet(1, 2, 5)) {
		t.Fatalf("after remove: %v", u.Members())
	}
	// Equal sets encode equally, whatever their storage size.
	if !bytes.Equal(u.AppendBinary(nil), cs.NewSet(1, 2, 5).AppendBinary(nil)) {
		t.Fatal("equal sets encode differently")
	}
	c := u.Clone()
	c.Add(9)
	if u.Has(9) {
		t.Fatal("Clone shares storage")
	}
}

func TestParamsChecks(t *testing.T) {
	bad := []cs.Params{{N: 0, K: 1}, {N: 3, K: 4}, {N: 3, K: 0}, {N: 3, L: -1, K: 2}, {N: 3, L: 2, K: 2}}
	for _, p := range bad {
		if err := p.CheckSize(); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	p := cs.Params{N: 4, L: 1, K: 3, Initial: []cs.ID{1, 2}}
	if err := p.CheckInitial(1, 3); err != nil {
		t.Fatal(err)
	}
	for _, init := range [][]cs.ID{{}, {1, 2, 3, 4}, {1, 1}, {5}} {
		p.Initial = init
		if err := p.CheckInitial(1, 3); err == nil {
			t.Errorf("initial %v accepted for bounds 1..3", init)
		}
	}
}

// TestSetAgainstMap: random operations on ids 0..199 (inline word and
// overflow words) agree with a map; clones are independent; equal sets
// encode equally whatever their history.
func TestSetAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s cs.Set
	ref := map[cs.ID]bool{}
	var clones []cs.Set
	var refs []map[cs.ID]bool
	for step := range 5000 {
		id := cs.ID(r.IntN(200))
		switch r.IntN(10) {
		case 0:
			clones, refs = append(clones, s.Clone()), append(refs, maps.Clone(ref))
		case 1:
			if step%7 == 0 {
				s.Clear()
				clear(ref)
			}
		case 2, 3, 4:
			s.Remove(id)
			delete(ref, id)
		default:
			s.Add(id)
			ref[id] = true
		}
		if s.Has(id) != ref[id] || s.Len() != len(ref) {
			t.Fatalf("step %d: id %d: Has %v (want %v), Len %d (want %d)", step, id, s.Has(id), ref[id], s.Len(), len(ref))
		}
	}
	for i, c := range clones {
		want := slices.Sorted(maps.Keys(refs[i]))
		if got := c.Members(); !slices.Equal(got, want) {
			t.Fatalf("clone %d: %v, want %v", i, got, want)
		}
		rebuilt := cs.NewSet(want...)
		if !rebuilt.Equal(c) || !bytes.Equal(rebuilt.AppendBinary(nil), c.AppendBinary(nil)) {
			t.Fatalf("clone %d: a set with the same members differs or encodes differently", i)
		}
	}
}
