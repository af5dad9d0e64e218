package alg

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/critsec/critsec/cs"
)

// TestDecodeRoundTrip decodes every message of a simulated run of every
// registered algorithm with every option (the run of TestMessageKinds)
// with the problem's decoder: each comes back equal, with the same kind
// and encoding. An algorithm registered without a decoder fails here.
func TestDecodeRoundTrip(t *testing.T) {
	for _, r := range messageRuns() {
		if r.err != nil {
			t.Fatalf("%s %v: %v", r.alg.Name, r.opts, r.err)
		}
		if r.alg.Decoder == nil {
			t.Errorf("%s has no Decoder: write one next to its messages' AppendBinary and register it", r.alg.Name)
			continue
		}
		dec := r.pr.Decoder()
		for _, m := range sortedMessages(r.seen) {
			kind, b := string(cs.AppendKind(nil, m)), m.AppendBinary(nil)
			got, err := dec(kind, b)
			if err != nil {
				t.Errorf("%s %v: %s %x: %v", r.alg.Name, r.opts, kind, b, err)
				continue
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("%s %v: %s decoded as %#v, want %#v", r.alg.Name, r.opts, kind, got, m)
			}
		}
	}
}

// sortedMessages returns the messages of seen in the order of their keys.
func sortedMessages(seen map[string]cs.Message) []cs.Message {
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ms := make([]cs.Message, len(keys))
	for i, k := range keys {
		ms[i] = seen[k]
	}
	return ms
}

// TestDecodeRefuses gives decoders the kinds of errors the network can
// bring; each is refused with the error it names.
func TestDecodeRefuses(t *testing.T) {
	gcs, err := Resolve(Spec{Alg: "gcs", N: 4})
	if err != nil {
		t.Fatal(err)
	}
	ra, err := Resolve(Spec{Alg: "raymond", N: 4})
	if err != nil {
		t.Fatal(err)
	}
	mutinRA, err := Resolve(Spec{Alg: "mutin", N: 4, Options: map[string]string{"mx": "ra"}})
	if err != nil {
		t.Fatal(err)
	}
	tag := func(tag string, inner []byte) []byte { return cs.Tagged{Tag: tag, Msg: raw(inner)}.AppendBinary(nil) }
	for _, c := range []struct {
		name string
		pr   *Problem
		kind string
		b    []byte
		want error
	}{
		{"unknown kind", ra, "HELLO", []byte{'Q', 0}, cs.ErrUnknownKind},
		{"empty", ra, "REQUEST", nil, cs.ErrMalformed},
		{"wrong type byte", ra, "REQUEST", []byte{'P', 0}, cs.ErrMalformed},
		{"trailing byte", ra, "REQUEST", []byte{'Q', 0, 0}, cs.ErrMalformed},
		{"overlong varint", ra, "REQUEST", []byte{'Q', 0x80, 0}, cs.ErrMalformed},
		{"truncated varint", ra, "REQUEST", []byte{'Q', 0x80}, cs.ErrMalformed},
		{"count beyond int32", ra, "REPLY", cs.AppendInt([]byte{'P'}, 1<<40), cs.ErrMalformed},
		{"untagged child kind", gcs, "Query", []byte{'Q', 0}, cs.ErrUnknownKind},
		{"unknown tag", gcs, "kmux.Query", tag("kmux", []byte{'Q', 0}), cs.ErrUnknownKind},
		{"tag differs from kind", gcs, "lmin.Query", tag("kmex", []byte{'Q', 0}), cs.ErrMalformed},
		{"tag longer than input", gcs, "lmin.Query", []byte{9, 'l'}, cs.ErrMalformed},
		{"ids not increasing", gcs, "lmin.Response1", tag("lmin", []byte{'1', 2, 4, 2, 0}), cs.ErrMalformed},
		{"id beyond n", gcs, "lmin.Response1", tag("lmin", []byte{'1', 1, 10, 0}), cs.ErrMalformed},
		{"id list longer than n", gcs, "lmin.Response1", tag("lmin", []byte{'1', 5, 2, 4, 6, 8, 10, 0}), cs.ErrMalformed},
		{"maekawa kind under ra", mutinRA, "mx.LOCKED", tag("mx", []byte{'L'}), cs.ErrUnknownKind},
		{"lkcs at out of range", lkcsProblem(t), "Grant", []byte{'G', 2}, cs.ErrMalformed},
	} {
		_, err := c.pr.Decoder()(c.kind, c.b)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %s %x: got %v, want an error wrapping %v", c.name, c.kind, c.b, err, c.want)
		}
	}
	if _, err := (&Problem{Alg: Algorithm{Name: "new"}}).Decoder()("X", nil); !errors.Is(err, ErrNoDecoder) {
		t.Errorf("an algorithm without a decoder: got %v, want ErrNoDecoder", err)
	}
}

