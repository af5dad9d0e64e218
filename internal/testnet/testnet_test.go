package testnet_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testnet"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

func raymondNet(t *testing.T, n, k int, o testnet.Options) *testnet.Network {
	t.Helper()
	return testnet.MustGlobal(t, machines(t, n, k), 0, k, o)
}

// TestScripts runs the scripts in testdata/scripts with Raymond's k-mutex
// (new n=N k=K, checking 0 <= #InCS <= k, or hi=H for a bound of its
// own); -rewrite rewrites their outputs.
func TestScripts(t *testing.T) {
	testnet.RunScripts(t, "testdata/scripts", func(args map[string]string) (testnet.Setup, error) {
		if args["hi"] == "" {
			args["hi"] = args["k"]
		}
		n, err1 := testnet.Int(args, "n")
		k, err2 := testnet.Int(args, "k")
		hi, err3 := testnet.Int(args, "hi")
		if err := errors.Join(err1, err2, err3); err != nil {
			return testnet.Setup{}, err
		}
		ms, err := raymond.New(cs.Params{N: n, K: k})
		if err != nil {
			return testnet.Setup{}, err
		}
		p, err := property.Global(n, 0, hi)
		return testnet.Setup{Machines: ms, Property: p, Header: trace.Header{Alg: raymond.Name, K: k}}, err
	})
}

func TestRaymondRandomSchedules(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		for _, nk := range [][2]int{{2, 1}, {3, 1}, {4, 2}, {5, 3}} {
			net := raymondNet(t, nk[0], nk[1], testnet.Options{Seed: seed})
			if err := net.RunRandom(200); err != nil {
				t.Fatalf("n=%d k=%d seed=%d: %v", nk[0], nk[1], seed, err)
			}
		}
	}
}

