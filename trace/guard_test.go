package trace_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// guardHead is the header of a fault-tolerant global (1,3)-CS run over 4
// processes: at most 3 live InCS, every exit leaving at least 1.
const guardHead = `{"ev":"header","alg":"ftgcs","n":4,"l":1,"k":3,"initial":[1,2],"lo":0,"hi":3,"exit_guard":1,"runtime":"sim","fifo":true%s}` + "\n"

// TestCheckExitGuard: S2 is checked at every exit, from the trace's crash,
// suspect and trust events; under T a suspicion of a pair before any trust
// of it is an initial suspicion, not a report.
func TestCheckExitGuard(t *testing.T) {
	const crash = `{"t":1,"ev":"crash","node":2}` + "\n"
	exit := `{"t":3,"ev":"request","node":1,"op":"exit"}` + "\n" + `{"t":3,"ev":"state","node":1,"state":"OutCS"}` + "\n"
	trustT := `{"t":0,"ev":"suspect","node":1,"who":2}` + "\n" + `{"t":0.5,"ev":"trust","node":1,"who":2}` + "\n"
	for _, c := range []struct {
		name, params, body string
		broken             bool
	}{
		// P2 crashed InCS, unreported: P1's exit counts it.
		{"unreported", `,"detector":"P"`, crash + exit, false},
		// P1's module reported it (P: every suspicion).
		{"reported under P", `,"detector":"P"`, crash + `{"t":2,"ev":"suspect","node":1,"who":2}` + "\n" + exit, true},
		// No detector named: as P (the model checker's traces).
		{"reported, no detector named", ``, crash + `{"t":2,"ev":"suspect","node":1,"who":2}` + "\n" + exit, true},
		// Another module's report does not count for P1.
		{"reported to another", `,"detector":"P"`, crash + `{"t":2,"ev":"suspect","node":3,"who":2}` + "\n" + exit, false},
		// T: the initial suspicion at t=0 reports nothing.
		{"initial suspicion under T", `,"detector":"T"`, `{"t":0,"ev":"suspect","node":1,"who":2}` + "\n" + crash + exit, false},
		// T: a suspicion after a trust of the pair is a report.
		{"reported under T", `,"detector":"T"`, trustT + crash + `{"t":2,"ev":"suspect","node":1,"who":2}` + "\n" + exit, true},
	} {
		rep := check(t, strings.Replace(guardHead, "%s", c.params, 1)+c.body)
		v := rep.Violation
		switch {
		case c.broken && (v == nil || v.Rule != trace.RuleBounds || v.Line != 5 && v.Line != 7 || !strings.Contains(v.Reason, "P1's exit left 0 live processes InCS and 0 unreported crashes InCS, below the lower bound 1")):
			t.Errorf("%s: want S2 broken by P1's exit, got %+v", c.name, v)
		case !c.broken && v != nil:
			t.Errorf("%s: %v", c.name, v)
		}
	}
	// The initial configuration needs l <= #InCS.
	bad := strings.Replace(strings.Replace(guardHead, "%s", "", 1), `"initial":[1,2]`, `"initial":[]`, 1)
	if v := check(t, bad).Violation; v == nil || !strings.Contains(v.Reason, "initially, below the lower bound 1") {
		t.Errorf("initial configuration below l: %+v", v)
	}
}

