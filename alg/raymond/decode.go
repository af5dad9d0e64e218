package raymond

import "github.com/critsec/critsec/cs"

// Decode reads a message of Raymond's algorithm back from its kind and
// encoding (cs.Decoder): the inverse of Request.AppendBinary and
// Reply.AppendBinary.
func Decode(kind string, b []byte) (cs.Message, error) {
	r := cs.NewReader(b)
	var m cs.Message
	switch kind {
	case Request{}.Kind():
		r.Expect('Q')
		m = Request{Last: r.Int()}
	case Reply{}.Kind():
		r.Expect('P')
		m = Reply{Count: r.Int32()}
	default:
		return nil, cs.UnknownKind(kind)
	}
	if err := r.Done(kind); err != nil {
		return nil, err
	}
	return m, nil
}