// TestRandomIsSeeded: the same seed gives the same run, another seed
// another run.
func TestRandomIsSeeded(t *testing.T) {
	run := func(seed uint64) string {
		net := raymondNet(t, 4, 2, testnet.Options{Seed: seed, Record: true})
		if err := net.RunRandom(50); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := net.WriteTrace(&b, trace.Header{Alg: "raymond", K: 2}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if a, b, c := run(1), run(1), run(2); a != b || a == c {
		t.Fatalf("seed 1 twice equal: %v; seeds 1 and 2 differ: %v", a == b, a != c)
	}
}

func TestCoSwapsStates(t *testing.T) {
	ms, err := raymond.New(cs.Params{N: 3, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ms {
		ms[i] = cs.Co(ms[i])
	}
	// Co(1-mutex on 3) is (2,3)-CS: at least 2 InCS. All start InCS in Co.
	net := testnet.MustGlobal(t, ms, 2, 3, testnet.Options{Seed: 1})
	if net.CountInCS() != 3 {
		t.Fatalf("Co: %d InCS initially, want 3", net.CountInCS())
	}
	if err := ms[0].Entry(&cs.Effects{}); err == nil {
		t.Fatal("Co: Entry while InCS accepted")
	}
	if err := net.Entry(1); !errors.Is(err, cs.ErrConvention) {
		t.Fatalf("the network made an Entry while InCS: %v", err)
	}
	if err := net.RunRandom(300); err != nil {
		t.Fatal(err)
	}
}

// TestNewRefuses: machines out of order, a property of another size and an
// initial state that breaks the property.
func TestNewRefuses(t *testing.T) {
	ms := machines(t, 3, 1)
	p3, _ := property.Global(3, 0, 1)
	p4, _ := property.Global(4, 0, 1)
	co := []cs.Machine{cs.Co(ms[0]), cs.Co(ms[1]), cs.Co(ms[2])} // all InCS
	for name, c := range map[string]struct {
		ms []cs.Machine
		p  *property.Property
	}{
		"order":   {[]cs.Machine{ms[1], ms[0], ms[2]}, p3},
		"size":    {ms, p4},
		"initial": {co, p3},
		"none":    {nil, p3},
	} {
		if _, err := testnet.New(c.ms, c.p, testnet.Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestBoundsNamed: a bound that breaks is a sticky violation naming it,
// global or local.
func TestBoundsNamed(t *testing.T) {
	// 2-mutual exclusion lets P1 and P2 in: fine within 0..2, a violation
	// of 0..1.
	testnet.MustDo(t, raymondNet(t, 3, 2, testnet.Options{}), "P1 entry", "P2 entry", "drain", "expect P1 InCS", "expect P2 InCS")
	mutex, _ := property.Global(3, 0, 1)
	net := testnet.MustNew(t, machines(t, 3, 2), mutex, testnet.Options{})
	err := net.Do("P1 entry", "P2 entry", "drain")
	var v *testnet.Violation
	if !errors.As(err, &v) || v.Kind != testnet.KindBounds || v.Failure.Bound.Name != "all" ||
		!strings.Contains(err.Error(), "2 processes InCS, outside the bounds 0..1") {
		t.Fatalf("got %v, want the global bound 0..1 broken", err)
	}
	if err := net.Do("P1 exit"); !errors.Is(err, v) || !errors.Is(net.Err(), v) {
		t.Fatalf("after a violation: %v, want the same violation", err)
	}

	// Local bounds on the path 1 - 2 - 3: at most one of P1 and P2 InCS,
	// any number elsewhere.
	local, err := property.Local([][]cs.ID{{2}, {1, 3}, {2}}, []int{0, 0, 0}, []int{1, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	net = testnet.MustNew(t, machines(t, 3, 2), local, testnet.Options{Record: true})
	testnet.MustDo(t, net, "P2 entry", "P3 entry", "drain", "expect P2 InCS", "expect P3 InCS")
	err = net.Do("P3 exit", "P1 entry", "drain")
	if !errors.As(err, &v) || v.Failure == nil || v.Failure.Bound.Name != "N[1]" || !strings.Contains(err.Error(), "N[1]={P1,P2}: 2 InCS") {
		t.Fatalf("got %v, want the bound N[1] broken", err)
	}
	// The trace carries the local property and the claim; trace check
	// finds the same bound broken.
	var b bytes.Buffer
	if err := net.WriteTrace(&b, trace.Header{Alg: "raymond", K: 2}); err != nil {
		t.Fatal(err)
	}
	rep, err := trace.Check(&b)
	if err != nil || rep.Violation == nil || !strings.Contains(rep.Violation.Reason, "N[1]") ||
		rep.Claim == nil || rep.Claim.Kind != trace.KindBounds || rep.Confirmation != trace.Confirmed {
		t.Fatalf("trace check: %+v %v", rep, err)
	}
}

func machines(t *testing.T, n, k int) []cs.Machine {
	t.Helper()
	ms, err := raymond.New(cs.Params{N: n, K: k})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// rogue is a machine that breaks a rule on purpose: mode names which.
type rogue struct {
	self    cs.ID
	state   cs.State
	pending cs.Op
	mode    string
}

type ping struct{}

func (ping) Kind() string                 { return "PING" }
func (ping) Words() int                   { return 3 }
func (ping) AppendBinary(b []byte) []byte { return append(b, 'p') }

func (r *rogue) Self() cs.ID                 { return r.self }
func (r *rogue) State() cs.State             { return r.state }
func (r *rogue) Pending() cs.Op              { return r.pending }
func (r *rogue) Clone() cs.Machine           { c := *r; return &c }
func (r *rogue) AppendState(b []byte) []byte { return append(b, byte(r.state)) }
func (r *rogue) Exit(env cs.Env) error {
	r.state = cs.OutCS
	env.Changed(cs.OutCS)
	return nil
}
func (r *rogue) Entry(env cs.Env) error {
	switch r.mode {
	case "refuse":
		return errors.New("not today")
	case "lie": // reports InCS, stays OutCS
		env.Changed(cs.InCS)
	case "wrong": // reports OutCS for an entry
		r.state = cs.InCS
		env.Changed(cs.OutCS)
	case "twice":
		r.state = cs.InCS
		env.Changed(cs.InCS)
		env.Changed(cs.InCS)
	case "stranger":
		env.Send(9, ping{})
	default:
		env.Send(r.self%2+1, ping{})
	}
	return nil
}
func (r *rogue) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	switch r.mode {
	case "unasked":
		r.state = cs.InCS
		env.Changed(cs.InCS)
	case "error":
		return cs.Unexpected(r.self, from, m)
	}
	return nil
}

// TestConventionAndErrors: what the runtimes check of a machine, the
// network checks too.
func TestConventionAndErrors(t *testing.T) {
	for _, c := range []struct {
		mode, steps, kind, detail string
	}{
		{"refuse", "P1 entry", testnet.KindConvention, "P1 refused entry: not today"},
		{"lie", "P1 entry", testnet.KindConvention, "P1 is OutCS but reported InCS last"},
		{"wrong", "P1 entry", testnet.KindConvention, "P1 reported OutCS while OutCS with request entry pending"},
		{"twice", "P1 entry", testnet.KindConvention, "P1 reported InCS while InCS with request none pending"},
		{"unasked", "P1 entry; deliver P1->P2 PING", testnet.KindConvention, "P2 reported InCS while OutCS with request none pending"},
		{"error", "P1 entry; deliver P1->P2", testnet.KindError, "P2 cannot take receive PING from P1"},
		{"stranger", "P1 entry", testnet.KindError, "P1 sent PING to P9, which is not a participant"},
	} {
		ms := []cs.Machine{&rogue{self: 1, mode: c.mode}, &rogue{self: 2, mode: c.mode}}
		net := testnet.MustGlobal(t, ms, 0, 2, testnet.Options{})
		err := net.Do(strings.Split(c.steps, "; ")...)
		var v *testnet.Violation
		if !errors.As(err, &v) || v.Kind != c.kind || !strings.Contains(v.Detail, c.detail) {
			t.Errorf("%s: got %v, want %s: %s", c.mode, err, c.kind, c.detail)
		}
	}
}

// TestStepErrors: steps that cannot be taken are errors that change
// nothing; the network goes on.
func TestStepErrors(t *testing.T) {
	net := raymondNet(t, 3, 1, testnet.Options{})
	for _, c := range []struct{ step, want string }{
		{"deliver P1->P2", "nothing in transit on P1->P2"},
		{"P1 exit", "exit is allowed only when InCS"},
		{"P1 trusts P1", "P1 takes no failure-detector input"},
		{"P4 entry", "no process P4"},
		{"P0 entry", "no process P0"},
		{"P1 suspects P2", "P1 takes no failure-detector input"},
		{"drop P2->P1", "nothing in transit on P2->P1 to drop"},
		{"expect P1 InCS", "P1 is OutCS; want InCS"},
		{"expect P1 asleep", "want InCS, OutCS, idle, crashed, waits entry or waits exit"},
		{"expect transit P1->P2 REQUEST", "in transit: none; want P1->P2 REQUEST"},
		{"hop P1", "cannot read step"},
		{"entry P1", "cannot read step"},
		{"deliver P1-P2", "is not a link"},
		{"drain except", "cannot read step"},
	} {
		if err := net.Do(c.step); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.step, err, c.want)
		}
	}
	testnet.MustDo(t, net, "P1 entry")
	for _, c := range []struct{ step, want string }{
		{"P1 entry", "called entry while its entry request is pending"},
		{"deliver P1->P2 REPLY", "the next message on P1->P2 is REQUEST, not REPLY"},
	} {
		if err := net.Do(c.step); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.step, err, c.want)
		}
	}
	testnet.MustDo(t, net, "# nothing happened", "", "drain", "expect P1 InCS", "expect transit none")
	if err := net.Err(); err != nil {
		t.Fatal(err)
	}
	if c := net.Counts(); c.Sent != 4 || c.Delivered != 4 || c.Entries != 1 || c.Lost != 0 {
		t.Fatalf("counts %+v: the refused steps were taken", c)
	}
}

// TestFaults: drop, cut and heal, isolate and the hook lose what they
// should and nothing else.
func TestFaults(t *testing.T) {
	// Ricart-Agrawala on 3 processes: P1 needs a REPLY from P2 and P3.
	net := raymondNet(t, 3, 1, testnet.Options{})
	testnet.MustDo(t, net, "P1 entry", "drop P1->P2",
		"expect transit P1->P3 REQUEST", "deliver P1->P3", "deliver P3->P1 REPLY",
		"expect P1 waits entry", "expect transit none")
	if c := net.Counts(); c.Sent != 3 || c.Lost != 1 || c.Delivered != 2 {
		t.Fatalf("drop: counts %+v, want 3 sent, 1 lost, 2 delivered", c)
	}
	if v := net.Verdict(); v != testnet.Waiting {
		t.Fatalf("drop: verdict %s, want waiting (P2 and P3 idle)", v)
	}

	// A cut link loses what is in transit on it and what is sent on it
	// until healed; the other direction works. P1's REQUEST to P2 is lost,
	// P2 defers to P1 (earlier timestamp): both wait for good.
	net = raymondNet(t, 3, 1, testnet.Options{})
	testnet.MustDo(t, net, "P1 entry", "cut P1->P2", "expect transit P1->P3 REQUEST",
		"P2 entry", "expect transit P1->P3 REQUEST, P2->P1 REQUEST, P2->P3 REQUEST",
		"heal P1->P2", "drain", "expect P1 waits entry", "expect P2 waits entry", "expect P3 idle")
	if c := net.Counts(); c.Lost != 1 || net.Verdict() != testnet.Waiting {
		t.Fatalf("cut: %d lost, verdict %s; want 1, waiting", c.Lost, net.Verdict())
	}

	// Isolate cuts every link of a process, both ways.
	net = raymondNet(t, 3, 1, testnet.Options{})
	testnet.MustDo(t, net, "isolate P2", "P1 entry", "P2 entry", "expect transit P1->P3 REQUEST",
		"heal", "P3 entry", "expect transit P1->P3 REQUEST, P3->P1 REQUEST, P3->P2 REQUEST")
	if c := net.Counts(); c.Lost != 3 {
		t.Fatalf("isolate: %d lost, want 3", c.Lost)
	}

	// The hook sees every message and drops the REPLYs.
	net = raymondNet(t, 3, 1, testnet.Options{})
	var seen []string
	net.SetHook(func(from, to cs.ID, m cs.Message) bool {
		seen = append(seen, fmt.Sprintf("P%d->P%d %s", from, to, m.Kind()))
		return m.Kind() != "REPLY"
	})
	testnet.MustDo(t, net, "P1 entry", "drain", "expect P1 waits entry")
	if want := []string{"P1->P2 REQUEST", "P1->P3 REQUEST", "P2->P1 REPLY", "P3->P1 REPLY"}; !slices.Equal(seen, want) {
		t.Fatalf("the hook saw %v, want %v", seen, want)
	}
	net.SetHook(nil)
	testnet.MustDo(t, net, "P2 entry", "drain", "expect P2 waits entry") // P1 defers P2
	if c := net.Counts(); c.Lost != 2 {
		t.Fatalf("hook: %d lost, want the 2 REPLYs", c.Lost)
	}
}

// waiter is a machine that takes failure-detector input: Entry sends PING
// to every other process and completes when each has answered PONG or is
// suspected; Exit completes at once. It solves nothing; it tests the
// network's crashes and detector steps.
type waiter struct {
	self, n   cs.ID
	state     cs.State
	waiting   bool
	answered  cs.Set
	suspected cs.Set
}

type pong struct{}

func (pong) Kind() string                 { return "PONG" }
func (pong) Words() int                   { return 3 }
func (pong) AppendBinary(b []byte) []byte { return append(b, 'o') }

func (w *waiter) Self() cs.ID     { return w.self }
func (w *waiter) State() cs.State { return w.state }
func (w *waiter) Clone() cs.Machine {
	c := *w
	c.answered, c.suspected = w.answered.Clone(), w.suspected.Clone()
	return &c
}
func (w *waiter) AppendState(b []byte) []byte {
	return w.suspected.AppendBinary(w.answered.AppendBinary(append(b, byte(w.state))))
}
func (w *waiter) Pending() cs.Op {
	if w.waiting {
		return cs.Entry
	}
	return cs.None
}
func (w *waiter) Entry(env cs.Env) error {
	if err := cs.CheckCall(w, cs.Entry); err != nil {
		return err
	}
	w.waiting = true
	w.answered.Clear()
	for j := cs.ID(1); j <= w.n; j++ {
		if j != w.self {
			env.Send(j, ping{})
		}
	}
	w.try(env)
	return nil
}
func (w *waiter) Exit(env cs.Env) error {
	if err := cs.CheckCall(w, cs.Exit); err != nil {
		return err
	}
	w.state = cs.OutCS
	env.Changed(cs.OutCS)
	return nil
}
func (w *waiter) Receive(env cs.Env, from cs.ID, m cs.Message) error {
	switch m.(type) {
	case ping:
		env.Send(from, pong{})
	case pong:
		w.answered.Add(from)
		w.try(env)
	default:
		return cs.Unexpected(w.self, from, m)
	}
	return nil
}
func (w *waiter) Suspect(env cs.Env, id cs.ID) error { w.suspected.Add(id); w.try(env); return nil }
func (w *waiter) Trust(_ cs.Env, id cs.ID) error     { w.suspected.Remove(id); return nil }
func (w *waiter) try(env cs.Env) {
	if !w.waiting {
		return
	}
	for j := cs.ID(1); j <= w.n; j++ {
		if j != w.self && !w.answered.Has(j) && !w.suspected.Has(j) {
			return
		}
	}
	w.waiting, w.state = false, cs.InCS
	env.Changed(cs.InCS)
}

func waiters(n int) []cs.Machine {
	ms := make([]cs.Machine, n)
	for i := range ms {
		ms[i] = &waiter{self: cs.ID(i + 1), n: cs.ID(n)}
	}
	return ms
}

// TestCrashAndDetector: a crashed process takes no step and loses the
// messages sent to it, while those it sent are delivered; a suspicion
// unblocks the waiting process; the trace records the crash and the
// suspicion and checks.
func TestCrashAndDetector(t *testing.T) {
	net := testnet.MustGlobal(t, waiters(3), 0, 3, testnet.Options{Record: true})
	testnet.MustDo(t, net, "P3 entry", "P1 entry", "crash P3",
		"expect P3 crashed", "expect transit P1->P2 PING, P3->P1 PING, P3->P2 PING",
		"drain", "expect P1 waits entry", "expect transit none")
	for _, step := range []string{"P3 exit", "crash P3", "P3 suspects P1"} {
		if err := net.Do(step); err == nil || !strings.Contains(err.Error(), "P3 has crashed") {
			t.Errorf("%s: %v, want refused", step, err)
		}
	}
	if c := net.Counts(); c.Lost != 3 { // P1's PING to P3, the PONGs of P1 and P2 to P3
		t.Fatalf("%d lost, want 3", c.Lost)
	}
	if v := net.Verdict(); v != testnet.Waiting {
		t.Fatalf("verdict %s, want waiting", v)
	}
	testnet.MustDo(t, net, "P1 suspects P3", "expect P1 InCS", "P1 trusts P3", "P2 entry", "drain", "expect P2 waits entry")
	if v := net.Verdict(); v != testnet.Waiting || net.Waits() != "P2 entry" {
		t.Fatalf("verdict %s, waits %s; want waiting, P2 waiting to enter", v, net.Waits())
	}
	testnet.MustDo(t, net, "P2 suspects P3", "expect P2 InCS")
	var b bytes.Buffer
	if err := net.WriteTrace(&b, trace.Header{Alg: "waiter", K: 3}); err != nil {
		t.Fatal(err)
	}
	rep, err := trace.Check(bytes.NewReader(b.Bytes()))
	if err != nil || rep.Violation != nil || !rep.Header.FIFO || rep.Pending != 0 || rep.Unreceived != 4 {
		t.Fatalf("trace check: %+v %v", rep, err)
	}
	for _, ev := range []string{`"ev":"crash","node":3`, `"ev":"suspect","node":1,"who":3`, `"ev":"suspect","node":2,"who":3`} {
		if !strings.Contains(b.String(), ev) {
			t.Errorf("the trace has no %s", ev)
		}
	}

	// A crash InCS counts: with at least 2 InCS, losing one of two breaks
	// the lower bound.
	ms := waiters(3)
	net = testnet.MustGlobal(t, ms, 0, 3, testnet.Options{})
	testnet.MustDo(t, net, "P1 entry", "P2 entry", "drain")
	p, _ := property.Global(3, 2, 3)
	net2 := testnet.MustNew(t, ms, p, testnet.Options{}) // P1 and P2 InCS now
	err = net2.Do("crash P2")
	var v *testnet.Violation
	if !errors.As(err, &v) || v.Kind != testnet.KindBounds || !strings.Contains(err.Error(), "after P2 crashed: 1 process InCS, outside the bounds 2..3") {
		t.Fatalf("crash InCS: %v", err)
	}

	// The exit guard of the fault-tolerant global (l,k)-CS, l = 1: P1's
	// exit after P2's crash InCS counts P2 until P1's detector reports it
	// (a suspicion after the crash).
	ft, _ := property.FaultTolerantGlobal(3, 1, 3)
	for _, c := range []struct {
		steps []string
		err   string
	}{
		{[]string{"crash P2", "P1 exit", "drain"}, ""},
		{[]string{"crash P2", "P1 suspects P2", "P1 exit", "drain"}, "after P1 became OutCS: P1's exit left 0 live processes InCS and 0 unreported crashes InCS, below the lower bound 1"},
		{[]string{"P1 suspects P2", "crash P2", "P1 exit", "drain"}, ""},
	} {
		ms := waiters(3)
		testnet.MustDo(t, testnet.MustGlobal(t, ms, 0, 3, testnet.Options{}), "P1 entry", "P2 entry", "drain")
		err := testnet.MustNew(t, ms, ft, testnet.Options{}).Do(c.steps...)
		if c.err == "" && err != nil || c.err != "" && (!errors.As(err, &v) || v.Kind != testnet.KindBounds || v.Failure != nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", strings.Join(c.steps, ", "), err, c.err)
		}
	}
}

// TestOrders: Pass serves each link once, by sender then receiver; Drain
// holds links; Round delivers what was in transit, in send order; Settle
// lets processes InCS exit.
func TestOrders(t *testing.T) {
	net := raymondNet(t, 3, 2, testnet.Options{Record: true})
	testnet.MustDo(t, net, "P3 entry", "P1 entry")
	mark := len(net.Events())
	if moved, err := net.Round(); !moved || err != nil {
		t.Fatal(moved, err)
	}
	var got []string
	for _, ev := range net.Events()[mark:] {
		if ev.Ev == trace.EvRecv {
			got = append(got, fmt.Sprintf("P%d->P%d", ev.From, ev.Node))
		}
	}
	if want := []string{"P3->P1", "P3->P2", "P1->P2", "P1->P3"}; !slices.Equal(got, want) {
		t.Fatalf("round delivered %v, want send order %v", got, want)
	}
	// Round did not deliver what it sent.
	if tr := net.InTransit(); len(tr) == 0 {
		t.Fatal("round delivered the messages it caused")
	}

	// P1 needs one REPLY of two. Pass holds P1->P2 and serves P3->P1,
	// which the delivery on P1->P3 filled.
	net = raymondNet(t, 3, 2, testnet.Options{Record: true})
	testnet.MustDo(t, net, "P1 entry")
	mark = len(net.Events())
	if moved, err := net.Pass(testnet.Link{From: 1, To: 2}); !moved || err != nil {
		t.Fatal(moved, err)
	}
	got = nil
	for _, ev := range net.Events()[mark:] {
		if ev.Ev == trace.EvRecv {
			got = append(got, fmt.Sprintf("P%d->P%d %s", ev.From, ev.Node, ev.Msg))
		}
	}
	if want := []string{"P1->P3 REQUEST", "P3->P1 REPLY"}; !slices.Equal(got, want) {
		t.Fatalf("pass delivered %v, want %v", got, want)
	}
	testnet.MustDo(t, net, "drain except P1->P2", "expect transit P1->P2 REQUEST", "settle")
	if v := net.Verdict(); v != testnet.Quiet {
		t.Fatalf("after settle: %s, want quiet", v)
	}
	if c := net.Counts(); c.Entries != 1 || c.Exits != 1 || c.Delivered != 4 {
		t.Fatalf("counts %+v, want 1 entry, 1 exit, 4 deliveries", c)
	}
}

// TestTraceFIFO: a run that lost messages on live links is written with
// "fifo": false, since a later message of a link may be received before
// an earlier, lost one; trace check accepts both.
func TestTraceFIFO(t *testing.T) {
	for _, drop := range []bool{false, true} {
		net := raymondNet(t, 4, 2, testnet.Options{Seed: 3, Record: true})
		if drop {
			n := 0
			net.SetHook(func(cs.ID, cs.ID, cs.Message) bool { n++; return n%7 != 0 })
		}
		for range 200 {
			if _, err := net.RandomStep(true); err != nil {
				t.Fatal(err)
			}
		}
		var b bytes.Buffer
		if err := net.WriteTrace(&b, trace.Header{Alg: "raymond", K: 2}); err != nil {
			t.Fatal(err)
		}
		rep, err := trace.Check(&b)
		if err != nil || rep.Violation != nil || rep.Header.FIFO == drop || rep.Header.Runtime != "testnet" {
			t.Fatalf("drop=%v: %+v %v", drop, rep, err)
		}
		if drop && net.Counts().Lost == 0 {
			t.Fatal("the hook dropped nothing")
		}
	}
	if err := raymondNet(t, 2, 1, testnet.Options{}).WriteTrace(&bytes.Buffer{}, trace.Header{}); err == nil {
		t.Fatal("WriteTrace without Record accepted")
	}
}

// TestScriptSchedule reads the run blocks before the first verdict, with
// outputs in both of datadriven's forms.
func TestScriptSchedule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.txt")
	script := `# a comment
new n=3 k=1
----
n = 3

run
P1 entry
# a note
deliver P1->P2
----
----
1: P1 entry

run
----
----

run
drain
----

verdict waiting
----
waiting

run
P2 entry
----
`
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := testnet.ScriptSchedule(path)
	if want := []string{"P1 entry", "deliver P1->P2", "drain"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q %v, want %q", got, err, want)
	}
	if err := os.WriteFile(path, []byte("new n=3 k=1\n----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := testnet.ScriptSchedule(path); err == nil {
		t.Fatal("a script without verdict accepted")
	}
}

// TestArgs: the builders' argument helpers.
func TestArgs(t *testing.T) {
	args := map[string]string{"n": "4", "bad": "four", "v": "b", "w": "c"}
	if n, err := testnet.Int(args, "n"); n != 4 || err != nil {
		t.Errorf("n: %d %v", n, err)
	}
	if _, err := testnet.Int(args, "bad"); err == nil || !strings.Contains(err.Error(), `bad="four"`) {
		t.Errorf("bad: %v", err)
	}
	choices := map[string]int{"a": 1, "b": 2}
	for key, want := range map[string]int{"v": 2, "none": 0} {
		if got, err := testnet.Choice(args, key, choices); got != want || err != nil {
			t.Errorf("%s: %d %v, want %d", key, got, err, want)
		}
	}
	if _, err := testnet.Choice(args, "w", choices); err == nil || !strings.Contains(err.Error(), "w=c: want one of a, b, or nothing") {
		t.Errorf("w: %v", err)
	}
	if got := testnet.Arcs(4); fmt.Sprint(got) != "[[1 2 3] [2 3 4] [3 4 1] [4 1 2]]" {
		t.Errorf("Arcs(4) = %v", got)
	}
	if got := testnet.First(3); !slices.Equal(got, []cs.ID{1, 2, 3}) {
		t.Errorf("First(3) = %v", got)
	}
}
