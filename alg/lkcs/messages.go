package lkcs

import "github.com/critsec/critsec/cs"

// At is the algorithm type of a message or variable (Algorithm 3: enum at
// {MUTEX, MUTIN}): MUTEX permissions are to enter the CS, MUTIN
// permissions to leave it.
type At uint8

const (
	// Mutex is the type of the k_i-LMUTEX sub-protocol (entering).
	Mutex At = iota
	// Mutin is the type of the l_i-LMUTIN sub-protocol (leaving).
	Mutin
)

// String returns "MUTEX" or "MUTIN".
func (a At) String() string {
	if a == Mutex {
		return "MUTEX"
	}
	return "MUTIN"
}

// The messages of LKCS (Algorithms 4, 5 and 7). The paper's sender field
// P_i is the envelope's source. Sizes follow cs.Message.Words: source,
// destination and type are one word each, plus one per field (the type at
// is a field).

// Request is ⟨Request, at, ts_i, P_i⟩: P_i asks N_i ∪ {P_i} to let it leave
// (Mutin) or enter (Mutex) the CS; (TS, sender) is the request's timestamp.
type Request struct {
	At At
	TS int64
}

// Grant is ⟨Grant, at, P_i⟩.
type Grant struct{ At At }

// Release is ⟨Release, at, P_i⟩: P_i gives back its at grant. Rollback
// (corrected LKCS only) marks a grant given back unused after a Full.
type Release struct {
	At       At
	Rollback bool
}

// Full is ⟨Full, at⟩ (corrected LKCS): the receiver's request cannot be
// granted until a holder at rest changes state; it gives back the grants
// it holds for it and waits for Retry.
type Full struct{ At At }

// Blocked is ⟨Blocked, at⟩ (corrected LKCS): a neighbor of the leader
// that rolled back a request of type at without holding the leader's grant
// tells the leader that it waits (Waiting_LDR counts it), with its
// request's timestamp TS.
type Blocked struct {
	At At
	TS int64
}

// Kind is "Blocked".
func (Blocked) Kind() string { return "Blocked" }

// Words is the message's size in words (cs.Message.Words).
func (Blocked) Words() int { return 5 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Blocked) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'K', byte(m.At)), m.TS) }

// Retry is ⟨Retry, at⟩ (corrected LKCS): room has appeared; ask again.
type Retry struct{ At At }

// Pass is ⟨Pass, at⟩ (corrected LKCS): the sender, invited by the
// receiver's Retry, was told Full by a member before it and will not come
// for the room promised to it; the receiver gives that room to others.
type Pass struct{ At At }

// Kind is "Pass".
func (Pass) Kind() string { return "Pass" }

// Words is the message's size in words (cs.Message.Words).
func (Pass) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Pass) AppendBinary(b []byte) []byte { return append(b, 'A', byte(m.At)) }

// Kind is "Full".
func (Full) Kind() string { return "Full" }

// Kind is "Retry".
func (Retry) Kind() string { return "Retry" }

// Words is the message's size in words (cs.Message.Words).
func (Full) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Retry) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Full) AppendBinary(b []byte) []byte { return append(b, 'F', byte(m.At)) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Retry) AppendBinary(b []byte) []byte { return append(b, 'Y', byte(m.At)) }

// Preempt is ⟨Preempt, at, P_i⟩ (the published variant only).
type Preempt struct{ At At }

// Relinquish is ⟨Relinquish, at, P_i⟩.
type Relinquish struct{ At At }

// Trigger is ⟨Trigger, at, ts⟩ (Algorithm 6): the leader designates the
// receiver to complete its request of type At and timestamp TS by the
// sidetrack.
type Trigger struct {
	At At
	TS int64
}

// RequestByTrigger is ⟨RequestByTrigger, at, P_i⟩ (Algorithm 7): a request
// every member of N_i ∪ {P_i} grants at once, with the highest priority.
type RequestByTrigger struct{ At At }

// Return is ⟨Return, at, P_i⟩, an addition beyond the paper (the corrected
// LKCS): P_i tells the sidetracked process that the slack its
// RequestByTrigger took at P_i (one grant of type At above Cond_i) is free
// again: that grant became a normal one, or was released, or fitted within
// Cond_i from the start.
type Return struct{ At At }

// Done is ⟨Done, at, P_i⟩, an addition beyond the paper (the corrected
// LKCS): the process the leader nominated hands the sidetrack of type At
// back, at once if the Trigger was stale, else once every member of
// N_i ∪ {P_i} has sent Return; the leader nominates no other sidetrack of
// that type in between.
type Done struct{ At At }

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

// Kind is "Trigger".
func (Trigger) Kind() string { return "Trigger" }

// Kind is "RequestByTrigger".
func (RequestByTrigger) Kind() string { return "RequestByTrigger" }

// Words is the message's size in words (cs.Message.Words).
func (Request) Words() int { return 5 }

// Words is the message's size in words (cs.Message.Words).
func (Grant) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Release) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Preempt) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Relinquish) Words() int { return 4 }

// Words is the message's size in words (cs.Message.Words).
func (Trigger) Words() int { return 5 }

// Words is the message's size in words (cs.Message.Words).
func (RequestByTrigger) Words() int { return 4 }

// Kind is "Return".
func (Return) Kind() string { return "Return" }

// Words is the message's size in words (cs.Message.Words).
func (Return) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Return) AppendBinary(b []byte) []byte { return append(b, 'N', byte(m.At)) }

// Kind is "Done".
func (Done) Kind() string { return "Done" }

// Words is the message's size in words (cs.Message.Words).
func (Done) Words() int { return 4 }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Done) AppendBinary(b []byte) []byte { return append(b, 'D', byte(m.At)) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Request) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'Q', byte(m.At)), m.TS) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Grant) AppendBinary(b []byte) []byte { return append(b, 'G', byte(m.At)) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Release) AppendBinary(b []byte) []byte {
	return cs.AppendBool(append(b, 'R', byte(m.At)), m.Rollback)
}

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Preempt) AppendBinary(b []byte) []byte { return append(b, 'P', byte(m.At)) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Relinquish) AppendBinary(b []byte) []byte { return append(b, 'L', byte(m.At)) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m Trigger) AppendBinary(b []byte) []byte { return cs.AppendInt(append(b, 'T', byte(m.At)), m.TS) }

// AppendBinary appends the message's canonical encoding (cs.Message).
func (m RequestByTrigger) AppendBinary(b []byte) []byte { return append(b, 'B', byte(m.At)) }
