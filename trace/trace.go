// Package trace is critsec's one trace format: JSON Lines, one event per
// line, written the same way by every runtime (sim, check, node) so that one
// checker and one viewer (package viz) serve them all. The format is
// documented in docs/trace.md; keep the two in step.
//
// The first line is the header:
//
//	{"ev":"header","alg":"raymond","n":10,"l":0,"k":3,"seed":1,"initial":[],...}
//
// then events in the order they happen, with the runtime's time t (simulated
// time for sim, step number for check, seconds since start for node):
//
//	{"t":1.5,"ev":"send","node":1,"to":2,"msg":"REQUEST","words":4}
//	{"t":2.3,"ev":"recv","node":2,"from":1,"msg":"REQUEST"}
//	{"t":0.7,"ev":"request","node":1,"op":"entry"}
//	{"t":3.1,"ev":"state","node":1,"state":"InCS"}
//	{"t":9,"ev":"crash","node":4}
//	{"t":9.5,"ev":"suspect","node":1,"who":4}
//	{"t":0.4,"ev":"trust","node":1,"who":2}
//
// Readers must ignore fields they do not know.
//
// Check re-checks a trace on its own: the header's safety property
// (Header.Property: global or local bounds), message matching, the
// invocation convention, and what the header says the trace demonstrates
// ("demonstrates": a counterexample's violation). It takes memory in
// proportion to the input and to the header's n, which Limits bound.
package trace

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
)

// Event kinds (the "ev" field).
const (
	EvHeader  = "header"
	EvSend    = "send"
	EvRecv    = "recv"
	EvRequest = "request"
	EvState   = "state"
	EvCrash   = "crash"
	EvSuspect = "suspect"
	// EvTrust: node's failure detector stopped suspecting who.
	EvTrust = "trust"
	// EvVerdict ends a trace whose runtime found a violation only after
	// the header was written (the simulator): its "kind", "detail" and,
	// for a starvation or a livelock, "who", "since" and "bound" are a
	// Claim, which trace check then confirms as it does the header's
	// "demonstrates". "node" is 0; nothing may follow it.
	EvVerdict = "verdict"
	// EvDrain marks the stop of a run's workload when a drain follows
	// (the simulator's Config.Drain): from here on no process calls Entry,
	// and the run delivers the messages and completes the requests made.
	// "node" is 0. A deadlock claimed after it is one of the drain: no
	// continuation without new entries completes the request.
	EvDrain = "drain"
)

// Header is the first line of a trace: the run's configuration.
type Header struct {
	Ev      string  `json:"ev"` // always "header"
	Alg     string  `json:"alg"`
	N       int     `json:"n"`
	L       int     `json:"l"`
	K       int     `json:"k"`
	Seed    uint64  `json:"seed"`
	Initial []cs.ID `json:"initial"`
	// Lo and Hi are the bounds on #InCS the algorithm guarantees, which
	// `critsec trace check` enforces; for the global problems they are l and
	// k. A header read without both "lo" and "hi" gets L and K here.
	Lo int `json:"lo"`
	Hi int `json:"hi"`
	// Runtime is "sim", "check", "node" or "testnet" (the test network).
	Runtime string `json:"runtime"`
	// FIFO reports whether every link delivered in send order.
	FIFO bool `json:"fifo"`
	// Coterie names the coterie of quorum-based algorithms ("majority",
	// "grid", a file name); Quorums lists Q_1..Q_n.
	Coterie string    `json:"coterie,omitempty"`
	Quorums [][]cs.ID `json:"quorums,omitempty"`
	// Neighbors and LK describe a local (l_i,k_i)-CS problem: P_i's
	// neighbors and the bounds on its neighborhood N_i ∪ {P_i}. Both or
	// neither; with them the property is local (Header.Property) and Lo, Hi
	// are not used.
	Neighbors Neighbors `json:"neighbors,omitempty"`
	LK        LK        `json:"lk,omitempty"`
	// ExitGuard, when not 0, is the lower bound l that every exit keeps
	// under crash-stop failures (property.FaultTolerantGlobal: S2 of
	// docs/ft-global-lk-cs.md); Lo is then 0 and Hi is k. With 0 the
	// property has no exit guard (an exit guard of 0 checks nothing).
	ExitGuard int `json:"exit_guard,omitempty"`
	// Demonstrates is the violation the trace is said to show (a model
	// checker's counterexample), or nil for a run that claims nothing.
	// Check confirms it (Report.Confirmation).
	Demonstrates *Claim `json:"demonstrates,omitempty"`
	// Params holds the runtime's other parameters (lambda, E, Ts, Tr, Tt,
	// budget, ...), written at the top level of the header line.
	Params map[string]any `json:"-"`
}

