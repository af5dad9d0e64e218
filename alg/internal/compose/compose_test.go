package compose

import (
	"bytes"
	"testing"

	"github.com/critsec/critsec/cs"
)

// side is a stand-in side whose state is one byte.
type side struct{ b byte }

func (s *side) Self() cs.ID                             { return 1 }
func (s *side) State() cs.State                         { return cs.OutCS }
func (s *side) Pending() cs.Op                          { return cs.None }
func (s *side) Entry(cs.Env) error                      { return nil }
func (s *side) Exit(cs.Env) error                       { return nil }
func (s *side) Receive(cs.Env, cs.ID, cs.Message) error { return nil }
func (s *side) Clone() cs.Machine                       { c := *s; return &c }
func (s *side) AppendState(b []byte) []byte             { return append(b, s.b) }
func (s *side) ReadState(r *cs.Reader)                  { s.b = r.Phase(255) }
func (s *side) Start(cs.Env)                            {}
func (s *side) Initialized() bool                       { return true }

// TestStateBytes pins the bytes node snapshots keep: without Init the
// phases are numbered from exitL = 1 and the l side comes first (gcs);
// with Init and KFirst, from exitInit = 1 and the k side first (ftgcs).
// ReadState reads back every phase.
func TestStateBytes(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want map[phase][]byte
	}{
		{Config{Name: "gcs"}, map[phase][]byte{idle: {1, 0, 'l', 'k'}, exitL: {1, 1, 'l', 'k'}, entryL: {1, 4, 'l', 'k'}}},
		{Config{Name: "ftgcs", Init: true, KFirst: true}, map[phase][]byte{idle: {1, 0, 'k', 'l'}, exitInit: {1, 1, 'k', 'l'}, exitL: {1, 2, 'k', 'l'}, entryL: {1, 5, 'k', 'l'}}},
	} {
		for p := idle; p <= entryL; p++ {
			if p == exitInit && !c.cfg.Init {
				continue
			}
			s, err := New(&c.cfg, 1, cs.InCS, &side{'l'}, &side{'k'})
			if err != nil {
				t.Fatal(err)
			}
			s.phase = p
			b := s.AppendState(nil)
			if want, ok := c.want[p]; ok && !bytes.Equal(b, want) {
				t.Errorf("%s, phase %d: AppendState = %v, want %v", c.cfg.Name, p, b, want)
			}
			r, _ := New(&c.cfg, 1, cs.OutCS, &side{}, &side{})
			rd := cs.NewReader(b)
			r.ReadState(rd)
			if rd.Err() != nil || r.phase != p || r.state != cs.InCS || r.l.(*side).b != 'l' || r.k.(*side).b != 'k' {
				t.Errorf("%s, phase %d: ReadState(%v) gives phase %d, state %s, sides %q %q (err %v)", c.cfg.Name, p, b, r.phase, r.state, r.l.(*side).b, r.k.(*side).b, rd.Err())
			}
		}
	}
}

// TestNeedsStarter: Init asks the k side for an initialization.
func TestNeedsStarter(t *testing.T) {
	type plain struct{ cs.Machine }
	if _, err := New(&Config{Name: "x", Init: true}, 1, cs.OutCS, &side{}, plain{&side{}}); err == nil {
		t.Fatal("New accepted a k side without Start")
	}
}
