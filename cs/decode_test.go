package cs

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestReaderInts reads back AppendInt at the extremes and refuses the
// overlong and truncated forms binary.Varint would accept or misread.
func TestReaderInts(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		r := NewReader(AppendInt(nil, v))
		if got := r.Int(); got != v || r.Done("x") != nil {
			t.Errorf("%d read back as %d (%v)", v, got, r.Done("x"))
		}
	}
	for _, b := range [][]byte{{0x80, 0}, {0x81, 0x80, 0}, {0x80}, {}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		r := NewReader(b)
		r.Int()
		if err := r.Done("x"); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: got %v, want ErrMalformed", b, err)
		}
	}
}

// TestReaderIDs reads back AppendIDs and refuses lists out of order, out
// of range, or longer than the input.
func TestReaderIDs(t *testing.T) {
	r := NewReader(AppendIDs(nil, []ID{1, 3, 4}))
	if got := r.IDs(4); len(got) != 3 || got[0] != 1 || got[2] != 4 || r.Done("x") != nil {
		t.Errorf("read back %v (%v)", got, r.Done("x"))
	}
	for _, ids := range [][]ID{{2, 1}, {1, 1}, {0}, {5}} {
		r := NewReader(AppendIDs(nil, ids))
		r.IDs(4)
		if err := r.Done("x"); !errors.Is(err, ErrMalformed) {
			t.Errorf("%v: got %v, want ErrMalformed", ids, err)
		}
	}
	r = NewReader([]byte{0xff, 0xff, 0xff, 0x7f, 2})
	if r.IDs(1 << 30); r.Done("x") == nil {
		t.Error("a list longer than its input was read")
	}
}

// TestReaderQueue reads back a token's queue in its own order and refuses
// a site listed twice, a site out of range, or a queue longer than n.
func TestReaderQueue(t *testing.T) {
	r := NewReader(AppendIDs(nil, []ID{3, 1, 4}))
	if got := r.Queue(4); !slices.Equal(got, []ID{3, 1, 4}) || r.Done("x") != nil {
		t.Errorf("read back %v (%v)", got, r.Done("x"))
	}
	for _, q := range [][]ID{{2, 1, 2}, {0}, {5}, {1, 2, 3, 4, 4}} {
		r := NewReader(AppendIDs(nil, q))
		r.Queue(4)
		if err := r.Done("x"); !errors.Is(err, ErrMalformed) {
			t.Errorf("%v: got %v, want ErrMalformed", q, err)
		}
	}
}

// TestCompose routes a tagged kind to its child and refuses an envelope
// whose tag is not the kind's.
func TestCompose(t *testing.T) {
	leaf := func(kind string, b []byte) (Message, error) {
		r := NewReader(b)
		r.Expect('x')
		if kind != "X" {
			return nil, UnknownKind(kind)
		}
		return testMsg{}, r.Done(kind)
	}
	d := Compose(nil, map[string]Decoder{"a": Compose(nil, map[string]Decoder{"b": leaf})})
	want := Tagged{Tag: "a", Msg: Tagged{Tag: "b", Msg: testMsg{}}}
	m, err := d("a.b.X", want.AppendBinary(nil))
	if err != nil || m != want {
		t.Fatalf("got %v, %v", m, err)
	}
	if _, err := d("a.b.X", Tagged{Tag: "a", Msg: Tagged{Tag: "c", Msg: testMsg{}}}.AppendBinary(nil)); !errors.Is(err, ErrMalformed) {
		t.Errorf("inner tag c under kind a.b.X: got %v", err)
	}
	if _, err := d("X", []byte{'x'}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("untagged kind to a parent without messages: got %v", err)
	}
}

type testMsg struct{}

func (testMsg) Kind() string                 { return "X" }
func (testMsg) Words() int                   { return 3 }
func (testMsg) AppendBinary(b []byte) []byte { return append(b, 'x') }