// Neighbors is the graph of a local problem: Neighbors[i-1] lists N_i, the
// neighbors of P_i. Its JSON form is an object keyed by process id, in id
// order: {"1":[2,3],"2":[1],"3":[1]}.
type Neighbors [][]cs.ID

// LK holds the bounds of a local problem: LK[i-1] = {l_i, k_i}, at least
// l_i and at most k_i of N_i ∪ {P_i} InCS. Its JSON form is an object keyed
// by process id, in id order: {"1":[0,1],"2":[1,2],...}.
type LK [][2]int

// Kinds of violations a header can claim (Claim.Kind). They are the model
// checker's kinds (check.Kind*), with the same names.
const (
	// KindBounds: the safety property fails.
	KindBounds = "bounds"
	// KindDeadlock: a pending request that no continuation completes
	// (after an EvDrain: no continuation without new entries).
	KindDeadlock = "deadlock"
	// KindConvention: a machine broke the invocation convention (refused a
	// call made under it, or reported a state change it did not make).
	KindConvention = "convention"
	// KindError: a machine returned an error.
	KindError = "error"
	// KindFencing: a fencing property fails (docs/fencing.md).
	KindFencing = "fencing"
	// KindStarvation: the simulator's verdict that process Who's request,
	// made at Since, was still pending Bound or more later, at the end,
	// while other processes changed state after it had waited Bound
	// (sim.KindStarvation).
	KindStarvation = "starvation"
	// KindLivelock: the simulator's verdict that requests are pending at
	// the end and messages were delivered with no state change from Since
	// to the end, Bound or more (sim.KindLivelock).
	KindLivelock = "livelock"
)

// claimKinds are the kinds a claim may have, and kindsWant says so in an
// error.
var (
	claimKinds = []string{KindBounds, KindDeadlock, KindConvention, KindError, KindFencing, KindStarvation, KindLivelock}
	kindsWant  = `"bounds", "deadlock", "convention", "error", "fencing", "starvation" or "livelock"`
)

// Claim is what a trace says it demonstrates: a violation of kind Kind,
// described by Detail (the runtime's own one-line description, optional).
// A starvation or a livelock is a statement about time, which Who, Since
// and Bound give for trace check to confirm; they are zero for the other
// kinds.
type Claim struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
	// Who is the starved process (KindStarvation).
	Who cs.ID
	// Since is the time of the starved request (KindStarvation), or of the
	// last state change before the livelock (KindLivelock).
	Since float64
	// Bound is the time the request stayed pending at least
	// (KindStarvation), or that no state change happened at least
	// (KindLivelock): the simulator's starvation bound or drain limit.
	Bound float64
}

// claimJSON is a claim as written: "who", "since" and "bound" only for
// the kinds that have them (missing ones told apart from zero ones).
type claimJSON struct {
	Kind   string   `json:"kind"`
	Detail string   `json:"detail,omitempty"`
	Who    *cs.ID   `json:"who,omitempty"`
	Since  *float64 `json:"since,omitempty"`
	Bound  *float64 `json:"bound,omitempty"`
}

// timed reports whether a claim of kind k has "since" and "bound", and
// whether it has "who".
func timed(k string) (since, who bool) {
	return k == KindStarvation || k == KindLivelock, k == KindStarvation
}

