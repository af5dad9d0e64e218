package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/critsec/critsec/trace"
)

// fuzzSeeds are well-formed and malformed traces to start from, then
// inputs fuzzing found that reach branches the others do not (FuzzReader's
// and FuzzCheck's, each given to both).
var fuzzSeeds = []string{
	hdr + okBody,
	hdr + "\n" + `{"t":1,"ev":"crash","node":3}` + "\n" + `{"t":2,"ev":"suspect","node":1,"who":3}`,
	local + "\n" + enter(4, 1) + enter(3, 2),
	`{"ev":"header","n":3,"l":0,"k":1,"fifo":false,"demonstrates":{"kind":"deadlock"}}` + "\n" + `{"t":1,"ev":"request","node":1,"op":"entry"}` + "\n" + `{"t":1,"ev":"send","node":1,"to":2,"msg":"Q","words":2}`,
	starvedHead + starvedBody + starvedVerdict,
	livelockHead + livelockBody + livelockVerdict,
	strings.Replace(starvedHead, `"fifo":true`, `"fifo":true,"demonstrates":{"kind":"starvation","who":1,"since":1,"bound":4}`, 1) + starvedBody,
	hdr + "\n" + `{"t":1,"ev":"verdict","node":0,"kind":"livelock","since":-0,"bound":1e-300,"who":2}`,
	`{"ev":"header","n":2000000000,"l":0,"k":1}`,
	`{"ev":"header","n":4611686018427387904}`,
	hdr + "\n" + `{"t":1e400,"ev":"crash","node":1}`,
	hdr + "\n" + `{"t":1,"ev":"send","node":1,"to":2,"msg":"\u0001\ud800","words":-1}`,
	"",
	"{\"ev\":\"header\",\"f0%c\":true,\"neighbors\":{\"\":[102],\"1\":[0,2]}}\n(0\"",
	"{\"ev\":\"header\",\"demonstrates\":{\"\":\"\"}}\n0",
	"{\"ev\":\"header\",\"alg\":\"0.ymond\",\"n\":3,\"ruA(fo\":true}\n{\"t\":1,\"ev\":\"crash\",\"node\":3}\n{\"t\":2,\"ev\":\"su *ect\",\"Zod(\":1,\"w7o\":3}",
	"0",
	"{\"ev\":\"header\",\"n\":0,\"0\":{\"8\":\"82B\"}}\n{\"ev\":\"request\",\"7\":8}",
	"{\"ev\":\"header\",\"Bl&\":\"r9Bnd\",\"n\":0,\"+pe\":1,\"9o\":2,\"m+1\":1}\n{\"t\":1,\"ev\":\"send\",\"node\":1,\"to\":2,\"msg\":\"'\",\"words\":3}\n{\"t\":2,\"ev\":\"recv\",\"node\":2,\"from\":1,\"msg\":\"REQ8SA\"}\n{\"t\":2,\"ev\":\"send\",\"node\":2,\"to\":1,\"msg\":\"REPLY\",\"wor)s\":4}\n{\"t\":3,\"ev\":\"recv\",\"node\":1,\"from\":2,\"msg\":\"REP8Y\"}\n{\"X\":3,\"ev\":\"state\",\"non\":1,\"stateB\":0,\"state\":\"OutCS\",\"extra\":\".gn!red\"}",
	"00",
	"{\"ev\":\"header\",\"n\":2,\"C2\":3}\n{\"t\":2,\"ev\":\"recv\",\"node\":2,\"Y\":4}\nB1C",
	"\"",
	"{\"ev\":\"header\",\"n\":2,\"\":2,\"mxg\":\"REP$$\"}\n{\"t\":1,\"ev\":\"state\",\"node\":1,\"state\":\"InCS\"}\n{\"t\":4,\"ev\":\"request\",\"Ze\":1,\"op\":\"exit\"}\n{\"xe\",\"+%S!",
	"{\"ev\":\"header\"}\n1",
	"{\"ev\":\"header\",\"ag\":\"raymond\",\"n\":3,\"l\":0,\"\":[],\"lo\":0,\"hi\":1,\"runtime\":\"sim\",\"fifo\":true}\n{\"top\":\"ent*y\"}\n\":3}\"st\"REQUEST\",\"words\":4}\n",
	"{\"ev\":\"header\",\"n\":4,\"initial\":[1],\"nZigh,ors\":{\"1\":[],\"2\":[],\"3\":[],\"4\":[]},\"lk\":{\"1\":[0,1],\"'\":[0,0],\"3ww\":[0,0]}}\n{\"e\":0,\")tAte\":\"InCS",
	"{\"ev\":\"header\",\"n\":1}\n{\"ev\":\"request\"}",
	"{\"ev\":\"header\",\"n\":1111101111111111111111110,\"i(8\":{\"7\":[1],\"B\":[2]},\"lk\":{\"1\":[1,1],\"2\":[0,1]},\"7\":9,\"2\":\"A!8$y\"}\nx",
	"{\"ev\":\"header\",\"n\":1}\n{\"t\":0,\"ev\":\"send\",\"node\":0,\"to\":0}",
	"{\"ev\":\"header\",\"n\":1}\n{\"t\":0,\"ev\":\"send\"}",
	"{\"ev\":\"header\",\"Y0\":true}\n1B",
	"{\"ev\":\"header\",\"n\":1}\n{\"ev\":\"state\"}",
	"{\"ev\":\"header\",\"alB\":\"Xkcs\",\"n\":4,\"lize\":\"'im\",\"fif(\":true,\"neighbors\":{\"1\":[2],\"2\":[1,3],\"3\":[2,4],\"4\":[3]},\"lk\":{\"1\":[0,2],\"2\":[1,2],\"3\":[1,2],\"4\":[0,2]}}\n+\n",
	"{\"ev\":\"header\",\"n\":1}\n{\"t\":0,\"ev\":\"send\",\"node\":0}",
	"{\"ev\":\"header\",\"n\":3,\"l\":0,\"a\":1,\"fifo\":false,\"demonstrates\":{\"kizd\":\"d\xc8dlobk\"}}\nd\",\"node\":1,\"0%bZ\"msb}",
	"{\"ev\":\"header\",\"n\":4,\"i(0\":{\"7\":[1],\"B\":[2]},\"lk\":{\"1\":[1,1],\"2\":[0,1]},\"7\":9,\"2\":\"A99$y\"}\nx",
	"{\"ev\":\"header\",\"n\":3,\"l\":2,\"k\":1,\"fifo\":false,\"demes\":{\"kind\":\"deadlock\"}}\n{\"t\":1,\"ev\":\"request\",\"node\":1,\"op\":\"entry\"}\n{\"t\":1,\"ev\":\"send\",\"node\":1,\"to\":2,\"msg\":\"Q\",\"words\":2}",
	"{\"ev\":\"header\",\"n\":4,\"initial\":[1],\"neighbors\":{\"1\":[],\"2\":[],\"3\":[],\"4\":[]},\"lk\":{\"1\":[0,1],\"2\":[0,0],\"3\":[0,0],\"4\":[0,0]}}\n{\"t\":0,\"ev\":\"state\",\"node\":0,\"stAte\":\"InCS\"}",
	"{\"ev\":\"header\",\"n\":1}\n{\"ev\":\"crash\"}",
	"{\"ev\":\"header\",\"n\":2,\"fo\":true}\n{\"t\":0,\"ev\":\"request\",\"node\":1,\"op\":\"entry\"}\n{\"t\":0,\"ev\":\"send\",\"node\":1,\"to\":2,\"msg\":\"REQUEST\"}\n{\"t\":0,\"Av\":\"send\",\"ev\":\"recv\",\"node\":2,\"from\":1,\"msg\":\"REQUEST\"}\nt\":0,\"to\"A0}",
}

