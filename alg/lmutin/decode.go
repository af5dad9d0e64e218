package lmutin

import "github.com/critsec/critsec/cs"

// Decode reads a message of l_i-LMUTIN (and so of k_i-LMUTEX, whose
// messages are LMUTIN's) back from its kind and encoding (cs.Decoder): the
// inverse of the AppendBinary methods in messages.go.
var Decode = cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
	switch kind {
	case Request{}.Kind():
		r.Expect('Q')
		return Request{Clock: r.Int()}
	case Grant{}.Kind():
		r.Expect('G')
		return Grant{Clock: r.Int()}
	case Release{}.Kind():
		r.Expect('R')
		return Release{Clock: r.Int()}
	case Preempt{}.Kind():
		r.Expect('P')
		return Preempt{Clock: r.Int(), Target: r.Int()}
	case Relinquish{}.Kind():
		r.Expect('L')
		return Relinquish{Clock: r.Int()}
	}
	return nil
})
