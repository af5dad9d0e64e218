package viz

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/critsec/critsec/trace"
)

// published are the counterexample traces in docs/traces.
func published(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../docs/traces/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in docs/traces: %v", err)
	}
	return files
}

func build(t *testing.T, body string, opt Options) *Data {
	t.Helper()
	d, err := Build(strings.NewReader(body), "t", opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAgainstTraceCheck compares what the page shows with trace.Check's
// independent replay of the same file: the extremes of #InCS, the messages
// left in transit, the event count, and the line where the property breaks.
func TestAgainstTraceCheck(t *testing.T) {
	files := append(published(t), "testdata/bounds.jsonl", "testdata/crash.jsonl", "testdata/local.jsonl", "testdata/initial.jsonl")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := trace.Check(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			d, err := Build(bytes.NewReader(b), "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Events != rep.Events && rep.Violation == nil {
				t.Errorf("events: page %d, trace check %d", d.Events, rep.Events)
			}
			lo, hi := d.Series[0][0], d.Series[0][1]
			for _, s := range d.Series {
				lo, hi = min(lo, s[0]), max(hi, s[1])
			}
			if rep.Violation == nil && (lo != rep.MinInCS || hi != rep.MaxInCS) {
				t.Errorf("#InCS range: page %d..%d, trace check %d..%d", lo, hi, rep.MinInCS, rep.MaxInCS)
			}
			inTransit := int64(0)
			for _, e := range d.Detail {
				if e[1] == tSend && e[5] < 0 {
					inTransit++
				}
			}
			if rep.Violation == nil && inTransit != rep.Unreceived {
				t.Errorf("unreceived: page %d, trace check %d", inTransit, rep.Unreceived)
			}
			if v := rep.Violation; v != nil && v.Rule == trace.RuleBounds {
				// Line 1 is the header and these files have no blank
				// lines: event i (0-based) is on line i+2.
				if d.Violation == nil || d.Violation.Index != int64(v.Line-2) || d.Violation.Reason != v.Reason {
					t.Errorf("violation: page %+v, trace check line %d: %s", d.Violation, v.Line, v.Reason)
				}
			}
			if rep.Claim != nil && (d.Violation == nil || d.Violation.Kind != rep.Claim.Kind || d.Violation.Detail != rep.Claim.Detail) {
				t.Errorf("claim: page %+v, trace %+v", d.Violation, rep.Claim)
			}
			if rep.Claim != nil && rep.Claim.Kind == trace.KindDeadlock && d.Violation.Index != d.Events-1 {
				t.Errorf("a deadlock shows at event %d, want the last, %d", d.Violation.Index, d.Events-1)
			}
		})
	}
}

// TestMessagesMatched: every recv in the window points at a send of the
// same link and kind, and that send back at it; FIFO order per link.
func TestMessagesMatched(t *testing.T) {
	for _, f := range published(t) {
		b, _ := os.ReadFile(f)
		d := build(t, string(b), Options{})
		for j, e := range d.Detail {
			if e[1] != tRecv || e[5] < 0 {
				continue
			}
			s := d.Detail[int(e[5])]
			if s[1] != tSend || s[2] != e[3] || s[3] != e[2] || s[4] != e[4] || int(s[5]) != j || e[5] >= float64(j) {
				t.Errorf("%s: recv %d %v matched to %v", f, j, e, s)
			}
		}
	}
}

