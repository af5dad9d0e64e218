package makki

import "github.com/critsec/critsec/cs"

// Decoder returns the decoder of the algorithm's messages on n processes
// with k CS slots (cs.Decoder), the inverse of the AppendBinary methods:
// the token's queue holds distinct sites of 1..n, its semaphore lies in
// 0..k and hops are never negative; a REQUEST names a site of 1..n.
func Decoder(n, k int) cs.Decoder {
	return cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
		switch kind {
		case Token{}.Kind():
			r.Expect('T')
			m := Token{Q: r.Queue(n), S: r.Int32(), Hop: r.Int()}
			if m.S < 0 || int(m.S) > k || m.Hop < 0 {
				r.Fail("semaphore outside 0..k or negative hop")
			}
			return m
		case Request{}.Kind():
			r.Expect('Q')
			m := Request{J: cs.ID(r.Int32())}
			if m.J < 1 || int(m.J) > n {
				r.Fail("site outside 1..n")
			}
			return m
		case Release{}.Kind():
			r.Expect('R')
			m := Release{Hop: r.Int()}
			if m.Hop < 0 {
				r.Fail("negative hop")
			}
			return m
		}
		return nil
	})
}