// fuzzLimits keep each input cheap: a few hundred processes at most.
var fuzzLimits = trace.Limits{MaxN: 300, MaxLine: 1 << 12}

// checkFuzzError fails unless err is a one-line *FormatError without Go
// internals (the inputs come from memory: there are no I/O errors).
func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	var fe *trace.FormatError
	if !errors.As(err, &fe) || fe.Line < 1 {
		t.Fatalf("error %v (%T) is not a *FormatError with a line", err, err)
	}
	checkOneLine(t, err.Error())
}

// FuzzReader: the reader never panics, refuses bad input with one clear
// line, and what it accepts survives a round trip: a header re-marshalled
// reads back to the same bytes, an event written by Writer reads back
// equal.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := trace.NewReaderLimits(bytes.NewReader(data), fuzzLimits)
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		b1, err := json.Marshal(rd.Header)
		if err != nil {
			t.Fatalf("header %+v does not marshal: %v", rd.Header, err)
		}
		var h trace.Header
		if err := json.Unmarshal(b1, &h); err != nil {
			t.Fatalf("re-marshalled header %s does not read back: %v", b1, err)
		}
		if b2, _ := json.Marshal(h); !bytes.Equal(b1, b2) {
			t.Fatalf("header round trip:\n%s\n%s", b1, b2)
		}
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				checkFuzzError(t, err)
				return
			}
			if want, back := rewrite(t, ev); back != want {
				t.Fatalf("event round trip: %+v became %+v", want, back)
			}
		}
	})
}

