package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"critsec/cs"
)

// FormatError reports a line that is not a valid trace line (bad JSON, a
// missing or ill-typed field, an unknown event kind). It is a problem with
// the file, not with the run the file records.
type FormatError struct {
	// Line is the 1-based line number.
	Line int
	Err  error
}

// Error is the one-line report.
func (e *FormatError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// MaxLine is the longest line a Reader accepts, in bytes.
const MaxLine = 1 << 24

// Reader reads a trace: the header first, then one event per Next call.
type Reader struct {
	sc   *bufio.Scanner
	line int
	// Header is the trace's first line.
	Header Header
	// HasBounds reports whether the header has both "lo" and "hi"; when
	// not, l and k are the bounds (the global (l,k)-CS problem).
	HasBounds bool
}

// NewReader reads the header line of r and returns a Reader positioned at
// the first event.
func NewReader(r io.Reader) (*Reader, error) {
	tr := &Reader{sc: bufio.NewScanner(r)}
	tr.sc.Buffer(make([]byte, 0, 1<<16), MaxLine)
	b, err := tr.next()
	if err == io.EOF {
		return nil, &FormatError{Line: 1, Err: errors.New("empty file: a trace starts with a header line")}
	}
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, tr.errorf("header: %v", err)
	}
	if ev, ok := keys["ev"]; !ok || string(ev) != `"header"` {
		return nil, tr.errorf(`the first line must be the header ({"ev":"header",...})`)
	}
	if err := json.Unmarshal(b, &tr.Header); err != nil {
		return nil, tr.errorf("header: %v", err)
	}
	_, lo := keys["lo"]
	_, hi := keys["hi"]
	tr.HasBounds = lo && hi
	return tr, nil
}

// Line is the number of the line read last (1 is the header).
func (tr *Reader) Line() int { return tr.line }

// next returns the next non-empty line.
func (tr *Reader) next() ([]byte, error) {
	for tr.sc.Scan() {
		tr.line++
		if b := bytes.TrimSpace(tr.sc.Bytes()); len(b) > 0 {
			return b, nil
		}
	}
	if err := tr.sc.Err(); err != nil {
		return nil, &FormatError{Line: tr.line + 1, Err: err}
	}
	return nil, io.EOF
}

func (tr *Reader) errorf(format string, args ...any) error {
	return &FormatError{Line: tr.line, Err: fmt.Errorf(format, args...)}
}

// rawEvent has pointers for the fields an event kind requires, so that a
// missing field is told apart from a zero one.
type rawEvent struct {
	T     *float64 `json:"t"`
	Ev    string   `json:"ev"`
	Node  *cs.ID   `json:"node"`
	To    *cs.ID   `json:"to"`
	From  *cs.ID   `json:"from"`
	Who   *cs.ID   `json:"who"`
	Msg   *string  `json:"msg"`
	Words int      `json:"words"`
	Op    string   `json:"op"`
	State string   `json:"state"`
}

// Next returns the next event, io.EOF after the last one, or a
// *FormatError for a line that is not a valid event: bad JSON, an unknown
// "ev", or a field its kind requires missing or out of its value set
// ("op" entry|exit, "state" InCS|OutCS). Unknown fields are ignored. Next
// does not check node ids against n: that is the checker's job.
func (tr *Reader) Next() (Event, error) {
	b, err := tr.next()
	if err != nil {
		return Event{}, err
	}
	var r rawEvent
	if err := json.Unmarshal(b, &r); err != nil {
		return Event{}, tr.errorf("%v", err)
	}
	if r.Ev == EvHeader {
		return Event{}, tr.errorf("a second header line")
	}
	if r.T == nil {
		return Event{}, tr.errorf(`event without "t"`)
	}
	if r.Node == nil {
		return Event{}, tr.errorf(`event without "node"`)
	}
	ev := Event{T: *r.T, Ev: r.Ev, Node: *r.Node, Words: r.Words, Op: r.Op, State: r.State}
	need := func(p *cs.ID, name string) error {
		if p == nil {
			return tr.errorf("%s event without %q", r.Ev, name)
		}
		return nil
	}
	switch r.Ev {
	case EvSend:
		err = need(r.To, "to")
		if r.To != nil {
			ev.To = *r.To
		}
	case EvRecv:
		err = need(r.From, "from")
		if r.From != nil {
			ev.From = *r.From
		}
	case EvSuspect:
		err = need(r.Who, "who")
		if r.Who != nil {
			ev.Who = *r.Who
		}
	case EvRequest:
		if r.Op != cs.Entry.String() && r.Op != cs.Exit.String() {
			err = tr.errorf(`request event with op %q: want "entry" or "exit"`, r.Op)
		}
	case EvState:
		if r.State != cs.InCS.String() && r.State != cs.OutCS.String() {
			err = tr.errorf(`state event with state %q: want "InCS" or "OutCS"`, r.State)
		}
	case EvCrash:
	default:
		err = tr.errorf("unknown event kind %q: want send, recv, request, state, crash or suspect", r.Ev)
	}
	if err != nil {
		return Event{}, err
	}
	if (r.Ev == EvSend || r.Ev == EvRecv) && r.Msg == nil {
		return Event{}, tr.errorf("%s event without \"msg\"", r.Ev)
	}
	if r.Msg != nil {
		ev.Msg = *r.Msg
	}
	return ev, nil
}
