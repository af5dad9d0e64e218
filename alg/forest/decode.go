package forest

import "github.com/critsec/critsec/cs"

// Decoder returns the decoder of the messages of variant v on n nodes with
// k tokens (cs.Decoder), the inverse of the AppendBinary methods in
// messages.go: nodes lie in 1..n, tokens in 1..k, request-modifier tags in
// 0..n (0 is NULL); the corrected variant's Count and Seen are never
// negative, and the published variant sends them as 0. A token-queue is
// bounded by the input's length. The partitioning scheme sends the
// messages of forest with one token (k = 1).
func Decoder(n, k int, v Variant) cs.Decoder {
	id := func(r *cs.Reader, lo int64) cs.ID {
		x := r.Int()
		if x < lo || x > int64(n) {
			r.Fail("node id out of range")
		}
		return cs.ID(x)
	}
	token := func(r *cs.Reader) int32 {
		t := r.Int()
		if t < 1 || t > int64(k) {
			r.Fail("token id out of range")
		}
		return int32(t)
	}
	counter := func(r *cs.Reader) int64 {
		c := r.Int()
		if c < 0 || v == Paper && c != 0 {
			r.Fail("count out of range for the " + v.String() + " variant")
		}
		return c
	}
	return cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
		switch kind {
		case Request{}.Kind():
			r.Expect('R')
			return Request{Y: id(r, 1), T: token(r), Seen: counter(r)}
		case Token{}.Kind():
			r.Expect('T')
			m := Token{T: token(r), Count: counter(r)}
			q := r.Uint()
			if q > uint64(r.Len()) {
				r.Fail("token-queue longer than its input")
				return m
			}
			for ; q > 0 && r.Err() == nil; q-- {
				m.Queue = append(m.Queue, Entry{ID: id(r, 1), Tag: id(r, 0), Seen: counter(r)})
			}
			return m
		case Inform{}.Kind():
			r.Expect('I')
			return Inform{X: id(r, 1), T: token(r), Count: counter(r)}
		}
		return nil
	})
}
