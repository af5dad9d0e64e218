package ftraymond

import (
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
)

// Decoder returns the decoder of Algorithm 1's messages on n processes
// (cs.Decoder): INIT, ACK and CRASH(j) with j in 1..n, and REQUEST and
// REPLY, which are Raymond's and which raymond.Decode reads.
func Decoder(n int) cs.Decoder {
	own := cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
		switch kind {
		case Init{}.Kind():
			r.Expect('I')
			return Init{}
		case Ack{}.Kind():
			r.Expect('A')
			return Ack{}
		case Crash{}.Kind():
			r.Expect('C')
			m := Crash{Who: cs.ID(r.Int32())}
			if m.Who < 1 || int(m.Who) > n {
				r.Fail("crashed process outside 1..n")
			}
			return m
		}
		return nil
	})
	return func(kind string, b []byte) (cs.Message, error) {
		if kind == (Request{}).Kind() || kind == (Reply{}).Kind() {
			return raymond.Decode(kind, b)
		}
		return own(kind, b)
	}
}