// TestDeterministic: the same trace gives the same page, byte for byte.
func TestDeterministic(t *testing.T) {
	for _, f := range append(published(t), "testdata/local.jsonl") {
		b, _ := os.ReadFile(f)
		var p1, p2 bytes.Buffer
		if err := Page(&p1, bytes.NewReader(b), "x", Options{}); err != nil {
			t.Fatal(err)
		}
		if err := Page(&p2, bytes.NewReader(b), "x", Options{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p1.Bytes(), p2.Bytes()) {
			t.Errorf("%s: two pages differ", f)
		}
	}
}

// TestSelfContained: the page loads nothing from elsewhere and holds
// its data where the script reads it.
func TestSelfContained(t *testing.T) {
	b, _ := os.ReadFile(published(t)[0])
	var p bytes.Buffer
	if err := Page(&p, bytes.NewReader(b), `<script>alert(1)</script>`, Options{}); err != nil {
		t.Fatal(err)
	}
	s := p.String()
	for _, bad := range []string{"http://", "https://", "src=", "<link", "@import", "<script>alert"} {
		if strings.Contains(strings.ReplaceAll(s, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) && !strings.Contains(pageJS, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{`<script type="application/json" id="data">{"title":`, "&lt;script&gt;alert(1)"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(pageJS, "http://") && !strings.Contains(pageJS, `SVGNS = "http://www.w3.org/2000/svg"`) {
		t.Error("the script names a URL")
	}
}

// synth is a global trace of n processes, one after another entering and
// leaving, with a message to the next process each time: events events.
type synth struct {
	n, events, i int
	buf          bytes.Buffer
}

func (s *synth) Read(p []byte) (int, error) {
	for s.buf.Len() < len(p) && s.i < s.events {
		if s.i == 0 {
			fmt.Fprintf(&s.buf, `{"ev":"header","alg":"x","n":%d,"l":0,"k":1,"initial":[],"runtime":"sim","fifo":true}`+"\n", s.n)
		}
		id, t := s.i/5%s.n+1, float64(s.i/5)
		switch s.i % 5 {
		case 0:
			fmt.Fprintf(&s.buf, `{"t":%g,"ev":"request","node":%d,"op":"entry"}`+"\n", t, id)
		case 1:
			fmt.Fprintf(&s.buf, `{"t":%g,"ev":"state","node":%d,"state":"InCS"}`+"\n", t+0.1, id)
		case 2:
			fmt.Fprintf(&s.buf, `{"t":%g,"ev":"request","node":%d,"op":"exit"}`+"\n", t+0.5, id)
		case 3:
			fmt.Fprintf(&s.buf, `{"t":%g,"ev":"state","node":%d,"state":"OutCS"}`+"\n", t+0.6, id)
		case 4:
			fmt.Fprintf(&s.buf, `{"t":%g,"ev":"send","node":%d,"to":%d,"msg":"TOKEN","words":1}`+"\n", t+0.7, id, id%s.n+1)
		}
		s.i++
	}
	if s.buf.Len() == 0 {
		return 0, io.EOF
	}
	return s.buf.Read(p)
}

// TestBoundedOnLongTraces: whatever the trace's length, the page holds at
// most Window events, at most 2*Buckets points, and its series is right.
func TestBoundedOnLongTraces(t *testing.T) {
	events := 200_000
	if testing.Short() {
		events = 20_000
	}
	d, err := Build(&synth{n: 7, events: events}, "", Options{Window: 1000, Buckets: 50})
	if err != nil {
		t.Fatal(err)
	}
	if d.Events != int64(events) || len(d.Detail) != 1000 || !d.Truncated || d.First != 0 {
		t.Errorf("events %d, detail %d, truncated %v, first %d", d.Events, len(d.Detail), d.Truncated, d.First)
	}
	if len(d.Series) > 100 || len(d.Series) < 50 {
		t.Errorf("%d points, want 50..100", len(d.Series))
	}
	span := d.T1 - d.T0
	if float64(len(d.Series))*d.Width < span || float64(len(d.Series)-1)*d.Width > span {
		t.Errorf("%d buckets of %g do not cover %g..%g", len(d.Series), d.Width, d.T0, d.T1)
	}
	for i, s := range d.Series {
		if s[0] != 0 || s[1] != 1 {
			t.Errorf("bucket %d: %v, want min 0 max 1 (every bucket holds a whole CS)", i, s)
			break
		}
	}
	// A window further on: from t = 1000, the 5001st event is the first.
	d = build(t, mustRead(t, &synth{n: 7, events: 10_000}), Options{Window: 10, From: 1000})
	if d.First != 5000 || len(d.Detail) != 10 || d.Detail[0][0] != 1000 {
		t.Errorf("window from t=1000: first %d, %d events, t %v", d.First, len(d.Detail), d.Detail[0][0])
	}
	if d.InCSAt != 0 || len(d.StartInCS) != 0 {
		t.Errorf("window from t=1000: %d InCS at its start %v", d.InCSAt, d.StartInCS)
	}
}

func mustRead(t *testing.T, r io.Reader) string {
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLinesAndNeighbors: a page draws at most Lines processes, and for a
// local problem knows the state of their neighbors at the window start.
func TestLinesAndNeighbors(t *testing.T) {
	d := build(t, mustRead(t, openFile(t, "testdata/local.jsonl")), Options{Lines: 2, From: 3})
	if d.Lines != 2 || len(d.Header.Neighbors) != 2 || len(d.Header.LK) != 2 || !d.Header.Local {
		t.Fatalf("lines %d, neighbors %v, lk %v", d.Lines, d.Header.Neighbors, d.Header.LK)
	}
	// testdata/local.jsonl: path 1-2-3-4, P3 and P4 InCS initially; P3 is
	// P2's neighbor, so its state is carried into the window; P4 is no
	// drawn process's neighbor.
	if fmt.Sprint(d.StartInCS) != "[3]" {
		t.Errorf("InCS at the window's start: %v, want [3]", d.StartInCS)
	}
}

func openFile(t *testing.T, name string) io.Reader {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// TestRefused: what the diagram cannot place is refused with one line
// that names the line of the trace.
func TestRefused(t *testing.T) {
	head := `{"ev":"header","alg":"x","n":2,"l":0,"k":1,"initial":[],"runtime":"sim","fifo":true}` + "\n"
	for body, want := range map[string]string{
		"":     "line 1: empty file",
		"{}\n": "line 1: the first line must be the header",
		head + `{"t":1,"ev":"send","node":3,"to":1,"msg":"A"}`:                          "line 2: node 3 is out of range 1..2",
		head + `{"t":1,"ev":"send","node":1,"to":0,"msg":"A"}`:                          "line 2: destination 0 is out of range 1..2",
		head + `{"t":1,"ev":"recv","node":1,"from":9,"msg":"A"}`:                        "line 2: sender 9 is out of range",
		head + `{"t":1,"ev":"suspect","node":1,"who":5}`:                                "line 2: suspected process 5",
		head + `{"t":2,"ev":"crash","node":1}` + "\n" + `{"t":1,"ev":"crash","node":2}`: "line 3: time 1 is before the previous event's 2",
		head + `{"t":1,"ev":"bogus","node":1}`:                                          `line 2: field "ev"`,
		strings.Replace(head, `"n":2`, `"n":3000000`, 1):                                "more than the limit",
		strings.Replace(head, `"initial":[]`, `"initial":[3]`, 1):                       "initial: process 3 is out of range",
		strings.Replace(head, `"k":1`, `"k":5`, 1):                                      "bounds lo..hi = 0..5",
	} {
		_, err := Build(strings.NewReader(body), "", Options{})
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", body, err, want)
		}
	}
}

var update = flag.Bool("update", false, "rewrite docs/viz/*.html from docs/traces")

// TestCommittedPages: the pages committed in docs/viz are those critsec
// viz makes today from docs/traces (critsec viz docs/traces/X.jsonl --out
// docs/viz/X.html); go test ./viz -run CommittedPages -update rewrites
// them after a change to the page.
func TestCommittedPages(t *testing.T) {
	for _, f := range published(t) {
		b, _ := os.ReadFile(f)
		var page bytes.Buffer
		if err := Page(&page, bytes.NewReader(b), filepath.Base(f), Options{}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("../docs/viz", strings.TrimSuffix(filepath.Base(f), ".jsonl")+".html")
		if *update {
			if err := os.WriteFile(out, page.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, page.Bytes()) {
			t.Errorf("%s is missing or stale (%v): rewrite it with go test ./viz -run CommittedPages -update", out, err)
		}
	}
}
