package srimanireddy

import "github.com/critsec/critsec/cs"

// Decoder returns the decoder of the algorithm's messages on n processes
// (cs.Decoder), the inverse of Request.AppendBinary and
// Privilege.AppendBinary: a request number is at least 1 (RN_i[i] is
// incremented before the broadcast), a privilege's queue holds distinct
// sites of 1..n and its LN exactly n request numbers, none negative.
func Decoder(n int) cs.Decoder {
	return cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
		switch kind {
		case Request{}.Kind():
			r.Expect('Q')
			m := Request{N: r.Int()}
			if m.N < 1 {
				r.Fail("request number below 1")
			}
			return m
		case Privilege{}.Kind():
			p := readPrivilege(r, n)
			return Privilege{Q: p.q, LN: p.ln}
		}
		return nil
	})
}

// readPrivilege reads Privilege.AppendBinary's encoding: the message, and
// a privilege in a machine's state (ReadState).
func readPrivilege(r *cs.Reader, n int) privilege {
	r.Expect('V')
	p := privilege{q: r.Queue(n)}
	if c := r.Int(); r.Err() == nil && c != int64(n) {
		r.Fail("LN does not have n entries")
		return p
	}
	p.ln = make([]int64, 0, n)
	for range n {
		v := r.Int()
		if r.Err() != nil {
			break
		}
		if v < 0 {
			r.Fail("negative LN entry")
			break
		}
		p.ln = append(p.ln, v)
	}
	return p
}
