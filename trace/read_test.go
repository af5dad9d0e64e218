package trace_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/critsec/critsec/trace"
)

// internals are fragments of Go's own error messages that must never reach
// a reader of the trace.
var internals = []string{"json:", "Go struct", "Go value", "rawEvent", "plain", "strconv", "bufio", "cs.ID", "int32", "float64", "uint64", "makeslice", "token too long"}

// checkOneLine fails unless msg is one line free of Go internals.
func checkOneLine(t *testing.T, msg string) {
	t.Helper()
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error is not one line: %q", msg)
	}
	for _, s := range internals {
		if strings.Contains(msg, s) {
			t.Errorf("error shows Go internals (%q): %s", s, msg)
		}
	}
}

// hdrN is hdr with n replaced.
func hdrN(n string) string { return strings.Replace(hdr, `"n":3`, `"n":`+n, 1) }

// TestCheckMalformed: every family of bad input is one *FormatError that
// names the line, the field and what it holds, in one line without Go
// internals.
func TestCheckMalformed(t *testing.T) {
	ev := func(line string) string { return hdr + "\n" + line + "\n" }
	long := hdr + "\n" + `{"t":1,"ev":"crash","node":1,"pad":"` + strings.Repeat("x", 5000) + `"}` + "\n"
	cases := []struct {
		name, text string
		line       int
		msg        string
	}{
		// empty files, truncated files, not JSON
		{"empty", "", 1, "empty file"},
		{"blank lines only", "\n  \n\t\n", 1, "empty file"},
		{"no header", `{"t":1,"ev":"crash","node":1}`, 1, "first line must be the header"},
		{"header not an object", `[1,2]`, 1, "want a JSON object {...}, got an array"},
		{"header a number", `42`, 1, "want a JSON object {...}, got a number"},
		{"truncated header", `{"ev":"header","n":`, 1, "the line ends inside a value (a truncated file?)"},
		{"truncated event", hdr + "\n{\"t\":1,\n", 2, "the line ends inside a value (a truncated file?)"},
		{"not json", hdr + "\n{not json}\n", 2, "not valid JSON at byte 2"},
		{"trailing garbage", ev(`{"t":1,"ev":"crash","node":1} x`), 2, "not valid JSON at byte"},
		{"NaN time", ev(`{"t":NaN,"ev":"crash","node":1}`), 2, "not valid JSON"},
		{"byte order mark", "\ufeff" + hdr, 1, "not valid JSON at byte 1"},
		// n: huge, negative, not an integer, missing
		{"n 2^62", hdrN("4611686018427387904"), 1, "n = 4611686018427387904: process ids are 32-bit, need n <= 2147483647"},
		{"n 2^63", hdrN("9223372036854775808"), 1, `field "n": want an integer, got 9223372036854775808`},
		{"n 1e30", hdrN("1e30"), 1, `field "n": want an integer, got 1e30`},
		{"n 2e9 over the limit", hdrN("2000000000"), 1, "n = 2000000000 is more than the limit of 1048576 processes (checking n = 2000000000 needs about 160 GB)"},
		{"n negative", hdrN("-5"), 1, "n = -5: need n >= 1"},
		{"n zero", hdrN("0"), 1, "n = 0: need n >= 1"},
		{"n string", hdrN(`"3"`), 1, `field "n": want an integer, got "3"`},
		{"n fraction", hdrN("2.5"), 1, `field "n": want an integer, got 2.5`},
		{"n missing", strings.Replace(hdr, `"n":3,`, "", 1), 1, `no field "n": want the number of processes`},
		// other header fields of the wrong type or out of range
		{"empty bounds", strings.Replace(hdr, `"lo":0`, `"lo":2`, 1), 1, "bounds lo..hi = 2..1: need 0 <= lo <= hi <= n = 3"},
		{"hi above n", strings.Replace(hdr, `"hi":1`, `"hi":4`, 1), 1, "bounds lo..hi = 0..4"},
		{"seed negative", strings.Replace(hdr, `"seed":1`, `"seed":-1`, 1), 1, `field "seed": want an integer >= 0, got -1`},
		{"initial strings", strings.Replace(hdr, `"initial":[]`, `"initial":["1"]`, 1), 1, `field "initial": want a list of process ids, got ["1"]`},
		{"fifo string", strings.Replace(hdr, `"fifo":true`, `"fifo":"yes"`, 1), 1, `field "fifo": want true or false, got "yes"`},
		{"param too large", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"lambda":1e999`, 1), 1, `field "lambda": want a JSON value`},
		{"claim unknown", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"demonstrates":{"kind":"hang"}`, 1), 1, `field "demonstrates.kind": want "bounds", "deadlock", "convention", "error", "fencing", "starvation" or "livelock", got "hang"`},
		{"claim livelock without since", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"demonstrates":{"kind":"livelock","bound":5}`, 1), 1, `the claim "demonstrates" of kind livelock without "since": want a time (a finite number)`},
		{"claim starvation zero bound", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"demonstrates":{"kind":"starvation","who":1,"since":0,"bound":0}`, 1), 1, `field "demonstrates.bound": want a time span (a number > 0), got 0`},
		{"claim string", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"demonstrates":"deadlock"`, 1), 1, `field "demonstrates": want an object {"kind":...,"detail":...}, got "deadlock"`},
		{"neighbors list", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":[[2],[1]]`, 1), 1, `field "neighbors": want an object keyed by process id`},
		{"neighbors key", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":{"1":[2],"x":[1]}`, 1), 1, `field "neighbors": want the keys "1" to "2", one per process, got "x"`},
		{"neighbors gap", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":{"1":[2],"3":[1]}`, 1), 1, `got "3"`},
		{"neighbors value", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":{"1":[2],"2":"P1"}`, 1), 1, `field "neighbors.2": want a list of process ids, got "P1"`},
		{"lk triple", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"lk":{"1":[0,1,2]}`, 1), 1, `field "lk.1": want a pair [l_i,k_i] of integers, got 3 numbers`},
		{"local without lk", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":{"1":[2],"2":[1],"3":[]}`, 1), 1, "lists neighbors for 3 and bounds for 0 of the n = 3 processes"},
		{"local fewer than n", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":{"1":[2],"2":[1]},"lk":{"1":[0,1],"2":[0,1]}`, 1), 1, "lists neighbors for 2 and bounds for 2 of the n = 3 processes"},
		{"local bad neighbor", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":{"1":[7],"2":[1],"3":[1]},"lk":{"1":[0,1],"2":[0,1],"3":[0,1]}`, 1), 1, "P1 has neighbor 7: ids run from 1 to n = 3"},
		{"local bad bound", strings.Replace(hdr, `"fifo":true`, `"fifo":true,"neighbors":{"1":[2],"2":[1],"3":[]},"lk":{"1":[0,1],"2":[0,1],"3":[0,2]}`, 1), 1, "bound N[3]={P3} 0..2: need 0 <= lo <= hi <= 1"},
		// events: wrong types, NaN and Inf times, unknown kinds, missing fields
		{"t string", ev(`{"t":"1","ev":"crash","node":1}`), 2, `field "t": want a finite number, got a string`},
		{"t infinite", ev(`{"t":1e400,"ev":"crash","node":1}`), 2, `field "t": want a finite number, got 1e400`},
		{"t minus infinite", ev(`{"t":-1e400,"ev":"crash","node":1}`), 2, `field "t": want a finite number, got -1e400`},
		{"node fraction", ev(`{"t":1,"ev":"crash","node":1.5}`), 2, `field "node": want a process id (an integer), got 1.5`},
		{"node over 32 bits", ev(`{"t":1,"ev":"crash","node":3000000000}`), 2, `field "node": want a process id (an integer), got 3000000000`},
		{"node string", ev(`{"t":1,"ev":"crash","node":"P1"}`), 2, `field "node": want a process id (an integer), got a string`},
		{"to bool", ev(`{"t":1,"ev":"send","node":1,"to":true,"msg":"A"}`), 2, `field "to": want a process id (an integer), got true or false`},
		{"msg number", ev(`{"t":1,"ev":"send","node":1,"to":2,"msg":7}`), 2, `field "msg": want a string, got a number`},
		{"words string", ev(`{"t":1,"ev":"send","node":1,"to":2,"msg":"A","words":"4"}`), 2, `field "words": want an integer, got a string`},
		{"ev number", ev(`{"t":1,"ev":3,"node":1}`), 2, `field "ev": want a string, got a number`},
		{"event an array", ev(`[1]`), 2, "want a JSON object {...}, got an array"},
		{"unknown kind", ev(`{"t":1,"ev":"teleport","node":1}`), 2, `field "ev": want send, recv, request, state, crash, suspect, trust, drain or verdict, got "teleport"`},
		{"no kind", ev(`{"t":1,"node":1}`), 2, `no field "ev": want send, recv`},
		{"missing t", ev(`{"ev":"crash","node":1}`), 2, `crash event without "t": want a finite number`},
		{"missing node", ev(`{"t":1,"ev":"crash"}`), 2, `crash event without "node"`},
		{"missing to", ev(`{"t":1,"ev":"send","node":1,"msg":"A"}`), 2, `send event without "to"`},
		{"missing from", ev(`{"t":1,"ev":"recv","node":1,"msg":"A"}`), 2, `recv event without "from"`},
		{"missing who", ev(`{"t":1,"ev":"suspect","node":1}`), 2, `suspect event without "who"`},
		{"trust without who", ev(`{"t":1,"ev":"trust","node":1}`), 2, `trust event without "who"`},
		{"missing msg", ev(`{"t":1,"ev":"recv","node":1,"from":2}`), 2, `recv event without "msg"`},
		{"verdict unknown", ev(`{"t":1,"ev":"verdict","node":0,"kind":"hang"}`), 2, `field "kind": want "bounds", "deadlock", "convention", "error", "fencing", "starvation" or "livelock", got "hang"`},
		{"starvation without who", ev(`{"t":1,"ev":"verdict","node":0,"kind":"starvation","since":0,"bound":1}`), 2, `a verdict of kind starvation without "who": want a process id (an integer)`},
		{"starvation without bound", ev(`{"t":1,"ev":"verdict","node":0,"kind":"starvation","who":2,"since":0}`), 2, `a verdict of kind starvation without "bound": want a time span (a number > 0)`},
		{"livelock negative bound", ev(`{"t":1,"ev":"verdict","node":0,"kind":"livelock","since":0,"bound":-3}`), 2, `field "bound": want a time span (a number > 0), got -3`},
		{"livelock since string", ev(`{"t":1,"ev":"verdict","node":0,"kind":"livelock","since":"0","bound":3}`), 2, `field "since": want a time (a finite number), got a string`},
		{"bad op", ev(`{"t":1,"ev":"request","node":1,"op":"enter"}`), 2, `field "op": want "entry" or "exit", got "enter"`},
		{"bad state", hdr + "\n\n" + `{"t":1,"ev":"state","node":1,"state":"in"}`, 3, `field "state": want "InCS" or "OutCS", got "in"`},
		{"two headers", hdr + "\n" + hdr, 2, "second header"},
		// long lines
		{"long line", long, 2, "the line is longer than 4096 bytes, the longest a trace line may be"},
		{"long header", `{"ev":"header","n":3,"alg":"` + strings.Repeat("y", 5000) + `"}`, 1, "longer than 4096 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := trace.CheckLimits(strings.NewReader(c.text), trace.Limits{MaxLine: 4096})
			var fe *trace.FormatError
			if !errors.As(err, &fe) || fe.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("want a format error at line %d containing %q, got %v", c.line, c.msg, err)
			}
			checkOneLine(t, err.Error())
		})
	}
}

