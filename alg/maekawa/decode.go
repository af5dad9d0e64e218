package maekawa

import "github.com/critsec/critsec/cs"

// Decode reads a message of Maekawa's algorithm back from its kind and
// encoding (cs.Decoder): the inverse of the AppendBinary methods in
// messages.go.
func Decode(kind string, b []byte) (cs.Message, error) {
	r := cs.NewReader(b)
	var m cs.Message
	switch kind {
	case Request{}.Kind():
		r.Expect('Q')
		m = Request{Seq: r.Int()}
	case Locked{}.Kind():
		r.Expect('L')
		m = Locked{}
	case Failed{}.Kind():
		r.Expect('F')
		m = Failed{}
	case Inquire{}.Kind():
		r.Expect('I')
		m = Inquire{Seq: r.Int()}
	case Relinquish{}.Kind():
		r.Expect('Y')
		m = Relinquish{}
	case Release{}.Kind():
		r.Expect('R')
		m = Release{}
	default:
		return nil, cs.UnknownKind(kind)
	}
	if err := r.Done(kind); err != nil {
		return nil, err
	}
	return m, nil
}
