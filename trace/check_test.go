package trace_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"critsec/cs"
	"critsec/trace"
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

func TestCheckMalformed(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		msg        string
	}{
		{"empty", "", 1, "empty file"},
		{"no header", `{"t":1,"ev":"crash","node":1}`, 1, "first line must be the header"},
		{"bad json", hdr + "\n{\"t\":1,\n", 2, "unexpected end of JSON"},
		{"unknown kind", hdr + "\n" + `{"t":1,"ev":"teleport","node":1}`, 2, `unknown event kind "teleport"`},
		{"missing t", hdr + "\n" + `{"ev":"crash","node":1}`, 2, `without "t"`},
		{"missing to", hdr + "\n" + `{"t":1,"ev":"send","node":1,"msg":"A"}`, 2, `without "to"`},
		{"missing msg", hdr + "\n" + `{"t":1,"ev":"recv","node":1,"from":2}`, 2, `without "msg"`},
		{"bad op", hdr + "\n" + `{"t":1,"ev":"request","node":1,"op":"enter"}`, 2, `op "enter"`},
		{"bad state", hdr + "\n\n" + `{"t":1,"ev":"state","node":1,"state":"in"}`, 3, `state "in"`},
		{"two headers", hdr + "\n" + hdr, 2, "second header"},
		{"bad n", strings.Replace(hdr, `"n":3`, `"n":0`, 1), 1, "n = 0"},
		{"empty bounds", strings.Replace(hdr, `"lo":0`, `"lo":2`, 1), 1, "bounds 2..1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := trace.Check(strings.NewReader(c.text))
			var fe *trace.FormatError
			if !errors.As(err, &fe) || fe.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("want format error at line %d containing %q, got %v", c.line, c.msg, err)
			}
		})
	}
}

// TestWriterEvent: events written one by one with Writer.Event read back
// equal, and a kind the format does not have is an error.
func TestWriterEvent(t *testing.T) {
	rd, err := trace.NewReader(strings.NewReader(hdr + okBody))
	if err != nil {
		t.Fatal(err)
	}
	var in []trace.Event
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		in = append(in, ev)
	}
	in = append(in, trace.Event{T: 6, Ev: trace.EvCrash, Node: 3}, trace.Event{T: 7, Ev: trace.EvSuspect, Node: 1, Who: 3})
	var b strings.Builder
	tw := trace.NewWriter(&b, rd.Header)
	for _, ev := range in {
		tw.Event(ev)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	rd2, err := trace.NewReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range in {
		got, err := rd2.Next()
		if err != nil || got != want {
			t.Fatalf("event %d: read back %+v (%v), want %+v", i, got, err, want)
		}
	}
	tw = trace.NewWriter(&b, rd.Header)
	tw.Event(trace.Event{T: 8, Ev: "teleport", Node: 1})
	if err := tw.Flush(); err == nil || !strings.Contains(err.Error(), `"teleport"`) {
		t.Fatalf("unknown kind: %v", err)
	}
}
