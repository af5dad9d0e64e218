package testnet

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// Do takes steps written as text, one per string, and returns the first
// error, prefixed by its step. The model checker's actions (check.Action's
// String) are steps, so a counterexample path replays as it prints:
//
//	P2 entry                  P2 calls Entry (P2 exit: Exit)
//	deliver P3->P1 REQUEST    the head of link P3->P1, which must be a REQUEST
//	deliver P3->P1            the head of link P3->P1, whatever it is
//	crash P3                  P3 crashes
//	P1 suspects P3            P1's failure detector suspects P3
//	P1 trusts P3              ... and trusts it again
//
// and so are the network's own:
//
//	drop P1->P2               lose the head of link P1->P2
//	cut P1->P2, heal P1->P2   cut a link, restore it
//	isolate P3, heal          cut every link of P3; restore every link
//	drain                     Drain: deliver until nothing is in transit
//	drain except P5->P2 ...   the same, holding those links
//	settle                    Settle: deliver, letting processes InCS exit
//	round                     Round: one time unit of the lock-step model
//	expect P2 InCS            P2 is InCS (OutCS, idle, crashed, waits entry, waits exit)
//	expect transit none       nothing is in transit
//	expect transit P4->P3 FAILED, P3->P1 RELINQUISH
//	                          exactly these messages are in transit (InTransit)
//
// A failed expect is an error; it changes nothing. Blank lines and lines
// starting with # are skipped.
func (net *Network) Do(steps ...string) error {
	for _, s := range steps {
		if err := net.do(s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// MustDo is Do that fails t at the first error.
func MustDo(t testing.TB, net *Network, steps ...string) {
	t.Helper()
	if err := net.Do(steps...); err != nil {
		t.Fatal(err)
	}
}

func (net *Network) do(s string) error {
	f := strings.Fields(s)
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		return nil
	}
	bad := fmt.Errorf("testnet: cannot read step %q", s)
	switch {
	case len(f) == 2 && (f[1] == "entry" || f[1] == "exit"):
		id, err := parseID(f[0])
		if err != nil {
			return err
		}
		op := cs.Entry
		if f[1] == "exit" {
			op = cs.Exit
		}
		return net.Call(id, op)
	case len(f) == 3 && (f[1] == "suspects" || f[1] == "trusts"):
		id, err := parseID(f[0])
		if err != nil {
			return err
		}
		who, err := parseID(f[2])
		if err != nil {
			return err
		}
		if f[1] == "trusts" {
			return net.Trust(id, who)
		}
		return net.Suspect(id, who)
	}
	switch f[0] {
	case "deliver", "drop", "cut", "heal":
		if f[0] == "heal" && len(f) == 1 {
			net.HealAll()
			return nil
		}
		if len(f) < 2 || len(f) > 2 && f[0] != "deliver" || len(f) > 3 {
			return bad
		}
		l, err := parseLink(f[1])
		if err != nil {
			return err
		}
		switch f[0] {
		case "deliver":
			kind := ""
			if len(f) == 3 {
				kind = f[2]
			}
			return net.Deliver(l.From, l.To, kind)
		case "drop":
			return net.Drop(l.From, l.To)
		case "cut":
			return net.Cut(l.From, l.To)
		}
		return net.Heal(l.From, l.To)
	case "crash", "isolate":
		if len(f) != 2 {
			return bad
		}
		id, err := parseID(f[1])
		if err != nil {
			return err
		}
		if f[0] == "crash" {
			return net.Crash(id)
		}
		return net.Isolate(id)
	case "drain":
		var hold []Link
		if len(f) > 1 {
			if f[1] != "except" || len(f) == 2 {
				return bad
			}
			for _, a := range f[2:] {
				l, err := parseLink(a)
				if err != nil {
					return err
				}
				hold = append(hold, l)
			}
		}
		return net.Drain(hold...)
	case "settle", "round":
		if len(f) != 1 {
			return bad
		}
		if f[0] == "round" {
			_, err := net.Round()
			return err
		}
		return net.Settle()
	case "expect":
		if len(f) < 3 {
			return bad
		}
		return net.expect(f[1], strings.Join(f[2:], " "))
	}
	return bad
}

// expect checks "P2 InCS", "P2 waits exit", ... or "transit ...".
func (net *Network) expect(what, want string) error {
	if what == "transit" {
		got := strings.Join(net.InTransit(), ", ")
		if got == "" {
			got = "none"
		}
		if got != want {
			return fmt.Errorf("testnet: in transit: %s; want %s", got, want)
		}
		return nil
	}
	id, err := parseID(what)
	if err != nil {
		return err
	}
	state, pending, crashed := net.State(id)
	var holds bool
	switch want {
	case "InCS", "OutCS":
		holds = state.String() == want
	case "idle":
		holds = !crashed && pending == cs.None
	case "crashed":
		holds = crashed
	case "waits entry", "waits exit":
		holds = !crashed && "waits "+pending.String() == want
	default:
		return fmt.Errorf("testnet: expect %s %s: want InCS, OutCS, idle, crashed, waits entry or waits exit", what, want)
	}
	if !holds {
		return fmt.Errorf("testnet: P%d is %s; want %s", id, net.describe(id), want)
	}
	return nil
}

// describe is "InCS", "OutCS, waits entry", "crashed".
func (net *Network) describe(id cs.ID) string {
	state, pending, crashed := net.State(id)
	switch {
	case crashed:
		return "crashed"
	case pending != cs.None:
		return fmt.Sprintf("%s, waits %s", state, pending)
	}
	return state.String()
}

func parseID(s string) (cs.ID, error) {
	v, err := strconv.Atoi(strings.TrimPrefix(s, "P"))
	if err != nil || !strings.HasPrefix(s, "P") {
		return 0, fmt.Errorf("testnet: %q is not a process (P1, P2, ...)", s)
	}
	return cs.ID(v), nil
}

func parseLink(s string) (Link, error) {
	a, b, ok := strings.Cut(s, "->")
	if !ok {
		return Link{}, fmt.Errorf("testnet: %q is not a link (P1->P2)", s)
	}
	from, err := parseID(a)
	if err != nil {
		return Link{}, err
	}
	to, err := parseID(b)
	return Link{from, to}, err
}

// MustNew is New that fails t on an error.
func MustNew(t testing.TB, ms []cs.Machine, p *property.Property, o Options) *Network {
	t.Helper()
	net, err := New(ms, p, o)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// MustGlobal is Global that fails t on an error.
func MustGlobal(t testing.TB, ms []cs.Machine, lo, hi int, o Options) *Network {
	t.Helper()
	net, err := Global(ms, lo, hi, o)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// GlobalProperty returns the global property lo <= #InCS <= hi over n
// processes (property.Global), failing t if the bounds are not valid.
func GlobalProperty(t testing.TB, n, lo, hi int) *property.Property {
	t.Helper()
	p, err := property.Global(n, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
