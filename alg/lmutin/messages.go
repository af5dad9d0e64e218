package lmutin

import "github.com/critsec/critsec/cs"

// The messages of l_i-LMUTIN (Algorithm 2 of the local paper). The paper's
// sender field P_i is the envelope's source and is not repeated. Every
// message carries the sender's logical clock ts_i (section 3: "the value of
// the logical clock is attached to each message exchanged"), which the
// receiver merges into its own (ts := max(ts, Clock)); a Request's clock is
// also its timestamp. Sizes follow cs.Message.Words: source, destination and
// type are one word each, plus one per field.

// Request is ⟨Request, ts_i, P_i⟩: P_i asks each member of N_i ∪ {P_i} for
// permission to leave the CS; (Clock, sender) is the request's timestamp.
type Request struct{ Clock int64 }

// Grant is ⟨Grant⟩: the sender permits the receiver's pending request.
type Grant struct{ Clock int64 }

// Release is ⟨Release, P_i⟩: P_i has entered the CS again, so the grant it
// held from the receiver is free.
type Release struct{ Clock int64 }

// Preempt is ⟨Preempt, P_i⟩: the sender asks for its grant back to give it
// to an older request. Target is the timestamp of the request whose grant
// is asked back; Algorithm 2 sends none, so the published variant leaves it
// 0 (see Variant).
type Preempt struct{ Clock, Target int64 }

// Relinquish is ⟨Relinquish, P_i⟩: P_i gives back the grant it was asked
// for.
type Relinquish struct{ Clock int64 }

// Kind is "Request".
func (Request) Kind() string { return "Request" }

// Kind is "Grant".
func (Grant) Kind() string { return "Grant" }

// Kind is "Release".
func (Release) Kind() string { return "Release" }

// Kind is "Preempt".
func (Preempt) Kind() string { return "Preempt" }

// Kind is "Relinquish".
func (Relinquish) Kind() string { return "Relinquish" }

// Words is the message's size in words (cs.Message.Words).
func (Request) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Grant) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Release) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Preempt) Words() int { return 5 }

// Words is the message's size in words (cs.Message.Words).
func (Relinquish) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), m.Clock) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Grant) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'G'), m.Clock) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Release) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'R'), m.Clock) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Preempt) AppendBinary(b []byte) []byte {
	return cs.AppendInt(cs.AppendInt(append(b, 'P'), m.Clock), m.Target)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Relinquish) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'L'), m.Clock) }
