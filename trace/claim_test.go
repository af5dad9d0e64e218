package trace_test

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/trace"
)

// starvedHead and starvedBody: P1's entry request waits from t=1 on while
// P2 enters and exits, and P3 enters at t=12.
const (
	starvedHead = `{"ev":"header","alg":"t","n":3,"l":0,"k":2,"initial":[],"lo":0,"hi":2,"runtime":"sim","fifo":true}` + "\n"
	starvedBody = `{"t":1,"ev":"request","node":1,"op":"entry"}
{"t":2,"ev":"request","node":2,"op":"entry"}
{"t":3,"ev":"state","node":2,"state":"InCS"}
{"t":4,"ev":"request","node":2,"op":"exit"}
{"t":5,"ev":"state","node":2,"state":"OutCS"}
{"t":6,"ev":"request","node":3,"op":"entry"}
{"t":12,"ev":"state","node":3,"state":"InCS"}
`
	starvedVerdict = `{"t":13,"ev":"verdict","node":0,"kind":"starvation","who":1,"since":1,"bound":10,"detail":"P1 waits"}` + "\n"
)

// TestStarvationClaim: a starvation verdict is confirmed when the named
// process's request, made at the time the verdict gives, is still pending
// at the end, at least the bound later, and another process changed state
// after it had waited the bound; each of these missing refutes it, saying
// which.
func TestStarvationClaim(t *testing.T) {
	checkClaims(t, trace.KindStarvation, []claimCase{
		{"confirmed", starvedHead + starvedBody + starvedVerdict, trace.Confirmed,
			"P1's entry request, made at t=1, is still pending at the end of the trace (t=13), 12 time units later, at least the bound 10, while the others went on changing state until t=12"},
		{"entry added for P1", starvedHead + starvedBody + `{"t":12.5,"ev":"state","node":1,"state":"InCS"}` + "\n" + starvedVerdict, trace.NotConfirmed,
			"P1 has no request pending at the end of the trace"},
		{"bound longer than the wait", starvedHead + starvedBody + strings.Replace(starvedVerdict, `"bound":10`, `"bound":12.5`, 1), trace.NotConfirmed,
			"was pending 12 time units at the end of the trace (t=13), less than the bound 12.5"},
		{"another request time", starvedHead + starvedBody + strings.Replace(starvedVerdict, `"since":1`, `"since":0.5`, 1), trace.NotConfirmed,
			"P1's pending request was made at t=1, not at t=0.5 as claimed"},
		{"nobody progressed after the bound", starvedHead + starvedBody + strings.Replace(starvedVerdict, `"bound":10`, `"bound":11`, 1), trace.NotConfirmed,
			"no process changed state after t=12, when P1's request had waited the bound"},
		{"crashed", starvedHead + starvedBody + `{"t":12.5,"ev":"crash","node":1}` + "\n" + starvedVerdict, trace.NotConfirmed,
			"P1 crashed: a crashed process is not starved"},
		{"no such process", starvedHead + starvedBody + strings.Replace(starvedVerdict, `"who":1`, `"who":9`, 1), trace.NotConfirmed,
			"the claim names process 9: ids run from 1 to 3"},
		{"another rule broken first", starvedHead + starvedBody + `{"t":12.5,"ev":"state","node":2,"state":"InCS"}` + "\n" + starvedVerdict, trace.NotConfirmed,
			"breaks another rule (convention) first, at line 9"},
		{"the header's claim", strings.Replace(starvedHead, `"fifo":true`, `"fifo":true,"demonstrates":{"kind":"starvation","who":1,"since":1,"bound":4}`, 1) + starvedBody, trace.Confirmed,
			"still pending at the end of the trace (t=12), 11 time units later, at least the bound 4"},
	})
}

// claimCase is a trace whose claim trace check answers want, saying note.
type claimCase struct {
	name, trace string
	want        trace.Confirmation
	note        string
}

// checkClaims checks each case's trace, which claims a violation of kind.
func checkClaims(t *testing.T, kind string, cases []claimCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := check(t, c.trace)
			if rep.Claim == nil || rep.Claim.Kind != kind || rep.Confirmation != c.want || !strings.Contains(rep.ClaimNote, c.note) {
				t.Fatalf("claim %+v: %s: %s; want %s: %s", rep.Claim, rep.Confirmation, rep.ClaimNote, c.want, c.note)
			}
		})
	}
}