// rewrite writes ev with a Writer and reads it back; want is ev with only
// the fields of its kind.
func rewrite(t *testing.T, ev trace.Event) (want, back trace.Event) {
	t.Helper()
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, trace.Header{N: 1})
	tw.Event(ev)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	back, err = rd.Next()
	if err != nil {
		t.Fatalf("Writer's line %q does not read back: %v", buf.String(), err)
	}
	// The reader keeps words, op and state whatever the kind; the writer
	// writes them only where they belong.
	msg, words, op, state := ev.Msg, ev.Words, ev.Op, ev.State
	ev.Msg, ev.Words, ev.Op, ev.State = "", 0, "", ""
	switch ev.Ev {
	case trace.EvSend:
		ev.Msg, ev.Words = msg, words
	case trace.EvRecv:
		ev.Msg = msg
	case trace.EvRequest:
		ev.Op = op
	case trace.EvState:
		ev.State = state
	}
	return ev, back
}

// FuzzCheck: the checker never panics, refuses bad input with one clear
// line, takes memory in proportion to the input (and to n, which the
// limit bounds), never to a number the header states, and its report is
// consistent.
func FuzzCheck(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rep, err := trace.CheckLimits(bytes.NewReader(data), fuzzLimits)
		runtime.ReadMemStats(&after)
		if grew, most := after.TotalAlloc-before.TotalAlloc, uint64(fuzzLimits.MaxN*trace.BytesPerProcess+64*len(data)+1<<18); grew > most {
			t.Fatalf("checking %d bytes took %d bytes, more than %d", len(data), grew, most)
		}
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		if rep.MinInCS > rep.MaxInCS || rep.MinInCS < 0 || rep.MaxInCS > rep.Header.N || rep.Pending > rep.Header.N || rep.Unreceived < 0 {
			t.Fatalf("inconsistent report %+v", rep)
		}
		if (rep.Claim == nil) != (rep.Confirmation == trace.NoClaim) || rep.Claim != nil && rep.ClaimNote == "" {
			t.Fatalf("claim %+v answered %s %q", rep.Claim, rep.Confirmation, rep.ClaimNote)
		}
		if v := rep.Violation; v != nil {
			if v.Line < 1 || v.Reason == "" || (v.Rule == trace.RuleBounds) != (v.Failure != nil) {
				t.Fatalf("bad violation %+v", v)
			}
		}
	})
}
