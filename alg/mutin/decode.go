package mutin

import "github.com/critsec/critsec/cs"

// Decoder returns the decoder of MUTIN's messages on n processes
// (cs.Decoder): the six messages of Algorithm 2, the inverse of the
// AppendBinary methods in messages.go, and mx's messages, tagged MxTag,
// which mx decodes. The sets procsInCS must list ids of 1..n in increasing
// order, as MUTIN sends them. k-mutual exclusion, Co(MUTIN(n-k)), sends
// the same messages.
func Decoder(n int, mx cs.Decoder) cs.Decoder {
	own := cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
		switch kind {
		case Query{}.Kind():
			r.Expect('Q')
			return Query{ReqCnt: r.Int()}
		case Response1{}.Kind():
			r.Expect('1')
			return Response1{ProcsInCS: r.IDs(n), ReqCnt: r.Int()}
		case Response2{}.Kind():
			r.Expect('2')
			return Response2{ProcsInCS: r.IDs(n), ReqCnt: r.Int()}
		case Acquire{}.Kind():
			r.Expect('A')
			return Acquire{}
		case Ack{}.Kind():
			r.Expect('K')
			return Ack{}
		case Release{}.Kind():
			r.Expect('R')
			return Release{}
		}
		return nil
	})
	return cs.Compose(own, map[string]cs.Decoder{MxTag: mx})
}
