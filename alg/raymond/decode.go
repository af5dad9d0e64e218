package raymond

import "github.com/critsec/critsec/cs"

// Decode reads a message of Raymond's algorithm back from its kind and
// encoding (cs.Decoder): the inverse of Request.AppendBinary and
// Reply.AppendBinary.
var Decode = cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
	switch kind {
	case Request{}.Kind():
		r.Expect('Q')
		return Request{Last: r.Int()}
	case Reply{}.Kind():
		r.Expect('P')
		return Reply{Count: r.Int32()}
	}
	return nil
})