// livelockHead and livelockBody: P2 enters at t=2, then P1 waits while
// messages go back and forth between P1 and P3.
const (
	livelockHead = starvedHead
	livelockBody = `{"t":1,"ev":"request","node":2,"op":"entry"}
{"t":2,"ev":"state","node":2,"state":"InCS"}
{"t":3,"ev":"request","node":1,"op":"entry"}
{"t":3,"ev":"send","node":1,"to":3,"msg":"A","words":1}
{"t":4,"ev":"recv","node":3,"from":1,"msg":"A"}
{"t":4,"ev":"send","node":3,"to":1,"msg":"B","words":1}
{"t":5,"ev":"recv","node":1,"from":3,"msg":"B"}
{"t":5,"ev":"send","node":1,"to":3,"msg":"A","words":1}
{"t":9,"ev":"recv","node":3,"from":1,"msg":"A"}
`
	livelockVerdict = `{"t":12,"ev":"verdict","node":0,"kind":"livelock","since":2,"bound":10,"detail":"quiet"}` + "\n"
)

// TestLivelockClaim: a livelock verdict is confirmed when no state change
// follows the time it gives, messages were received after the last one,
// the trace ends at least the bound later, and requests are pending;
// each of these missing refutes it, saying which.
func TestLivelockClaim(t *testing.T) {
	checkClaims(t, trace.KindLivelock, []claimCase{
		{"confirmed", livelockHead + livelockBody + livelockVerdict, trace.Confirmed,
			"no state change from t=2 to the end of the trace at t=12, 10 time units, at least the bound 10, while 3 messages were received; pending at the end: P1 entry"},
		{"a later state change", livelockHead + livelockBody + `{"t":10,"ev":"request","node":2,"op":"exit"}` + "\n" + `{"t":10,"ev":"state","node":2,"state":"OutCS"}` + "\n" + livelockVerdict, trace.NotConfirmed,
			"P2 changed state at t=10, after the claimed last state change at t=2"},
		{"bound longer than the quiet", livelockHead + livelockBody + strings.Replace(livelockVerdict, `"bound":10`, `"bound":10.5`, 1), trace.NotConfirmed,
			"the trace ends at t=12, 10 time units after t=2, less than the bound 10.5"},
		{"no message", livelockHead + `{"t":1,"ev":"request","node":2,"op":"entry"}` + "\n" + `{"t":2,"ev":"state","node":2,"state":"InCS"}` + "\n" + `{"t":3,"ev":"request","node":1,"op":"entry"}` + "\n" + livelockVerdict, trace.NotConfirmed,
			"no message was received after the last state change"},
		{"nothing pending", livelockHead + livelockBody + `{"t":10,"ev":"crash","node":1}` + "\n" + livelockVerdict, trace.NotConfirmed,
			"no live process waits in a request at the end"},
	})
}