// MarshalJSON writes "kind" and "detail", then "who", "since" and
// "bound" for the kinds that have them.
func (c Claim) MarshalJSON() ([]byte, error) {
	j := claimJSON{Kind: c.Kind, Detail: c.Detail}
	since, who := timed(c.Kind)
	if since {
		j.Since, j.Bound = &c.Since, &c.Bound
	}
	if who {
		j.Who = &c.Who
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a claim and refuses a kind it does not know: a
// checker that skipped it could report "ok" on a trace it did not confirm.
func (c *Claim) UnmarshalJSON(b []byte) error {
	var j claimJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return &fieldError{Field: "demonstrates", Want: headerFields["demonstrates"], Got: excerpt(b)}
	}
	cl, fe := claimOf(j, `the claim "demonstrates"`, "demonstrates.")
	if fe != nil {
		return fe
	}
	*c = cl
	return nil
}

// claimOf checks a claim as read: a known kind, and "who", "since" and
// "bound" where the kind requires them, a bound > 0. The error names the
// field (after prefix) and, for a missing one, what requires it: of, the
// claim ("a verdict"), and its kind.
func claimOf(j claimJSON, of, prefix string) (Claim, *fieldError) {
	if !slices.Contains(claimKinds, j.Kind) {
		return Claim{}, &fieldError{Field: prefix + "kind", Want: kindsWant, Got: strconv.Quote(j.Kind)}
	}
	c := Claim{Kind: j.Kind, Detail: j.Detail}
	since, who := timed(j.Kind)
	missing := func(field string) *fieldError {
		return &fieldError{Field: field, Want: claimFields[field], Got: "nothing", Of: fmt.Sprintf("%s of kind %s", of, j.Kind)}
	}
	switch {
	case who && j.Who == nil:
		return Claim{}, missing("who")
	case since && j.Since == nil:
		return Claim{}, missing("since")
	case since && j.Bound == nil:
		return Claim{}, missing("bound")
	case since && !(*j.Bound > 0):
		return Claim{}, &fieldError{Field: prefix + "bound", Want: claimFields["bound"], Got: strconv.FormatFloat(*j.Bound, 'g', -1, 64)}
	}
	if who {
		c.Who = *j.Who
	}
	if since {
		c.Since, c.Bound = *j.Since, *j.Bound
	}
	return c, nil
}

// claimFields say what the fields of a claim hold, for errors.
var claimFields = map[string]string{
	"kind": kindsWant, "detail": "a string", "who": "a process id (an integer)",
	"since": "a time (a finite number)", "bound": "a time span (a number > 0)",
}

// headerFields are the fixed fields of the header line, and what each
// holds (for the errors of a bad value).
var headerFields = map[string]string{
	"ev": "a string", "alg": "a string", "n": "an integer", "l": "an integer", "k": "an integer",
	"seed": "an integer >= 0", "initial": "a list of process ids", "lo": "an integer", "hi": "an integer",
	"runtime": "a string", "fifo": "true or false", "coterie": "a string", "quorums": "a list of lists of process ids",
	"neighbors": `an object {"1":[2,3],...}`, "lk": `an object {"1":[l1,k1],...}`, "exit_guard": "an integer",
	"demonstrates": `an object {"kind":...,"detail":...}`,
}

// MarshalJSON writes the fixed fields followed by Params at the top level,
// in sorted key order (encoding/json sorts map keys), so headers are
// byte-for-byte deterministic.
func (h Header) MarshalJSON() ([]byte, error) {
	type plain Header
	h.Ev = EvHeader
	if h.Initial == nil {
		h.Initial = []cs.ID{}
	}
	b, err := json.Marshal(plain(h))
	if err != nil || len(h.Params) == 0 {
		return b, err
	}
	extra, err := json.Marshal(h.Params)
	if err != nil {
		return nil, err
	}
	// Splice {"a":..} and {"p":..} into {"a":..,"p":..}.
	return append(append(b[:len(b)-1], ','), extra[1:]...), nil
}

// UnmarshalJSON reads the fixed fields and keeps every other top-level field
// in Params. A field of the wrong type is an error that names the field and
// what it holds. "n" is required; "lo" and "hi" come together or not at
// all; when both are missing, Lo and Hi are L and K.
func (h *Header) UnmarshalJSON(b []byte) error {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return jsonError(err, nil)
	}
	var p Header
	dst := map[string]any{
		"ev": &p.Ev, "alg": &p.Alg, "n": &p.N, "l": &p.L, "k": &p.K, "seed": &p.Seed, "initial": &p.Initial,
		"lo": &p.Lo, "hi": &p.Hi, "runtime": &p.Runtime, "fifo": &p.FIFO, "coterie": &p.Coterie,
		"quorums": &p.Quorums, "neighbors": &p.Neighbors, "lk": &p.LK, "demonstrates": &p.Demonstrates,
		"exit_guard": &p.ExitGuard,
	}
	for _, name := range slices.Sorted(maps.Keys(dst)) {
		raw, ok := all[name]
		if !ok {
			continue
		}
		delete(all, name)
		if err := json.Unmarshal(raw, dst[name]); err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				return fe
			}
			return &fieldError{Field: name, Want: headerFields[name], Got: excerpt(raw)}
		}
		dst[name] = nil // seen
	}
	if dst["n"] != nil {
		return &fieldError{Field: "n", Want: "the number of processes", Got: "nothing"}
	}
	switch loMissing, hiMissing := dst["lo"] != nil, dst["hi"] != nil; {
	case loMissing != hiMissing:
		missing := "lo"
		if hiMissing {
			missing = "hi"
		}
		return &fieldError{Field: missing, Want: "the bound that goes with the other one (a header gives both lo and hi, or neither)", Got: "nothing"}
	case loMissing:
		p.Lo, p.Hi = p.L, p.K
	}
	*h = p
	if len(all) > 0 {
		h.Params = make(map[string]any, len(all))
		for name, raw := range all {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return &fieldError{Field: name, Want: "a JSON value (numbers of magnitude below 1.8e308)", Got: excerpt(raw)}
			}
			h.Params[name] = v
		}
	}
	return nil
}