// TestCheckHeaderOnly: a header and nothing else is a run of no events.
func TestCheckHeaderOnly(t *testing.T) {
	rep := check(t, hdr)
	if rep.Violation != nil || rep.Events != 0 || len(rep.Entries) != 4 || rep.Confirmation != trace.NoClaim {
		t.Fatalf("%+v", rep)
	}
}

// TestCheckIDsOutOfRange: ids outside 1..n in a well-formed line are a
// violation of the run (rule "run"), at their line.
func TestCheckIDsOutOfRange(t *testing.T) {
	for _, c := range []struct{ line, reason string }{
		{`{"t":1,"ev":"crash","node":0}`, "node 0 is out of range 1..3"},
		{`{"t":1,"ev":"crash","node":-1}`, "node -1 is out of range 1..3"},
		{`{"t":1,"ev":"crash","node":2147483647}`, "node 2147483647 is out of range 1..3"},
		{`{"t":1,"ev":"send","node":1,"to":4,"msg":"A"}`, "destination 4 is out of range 1..3"},
		{`{"t":1,"ev":"recv","node":1,"from":-2,"msg":"A"}`, "sender -2 is out of range 1..3"},
		{`{"t":1,"ev":"suspect","node":1,"who":0}`, "P1 suspects 0: need another process id in 1..3"},
	} {
		rep := check(t, hdr+"\n"+c.line)
		if v := rep.Violation; v == nil || v.Line != 2 || v.Rule != trace.RuleRun || v.Reason != c.reason {
			t.Errorf("%s: got %+v, want %q", c.line, v, c.reason)
		}
	}
	rep := check(t, strings.Replace(hdr, `"initial":[]`, `"initial":[-1]`, 1))
	if v := rep.Violation; v == nil || v.Line != 1 || !strings.Contains(v.Reason, "initial: process id -1 is out of range 1..3") {
		t.Errorf("initial -1: %+v", v)
	}
}

