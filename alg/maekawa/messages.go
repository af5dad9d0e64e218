package maekawa

import "github.com/critsec/critsec/cs"

// Request is REQUEST(seq, i) (step 1 in the package doc): the sender asks the
// receiver, a member of its quorum, to lock for its request. Seq is the
// request's sequence number; the sender's id is the envelope's and breaks
// ties (Lamport's total order).
type Request struct{ Seq int64 }

// Locked is LOCKED (steps 2, 4 and 7): the receiver's request now holds the
// sender's lock.
type Locked struct{}

// Failed is FAILED (step 2): the receiver's request waits at the sender
// behind a request that precedes it.
type Failed struct{}

// Inquire is INQUIRE (step 2): the sender asks whether the request holding
// its lock, the receiver's request with sequence number Seq, can yield the
// lock to a preceding one. Seq lets the receiver ignore an INQUIRE that
// arrives after the request it is about has ended.
type Inquire struct{ Seq int64 }

// Relinquish is RELINQUISH (step 3): the sender gives back the receiver's
// lock; its request waits at the receiver again.
type Relinquish struct{}

// Release is RELEASE (step 6): the sender has left the critical section
// and frees the receiver's lock.
type Release struct{}

// Kind names, as in the paper.
func (Request) Kind() string { return "REQUEST" }

// Kind is "LOCKED".
func (Locked) Kind() string { return "LOCKED" }

// Kind is "FAILED".
func (Failed) Kind() string { return "FAILED" }

// Kind is "INQUIRE".
func (Inquire) Kind() string { return "INQUIRE" }

// Kind is "RELINQUISH".
func (Relinquish) Kind() string { return "RELINQUISH" }

// Kind is "RELEASE".
func (Release) Kind() string { return "RELEASE" }

// Sizes in words: source, destination and type, plus the sequence number
// where there is one.
func (Request) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Locked) Words() int { return 3 }

// Words is the message's size in words (cs.Message.Words).
func (Failed) Words() int { return 3 }

// Words is the message's size in words (cs.Message.Words).
func (Inquire) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Relinquish) Words() int { return 3 }

// Words is the message's size in words (cs.Message.Words).
func (Release) Words() int { return 3 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q'), m.Seq) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Locked) AppendBinary(b []byte) []byte { return append(b, 'L') }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Failed) AppendBinary(b []byte) []byte { return append(b, 'F') }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Inquire) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'I'), m.Seq) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Relinquish) AppendBinary(b []byte) []byte { return append(b, 'Y') }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (Release) AppendBinary(b []byte) []byte { return append(b, 'R') }