// SetProperty writes p into h: Lo and Hi for a global property; Neighbors
// and LK for a local one (each bound's members but the process itself, and
// its Lo and Hi). Property reads it back.
func (h *Header) SetProperty(p *property.Property) {
	h.N = p.N()
	h.ExitGuard = 0
	if g := p.ExitGuard(); g != nil {
		h.ExitGuard = g.L()
	}
	if p.IsGlobal() {
		h.Lo, h.Hi = p.GlobalBounds()
		h.Neighbors, h.LK = nil, nil
		return
	}
	h.Lo, h.Hi = 0, p.N()
	h.Neighbors, h.LK = make(Neighbors, p.N()), make(LK, p.N())
	for i, b := range p.Bounds() {
		self := cs.ID(i + 1)
		ns := make([]cs.ID, 0, len(b.Members)-1)
		for _, m := range b.Members {
			if m != self {
				ns = append(ns, m)
			}
		}
		h.Neighbors[i], h.LK[i] = ns, [2]int{b.Lo, b.Hi}
	}
}

// Property returns the safety property the run promised: with Neighbors
// and LK the local bounds (property.Local: at least l_i and at most k_i of
// N_i ∪ {P_i} InCS, for every process i), else the global bound
// Lo <= #InCS <= Hi over all N processes (property.Global), with the exit
// guard ExitGuard when it is not 0 (property.FaultTolerantGlobal, Lo 0 and
// Hi k). It refuses a
// header that does not describe one (n < 1, bounds out of range, a graph
// that does not list every process 1..n). A global property takes memory
// in proportion to N: on untrusted input, bound N first (Check does, with
// Limits.MaxN).
func (h *Header) Property() (*property.Property, error) {
	switch {
	case h.N < 1:
		return nil, fmt.Errorf("n = %d: need n >= 1", h.N)
	case h.N > MaxID:
		return nil, fmt.Errorf("n = %d: process ids are 32-bit, need n <= %d", h.N, MaxID)
	case h.ExitGuard != 0 && (len(h.Neighbors) != 0 || len(h.LK) != 0 || h.Lo != 0):
		return nil, fmt.Errorf("exit_guard %d with bounds lo = %d or a local problem: an exit guard goes with the global bounds lo..hi = 0..k", h.ExitGuard, h.Lo)
	case h.ExitGuard != 0:
		p, err := property.FaultTolerantGlobal(h.N, h.ExitGuard, h.Hi)
		if err != nil {
			return nil, fmt.Errorf("exit_guard %d with hi %d: %s", h.ExitGuard, h.Hi, strings.TrimPrefix(err.Error(), "property: "))
		}
		return p, nil
	case len(h.Neighbors) == 0 && len(h.LK) == 0:
		if h.Lo < 0 || h.Lo > h.Hi || h.Hi > h.N {
			return nil, fmt.Errorf("bounds lo..hi = %d..%d: need 0 <= lo <= hi <= n = %d", h.Lo, h.Hi, h.N)
		}
		return property.Global(h.N, h.Lo, h.Hi)
	case len(h.Neighbors) != h.N || len(h.LK) != h.N:
		return nil, fmt.Errorf("a local problem lists neighbors for %d and bounds for %d of the n = %d processes: need both, for every process 1..n", len(h.Neighbors), len(h.LK), h.N)
	}
	l, k := make([]int, h.N), make([]int, h.N)
	for i, b := range h.LK {
		l[i], k[i] = b[0], b[1]
	}
	p, err := property.Local(h.Neighbors, l, k)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "property: "))
	}
	return p, nil
}

