package lmutin

import "github.com/critsec/critsec/cs"

// Decode reads a message of l_i-LMUTIN (and so of k_i-LMUTEX, whose
// messages are LMUTIN's) back from its kind and encoding (cs.Decoder): the
// inverse of the AppendBinary methods in messages.go.
func Decode(kind string, b []byte) (cs.Message, error) {
	r := cs.NewReader(b)
	var m cs.Message
	switch kind {
	case Request{}.Kind():
		r.Expect('Q')
		m = Request{Clock: r.Int()}
	case Grant{}.Kind():
		r.Expect('G')
		m = Grant{Clock: r.Int()}
	case Release{}.Kind():
		r.Expect('R')
		m = Release{Clock: r.Int()}
	case Preempt{}.Kind():
		r.Expect('P')
		m = Preempt{Clock: r.Int(), Target: r.Int()}
	case Relinquish{}.Kind():
		r.Expect('L')
		m = Relinquish{Clock: r.Int()}
	default:
		return nil, cs.UnknownKind(kind)
	}
	if err := r.Done(kind); err != nil {
		return nil, err
	}
	return m, nil
}
