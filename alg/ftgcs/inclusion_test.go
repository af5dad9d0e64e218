package ftgcs

import (
	"testing"

	"github.com/critsec/critsec/cs"
)

// sent records what a machine sends.
type sent struct {
	to []cs.ID
	m  []cs.Message
}

func (e *sent) Send(to cs.ID, m cs.Message) { e.to, e.m = append(e.to, to), append(e.m, m) }
func (e *sent) Changed(cs.State)            {}

// TestInclusionGrants: a process InCS grants at once and is locked until
// released; a late grant is released at once; an exit completes with l
// grants and no lock, releasing its grants; a RELEASE for no grant is
// refused.
func TestInclusionGrants(t *testing.T) {
	p2 := newInclusion(2, 3, 1, cs.InCS)
	var e sent
	if err := p2.Receive(&e, 1, Request{TS: 1}); err != nil || len(e.m) != 1 || e.m[0] != (Grant{TS: 1}) || p2.locks[1] != 1 {
		t.Fatalf("REQUEST to a process InCS: %v, sent %v, locks %v", err, e.m, p2.locks)
	}
	if err := p2.Exit(&e); err != nil || p2.State() != cs.InCS || p2.Pending() != cs.Exit {
		t.Fatalf("an exit while locked: %v, %v pending %v", err, p2.State(), p2.Pending())
	}
	if err := p2.Receive(&e, 3, Grant{TS: p2.last}); err != nil || p2.State() != cs.InCS {
		t.Fatalf("a grant while locked must not complete the exit: %v, %v", err, p2.State())
	}
	e = sent{}
	if err := p2.Receive(&e, 1, Release{}); err != nil || p2.State() != cs.OutCS || len(e.m) != 1 || e.to[0] != 3 || e.m[0] != (Release{}) {
		t.Fatalf("release of the lock: %v, %v, sent %v to %v", err, p2.State(), e.m, e.to)
	}
	e = sent{}
	if err := p2.Receive(&e, 3, Grant{TS: 99}); err != nil || len(e.m) != 1 || e.m[0] != (Release{}) {
		t.Fatalf("a late grant is released at once: %v, sent %v", err, e.m)
	}
	if err := p2.Receive(&e, 1, Release{}); err == nil {
		t.Error("a RELEASE for no grant accepted")
	}
	if _, err := decodeInclusion(Grant{}.Kind(), Grant{TS: 0}.AppendBinary(nil)); err == nil {
		t.Error("a GRANT stamped 0 decoded")
	}
}

// TestInclusionCrash: a known crash clears the crashed process's lock, so
// an exit that waited for its release completes with the grant it holds.
func TestInclusionCrash(t *testing.T) {
	p1 := newInclusion(1, 3, 1, cs.InCS)
	var e sent
	_ = p1.Receive(&e, 2, Request{TS: 1}) // P2 locks P1
	if err := p1.Exit(&e); err != nil {
		t.Fatal(err)
	}
	_ = p1.Receive(&e, 3, Grant{TS: p1.last})
	if p1.State() != cs.InCS {
		t.Fatal("exit completed while locked by P2")
	}
	p1.Crash(&e, 2)
	if p1.State() != cs.OutCS || p1.locks[2] != 0 {
		t.Fatalf("after P2's crash: %v, locks %v", p1.State(), p1.locks)
	}
}
