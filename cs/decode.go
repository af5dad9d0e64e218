package cs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Decoder reads a message back from its kind (the composed kind,
// AppendKind) and its encoding (AppendBinary): the inverse of the pair
// that identifies a message (see Message). A networked runtime sends the
// pair and decodes it with the problem's Decoder.
//
// A decoder accepts exactly the canonical encodings: for every message m
// of the algorithm, d(kind(m), m.AppendBinary(nil)) is m, and whatever it
// accepts re-encodes to the same kind and bytes. Anything else (an unknown
// kind, a truncated or overlong encoding, trailing bytes, an id out of
// range) is an error wrapping ErrUnknownKind or ErrMalformed, never a
// panic. Decoders check a message's form, not the protocol: an
// authenticated peer is trusted to run the algorithm.
type Decoder func(kind string, b []byte) (Message, error)

// ErrUnknownKind is wrapped by the errors of a decoder given a kind its
// algorithm does not send.
var ErrUnknownKind = errors.New("unknown message kind")

// ErrMalformed is wrapped by the errors of a decoder given an encoding
// that is not a canonical encoding of the kind.
var ErrMalformed = errors.New("malformed message")

// UnknownKind returns an error wrapping ErrUnknownKind for kind; the kind
// is quoted and cut to 64 bytes, as it comes from the network.
func UnknownKind(kind string) error {
	return fmt.Errorf("%w %q", ErrUnknownKind, clip(kind))
}

// Malformed returns an error wrapping ErrMalformed for a message of kind,
// saying why.
func Malformed(kind, why string) error {
	return fmt.Errorf("%w: %q: %s", ErrMalformed, clip(kind), why)
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Leaf returns the decoder of an algorithm's own messages from read,
// which reads the message of kind with r (r.Expect, r.Int, ...) or
// returns nil for a kind the algorithm does not send; Leaf refuses the
// unknown kinds and checks that read consumed the whole encoding without
// error.
func Leaf(read func(kind string, r *Reader) Message) Decoder {
	return func(kind string, b []byte) (Message, error) {
		r := NewReader(b)
		m := read(kind, r)
		if m == nil {
			return nil, UnknownKind(kind)
		}
		if err := r.Done(kind); err != nil {
			return nil, err
		}
		return m, nil
	}
}

// Compose returns the decoder of a parent machine that composes children
// (see Tagged): a kind "tag.rest" goes to the child decoder of tag, which
// gets "rest" and the encoding inside the envelope, and its message comes
// back wrapped in Tagged{tag, ...}; any other kind goes to own (nil when
// the parent sends no messages of its own). Each package decodes its own
// kinds, and a parent only routes, as its Receive does.
func Compose(own Decoder, children map[string]Decoder) Decoder {
	return func(kind string, b []byte) (Message, error) {
		tag, rest, ok := strings.Cut(kind, ".")
		if !ok {
			if own == nil {
				return nil, UnknownKind(kind)
			}
			return own(kind, b)
		}
		child := children[tag]
		if child == nil {
			return nil, UnknownKind(kind)
		}
		r := NewReader(b)
		if got := r.Bytes(); r.Err() != nil || string(got) != tag {
			return nil, Malformed(kind, "the envelope's tag differs from the kind's")
		}
		m, err := child(rest, r.Rest())
		if err != nil {
			return nil, err
		}
		return Tagged{Tag: tag, Msg: m}, nil
	}
}

// Reader reads back what AppendInt, AppendIDs, AppendBool and Tagged
// write, refusing every encoding they would not write (overlong varints,
// truncation). The first error sticks: the methods then return zero
// values, and Err or Done reports it, so a decoder reads every field and
// checks once.
type Reader struct {
	b   []byte
	err error
}

// NewReader returns a Reader of b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Len returns the number of bytes not read yet: a bound on the length of
// a list still to read.
func (r *Reader) Len() int { return len(r.b) }

// Rest returns the bytes not read yet and consumes them.
func (r *Reader) Rest() []byte {
	b := r.b
	r.b = nil
	return b
}

// Fail records why the input is malformed, unless an error is already
// recorded, and stops the reading: decoders call it for a value out of
// its range.
func (r *Reader) Fail(why string) {
	if r.err == nil {
		r.err = errors.New(why)
	}
	r.b = nil
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.b) == 0 {
		r.Fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// Expect reads one byte and requires it to be c: the letter that opens
// each message's encoding.
func (r *Reader) Expect(c byte) {
	if got := r.Byte(); r.err == nil && got != c {
		r.Fail(fmt.Sprintf("type byte %q, want %q", got, c))
	}
}

// Int32 reads an AppendInt varint that fits an int32.
func (r *Reader) Int32() int32 {
	v := r.Int()
	if v != int64(int32(v)) {
		r.Fail("integer out of range")
		return 0
	}
	return int32(v)
}

// Int reads an AppendInt varint in its shortest form.
func (r *Reader) Int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 || n != varintLen(uint64(v)<<1^uint64(v>>63)) {
		r.Fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Uint reads an unsigned varint (binary.AppendUvarint) in its shortest
// form.
func (r *Reader) Uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != varintLen(v) {
		r.Fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varintLen is the length of the shortest unsigned varint of v.
func varintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// Bool reads AppendBool's 0 or 1.
func (r *Reader) Bool() bool {
	switch r.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.Fail("bad boolean")
	return false
}

// Bytes reads a length-prefixed byte string (the tag of Tagged).
func (r *Reader) Bytes() []byte {
	n := r.Uint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.Fail("truncated")
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

// IDs reads AppendIDs's list and requires what every message's lists are:
// ids of processes 1..n in strictly increasing order. Its memory is
// bounded by the input's length.
func (r *Reader) IDs(n int) []ID {
	return r.list(n, "id list", func(ids []ID, id ID) bool { return len(ids) == 0 || id > ids[len(ids)-1] },
		fmt.Sprintf("id list not increasing within 1..%d", n))
}

// Queue reads AppendIDs's list as a FIFO queue of processes carried by a
// token: ids of 1..n, each at most once, in any order. Its memory is
// bounded by the input's length and n.
func (r *Reader) Queue(n int) []ID {
	seen := NewSet()
	return r.list(n, "queue", func(_ []ID, id ID) bool {
		fresh := !seen.Has(id)
		seen.Add(id)
		return fresh
	}, fmt.Sprintf("queue holds an id outside 1..%d or one id twice", n))
}

// list reads AppendIDs's list of at most n ids of 1..n, each accepted by
// ok given the ids read before it; what names the list and bad is the
// failure for an id out of range or refused by ok.
func (r *Reader) list(n int, what string, ok func(ids []ID, id ID) bool, bad string) []ID {
	c := r.Uint()
	if r.err != nil {
		return nil
	}
	if c > uint64(len(r.b)) || c > uint64(n) {
		r.Fail(what + " longer than its input or than n")
		return nil
	}
	ids := make([]ID, 0, c)
	for range c {
		v := r.Int()
		if r.err != nil {
			return nil
		}
		if v < 1 || v > int64(n) || !ok(ids, ID(v)) {
			r.Fail(bad)
			return nil
		}
		ids = append(ids, ID(v))
	}
	return ids
}

// Done returns, for a message of kind, the first error met or an error
// for bytes left unread, both wrapping ErrMalformed.
func (r *Reader) Done(kind string) error {
	switch {
	case r.err != nil:
		return Malformed(kind, r.err.Error())
	case len(r.b) > 0:
		return Malformed(kind, fmt.Sprintf("%d trailing bytes", len(r.b)))
	}
	return nil
}

// Set reads Set.AppendBinary's encoding of a set of processes of 1..n:
// the canonical one (no trailing zero word), with no id outside 1..n.
func (r *Reader) Set(n int) Set {
	c := r.Uint()
	if r.err != nil {
		return Set{}
	}
	if c > uint64(n>>6+1) {
		r.Fail(fmt.Sprintf("set longer than n = %d allows", n))
		return Set{}
	}
	var s Set
	for i := range int(c) {
		w := r.Uint()
		if r.err != nil {
			return Set{}
		}
		if i == int(c)-1 && w == 0 {
			r.Fail("set encoding not canonical: its last word is zero")
			return Set{}
		}
		*s.wordPtr(i) = w
	}
	for _, id := range s.Members() {
		if id < 1 || int(id) > n {
			r.Fail(fmt.Sprintf("set holds %d, not a process of 1..%d", id, n))
			return Set{}
		}
	}
	return s
}

// Phase reads one byte that must be below limit: an enumerated field of a
// machine's state (its phase), as AppendState writes it with byte(v).
func (r *Reader) Phase(limit byte) byte {
	v := r.Byte()
	if r.err == nil && v >= limit {
		r.Fail(fmt.Sprintf("phase %d out of range 0..%d", v, limit-1))
		return 0
	}
	return v
}

// Restorer is implemented by machines that can be set to a state their
// AppendState wrote: a networked node's snapshot of its machine (log
// compaction, docs/network.md). ReadState reads, into a machine built from
// the same parameters, the encoding AppendState wrote; it checks the
// encoding's form and ranges as decoders do (an id out of range, a phase
// that does not exist) and records a failure in r, after which the
// machine must not be used.
type Restorer interface {
	Machine
	ReadState(r *Reader)
}

// RestoreState sets m, a machine fresh from its algorithm's constructor,
// to the state AppendState encoded in b. It refuses a machine that cannot
// be restored and a malformed or incomplete encoding, never panics, and
// leaves m unusable after an error.
func RestoreState(m Machine, b []byte) error {
	r := NewReader(b)
	ReadState(r, m)
	if err := r.Done("state"); err != nil {
		return fmt.Errorf("P%d's snapshot: %w", m.Self(), err)
	}
	return nil
}

// ReadState reads m's state from r if m is a Restorer, and otherwise
// records in r that it cannot be restored: what a composed machine calls
// for each child object it holds.
func ReadState(r *Reader, m Machine) {
	if rs, ok := m.(Restorer); ok {
		rs.ReadState(r)
		return
	}
	r.Fail(fmt.Sprintf("%s cannot be restored from a snapshot", kindOf(m)))
}

// ID reads an AppendInt varint that is a process id of 1..n or 0 (the
// "none" of a machine's pointer fields).
func (r *Reader) ID(n int) ID {
	v := r.Int()
	if r.err == nil && (v < 0 || v > int64(n)) {
		r.Fail(fmt.Sprintf("process id %d out of range 0..%d", v, n))
		return 0
	}
	return ID(v)
}

// Count reads an AppendInt length of a list whose elements take at least
// a byte each, so that it cannot exceed the bytes left; what names the
// list for the error. After an error it returns 0, so a loop over the
// count ends at once.
func (r *Reader) Count(what string) int {
	c := r.Int()
	if r.err == nil && (c < 0 || c > int64(len(r.b))) {
		r.Fail(what + " longer than its input")
	}
	if r.err != nil {
		return 0
	}
	return int(c)
}
