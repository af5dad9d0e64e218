// Package viz turns a trace (docs/trace.md) into one self-contained HTML
// page: a space-time diagram (one line per process, messages as arrows
// coloured by kind, CS intervals, requests, crashes and suspicions), a chart
// of #InCS over time with the problem's bounds, zoom and pan, tooltips, and
// a step-through of short traces (model-checker counterexamples) that shows
// the violated property at the step where it breaks. docs/viz.md describes
// the page.
//
// Build reads the trace once, as a stream, with trace.Reader: its memory is
// a few words per process of the header's n (bounded by Limits.MaxN), plus
// the detail window (at most Options.Window events) and the overview series
// (at most 2·Options.Buckets buckets), whatever the trace's length. The
// page embeds the assets (go:embed) and the data as JSON: it needs no
// network. The same trace and options give the same page, byte for byte.
package viz

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// Options say how much of a trace the page shows in detail.
type Options struct {
	// Limits bound the trace reader (the header's n, a line's length).
	Limits trace.Limits
	// Window is the most events shown in detail (arrows, intervals,
	// step-through), starting at the first event at or after From; 0
	// means DefaultWindow.
	Window int
	// From is the time where the detail window starts (default: the start).
	From float64
	// Buckets is the number of points of the whole-trace #InCS series,
	// between Buckets and 2·Buckets; 0 means DefaultBuckets.
	Buckets int
	// Lines is the most process lines drawn (P1..P_Lines); 0 means
	// DefaultLines.
	Lines int
}

const (
	// DefaultWindow is Options.Window when it is zero.
	DefaultWindow = 20000
	// DefaultBuckets is Options.Buckets when it is zero.
	DefaultBuckets = 1000
	// DefaultLines is Options.Lines when it is zero.
	DefaultLines = 200
	// MaxKinds is the most distinct message kinds the page tells apart;
	// later kinds count as "(other)".
	MaxKinds = 256
	// MaxTime is the largest magnitude of an event's time the page takes
	// (differences of times must be finite).
	MaxTime = 1e300
	// StepLimit is the longest detail window the page offers to step
	// through one event at a time.
	StepLimit = 5000
)

// Event type codes in Data.Events.
const (
	tSend = iota
	tRecv
	tEntry // request entry
	tExit  // request exit
	tInCS  // state InCS
	tOutCS // state OutCS
	tCrash
	tSuspect
	tVerdict
	tDrain // the simulator's workload stops and its drain begins
)

// Data is what the page shows, as embedded in it (JSON).
type Data struct {
	Title  string     `json:"title"`
	Header headerInfo `json:"header"`
	// Events is the number of events in the trace; T0 and T1 the times of
	// the first and last.
	Events int64   `json:"events"`
	T0     float64 `json:"t0"`
	T1     float64 `json:"t1"`
	// Lines is the number of process lines drawn (P1..P_Lines).
	Lines int `json:"lines"`
	// Window is the detail window: events First..First+len(Detail)-1
	// (0-based), Truncated when the trace goes on after it.
	First     int64 `json:"first"`
	Truncated bool  `json:"truncated"`
	// StartInCS lists the processes InCS (and live) when the window
	// starts, among those drawn and (local problems) their neighbors.
	StartInCS []cs.ID `json:"startInCS"`
	// StartCrashed lists those crashed before the window.
	StartCrashed []cs.ID `json:"startCrashed"`
	// InCSAt is #InCS (live) when the window starts.
	InCSAt int `json:"inCSAt"`
	// Detail holds the window's events: [t, type, node, other, kind,
	// match], type one of the t* codes; other is to, from or who; kind an
	// index into Kinds (-1 for none); match, for a send the index in
	// Detail of its recv and for a recv of its send (-1: outside the
	// window or in transit at the end).
	Detail [][6]float64 `json:"detail"`
	// Kinds are the message kinds in order of first appearance; Counts
	// how many of each were sent in the whole trace.
	Kinds  []string `json:"kinds"`
	Counts []int64  `json:"counts"`
	// Series is #InCS over the whole trace: buckets of width Width from
	// T0, each [min, max, last].
	Width  float64  `json:"width"`
	Series [][3]int `json:"series"`
	// Violation is where the trace breaks its property or what it claims.
	Violation *violation `json:"violation,omitempty"`
	// Step says whether the page offers the step-through (a short window).
	Step bool `json:"step"`
}