// TestTimedVerdictWritten: the Writer puts a starvation's who, since and
// bound, and a livelock's since and bound, in the verdict line (and no
// other kind's), and they read back as written.
func TestTimedVerdictWritten(t *testing.T) {
	for _, c := range []struct {
		claim trace.Claim
		line  string
	}{
		{trace.Claim{Kind: trace.KindStarvation, Detail: "d", Who: 2, Since: 0, Bound: 1.5}, `{"t":7,"ev":"verdict","node":0,"kind":"starvation","who":2,"since":0,"bound":1.5,"detail":"d"}`},
		{trace.Claim{Kind: trace.KindLivelock, Since: 3.25, Bound: 200}, `{"t":7,"ev":"verdict","node":0,"kind":"livelock","since":3.25,"bound":200}`},
		{trace.Claim{Kind: trace.KindDeadlock, Who: 2, Since: 3, Bound: 4}, `{"t":7,"ev":"verdict","node":0,"kind":"deadlock"}`},
	} {
		var b strings.Builder
		tw := trace.NewWriter(&b, trace.Header{N: 2, Hi: 1})
		tw.Verdict(7, c.claim)
		if err := tw.Flush(); err != nil {
			t.Fatal(err)
		}
		_, line, _ := strings.Cut(strings.TrimSuffix(b.String(), "\n"), "\n")
		if line != c.line {
			t.Errorf("%+v written as\n%s, want\n%s", c.claim, line, c.line)
		}
		rd, err := trace.NewReader(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := rd.Next()
		want := c.claim
		if want.Kind == trace.KindDeadlock {
			want = trace.Claim{Kind: want.Kind}
		}
		if err != nil || ev.Claim() != want {
			t.Errorf("%s read back as %+v (%v), want %+v", line, ev.Claim(), err, want)
		}
	}
}

// drainedHead and drainedBody: P2 enters, P1 requests entry, the drain
// begins at t=4 and P2 exits; at the end P1's entry waits with room for
// it (k = 2) and P2, P3 are OutCS, calling Entry no more.
const (
	drainedHead = starvedHead
	drainedBody = `{"t":1,"ev":"request","node":2,"op":"entry"}
{"t":2,"ev":"state","node":2,"state":"InCS"}
{"t":3,"ev":"request","node":1,"op":"entry"}
{"t":4,"ev":"drain","node":0}
{"t":5,"ev":"request","node":2,"op":"exit"}
{"t":6,"ev":"state","node":2,"state":"OutCS"}
`
	drainedVerdict = `{"t":7,"ev":"verdict","node":0,"kind":"deadlock","detail":"the drain ended"}` + "\n"
)

// TestDrainDeadlockClaim: after a drain event the idle processes OutCS
// call Entry no more, so a deadlock is confirmed with them idle when no
// message is in transit and a pending request is one no bound holds; a
// process InCS could still call Exit, a request every bound holds waits
// as the problem allows, and without the drain event the idle processes
// could still call.
func TestDrainDeadlockClaim(t *testing.T) {
	noDrain := strings.Replace(drainedBody, `{"t":4,"ev":"drain","node":0}`+"\n", "", 1)
	held := `{"ev":"header","alg":"t","n":3,"l":1,"k":2,"initial":[2],"lo":1,"hi":2,"runtime":"sim","fifo":true}` + "\n" +
		`{"t":1,"ev":"request","node":2,"op":"exit"}` + "\n" + `{"t":2,"ev":"drain","node":0}` + "\n" + drainedVerdict
	checkClaims(t, trace.KindDeadlock, []claimCase{
		{"confirmed", drainedHead + drainedBody + drainedVerdict, trace.Confirmed,
			"the idle live processes (P2 P3) are OutCS and call Entry no more, and no bound holds P1 entry"},
		{"no drain event", drainedHead + noDrain + drainedVerdict, trace.CannotConfirm,
			"P2 P3 could still call Entry or Exit"},
		{"a process InCS", drainedHead + strings.Split(drainedBody, `{"t":5`)[0] + drainedVerdict, trace.CannotConfirm,
			"P2 is InCS with no exit request: it could still call Exit"},
		{"held by the lower bound", held, trace.NotConfirmed,
			"a bound holds every pending request (P2 exit)"},
		{"a message in transit", drainedHead + drainedBody + `{"t":6.5,"ev":"send","node":3,"to":1,"msg":"A","words":1}` + "\n" + drainedVerdict, trace.NotConfirmed,
			"1 message is still in transit"},
	})
	rep := check(t, drainedHead+drainedBody+`{"t":6.5,"ev":"request","node":3,"op":"entry"}`+"\n")
	if v := rep.Violation; v == nil || v.Rule != trace.RuleRun || !strings.Contains(v.Reason, "P3 requests entry after the drain event") {
		t.Fatalf("an entry after the drain: %+v", v)
	}
	rep = check(t, drainedHead+drainedBody+`{"t":6.5,"ev":"drain","node":0}`+"\n")
	if v := rep.Violation; v == nil || !strings.Contains(v.Reason, "a second drain event") {
		t.Fatalf("a second drain: %+v", v)
	}
	var b strings.Builder
	tw := trace.NewWriter(&b, trace.Header{N: 2, Lo: 0, Hi: 1, Runtime: "sim", FIFO: true})
	tw.Event(trace.Event{T: 4, Ev: trace.EvDrain})
	if err := tw.Flush(); err != nil || !strings.HasSuffix(b.String(), `{"t":4,"ev":"drain","node":0}`+"\n") {
		t.Fatalf("written: %q %v", b.String(), err)
	}
}