// TestExitGuardRoundTrip: a fault-tolerant global property written into a
// header reads back with its exit guard l; a header whose exit guard does
// not fit its bounds is refused.
func TestExitGuardRoundTrip(t *testing.T) {
	want, err := property.FaultTolerantGlobal(6, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	var h trace.Header
	h.N = 6
	h.SetProperty(want)
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back trace.Header
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.Property()
	if err != nil {
		t.Fatal(err)
	}
	if g := got.ExitGuard(); g == nil || g.L() != 2 || g.K() != 4 || !bytes.Contains(b, []byte(`"lo":0,"hi":4`)) {
		t.Fatalf("read back %v from %s", got, b)
	}
	// A plain global property leaves no exit guard behind.
	plain, _ := property.Global(6, 1, 4)
	h.SetProperty(plain)
	if p, err := h.Property(); err != nil || p.ExitGuard() != nil {
		t.Fatalf("plain global after a guarded one: %v %v", p, err)
	}
	for _, bad := range []string{
		`{"ev":"header","alg":"x","n":4,"l":1,"k":3,"initial":[1],"lo":1,"hi":3,"exit_guard":1}`,
		`{"ev":"header","alg":"x","n":4,"l":3,"k":3,"initial":[1],"lo":0,"hi":3,"exit_guard":3}`,
		`{"ev":"header","alg":"x","n":4,"l":3,"k":3,"initial":[1],"lo":0,"hi":3,"exit_guard":"two"}`,
	} {
		if _, err := trace.Check(strings.NewReader(bad + "\n")); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestCheckExitGuardCounterexample: a model checker's counterexample of
// S2 (its trusting detector's initial suspicions are not events: the
// report is the suspect after the trust) is confirmed.
func TestCheckExitGuardCounterexample(t *testing.T) {
	const cex = `{"ev":"header","alg":"ftgcs","n":4,"l":1,"k":3,"seed":0,"initial":[1,2],"lo":0,"hi":3,"exit_guard":1,"runtime":"check","fifo":true,"demonstrates":{"kind":"bounds","detail":"P1's exit left 0 live processes InCS"},"budget":"x","crashes":1,"detector":"T"}
{"t":1,"ev":"trust","node":1,"who":2}
{"t":2,"ev":"crash","node":2}
{"t":3,"ev":"suspect","node":1,"who":2}
{"t":4,"ev":"request","node":1,"op":"exit"}
{"t":4,"ev":"state","node":1,"state":"OutCS"}
`
	rep := check(t, cex)
	if rep.Confirmation != trace.Confirmed || rep.Violation == nil || rep.Violation.Line != 6 {
		t.Fatalf("%v: %s (%+v)", rep.Confirmation, rep.ClaimNote, rep.Violation)
	}
	// Without the report, the exit keeps S2 and the claim is not confirmed.
	rep = check(t, strings.Replace(cex, `{"t":3,"ev":"suspect","node":1,"who":2}`+"\n", "", 1))
	if rep.Confirmation != trace.NotConfirmed || rep.Violation != nil {
		t.Fatalf("without the report: %v: %s (%+v)", rep.Confirmation, rep.ClaimNote, rep.Violation)
	}
}

// TestCheckExitGuardWaitIsNoDeadlock: exits waiting while at most l
// processes are live wait as the specification requires: a deadlock claim
// on them is not confirmed.
func TestCheckExitGuardWaitIsNoDeadlock(t *testing.T) {
	const cex = `{"ev":"header","alg":"ftgcs","n":3,"l":2,"k":3,"initial":[1,2,3],"lo":0,"hi":3,"exit_guard":2,"runtime":"check","fifo":true,"demonstrates":{"kind":"deadlock"},"detector":"P"}
{"t":1,"ev":"crash","node":3}
{"t":2,"ev":"suspect","node":1,"who":3}
{"t":2,"ev":"suspect","node":2,"who":3}
{"t":3,"ev":"request","node":1,"op":"exit"}
{"t":4,"ev":"request","node":2,"op":"exit"}
`
	rep := check(t, cex)
	if rep.Confirmation != trace.NotConfirmed || !strings.Contains(rep.ClaimNote, "requires them to wait") {
		t.Fatalf("%v: %s", rep.Confirmation, rep.ClaimNote)
	}
	// With an entry waiting too, it is a deadlock.
	entry := strings.Replace(cex, `"initial":[1,2,3]`, `"initial":[1,3]`, 1)
	entry = strings.Replace(entry, `"node":2,"op":"exit"`, `"node":2,"op":"entry"`, 1)
	rep = check(t, entry)
	if rep.Confirmation == trace.NotConfirmed {
		t.Fatalf("with an entry waiting: %v: %s", rep.Confirmation, rep.ClaimNote)
	}
}
