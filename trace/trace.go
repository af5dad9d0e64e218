// Package trace is critsec's one trace format: JSON Lines, one event per
// line, written the same way by every runtime (sim, check, node) so that one
// checker, one plot tool and one viewer serve them all. The format is
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
//
// Readers must ignore fields they do not know.
package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"critsec/cs"
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
	// `critsec trace check` enforces; for the global problems they are l and k.
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
	// Params holds the runtime's other parameters (lambda, E, Ts, Tr, Tt,
	// budget, ...), written at the top level of the header line.
	Params map[string]any `json:"-"`
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
// in Params.
func (h *Header) UnmarshalJSON(b []byte) error {
	type plain Header
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, f := range []string{"ev", "alg", "n", "l", "k", "seed", "initial", "lo", "hi", "runtime", "fifo", "coterie", "quorums"} {
		delete(all, f)
	}
	*h = Header(p)
	if len(all) > 0 {
		h.Params = all
	}
	return nil
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

func appendString(b []byte, name, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendQuote(b, v)
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

// Crash records that node crashed.
func (tw *Writer) Crash(t float64, node cs.ID) { tw.end(tw.start(t, EvCrash, node)) }

// Suspect records that node's failure detector began to suspect who.
func (tw *Writer) Suspect(t float64, node, who cs.ID) {
	tw.end(appendField(tw.start(t, EvSuspect, node), "who", int64(who)))
}

// Event writes ev, for runtimes that keep events as values (the model
// checker's paths, the test network). An unknown kind is a sticky error.
func (tw *Writer) Event(ev Event) {
	switch ev.Ev {
	case EvSend:
		tw.Send(ev.T, ev.Node, ev.To, ev.Msg, ev.Words)
	case EvRecv:
		tw.Recv(ev.T, ev.Node, ev.From, ev.Msg)
	case EvRequest:
		tw.end(appendString(tw.start(ev.T, EvRequest, ev.Node), "op", ev.Op))
	case EvState:
		tw.end(appendString(tw.start(ev.T, EvState, ev.Node), "state", ev.State))
	case EvCrash:
		tw.Crash(ev.T, ev.Node)
	case EvSuspect:
		tw.Suspect(ev.T, ev.Node, ev.Who)
	default:
		if tw.err == nil {
			tw.err = fmt.Errorf("trace: event kind %q is not part of the format", ev.Ev)
		}
	}
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