// heapGrowth returns the bytes f allocates.
func heapGrowth(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestCheckMemory: a header's n costs at most BytesPerProcess a process;
// an n over the limit is refused before any memory is taken for it (the
// 300-byte trace whose n = 2e9 once took more than 20 GB).
func TestCheckMemory(t *testing.T) {
	const n = 100_000
	grew := heapGrowth(func() {
		if _, err := trace.Check(strings.NewReader(hdrN(fmt.Sprint(n)))); err != nil {
			t.Fatal(err)
		}
	})
	if per := grew / n; per > trace.BytesPerProcess {
		t.Errorf("n = %d took %d bytes, %d a process: more than BytesPerProcess = %d", n, grew, per, trace.BytesPerProcess)
	}
	t.Logf("n = %d: %d bytes, %.1f a process", n, grew, float64(grew)/n)
	for _, big := range []string{"2000000000", "2147483647", "4611686018427387904"} {
		grew := heapGrowth(func() {
			if _, err := trace.Check(strings.NewReader(hdrN(big) + "\n" + `{"t":1,"ev":"crash","node":1}`)); err == nil {
				t.Errorf("n = %s accepted", big)
			}
		})
		if grew > 1<<20 {
			t.Errorf("n = %s: refusing it took %d bytes", big, grew)
		}
	}
	// Raised limits are obeyed.
	if _, err := trace.CheckLimits(strings.NewReader(hdrN("2000")), trace.Limits{MaxN: 1000}); err == nil || !strings.Contains(err.Error(), "more than the limit of 1000 processes") {
		t.Errorf("MaxN 1000, n = 2000: %v", err)
	}
	if _, err := trace.CheckLimits(strings.NewReader(hdrN("2000")), trace.Limits{MaxN: 2000}); err != nil {
		t.Errorf("MaxN 2000, n = 2000: %v", err)
	}
}
