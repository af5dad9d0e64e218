package forest

import (
	"encoding/binary"

	"github.com/critsec/critsec/cs"
)

// The messages of section 2. Sizes follow cs.Message.Words, the paper's
// own measure (section 3, Figure 5): source, destination and type are one
// word each, plus one per field; a TOKEN carries the token identifier and,
// per token-queue entry, the node and its request-modifier tag.

// Request is REQUEST(Y, t): node Y (the originator, not necessarily the
// sender) has requested token T. Seen is the corrected variant's addition
// (0, not sent, in the published one): the highest Count of token T known
// to the nodes the request has passed (see Machine.Receive).
type Request struct {
	Y    cs.ID
	T    int32
	Seen int64
}

// Entry is one token-queue entry: node ID and its request-modifier tag,
// Tag = 0 standing for the paper's NULL ("-"), and, in the corrected
// variant (0, not sent, in the published one), the Seen of ID's request.
type Entry struct {
	ID, Tag cs.ID
	Seen    int64
}

// Token is TOKEN(t): token T with its token-queue and request-modifier
// tags, in FIFO order; Queue[0] is the receiver. Count is the corrected
// variant's addition (0, not sent, in the published one): the number of
// times token T has been received, this time included, counting its
// initial placement as the first.
type Token struct {
	T     int32
	Count int64
	Queue []Entry
}

// Inform is INFORM(X, t): node X had token T when it sent the message.
// Count (the corrected variant's; 0 in the published one) is the token's
// Count at X then, which lets the receiver tell a stale INFORM.
type Inform struct {
	X     cs.ID
	T     int32
	Count int64
}

// Kind is "REQUEST".
func (Request) Kind() string { return "REQUEST" }

// Kind is "TOKEN".
func (Token) Kind() string { return "TOKEN" }

// Kind is "INFORM".
func (Inform) Kind() string { return "INFORM" }

// Words is 5: source, destination, type, Y and t; one more for the
// corrected variant's Seen.
func (m Request) Words() int { return 5 + countWords(m.Seen) }

// Words is 4 + 2q for a token-queue of q entries: source, destination,
// type, the token identifier, and a node and a tag per entry; in the
// corrected variant, one more for Count and one per entry for its Seen.
func (m Token) Words() int {
	w := 4 + countWords(m.Count)
	for _, e := range m.Queue {
		w += 2 + countWords(e.Seen)
	}
	return w
}

// Words is 5: source, destination, type, X and t; one more for the
// corrected variant's Count.
func (m Inform) Words() int { return 5 + countWords(m.Count) }

// countWords is the size of a Count or Seen field: one word when sent
// (not 0; the corrected variant's are at least 1).
func countWords(c int64) int {
	if c == 0 {
		return 0
	}
	return 1
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte {
	return cs.AppendInt(cs.AppendInt(cs.AppendInt(append(b, 'R'), int64(m.Y)), int64(m.T)), m.Seen)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Token) AppendBinary(b []byte) []byte {
	b = cs.AppendInt(cs.AppendInt(append(b, 'T'), int64(m.T)), m.Count)
	return appendQueue(b, m.Queue)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Inform) AppendBinary(b []byte) []byte {
	return cs.AppendInt(cs.AppendInt(cs.AppendInt(append(b, 'I'), int64(m.X)), int64(m.T)), m.Count)
}

// appendQueue appends the length of q and each entry's node and tag.
func appendQueue(b []byte, q []Entry) []byte {
	b = binary.AppendUvarint(b, uint64(len(q)))
	for _, e := range q {
		b = cs.AppendInt(cs.AppendInt(cs.AppendInt(b, int64(e.ID)), int64(e.Tag)), e.Seen)
	}
	return b
}