// MaxID is the largest process id (ids are 32-bit, cs.ID).
const MaxID = math.MaxInt32

// MarshalJSON writes the lists in id order, keyed by id.
func (g Neighbors) MarshalJSON() ([]byte, error) { return marshalByID(g) }

// UnmarshalJSON reads an object with one key per process id 1..n.
func (g *Neighbors) UnmarshalJSON(b []byte) error {
	lists, err := unmarshalByID[[]cs.ID](b, "neighbors", "a list of process ids")
	*g = lists
	return err
}

// MarshalJSON writes the pairs in id order, keyed by id.
func (lk LK) MarshalJSON() ([]byte, error) { return marshalByID(lk) }

// UnmarshalJSON reads an object with one [l_i,k_i] pair per process id 1..n.
func (lk *LK) UnmarshalJSON(b []byte) error {
	pairs, err := unmarshalByID[[]int](b, "lk", "a pair [l_i,k_i] of integers")
	if err != nil {
		return err
	}
	*lk = make(LK, len(pairs))
	for i, p := range pairs {
		if len(p) != 2 {
			return &fieldError{Field: fmt.Sprintf("lk.%d", i+1), Want: "a pair [l_i,k_i] of integers", Got: fmt.Sprintf("%d numbers", len(p))}
		}
		(*lk)[i] = [2]int{p[0], p[1]}
	}
	return nil
}

// marshalByID writes xs as {"1":xs[0],"2":xs[1],...}.
func marshalByID[T any](xs []T) ([]byte, error) {
	b := []byte{'{'}
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, strconv.Itoa(i+1))
		v, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		b = append(append(b, ':'), v...)
	}
	return append(b, '}'), nil
}

// unmarshalByID reads {"1":v1,...,"n":vn}, keys the ids 1..n in any order,
// each once, into [v1,...,vn]; field and want name the field and what a
// value holds, for errors.
func unmarshalByID[T any](b []byte, field, want string) ([]T, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
		return nil, &fieldError{Field: field, Want: `an object keyed by process id, {"1":...,"2":...}, one key per process`, Got: excerpt(b)}
	}
	xs := make([]T, len(m))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		id, err := strconv.Atoi(key)
		if err != nil || strconv.Itoa(id) != key || id < 1 || id > len(m) {
			return nil, &fieldError{Field: field, Want: fmt.Sprintf("the keys \"1\" to \"%d\", one per process", len(m)), Got: strconv.Quote(key)}
		}
		if err := json.Unmarshal(m[key], &xs[id-1]); err != nil {
			return nil, &fieldError{Field: field + "." + key, Want: want, Got: excerpt(m[key])}
		}
	}
	return xs, nil
}

