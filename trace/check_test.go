package trace_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

const hdr = `{"ev":"header","alg":"raymond","n":3,"l":0,"k":2,"seed":1,"initial":[],"lo":0,"hi":1,"runtime":"sim","fifo":true}`

// enterBoth: P1 and P2 both enter; P1 with the permission of P2 first.
const okBody = `
{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":1,"ev":"send","node":1,"to":2,"msg":"REQUEST","words":4}
{"t":1,"ev":"send","node":1,"to":2,"msg":"PING","words":3}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"REQUEST"}
{"t":2,"ev":"send","node":2,"to":1,"msg":"REPLY","words":4}
{"t":3,"ev":"recv","node":1,"from":2,"msg":"REPLY"}
{"t":3,"ev":"state","node":1,"state":"InCS"}
{"t":4,"ev":"request","node":1,"op":"exit"}
{"t":4,"ev":"state","node":1,"state":"OutCS","extra":"ignored"}
{"t":5,"ev":"send","node":3,"to":1,"msg":"REQUEST","words":4}
`

func check(t *testing.T, s string) *trace.Report {
	t.Helper()
	rep, err := trace.Check(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCheckSeq: sequence numbers of a link, as the networked runtime
// writes them, are matched (a link may start at any seq: a trace may begin
// after a run's start); the Writer writes them back.
func TestCheckSeq(t *testing.T) {
	body := `{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3,"seq":7}
{"t":1,"ev":"send","node":1,"to":2,"msg":"B","words":3,"seq":8}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"A","seq":7}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"B","seq":8}
`
	if rep := check(t, hdr+"\n"+body); rep.Violation != nil || rep.Unreceived != 0 {
		t.Fatalf("%+v", rep)
	}
	r, err := trace.NewReader(strings.NewReader(hdr + "\n" + body))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := trace.NewWriter(&b, r.Header)
	for ev, err := r.Next(); err == nil; ev, err = r.Next() {
		w.Event(ev)
	}
	w.Flush()
	if got := b.String()[strings.Index(b.String(), "\n")+1:]; got != body {
		t.Errorf("written back:\n%s\nwant\n%s", got, body)
	}
}

func TestCheckOK(t *testing.T) {
	rep := check(t, hdr+okBody)
	if rep.Violation != nil {
		t.Fatal(rep.Violation)
	}
	if rep.Events != 10 || rep.MaxInCS != 1 || rep.MinInCS != 0 || rep.Unreceived != 2 || rep.Pending != 0 {
		t.Fatalf("%+v", rep)
	}
	if !slices.Equal(rep.Entries, []int64{0, 1, 0, 0}) || !slices.Equal(rep.Exits, []int64{0, 1, 0, 0}) {
		t.Fatalf("entries %v, exits %v: want P1 once each", rep.Entries, rep.Exits)
	}
	if ne, nx := rep.NeverEntered(), rep.NeverExited(); !slices.Equal(ne, []cs.ID{2, 3}) || !slices.Equal(nx, []cs.ID{2, 3}) {
		t.Fatalf("never entered %v, never exited %v: want [2 3] both", ne, nx)
	}
}

func TestCheckViolations(t *testing.T) {
	cases := []struct {
		name, header, body string
		line               int
		reason             string
	}{
		{"bounds", hdr, `{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":1,"ev":"state","node":1,"state":"InCS"}
{"t":1,"ev":"request","node":2,"op":"entry"}
{"t":2,"ev":"state","node":2,"state":"InCS"}`, 5, "2 processes InCS, outside the bounds 0..1"},
		{"bounds from l and k", strings.Replace(strings.Replace(hdr, `"lo":0,`, "", 1), `"hi":1,`, "", 1),
			`{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":1,"ev":"state","node":1,"state":"InCS"}
{"t":1,"ev":"request","node":2,"op":"entry"}
{"t":2,"ev":"state","node":2,"state":"InCS"}
{"t":1,"ev":"request","node":3,"op":"entry"}`, 6, "time 1 is before"},
		{"unmatched recv", hdr, `{"t":2,"ev":"recv","node":2,"from":1,"msg":"REQUEST"}`, 2, "no message from P1 to P2"},
		{"fifo order", hdr, `{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3}
{"t":1,"ev":"send","node":1,"to":2,"msg":"B","words":3}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"B"}`, 4, "oldest message in transit from P1 to P2 is A, not B"},
		{"unordered kind", strings.Replace(hdr, `"fifo":true`, `"fifo":false`, 1), `{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"B"}`, 3, "no B message from P1 to P2"},
		{"state without request", hdr, `{"t":1,"ev":"state","node":1,"state":"InCS"}`, 2, "without a pending entry request"},
		{"wrong state", hdr, `{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":1,"ev":"state","node":1,"state":"OutCS"}`, 3, "becomes OutCS without a pending exit"},
		{"two requests", hdr, `{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":1,"ev":"request","node":1,"op":"entry"}`, 3, "while its entry request is pending"},
		{"exit while OutCS", hdr, `{"t":1,"ev":"request","node":1,"op":"exit"}`, 2, "requests exit while OutCS"},
		{"node out of range", hdr, `{"t":1,"ev":"request","node":4,"op":"entry"}`, 2, "node 4 is out of range 1..3"},
		{"crashed acts", hdr, `{"t":1,"ev":"crash","node":3}
{"t":2,"ev":"send","node":3,"to":1,"msg":"A","words":3}`, 3, "P3 acts after it crashed"},
		{"initial unsafe", strings.Replace(hdr, `"initial":[]`, `"initial":[1,2]`, 1), "", 1, "2 processes InCS"},
		{"initial repeated", strings.Replace(hdr, `"initial":[]`, `"initial":[1,1]`, 1), "", 1, "listed twice"},
		{"suspect self", hdr, `{"t":1,"ev":"suspect","node":1,"who":1}`, 2, "need another process"},
		{"trust self", hdr, `{"t":1,"ev":"trust","node":2,"who":2}`, 2, "P2 trusts 2: need another process"},
		{"seq lost", hdr, `{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3,"seq":1}
{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3,"seq":2}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"A","seq":2}`, 4, "recv of seq 2 from P1 to P2, but the oldest message in transit is seq 1"},
		{"seq skipped", hdr, `{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3,"seq":1}
{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3,"seq":3}`, 3, "send of seq 3 from P1 to P2 after seq 1"},
		{"seq repeated", hdr, `{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":3,"seq":4}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"A","seq":4}
{"t":2,"ev":"recv","node":2,"from":1,"msg":"A","seq":4}`, 4, "no message from P1 to P2 is in transit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := check(t, c.header+"\n"+c.body+"\n")
			v := rep.Violation
			if v == nil || v.Line != c.line || !strings.Contains(v.Reason, c.reason) {
				t.Fatalf("want violation at line %d containing %q, got %+v", c.line, c.reason, v)
			}
		})
	}
}

// TestCheckCrash: a crashed process stops counting in #InCS, messages it
// sent before are still received, messages to it stay unreceived.
func TestCheckCrash(t *testing.T) {
	h := strings.Replace(hdr, `"initial":[]`, `"initial":[3]`, 1)
	rep := check(t, h+`
{"t":1,"ev":"send","node":3,"to":1,"msg":"A","words":3}
{"t":1,"ev":"send","node":1,"to":3,"msg":"B","words":3}
{"t":2,"ev":"crash","node":3}
{"t":3,"ev":"recv","node":1,"from":3,"msg":"A"}
{"t":4,"ev":"suspect","node":1,"who":3}
{"t":5,"ev":"request","node":1,"op":"entry"}
{"t":5,"ev":"state","node":1,"state":"InCS"}
`)
	if rep.Violation != nil {
		t.Fatal(rep.Violation)
	}
	if rep.Unreceived != 1 || rep.MinInCS != 0 || rep.MaxInCS != 1 {
		t.Fatalf("%+v", rep)
	}
}

// local is a header of a local problem on the path P1 - P2 - P3 - P4:
// N_2 ∪ {P2} = {P1,P2,P3} and N_3 ∪ {P3} = {P2,P3,P4} admit 1..2 InCS, the
// ends' neighborhoods 0..2; lo and hi are present but not used.
const local = `{"ev":"header","alg":"lkcs","n":4,"l":0,"k":0,"seed":0,"initial":[2],"lo":0,"hi":0,"runtime":"sim","fifo":true,` +
	`"neighbors":{"1":[2],"2":[1,3],"3":[2,4],"4":[3]},"lk":{"1":[0,2],"2":[1,2],"3":[1,2],"4":[0,2]}}`

func enter(node int, t float64) string {
	return fmt.Sprintf("{\"t\":%g,\"ev\":\"request\",\"node\":%d,\"op\":\"entry\"}\n{\"t\":%g,\"ev\":\"state\",\"node\":%d,\"state\":\"InCS\"}\n", t, node, t, node)
}

// TestCheckLocal: the header's neighborhoods are checked, a failure names
// the bound, and a crashed process no longer counts.
func TestCheckLocal(t *testing.T) {
	rep := check(t, local+"\n"+enter(4, 1)+enter(1, 2))
	if rep.Violation != nil || rep.Property.IsGlobal() || rep.MaxInCS != 3 || rep.Lo != 0 || rep.Hi != 4 {
		t.Fatalf("%+v %v", rep, rep.Violation)
	}
	rep = check(t, local+"\n"+enter(4, 1)+enter(3, 2))
	v := rep.Violation
	if v == nil || v.Line != 5 || v.Rule != trace.RuleBounds || v.Reason != "N[3]={P2,P3,P4}: 3 InCS, outside the bounds 1..2" || v.Failure.Bound.Name != "N[3]" {
		t.Fatalf("%+v", v)
	}
	// P2 crashes InCS: it no longer counts, and N[2] = {P1,P2,P3} drops
	// below its lower bound.
	rep = check(t, local+"\n"+`{"t":1,"ev":"crash","node":2}`)
	if v := rep.Violation; v == nil || v.Reason != "N[2]={P1,P2,P3}: 0 InCS, outside the bounds 1..2" {
		t.Fatalf("%+v", v)
	}
	// With P3 InCS first, N[2] and N[3] keep one live process InCS.
	rep = check(t, local+"\n"+enter(3, 1)+`{"t":2,"ev":"crash","node":2}`)
	if rep.Violation != nil || rep.MaxInCS != 2 || rep.MinInCS != 1 {
		t.Fatalf("%+v %v", rep, rep.Violation)
	}
}

// TestHeaderLocalRoundTrip: the local fields are written keyed by id, in id
// order, and read back equal; the claim likewise.
func TestHeaderLocalRoundTrip(t *testing.T) {
	h := trace.Header{
		Alg: "lkcs", N: 3, Runtime: "check",
		Neighbors:    [][]cs.ID{{2, 3}, {1}, {1}},
		LK:           [][2]int{{1, 2}, {0, 1}, {0, 2}},
		Demonstrates: &trace.Claim{Kind: trace.KindDeadlock, Detail: "P1 waits"},
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"neighbors":{"1":[2,3],"2":[1],"3":[1]}`, `"lk":{"1":[1,2],"2":[0,1],"3":[0,2]}`, `"demonstrates":{"kind":"deadlock","detail":"P1 waits"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("header %s lacks %s", b, want)
		}
	}
	var back trace.Header
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	h.Ev, h.Initial = trace.EvHeader, []cs.ID{}
	if !reflect.DeepEqual(back, h) {
		t.Fatalf("read back %+v, want %+v", back, h)
	}
	p, err := back.Property()
	if err != nil || p.IsGlobal() || len(p.Bounds()) != 3 || p.Bounds()[0].String() != "N[1]={P1,P2,P3} 1..2" {
		t.Fatalf("%v %v", p, err)
	}
	// Without lo and hi, the bounds are l and k; with only one of them,
	// the header is refused (the other is not silently replaced).
	if err := json.Unmarshal([]byte(`{"ev":"header","n":5,"l":1,"k":3}`), &back); err != nil || back.Lo != 1 || back.Hi != 3 {
		t.Fatalf("%+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"ev":"header","n":5,"l":1,"k":3,"hi":4}`), &back); err == nil || !strings.Contains(err.Error(), `"lo"`) {
		t.Fatalf("only hi: %v", err)
	}
}

// TestCheckClaims: a header that says what the trace demonstrates gets an
// answer: confirmed, not confirmed, or cannot confirm, with the reason.
func TestCheckClaims(t *testing.T) {
	claim := func(kind string, h string) string {
		return strings.Replace(h, `"fifo":true`, `"fifo":true,"demonstrates":{"kind":"`+kind+`"}`, 1) + "\n"
	}
	two := enter(1, 1) + enter(2, 2)
	waitAll := `{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":2,"ev":"request","node":2,"op":"entry"}
{"t":3,"ev":"request","node":3,"op":"entry"}
`
	cases := []struct {
		name, text string
		want       trace.Confirmation
		note       string
	}{
		{"no claim", hdr + "\n" + two, trace.NoClaim, ""},
		{"bounds found", claim("bounds", hdr) + two, trace.Confirmed, "line 5 breaks it: 2 processes InCS, outside the bounds 0..1"},
		{"bounds absent", claim("bounds", hdr) + enter(1, 1), trace.NotConfirmed, "the property holds in every state of the trace"},
		{"bounds but another rule", claim("bounds", hdr) + `{"t":1,"ev":"recv","node":1,"from":2,"msg":"A"}`, trace.NotConfirmed, "the trace breaks another rule (messages) first, at line 2"},
		{"deadlock", claim("deadlock", hdr) + waitAll, trace.Confirmed, "every live process waits in a request (P1 entry, P2 entry, P3 entry)"},
		{"deadlock with a message in transit", claim("deadlock", hdr) + waitAll + `{"t":4,"ev":"send","node":3,"to":1,"msg":"REQUEST","words":4}
{"t":4,"ev":"send","node":2,"to":1,"msg":"OK","words":4}`, trace.NotConfirmed, "2 messages are still in transit to live processes at the end (OK from P2 to P1)"},
		{"deadlock with an idle process", claim("deadlock", hdr) + `{"t":1,"ev":"request","node":2,"op":"entry"}`, trace.CannotConfirm, "P2 entry is waiting but P1 P3 could still call"},
		{"deadlock with nobody waiting", claim("deadlock", hdr), trace.NotConfirmed, "no live process waits in a request at the end"},
		{"deadlock after a crash, not suspected", claim("deadlock", hdr) + `{"t":1,"ev":"send","node":1,"to":3,"msg":"REQUEST"}
{"t":1,"ev":"crash","node":3}
{"t":2,"ev":"request","node":1,"op":"entry"}
{"t":2,"ev":"request","node":2,"op":"entry"}`, trace.CannotConfirm, "P1 has not suspected the crashed P3"},
		{"deadlock after a crash, suspected", claim("deadlock", hdr) + `{"t":1,"ev":"send","node":1,"to":3,"msg":"REQUEST"}
{"t":1,"ev":"crash","node":3}
{"t":2,"ev":"suspect","node":1,"who":3}
{"t":2,"ev":"suspect","node":2,"who":3}
{"t":2,"ev":"request","node":1,"op":"entry"}
{"t":2,"ev":"request","node":2,"op":"entry"}`, trace.Confirmed, "(P1 entry, P2 entry)"},
		{"deadlock after a crash, suspicion withdrawn", claim("deadlock", hdr) + `{"t":1,"ev":"send","node":1,"to":3,"msg":"REQUEST"}
{"t":1,"ev":"crash","node":3}
{"t":2,"ev":"suspect","node":1,"who":3}
{"t":2,"ev":"suspect","node":2,"who":3}
{"t":2,"ev":"trust","node":2,"who":3}
{"t":2,"ev":"request","node":1,"op":"entry"}
{"t":2,"ev":"request","node":2,"op":"entry"}`, trace.CannotConfirm, "P2 has not suspected the crashed P3"},
		{"deadlock unordered", strings.Replace(claim("deadlock", hdr), `"fifo":true`, `"fifo":false`, 1) + waitAll + `{"t":4,"ev":"send","node":3,"to":2,"msg":"X"}`, trace.NotConfirmed, "1 message is still in transit to live processes at the end (X from P3 to P2)"},
		{"convention found", claim("convention", hdr) + `{"t":1,"ev":"state","node":1,"state":"InCS"}`, trace.Confirmed, "line 2 breaks it: P1 becomes InCS without a pending entry request"},
		{"convention unseen", claim("convention", hdr) + `{"t":1,"ev":"request","node":1,"op":"entry"}`, trace.CannotConfirm, "a trace alone cannot show it"},
		{"error", claim("error", hdr), trace.CannotConfirm, "a trace does not record a machine's errors"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := check(t, c.text)
			if rep.Confirmation != c.want || !strings.Contains(rep.ClaimNote, c.note) {
				t.Fatalf("got %s: %q, want %s: %q", rep.Confirmation, rep.ClaimNote, c.want, c.note)
			}
		})
	}
}

// TestSetPropertyRoundTrip: a header written with SetProperty gives back
// the same bounds through Property, global and local.
func TestSetPropertyRoundTrip(t *testing.T) {
	g, err := property.Global(5, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := property.Local([][]cs.ID{{2, 4}, {1, 3}, {2, 4}, {3, 1}}, []int{0, 1, 0, 1}, []int{2, 2, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*property.Property{g, l} {
		var h trace.Header
		h.SetProperty(want)
		got, err := h.Property()
		if err != nil {
			t.Fatal(err)
		}
		if got.IsGlobal() != want.IsGlobal() || !reflect.DeepEqual(got.Bounds(), want.Bounds()) {
			t.Errorf("%v: read back %v", want.Bounds(), got.Bounds())
		}
	}
}

// TestVerdictEvent: a trace that ends with a verdict claims it as a header's
// "demonstrates" does; a verdict must be the last event and the only claim,
// and must name a known kind.
func TestVerdictEvent(t *testing.T) {
	const head = `{"ev":"header","alg":"t","n":2,"l":0,"k":1,"initial":[],"lo":0,"hi":1,"runtime":"sim","fifo":true}` + "\n"
	deadlock := head + `{"t":1,"ev":"request","node":1,"op":"entry"}` + "\n" +
		`{"t":1,"ev":"request","node":2,"op":"entry"}` + "\n" +
		`{"t":2,"ev":"verdict","node":0,"kind":"deadlock","detail":"no event left"}` + "\n"
	rep, err := trace.Check(strings.NewReader(deadlock))
	if err != nil || rep.Violation != nil || rep.Claim == nil || rep.Claim.Kind != trace.KindDeadlock || rep.Confirmation != trace.Confirmed {
		t.Fatalf("%+v %v", rep, err)
	}
	after := deadlock + `{"t":3,"ev":"crash","node":1}` + "\n"
	if rep, err := trace.Check(strings.NewReader(after)); err != nil || rep.Violation == nil || !strings.Contains(rep.Violation.Reason, "after the verdict") {
		t.Fatalf("an event after the verdict: %+v %v", rep, err)
	}
	bad := head + `{"t":2,"ev":"verdict","node":0,"kind":"late"}` + "\n"
	if _, err := trace.Check(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), `field "kind"`) {
		t.Fatalf("an unknown kind: %v", err)
	}
	var b strings.Builder
	tw := trace.NewWriter(&b, trace.Header{N: 2, Lo: 0, Hi: 1, Runtime: "sim", FIFO: true})
	tw.Event(trace.Event{T: 2, Ev: trace.EvVerdict, Kind: trace.KindBounds, Detail: "d"})
	if err := tw.Flush(); err != nil || !strings.HasSuffix(b.String(), `{"t":2,"ev":"verdict","node":0,"kind":"bounds","detail":"d"}`+"\n") {
		t.Fatalf("written: %q %v", b.String(), err)
	}
}
