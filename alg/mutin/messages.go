package mutin

import "github.com/critsec/critsec/cs"

// The messages of MUTIN(l) (Algorithms 1 and 2 of the global paper). The
// paper's last field P_i, the sender, is the envelope's source and is not
// repeated. Sizes follow cs.Message.Words: source, destination and type are
// one word each, plus one word per field and one per element of a set.

// Query is ⟨Query, reqCnt, P_i⟩ (Algorithm 1, Exit): P_i asks each member of
// Q_i which processes it knows to be InCS.
type Query struct{ ReqCnt int64 }

// Response1 is ⟨Response1, procsInCS, reqCnt, P_i⟩ (Algorithm 2, receipt of
// Query): the sender's procsInCS, in increasing id order.
type Response1 struct {
	ProcsInCS []cs.ID
	ReqCnt    int64
}

// Response2 is ⟨Response2, procsInCS, reqCnt, P_i⟩ (Algorithm 2, receipt of
// Release): the sender's procsInCS after a Release arrived, sent to the
// process recorded in responseAgainTo.
type Response2 struct {
	ProcsInCS []cs.ID
	ReqCnt    int64
}

// Acquire is ⟨Acquire, P_i⟩ (Algorithm 1, Exit): P_i is about to leave the
// CS; each member of Q_i removes it from procsInCS and answers Ack.
type Acquire struct{}

// Ack is ⟨Ack, P_i⟩ (Algorithm 2, receipt of Acquire).
type Ack struct{}

// Release is ⟨Release, P_i⟩ (Algorithm 1, Entry): P_i has entered the CS.
type Release struct{}

// Kind is "Query".
func (Query) Kind() string { return "Query" }

// Kind is "Response1".
func (Response1) Kind() string { return "Response1" }

// Kind is "Response2".
func (Response2) Kind() string { return "Response2" }

// Kind is "Acquire".
func (Acquire) Kind() string { return "Acquire" }

// Kind is "Ack".
func (Ack) Kind() string { return "Ack" }

// Kind is "Release".
func (Release) Kind() string { return "Release" }

// Words is the message's size in words (cs.Message.Words).
func (Query) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (m Response1) Words() int { return 5 + len(m.ProcsInCS) }

// Words is the message's size in words (cs.Message.Words).
func (m Response2) Words() int { return 5 + len(m.ProcsInCS) }

// Words is the message's size in words (cs.Message.Words).
func (Acquire) Words() int { return 3 }

// Words is the message's size in words (cs.Message.Words).
func (Ack) Words() int { return 3 }

// Words is the message's size in words (cs.Message.Words).
func (Release) Words() int { return 3 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Query) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), m.ReqCnt) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Response1) AppendBinary(b []byte) []byte {
	return cs.AppendInt(cs.AppendIDs(append(b, '1'), m.ProcsInCS), m.ReqCnt)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Response2) AppendBinary(b []byte) []byte {
	return cs.AppendInt(cs.AppendIDs(append(b, '2'), m.ProcsInCS), m.ReqCnt)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Acquire) AppendBinary(b []byte) []byte { return append(b, 'A') }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Ack) AppendBinary(b []byte) []byte { return append(b, 'K') }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Release) AppendBinary(b []byte) []byte { return append(b, 'R') }