// Event is one line after the header. Fields that do not apply to an event
// kind are zero and omitted.
type Event struct {
	T     float64 `json:"t"`
	Ev    string  `json:"ev"`
	Node  cs.ID   `json:"node"`
	To    cs.ID   `json:"to,omitempty"`
	From  cs.ID   `json:"from,omitempty"`
	Who   cs.ID   `json:"who,omitempty"`
	Msg   string  `json:"msg,omitempty"`
	Words int     `json:"words,omitempty"`
	Op    string  `json:"op,omitempty"`
	State string  `json:"state,omitempty"`
	// Kind and Detail are a verdict's Claim; with Who, Since and Bound
	// for a starvation, Since and Bound for a livelock (Event.Claim).
	Kind   string  `json:"kind,omitempty"`
	Detail string  `json:"detail,omitempty"`
	Since  float64 `json:"since,omitempty"`
	Bound  float64 `json:"bound,omitempty"`
	// Seq is a send's or recv's sequence number on its link (1, 2, ...),
	// or 0 when the runtime does not number messages (the networked
	// runtime does).
	Seq uint64 `json:"seq,omitempty"`
	// Fence is the fencing token of an entry (a state event to InCS) of
	// a machine that gives tokens (cs.Fencing), or nil.
	Fence *Fence `json:"fence,omitempty"`
}

// Claim returns the claim of a verdict event: its kind and detail, with
// who, since and bound for the kinds that have them.
func (ev Event) Claim() Claim {
	c := Claim{Kind: ev.Kind, Detail: ev.Detail}
	since, who := timed(ev.Kind)
	if since {
		c.Since, c.Bound = ev.Since, ev.Bound
	}
	if who {
		c.Who = ev.Who
	}
	return c
}

// Fence is a fencing token in a trace (cs.Fence): "fence":{"seq":7,
// "crashed":[2]}, the processes in increasing id order.
type Fence struct {
	Seq     uint64  `json:"seq"`
	Crashed []cs.ID `json:"crashed"`
}

// FenceOf returns f as written in a trace.
func FenceOf(f cs.Fence) *Fence {
	return &Fence{Seq: f.Seq, Crashed: f.Crashed.Members()}
}

// Writer writes a trace. It formats events by hand (no reflection), so
// tracing a long simulation stays cheap, and the bytes depend only on the
// events. Errors are sticky: check Err or Flush at the end.
type Writer struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer on w and writes the header line.
func NewWriter(w io.Writer, h Header) *Writer {
	tw := &Writer{w: bufio.NewWriterSize(w, 1<<16)}
	b, err := json.Marshal(h)
	if err != nil {
		tw.err = fmt.Errorf("trace: header: %w", err)
		return tw
	}
	tw.line(append(b, '\n'))
	return tw
}

func (tw *Writer) line(b []byte) {
	if tw.err == nil {
		_, tw.err = tw.w.Write(b)
	}
}

func (tw *Writer) start(t float64, ev string, node cs.ID) []byte {
	b := append(tw.buf[:0], `{"t":`...)
	b = strconv.AppendFloat(b, t, 'g', -1, 64)
	b = append(b, `,"ev":"`...)
	b = append(b, ev...)
	b = append(b, `","node":`...)
	return strconv.AppendInt(b, int64(node), 10)
}

func appendField(b []byte, name string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}

func appendFloat(b []byte, name string, v float64) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func appendString(b []byte, name, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendJSONString(b, v)
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, as
// encoding/json does (without its HTML escapes).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf:
			b = append(b, c)
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}

func (tw *Writer) end(b []byte) {
	tw.buf = append(b, '}', '\n')
	tw.line(tw.buf)
}

// Send records that node sent a message of kind msg and size words to to.
func (tw *Writer) Send(t float64, node, to cs.ID, msg string, words int) {
	b := tw.start(t, EvSend, node)
	b = appendField(b, "to", int64(to))
	b = appendString(b, "msg", msg)
	tw.end(appendField(b, "words", int64(words)))
}

// Recv records that node received (and handled) a message of kind msg from from.
func (tw *Writer) Recv(t float64, node, from cs.ID, msg string) {
	b := tw.start(t, EvRecv, node)
	b = appendField(b, "from", int64(from))
	tw.end(appendString(b, "msg", msg))
}

// Request records that node invoked op (cs.Entry or cs.Exit).
func (tw *Writer) Request(t float64, node cs.ID, op cs.Op) {
	tw.end(appendString(tw.start(t, EvRequest, node), "op", op.String()))
}

// State records that node's top-level state became s.
func (tw *Writer) State(t float64, node cs.ID, s cs.State) {
	tw.end(appendString(tw.start(t, EvState, node), "state", s.String()))
}

// Entered records that node's top-level state became InCS with the
// fencing token f.
func (tw *Writer) Entered(t float64, node cs.ID, f *Fence) {
	b := appendString(tw.start(t, EvState, node), "state", cs.InCS.String())
	tw.end(appendFence(b, f))
}

