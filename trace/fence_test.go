package trace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
)

// fenceHdr is a header of k = 1 over 3 processes.
const fenceHdr = `{"ev":"header","alg":"ftraymond","n":3,"l":0,"k":1,"seed":0,"initial":[],"runtime":"check","fifo":true}`

// fencedEntry is the lines of P's entry with a token (or none when fence is "").
func fencedEntry(t int, p int, fence string) string {
	s := strings.NewReplacer("T", string(rune('0'+t)), "P", string(rune('0'+p))).Replace(
		`{"t":T,"ev":"request","node":P,"op":"entry"}` + "\n" + `{"t":T,"ev":"state","node":P,"state":"InCS"`)
	if fence != "" {
		s += `,"fence":` + fence
	}
	return s + "}\n"
}

// TestCheckFences: trace check verifies the tokens from the first entry
// that carries one: a crashed holder stays a holder until a token names it,
// and at k = 1 a Seq may repeat only for the same process.
func TestCheckFences(t *testing.T) {
	crash1 := `{"t":2,"ev":"crash","node":1}` + "\n"
	cases := []struct {
		name, body string
		rule       string
		reason     string
	}{
		{"no tokens", fencedEntry(1, 1, "") + crash1 + fencedEntry(3, 2, ""), "", ""},
		{"named", fencedEntry(1, 1, `{"seq":4,"crashed":[]}`) + crash1 + fencedEntry(3, 2, `{"seq":8,"crashed":[1]}`), "", ""},
		{"not named", fencedEntry(1, 1, `{"seq":4,"crashed":[]}`) + crash1 + fencedEntry(3, 2, `{"seq":8,"crashed":[]}`),
			trace.RuleFencing, "2 holders named by no holder's fence, more than k = 1: P1 (crashed InCS), P2"},
		{"untokened holder", fencedEntry(1, 1, "") + crash1 + fencedEntry(3, 2, `{"seq":8,"crashed":[]}`),
			trace.RuleFencing, "2 holders named by no holder's fence, more than k = 1: P1 (crashed InCS), P2"},
		{"seq below", fencedEntry(1, 1, `{"seq":8,"crashed":[]}`) + crash1 + fencedEntry(3, 2, `{"seq":5,"crashed":[1]}`),
			trace.RuleFencing, "P2 entered with fence seq 5, below seq 8 of an earlier entry of P1"},
		{"bad id", fencedEntry(1, 1, `{"seq":4,"crashed":[7]}`), trace.RuleRun, "P1's fence names process 7: ids run from 1 to 3"},
	}
	for _, c := range cases {
		rep := check(t, fenceHdr+"\n"+c.body)
		switch v := rep.Violation; {
		case c.rule == "" && v != nil:
			t.Errorf("%s: %v, want ok", c.name, v)
		case c.rule != "" && (v == nil || v.Rule != c.rule || v.Reason != c.reason):
			t.Errorf("%s: %+v, want %s: %s", c.name, v, c.rule, c.reason)
		}
	}
	// A fence on an exit is malformed.
	_, err := trace.Check(strings.NewReader(fenceHdr + "\n" + fencedEntry(1, 1, "") + `{"t":2,"ev":"request","node":1,"op":"exit"}` + "\n" +
		`{"t":2,"ev":"state","node":1,"state":"OutCS","fence":{"seq":1,"crashed":[]}}` + "\n"))
	if err == nil || !strings.Contains(err.Error(), "only an entry (state InCS) carries a token") {
		t.Errorf("fence on OutCS: %v", err)
	}
}

// TestFenceRoundTrip: a token written by the Writer reads back the same.
func TestFenceRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, trace.Header{Alg: "ftraymond", N: 3, K: 1, Hi: 1})
	f := trace.FenceOf(cs.Fence{Seq: 9, Crashed: cs.NewSet(1, 3)})
	tw.Event(trace.Event{T: 1, Ev: trace.EvState, Node: 2, State: "InCS", Fence: f})
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"state":"InCS","fence":{"seq":9,"crashed":[1,3]}}`) {
		t.Fatalf("written: %s", buf.String())
	}
	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := r.Next()
	if err != nil || ev.Fence == nil || ev.Fence.Seq != 9 || len(ev.Fence.Crashed) != 2 || ev.Fence.Crashed[1] != 3 {
		t.Errorf("read back %+v %v", ev.Fence, err)
	}
}
