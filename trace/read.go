package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/critsec/critsec/cs"
)

// FormatError reports a line that is not a valid trace line (bad JSON, a
// missing or ill-typed field, an unknown event kind) or a header that asks
// for more than the limits allow. It is a problem with the file, not with
// the run the file records.
type FormatError struct {
	// Line is the 1-based line number.
	Line int
	Err  error
}

// Error is "line N: what is wrong".
func (e *FormatError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the problem without its line.
func (e *FormatError) Unwrap() error { return e.Err }

// fieldError is a field whose value is not what the format expects.
type fieldError struct {
	// Field is the field's name, "lk.3" inside an object.
	Field string
	// Want says what it must hold; Got what it holds ("nothing" when it is
	// missing).
	Want, Got string
	// Of names the line's kind ("send event"), when the kind is what
	// requires the field.
	Of string
}

func (e *fieldError) Error() string {
	switch {
	case e.Got == "nothing" && e.Of != "":
		return fmt.Sprintf("%s without %q: want %s", e.Of, e.Field, e.Want)
	case e.Got == "nothing":
		return fmt.Sprintf("no field %q: want %s", e.Field, e.Want)
	}
	return fmt.Sprintf("field %q: want %s, got %s", e.Field, e.Want, e.Got)
}

// LimitError reports an input that asks for more than a limit allows: a
// header's n above Limits.MaxN, or a line longer than Limits.MaxLine.
type LimitError struct {
	// What is "n" or "line".
	What string
	// Value is what the input asks for (n, or a lower bound on the line's
	// length); Limit is the limit.
	Value, Limit int64
}

// Error says what the input asks for and the limit; the caller says how
// to raise it.
func (e *LimitError) Error() string {
	if e.What == "line" {
		return fmt.Sprintf("the line is longer than %d bytes, the longest a trace line may be", e.Limit)
	}
	return fmt.Sprintf("n = %d is more than the limit of %d processes (checking n = %d needs about %s)",
		e.Value, e.Limit, e.Value, bytesString(float64(e.Value)*BytesPerProcess))
}

// bytesString is b bytes in the largest unit that keeps a number >= 1.
func bytesString(b float64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for ; b >= 1000 && i < len(units)-1; i++ {
		b /= 1000
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}

// Limits bound what a Reader and Check accept, so that a small input
// cannot make them take memory without bound: Check's memory is
// BytesPerProcess for each of the header's n processes plus, for every
// line, at most a few times the line's length.
type Limits struct {
	// MaxN is the largest n Check accepts; 0 means DefaultMaxN. It cannot
	// exceed MaxID.
	MaxN int
	// MaxLine is the longest line a Reader accepts, in bytes; 0 means
	// DefaultMaxLine.
	MaxLine int
}

const (
	// DefaultMaxN is Limits.MaxN when it is zero: about 80 MB.
	DefaultMaxN = 1 << 20
	// DefaultMaxLine is Limits.MaxLine when it is zero (16 MiB).
	DefaultMaxLine = 1 << 24
	// BytesPerProcess is what Check needs for each process of the header's
	// n, at most (measured by TestCheckMemoryPerProcess).
	BytesPerProcess = 80
)

func (l Limits) maxN() int {
	if l.MaxN <= 0 {
		return DefaultMaxN
	}
	return min(l.MaxN, MaxID)
}

func (l Limits) maxLine() int {
	if l.MaxLine <= 0 {
		return DefaultMaxLine
	}
	return l.MaxLine
}

// Reader reads a trace: the header first, then one event per Next call.
type Reader struct {
	sc      *bufio.Scanner
	line    int
	maxLine int
	// Header is the trace's first line.
	Header Header
	// HasBounds reports whether the header has both "lo" and "hi"; when
	// not, Header.Lo and Header.Hi are its l and k.
	HasBounds bool
}

// NewReader reads the header line of r and returns a Reader positioned at
// the first event, with the default limits.
func NewReader(r io.Reader) (*Reader, error) { return NewReaderLimits(r, Limits{}) }

// NewReaderLimits is NewReader with lines up to lim.MaxLine bytes.
func NewReaderLimits(r io.Reader, lim Limits) (*Reader, error) {
	tr := &Reader{sc: bufio.NewScanner(r), maxLine: lim.maxLine()}
	tr.sc.Buffer(make([]byte, 0, min(1<<16, tr.maxLine)), tr.maxLine)
	b, err := tr.next()
	if err == io.EOF {
		return nil, &FormatError{Line: 1, Err: errors.New("empty file: a trace starts with a header line")}
	}
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, tr.wrap(fmt.Errorf("header: %w", jsonError(err, nil)))
	}
	if ev, ok := keys["ev"]; !ok || string(ev) != `"header"` {
		return nil, tr.errorf(`the first line must be the header ({"ev":"header",...})`)
	}
	if err := json.Unmarshal(b, &tr.Header); err != nil {
		return nil, tr.wrap(fmt.Errorf("header: %w", err))
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
	err := tr.sc.Err()
	switch {
	case err == nil:
		return nil, io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		return nil, &FormatError{Line: tr.line + 1, Err: &LimitError{What: "line", Value: int64(tr.maxLine) + 1, Limit: int64(tr.maxLine)}}
	}
	return nil, fmt.Errorf("reading line %d: %w", tr.line+1, err)
}

func (tr *Reader) errorf(format string, args ...any) error {
	return tr.wrap(fmt.Errorf(format, args...))
}

func (tr *Reader) wrap(err error) error { return &FormatError{Line: tr.line, Err: err} }

// rawEvent has pointers for the fields an event kind requires, so that a
// missing field is told apart from a zero one.
type rawEvent struct {
	T      *float64 `json:"t"`
	Ev     string   `json:"ev"`
	Node   *cs.ID   `json:"node"`
	To     *cs.ID   `json:"to"`
	From   *cs.ID   `json:"from"`
	Who    *cs.ID   `json:"who"`
	Msg    *string  `json:"msg"`
	Words  int      `json:"words"`
	Op     string   `json:"op"`
	State  string   `json:"state"`
	Kind   string   `json:"kind"`
	Detail string   `json:"detail"`
	Since  *float64 `json:"since"`
	Bound  *float64 `json:"bound"`
	Seq    uint64   `json:"seq"`
	Fence  *Fence   `json:"fence"`
}

// eventFields says what each field of an event holds, for the errors of a
// bad value.
var eventFields = map[string]string{
	"t": "a finite number", "ev": "a string", "node": "a process id (an integer)",
	"to": "a process id (an integer)", "from": "a process id (an integer)", "who": "a process id (an integer)",
	"msg": "a string", "words": "an integer", "op": `"entry" or "exit"`, "state": `"InCS" or "OutCS"`,
	"kind": kindsWant, "detail": "a string", "since": claimFields["since"], "bound": claimFields["bound"],
	"seq":   "a sequence number (a non-negative integer)",
	"fence": `a fencing token {"seq":7,"crashed":[2]}`, "fence.seq": "a non-negative integer",
	"fence.crashed": "a list of process ids",
}

// Next returns the next event, io.EOF after the last one, or a
// *FormatError for a line that is not a valid event: bad JSON, an unknown
// "ev", or a field its kind requires missing, of the wrong type or out of
// its value set ("op" entry|exit, "state" InCS|OutCS). Unknown fields are
// ignored. Next does not check node ids against n: that is the checker's
// job.
func (tr *Reader) Next() (Event, error) {
	b, err := tr.next()
	if err != nil {
		return Event{}, err
	}
	var r rawEvent
	if err := json.Unmarshal(b, &r); err != nil {
		return Event{}, tr.wrap(jsonError(err, eventFields))
	}
	if r.Ev == EvHeader {
		return Event{}, tr.errorf("a second header line")
	}
	var id **cs.ID // the id field the kind requires, and its name
	var idName string
	var claim *Claim // a verdict's
	switch r.Ev {
	case EvSend:
		id, idName = &r.To, "to"
	case EvRecv:
		id, idName = &r.From, "from"
	case EvSuspect, EvTrust:
		id, idName = &r.Who, "who"
	case EvRequest:
		if r.Op != cs.Entry.String() && r.Op != cs.Exit.String() {
			return Event{}, tr.wrap(&fieldError{Field: "op", Want: eventFields["op"], Got: strconv.Quote(r.Op)})
		}
	case EvState:
		if r.State != cs.InCS.String() && r.State != cs.OutCS.String() {
			return Event{}, tr.wrap(&fieldError{Field: "state", Want: eventFields["state"], Got: strconv.Quote(r.State)})
		}
		if r.Fence != nil && r.State != cs.InCS.String() {
			return Event{}, tr.errorf("a state event to OutCS with a \"fence\": only an entry (state InCS) carries a token")
		}
	case EvCrash, EvDrain:
	case EvVerdict:
		c, fe := claimOf(claimJSON{Kind: r.Kind, Detail: r.Detail, Who: r.Who, Since: r.Since, Bound: r.Bound}, "a verdict", "")
		if fe != nil {
			return Event{}, tr.wrap(fe)
		}
		claim = &c
	default:
		f := &fieldError{Field: "ev", Want: "send, recv, request, state, crash, suspect, trust, drain or verdict", Got: strconv.Quote(r.Ev)}
		if r.Ev == "" {
			f.Got = "nothing"
		}
		return Event{}, tr.wrap(f)
	}
	missing := func(name string) error {
		return tr.wrap(&fieldError{Field: name, Want: eventFields[name], Got: "nothing", Of: r.Ev + " event"})
	}
	switch {
	case r.T == nil:
		return Event{}, missing("t")
	case r.Node == nil:
		return Event{}, missing("node")
	case id != nil && *id == nil:
		return Event{}, missing(idName)
	case (r.Ev == EvSend || r.Ev == EvRecv) && r.Msg == nil:
		return Event{}, missing("msg")
	}
	ev := Event{T: *r.T, Ev: r.Ev, Node: *r.Node, Words: r.Words, Op: r.Op, State: r.State, Fence: r.Fence}
	if claim != nil {
		ev.Kind, ev.Detail, ev.Who, ev.Since, ev.Bound = claim.Kind, claim.Detail, claim.Who, claim.Since, claim.Bound
	}
	switch r.Ev {
	case EvSend:
		ev.To, ev.Seq = *r.To, r.Seq
	case EvRecv:
		ev.From, ev.Seq = *r.From, r.Seq
	case EvSuspect, EvTrust:
		ev.Who = *r.Who
	}
	if r.Msg != nil {
		ev.Msg = *r.Msg
	}
	return ev, nil
}

// jsonError rewrites an error of encoding/json for a reader of the trace:
// no Go type names, the field and what it holds (from want) for a value of
// the wrong type.
func jsonError(err error, want map[string]string) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return fmt.Errorf("want a JSON object {...}, got %s", got(te.Value))
	case errors.As(err, &te):
		w, ok := want[te.Field]
		if !ok {
			w = "another type"
		}
		return &fieldError{Field: te.Field, Want: w, Got: got(te.Value)}
	case errors.As(err, &se) && se.Error() == "unexpected end of JSON input":
		return errors.New("not valid JSON: the line ends inside a value (a truncated file?)")
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, se)
	}
	return err
}

// got describes a JSON value from UnmarshalTypeError.Value ("number 1e400",
// "string", "array", ...).
func got(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "array", "object":
		return "an " + v
	case "string", "number":
		return "a " + v
	case "bool":
		return "true or false"
	}
	return v
}

// excerpt is at most about 40 bytes of a JSON value, for errors.
func excerpt(raw []byte) string {
	if len(raw) <= 40 {
		return string(raw)
	}
	return strings.ToValidUTF8(string(raw[:37]), "") + "..."
}