// appendFence appends a "fence" field, unless f is nil.
func appendFence(b []byte, f *Fence) []byte {
	if f == nil {
		return b
	}
	b = strconv.AppendUint(append(b, `,"fence":{"seq":`...), f.Seq, 10)
	b = append(b, `,"crashed":[`...)
	for i, id := range f.Crashed {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, ']', '}')
}

// Crash records that node crashed.
func (tw *Writer) Crash(t float64, node cs.ID) { tw.end(tw.start(t, EvCrash, node)) }

// Trust records that node's failure detector stopped suspecting who.
func (tw *Writer) Trust(t float64, node, who cs.ID) {
	tw.end(appendField(tw.start(t, EvTrust, node), "who", int64(who)))
}

// Suspect records that node's failure detector began to suspect who.
func (tw *Writer) Suspect(t float64, node, who cs.ID) {
	tw.end(appendField(tw.start(t, EvSuspect, node), "who", int64(who)))
}

// Verdict ends the trace with the violation c the run found (EvVerdict):
// its kind, then "who", "since" and "bound" for the kinds that have them,
// then its detail.
func (tw *Writer) Verdict(t float64, c Claim) {
	b := appendString(tw.start(t, EvVerdict, 0), "kind", c.Kind)
	since, who := timed(c.Kind)
	if who {
		b = appendField(b, "who", int64(c.Who))
	}
	if since {
		b = appendFloat(b, "since", c.Since)
		b = appendFloat(b, "bound", c.Bound)
	}
	if c.Detail != "" {
		b = appendString(b, "detail", c.Detail)
	}
	tw.end(b)
}

// Drain records that the workload stopped at t and the drain began
// (EvDrain): no Entry request follows.
func (tw *Writer) Drain(t float64) { tw.end(tw.start(t, EvDrain, 0)) }

// Event records ev by the method of its kind (Send, Recv, ...), with the
// fields of that kind; an event of an unknown kind is left out. "op" and
// "state" other than "exit" and "InCS" are taken as "entry" and "OutCS".
func (tw *Writer) Event(ev Event) {
	switch ev.Ev {
	case EvSend:
		b := tw.start(ev.T, EvSend, ev.Node)
		b = appendField(b, "to", int64(ev.To))
		b = appendString(b, "msg", ev.Msg)
		b = appendField(b, "words", int64(ev.Words))
		tw.end(appendSeq(b, ev.Seq))
	case EvRecv:
		b := tw.start(ev.T, EvRecv, ev.Node)
		b = appendField(b, "from", int64(ev.From))
		b = appendString(b, "msg", ev.Msg)
		tw.end(appendSeq(b, ev.Seq))
	case EvRequest:
		op := cs.Entry
		if ev.Op == cs.Exit.String() {
			op = cs.Exit
		}
		tw.Request(ev.T, ev.Node, op)
	case EvState:
		switch {
		case ev.State != cs.InCS.String():
			tw.State(ev.T, ev.Node, cs.OutCS)
		case ev.Fence != nil:
			tw.Entered(ev.T, ev.Node, ev.Fence)
		default:
			tw.State(ev.T, ev.Node, cs.InCS)
		}
	case EvCrash:
		tw.Crash(ev.T, ev.Node)
	case EvSuspect:
		tw.Suspect(ev.T, ev.Node, ev.Who)
	case EvTrust:
		tw.Trust(ev.T, ev.Node, ev.Who)
	case EvVerdict:
		tw.Verdict(ev.T, ev.Claim())
	case EvDrain:
		tw.Drain(ev.T)
	}
}

// appendSeq appends a "seq" field, unless seq is 0.
func appendSeq(b []byte, seq uint64) []byte {
	if seq == 0 {
		return b
	}
	return strconv.AppendUint(append(b, `,"seq":`...), seq, 10)
}

// Err returns the first write error, if any.
func (tw *Writer) Err() error { return tw.err }

// Flush writes buffered lines and returns the first error.
func (tw *Writer) Flush() error {
	if tw.err == nil {
		tw.err = tw.w.Flush()
	}
	return tw.err
}
