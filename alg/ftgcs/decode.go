package ftgcs

import (
	"github.com/critsec/critsec/alg/ftraymond"
	"github.com/critsec/critsec/cs"
)

// decodeInclusion reads the l side's messages: REQUEST(ts), GRANT(ts) with
// ts >= 1, and RELEASE.
var decodeInclusion = cs.Leaf(func(kind string, r *cs.Reader) cs.Message {
	stamp := func() int64 {
		ts := r.Int()
		if ts < 1 {
			r.Fail("timestamp below 1")
		}
		return ts
	}
	switch kind {
	case Request{}.Kind():
		r.Expect('Q')
		return Request{TS: stamp()}
	case Grant{}.Kind():
		r.Expect('G')
		return Grant{TS: stamp()}
	case Release{}.Kind():
		r.Expect('R')
		return Release{}
	}
	return nil
})

// Decoder returns the decoder of ftgcs's messages on n processes
// (cs.Decoder) with the l side named by design: ftgcs sends none of its
// own, only its sides', tagged LsideTag and KsideTag.
func Decoder(n int, design string) cs.Decoder {
	lside := decodeInclusion
	if design != Locks {
		lside = ftraymond.Decoder(n)
	}
	return cs.Compose(nil, map[string]cs.Decoder{LsideTag: lside, KsideTag: ftraymond.Decoder(n)})
}