type headerInfo struct {
	Alg     string `json:"alg"`
	N       int    `json:"n"`
	L       int    `json:"l"`
	K       int    `json:"k"`
	Lo      int    `json:"lo"`
	Hi      int    `json:"hi"`
	Runtime string `json:"runtime"`
	Seed    uint64 `json:"seed"`
	FIFO    bool   `json:"fifo"`
	Coterie string `json:"coterie,omitempty"`
	// Local problems: the neighborhoods and bounds of P1..P_Lines.
	Local     bool      `json:"local"`
	Neighbors [][]cs.ID `json:"neighbors,omitempty"`
	LK        [][2]int  `json:"lk,omitempty"`
}

// violation is the first event that breaks the header's property (Index,
// 0-based over the whole trace; -1 when the initial configuration does)
// and the trace's claim (Kind, Detail), shown at the last event when no
// event breaks the property.
type violation struct {
	Index  int64  `json:"index"`
	Reason string `json:"reason,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// InputError is a trace the page cannot be built from: unreadable,
// malformed (a *trace.FormatError inside), or with events the diagram
// cannot place (a process id outside 1..n, time going back).
type InputError struct{ Err error }

// Error is the cause's message: "line N: what is wrong" for a trace's line.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

type linkKey struct {
	from, to cs.ID
	kind     int32
}

type builder struct {
	opt     Options
	d       *Data
	tr      *property.Tracker
	crashed []bool
	// shown marks the processes whose state the page needs: the lines
	// and, for a local problem, their neighbors.
	shown []bool
	kinds map[string]int32
	inCS  int
	// sends in the window not yet received, per link and kind, oldest first.
	transit map[linkKey][]int
	// the overview series: the time of its first bucket, #InCS in the
	// initial configuration, whether a bucket exists
	b0      float64
	initial int
	seen    bool
}

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Buckets <= 0 {
		o.Buckets = DefaultBuckets
	}
	if o.Lines <= 0 {
		o.Lines = DefaultLines
	}
	return o
}

// Build reads the trace r and returns the page's data. Errors are
// *InputError.
func Build(r io.Reader, title string, opt Options) (*Data, error) {
	opt = opt.withDefaults()
	rd, err := trace.NewReaderLimits(r, opt.Limits)
	if err != nil {
		return nil, &InputError{err}
	}
	h := rd.Header
	maxN := opt.Limits.MaxN
	if maxN <= 0 {
		maxN = trace.DefaultMaxN
	}
	if h.N > maxN {
		return nil, &InputError{&trace.FormatError{Line: 1, Err: &trace.LimitError{What: "n", Value: int64(h.N), Limit: int64(maxN)}}}
	}
	p, err := h.Property()
	if err != nil {
		return nil, &InputError{&trace.FormatError{Line: 1, Err: fmt.Errorf("header: %w", err)}}
	}
	lines := min(h.N, opt.Lines)
	d := &Data{
		Title: title, Lines: lines, First: -1,
		Header: headerInfo{
			Alg: h.Alg, N: h.N, L: h.L, K: h.K, Lo: h.Lo, Hi: h.Hi, Runtime: h.Runtime, Seed: h.Seed,
			FIFO: h.FIFO, Coterie: h.Coterie, Local: !p.IsGlobal(),
		},
		StartInCS: []cs.ID{}, StartCrashed: []cs.ID{}, Detail: [][6]float64{}, Kinds: []string{}, Counts: []int64{},
	}
	if d.Header.Local {
		d.Header.Neighbors, d.Header.LK = h.Neighbors[:lines], h.LK[:lines]
	}
	b := &builder{opt: opt, d: d, crashed: make([]bool, h.N+1), kinds: map[string]int32{}, transit: map[linkKey][]int{}}
	b.shown = make([]bool, h.N+1)
	for i := range lines {
		b.shown[i+1] = true
		if d.Header.Local {
			for _, j := range h.Neighbors[i] {
				b.shown[j] = true
			}
		}
	}
	initial := make([]bool, h.N+1)
	for _, id := range h.Initial {
		if id < 1 || int(id) > h.N || initial[id] {
			return nil, &InputError{&trace.FormatError{Line: 1, Err: fmt.Errorf("header: initial: process %d is out of range 1..%d or listed twice", id, h.N)}}
		}
		initial[id] = true
		b.inCS++
	}
	var f *property.Failure
	b.tr, f = property.NewTracker(p, viewOf(initial))
	if f != nil {
		d.Violation = &violation{Index: -1, Reason: f.Error()}
	}
	b.initial = b.inCS
	if h.Demonstrates != nil {
		b.claim(*h.Demonstrates)
	}
	last := math.Inf(-1)
	for i := int64(0); ; i++ {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &InputError{err}
		}
		if err := b.valid(ev, h.N, last); err != nil {
			return nil, &InputError{&trace.FormatError{Line: rd.Line(), Err: err}}
		}
		last = ev.T
		if i == 0 {
			d.T0 = ev.T
		}
		d.T1 = ev.T
		d.Events++
		b.event(i, ev)
	}
	b.finish()
	return d, nil
}

type viewOf []bool

func (v viewOf) InCS(id cs.ID) bool { return v[id] }

// valid refuses what the diagram cannot place: ids outside 1..n, time
// going back or not a number. Everything else (a violation of the
// property, the convention, message matching) is shown, not refused.
func (b *builder) valid(ev trace.Event, n int, last float64) error {
	ok := func(id cs.ID) bool { return id >= 1 && int(id) <= n }
	switch {
	case !(math.Abs(ev.T) <= MaxTime):
		return fmt.Errorf(`field "t": want a number of magnitude at most %g, got %g`, MaxTime, ev.T)
	case ev.T < last:
		return fmt.Errorf("time %g is before the previous event's %g", ev.T, last)
	case ev.Ev == trace.EvVerdict, ev.Ev == trace.EvDrain:
		return nil
	case !ok(ev.Node):
		return fmt.Errorf("node %d is out of range 1..%d", ev.Node, n)
	case ev.Ev == trace.EvSend && !ok(ev.To):
		return fmt.Errorf("destination %d is out of range 1..%d", ev.To, n)
	case ev.Ev == trace.EvRecv && !ok(ev.From):
		return fmt.Errorf("sender %d is out of range 1..%d", ev.From, n)
	case ev.Ev == trace.EvSuspect && !ok(ev.Who):
		return fmt.Errorf("suspected process %d is out of range 1..%d", ev.Who, n)
	}
	return nil
}

func (b *builder) claim(c trace.Claim) {
	if b.d.Violation == nil {
		b.d.Violation = &violation{Index: -1}
	}
	b.d.Violation.Kind, b.d.Violation.Detail = c.Kind, c.Detail
}

func (b *builder) kind(s string) int32 {
	k, ok := b.kinds[s]
	if ok {
		return k
	}
	if len(b.d.Kinds) == MaxKinds-1 {
		s = "(other)"
		if k, ok := b.kinds[s]; ok {
			return k
		}
	}
	k = int32(len(b.d.Kinds))
	b.kinds[s] = k
	b.d.Kinds = append(b.d.Kinds, s)
	b.d.Counts = append(b.d.Counts, 0)
	return k
}

// open opens the detail window at event i (time t) if it is the first at
// or after From: the state of the processes before it is the window's
// start.
func (b *builder) open(i int64, t float64) {
	d := b.d
	if d.First < 0 && t >= b.opt.From {
		d.First = i
		d.InCSAt = b.inCS
		for id := cs.ID(1); int(id) <= b.d.Header.N; id++ {
			switch {
			case !b.shown[id]:
			case b.crashed[id]:
				d.StartCrashed = append(d.StartCrashed, id)
			case b.tr.InCS(id):
				d.StartInCS = append(d.StartInCS, id)
			}
		}
	}
}

// inWindow reports whether the next event belongs to the detail window.
func (b *builder) inWindow() bool {
	d := b.d
	if d.First < 0 {
		return false
	}
	if len(d.Detail) < b.opt.Window {
		return true
	}
	d.Truncated = true
	return false
}

func (b *builder) event(i int64, ev trace.Event) {
	d := b.d
	b.open(i, ev.T)
	row := [6]float64{ev.T, 0, float64(ev.Node), 0, -1, -1}
	var fail *property.Failure
	switch ev.Ev {
	case trace.EvSend:
		k := b.kind(ev.Msg)
		d.Counts[k]++
		row[1], row[3], row[4] = tSend, float64(ev.To), float64(k)
	case trace.EvRecv:
		row[1], row[3], row[4] = tRecv, float64(ev.From), float64(b.kind(ev.Msg))
	case trace.EvRequest:
		row[1] = tEntry
		if ev.Op == cs.Exit.String() {
			row[1] = tExit
		}
	case trace.EvState:
		in := ev.State == cs.InCS.String()
		row[1] = tOutCS
		if in {
			row[1] = tInCS
		}
		if !b.crashed[ev.Node] && b.tr.InCS(ev.Node) != in {
			if in {
				b.inCS++
			} else {
				b.inCS--
			}
			fail = b.tr.Set(ev.Node, in)
		}
	case trace.EvCrash:
		row[1] = tCrash
		if !b.crashed[ev.Node] {
			b.crashed[ev.Node] = true
			if b.tr.InCS(ev.Node) {
				b.inCS--
				fail = b.tr.Set(ev.Node, false)
			}
		}
	case trace.EvSuspect:
		row[1], row[3] = tSuspect, float64(ev.Who)
	case trace.EvDrain:
		row[1], row[2] = tDrain, 0
	case trace.EvVerdict:
		row[1], row[2] = tVerdict, 0
		b.claim(trace.Claim{Kind: ev.Kind, Detail: ev.Detail})
		if d.Violation.Index < 0 && d.Violation.Reason == "" {
			d.Violation.Index = i
		}
	}
	if fail != nil && (d.Violation == nil || d.Violation.Reason == "") {
		if d.Violation == nil {
			d.Violation = &violation{}
		}
		d.Violation.Index, d.Violation.Reason = i, fail.Error()
	}
	b.series(ev.T)
	if !b.inWindow() {
		return
	}
	j := len(d.Detail)
	switch ev.Ev {
	case trace.EvSend:
		key := linkKey{ev.Node, ev.To, int32(row[4])}
		b.transit[key] = append(b.transit[key], j)
	case trace.EvRecv:
		key := linkKey{ev.From, ev.Node, int32(row[4])}
		if q := b.transit[key]; len(q) > 0 {
			row[5] = float64(q[0])
			d.Detail[q[0]][5] = float64(j)
			if len(q) == 1 {
				delete(b.transit, key)
			} else {
				b.transit[key] = q[1:]
			}
		}
	}
	d.Detail = append(d.Detail, row)
}

// series records #InCS after an event at time t in the overview: buckets
// of width Width from the first event's time, merged pairwise (the width
// doubled) whenever there would be 2·Buckets of them.
func (b *builder) series(t float64) {
	d := b.d
	if !b.seen {
		b.seen = true
		b.b0 = t
		// A first width far below any time step in practice; doubling
		// makes it fit the trace's span as the trace goes on.
		d.Width = math.Max(math.Abs(t), 1) * 1e-9
		v := b.initial
		d.Series = append(d.Series, [3]int{v, v, v})
	}
	q := (t - b.b0) / d.Width // finite: valid bounds every time by MaxTime
	for q >= float64(2*b.opt.Buckets) {
		b.merge()
		q = (t - b.b0) / d.Width
	}
	idx := int(q)
	for len(d.Series) <= idx {
		l := d.Series[len(d.Series)-1][2]
		d.Series = append(d.Series, [3]int{l, l, l})
	}
	s := &d.Series[idx]
	s[0], s[1], s[2] = min(s[0], b.inCS), max(s[1], b.inCS), b.inCS
}

// merge halves the number of buckets: pairs become one of twice the width.
func (b *builder) merge() {
	d := b.d
	out := d.Series[:0]
	for i := 0; i < len(d.Series); i += 2 {
		s := d.Series[i]
		if i+1 < len(d.Series) {
			n := d.Series[i+1]
			s = [3]int{min(s[0], n[0]), max(s[1], n[1]), n[2]}
		}
		out = append(out, s)
	}
	d.Series = out
	d.Width *= 2
}

func (b *builder) finish() {
	d := b.d
	if d.Series == nil {
		d.Series = [][3]int{{b.initial, b.initial, b.initial}}
		d.Width = 1
	}
	if d.First < 0 {
		d.First = d.Events
	}
	if v := d.Violation; v != nil && v.Index < 0 && v.Reason == "" && v.Kind != "" {
		// A deadlock (or a claim the trace's events do not show) is a
		// property of the end: it shows at the last event.
		v.Index = d.Events - 1
	}
	d.Step = len(d.Detail) > 0 && len(d.Detail) <= StepLimit
	if d.Title == "" {
		d.Title = fmt.Sprintf("%s n=%d (%s)", d.Header.Alg, d.Header.N, d.Header.Runtime)
	}
	d.Title = strings.ToValidUTF8(d.Title, "\uFFFD")
}
