package lkcs

import "github.com/critsec/critsec/cs"

// Decode reads a message of LKCS back from its kind and encoding
// (cs.Decoder): the inverse of the AppendBinary methods in messages.go.
// The type at must be MUTEX or MUTIN. Full, Retry, Pass, Blocked, Return, Done
// and Release's Rollback are the corrected variant's additions.
var Decode = cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
	at := func(c byte) At {
		r.Expect(c)
		a := At(r.Byte())
		if a != Mutex && a != Mutin {
			r.Fail("the type at is neither MUTEX nor MUTIN")
		}
		return a
	}
	switch kind {
	case Request{}.Kind():
		return Request{At: at('Q'), TS: r.Int()}
	case Grant{}.Kind():
		return Grant{At: at('G')}
	case Release{}.Kind():
		return Release{At: at('R'), Rollback: r.Bool()}
	case Preempt{}.Kind():
		return Preempt{At: at('P')}
	case Relinquish{}.Kind():
		return Relinquish{At: at('L')}
	case Trigger{}.Kind():
		return Trigger{At: at('T'), TS: r.Int()}
	case RequestByTrigger{}.Kind():
		return RequestByTrigger{At: at('B')}
	case Full{}.Kind():
		return Full{At: at('F')}
	case Retry{}.Kind():
		return Retry{At: at('Y')}
	case Pass{}.Kind():
		return Pass{At: at('A')}
	case Blocked{}.Kind():
		return Blocked{At: at('K'), TS: r.Int()}
	case Return{}.Kind():
		return Return{At: at('N')}
	case Done{}.Kind():
		return Done{At: at('D')}
	}
	return nil
})
