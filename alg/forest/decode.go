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
	id := func(r *cs.Reader, lo int64) cs.ID { return readID(r, lo, n) }
	token := func(r *cs.Reader) int32 { return readToken(r, k) }
	counter := func(r *cs.Reader) int64 { return readCounter(r, v) }
	return cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
		switch kind {
		case Request{}.Kind():
			r.Expect('R')
			return Request{Y: id(r, 1), T: token(r), Seen: counter(r)}
		case Token{}.Kind():
			r.Expect('T')
			m := Token{T: token(r), Count: counter(r)}
			m.Queue = readQueue(r, n, v)
			return m
		case Inform{}.Kind():
			r.Expect('I')
			return Inform{X: id(r, 1), T: token(r), Count: counter(r)}
		}
		return nil
	})
}

// readID reads a node id of lo..n.
func readID(r *cs.Reader, lo int64, n int) cs.ID {
	x := r.Int()
	if x < lo || x > int64(n) {
		r.Fail("node id out of range")
	}
	return cs.ID(x)
}

// readToken reads a token id of 1..k.
func readToken(r *cs.Reader, k int) int32 {
	t := r.Int()
	if t < 1 || t > int64(k) {
		r.Fail("token id out of range")
	}
	return int32(t)
}

// readCounter reads a Count or Seen of variant v.
func readCounter(r *cs.Reader, v Variant) int64 {
	c := r.Int()
	if c < 0 || v == Paper && c != 0 {
		r.Fail("count out of range for the " + v.String() + " variant")
	}
	return c
}

// readQueue reads appendQueue's token-queue or node-queue: entries of
// nodes 1..n with tags 0..n, bounded by the input's length.
func readQueue(r *cs.Reader, n int, v Variant) []Entry {
	q := r.Uint()
	if q > uint64(r.Len()) {
		r.Fail("token-queue longer than its input")
		return nil
	}
	var es []Entry
	for ; q > 0 && r.Err() == nil; q-- {
		es = append(es, Entry{ID: readID(r, 1, n), Tag: readID(r, 0, n), Seen: readCounter(r, v)})
	}
	return es
}