func lkcsProblem(t *testing.T) *Problem {
	a, err := Lookup("lkcs-paper")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(a.SpecFor(6, 0, 3))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// raw is a message whose encoding is given, to build envelopes around
// bytes.
type raw []byte

func (raw) Kind() string                   { return "raw" }
func (raw) Words() int                     { return 0 }
func (r raw) AppendBinary(b []byte) []byte { return append(b, r...) }

// fuzzProblems are the problems FuzzDecode decodes for: every algorithm
// with every option, on 6 processes, and the messages of a run of each.
func fuzzProblems() ([]*Problem, [][]cs.Message) {
	var prs []*Problem
	var msgs [][]cs.Message
	for _, r := range messageRuns() {
		if r.err == nil {
			prs, msgs = append(prs, r.pr), append(msgs, sortedMessages(r.seen))
		}
	}
	return prs, msgs
}

// FuzzDecode: a problem's decoder, given any kind and bytes, either
// refuses them with an error wrapping cs.ErrUnknownKind or cs.ErrMalformed,
// or returns a message that has that kind and re-encodes to those bytes
// (so a decoder accepts only canonical encodings), and which a machine of
// the problem receives without panicking. Problem sel is fuzzProblems()[sel
// mod their number].
func FuzzDecode(f *testing.F) {
	prs, msgs := fuzzProblems()
	for sel, ms := range msgs {
		for i, m := range ms {
			if i%8 == 0 { // a few of each algorithm
				f.Add(uint8(sel), string(cs.AppendKind(nil, m)), m.AppendBinary(nil))
			}
		}
	}
	f.Add(uint8(0), "REQUEST", []byte{'Q', 0x80, 0})
	f.Add(uint8(0), "lmin.mx.REQUEST", []byte{4, 'l', 'm', 'i', 'n', 2, 'm', 'x', 'Q', 2})
	f.Fuzz(func(t *testing.T, sel uint8, kind string, b []byte) {
		pr := prs[int(sel)%len(prs)]
		m, err := pr.Decoder()(kind, b)
		if err != nil {
			if !errors.Is(err, cs.ErrUnknownKind) && !errors.Is(err, cs.ErrMalformed) {
				t.Fatalf("%s: %q %x: error %v wraps neither ErrUnknownKind nor ErrMalformed", pr.Alg.Name, kind, b, err)
			}
			return
		}
		if got := string(cs.AppendKind(nil, m)); got != kind {
			t.Fatalf("%s: %q %x decoded as a message of kind %q", pr.Alg.Name, kind, b, got)
		}
		if got := m.AppendBinary(nil); !bytes.Equal(got, b) {
			t.Fatalf("%s: %q %x decoded as %#v, which encodes as %x", pr.Alg.Name, kind, b, m, got)
		}
		ms, err := pr.Machines()
		if err != nil {
			t.Fatal(err)
		}
		_ = ms[0].Receive(&cs.Effects{}, 2, m) // an error is fine, a panic is not
	})
}
