package lkcs

import "github.com/critsec/critsec/cs"

// Decode reads a message of LKCS back from its kind and encoding
// (cs.Decoder): the inverse of the AppendBinary methods in messages.go.
// The type at must be MUTEX or MUTIN.
func Decode(kind string, b []byte) (cs.Message, error) {
	r := cs.NewReader(b)
	at := func(c byte) At {
		r.Expect(c)
		a := At(r.Byte())
		if a != Mutex && a != Mutin {
			r.Fail("the type at is neither MUTEX nor MUTIN")
		}
		return a
	}
	var m cs.Message
	switch kind {
	case Request{}.Kind():
		m = Request{At: at('Q'), TS: r.Int()}
	case Grant{}.Kind():
		m = Grant{At: at('G')}
	case Release{}.Kind():
		m = Release{At: at('R')}
	case Preempt{}.Kind():
		m = Preempt{At: at('P')}
	case Relinquish{}.Kind():
		m = Relinquish{At: at('L')}
	case Trigger{}.Kind():
		m = Trigger{At: at('T'), TS: r.Int()}
	case RequestByTrigger{}.Kind():
		m = RequestByTrigger{At: at('B')}
	default:
		return nil, cs.UnknownKind(kind)
	}
	if err := r.Done(kind); err != nil {
		return nil, err
	}
	return m, nil
}
