package maekawa

import "github.com/critsec/critsec/cs"

// Decode reads a message of Maekawa's algorithm back from its kind and
// encoding (cs.Decoder): the inverse of the AppendBinary methods in
// messages.go.
var Decode = cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
	switch kind {
	case Request{}.Kind():
		r.Expect('Q')
		return Request{Seq: r.Int()}
	case Locked{}.Kind():
		r.Expect('L')
		return Locked{}
	case Failed{}.Kind():
		r.Expect('F')
		return Failed{}
	case Inquire{}.Kind():
		r.Expect('I')
		return Inquire{Seq: r.Int()}
	case Relinquish{}.Kind():
		r.Expect('Y')
		return Relinquish{}
	case Release{}.Kind():
		r.Expect('R')
		return Release{}
	}
	return nil
})
