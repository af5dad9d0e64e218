package node

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
	"github.com/critsec/critsec/transport"
)

// The records of a node's write-ahead log (package wal), one byte of type
// then varints and length-prefixed strings:
//
//	'H' id, count, (name, digest)...   first record: whose log, under which configuration
//	'C' t, op                          a call of Entry (1) or Exit (2) the machine took
//	'D' t, from, seq, kind, encoding   message seq of channel from -> id, delivered to the machine
//	'A' to, seq                        the peer confirmed channel id -> to up to seq
//	'F' t, 'S'|'T', j                  the failure detector began to suspect (S) or
//	                                   trusted (T) peer j: an input of the machine
//	'V' t, j                           this member voted against peer j (majority mode):
//	                                   it echoes j's pings no more, for good
//	'X' t, j                           peer j refused this member: it declared it crashed;
//	                                   the member may not start again
//	'S' t, state, channels             a snapshot: the machine's state (AppendState)
//	                                   and, for j = 1..n, channel id -> j's acked
//	                                   seq and unconfirmed messages (kind, encoding),
//	                                   then channel j -> id's last delivered seq,
//	                                   then the detector's trusted and crashed sets
//	                                   and the votes
//
// A snapshot replaces every record before it but the header (log
// compaction, Node's CompactEvery): replay restores the machine from it
// (cs.RestoreState) and the channels from its counts and messages, then
// goes on with the records after it.
//
// The machine is deterministic, so the 'C' and 'D' records in order
// rebuild its state and, with it, every message it sent, in the same
// order and so with the same sequence numbers. 'A' records only let the
// replay forget messages the peer already has. t is the wall-clock time
// the machine took the input (Unix nanoseconds), for traces
// (TraceFromLog).
const (
	recHeader  = 'H'
	recCall    = 'C'
	recDeliver = 'D'
	recAcked   = 'A'
	recSnap    = 'S'
	recDetect  = 'F'
	recRefused = 'X'
	recVote    = 'V'
)

// appendVote appends the record of this member's vote against peer j.
func appendVote(b []byte, t int64, j cs.ID) []byte {
	b = binary.AppendVarint(append(b, recVote), t)
	return binary.AppendUvarint(b, uint64(j))
}

// appendDeclared appends the record of peer j's refusal of this member.
func appendDeclared(b []byte, t int64, j cs.ID) []byte {
	b = binary.AppendVarint(append(b, recRefused), t)
	return binary.AppendUvarint(b, uint64(j))
}

func appendDetect(b []byte, t int64, in cs.Input) []byte {
	kind := byte('S')
	if in.Kind == cs.InTrust {
		kind = 'T'
	}
	return binary.AppendUvarint(append(binary.AppendVarint(append(b, recDetect), t), kind), uint64(in.Who))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendHeader(b []byte, id cs.ID, fp transport.Fingerprint) []byte {
	b = binary.AppendUvarint(append(b, recHeader), uint64(id))
	b = binary.AppendUvarint(b, uint64(len(fp)))
	for _, f := range fp {
		b = appendString(appendString(b, f.Name), f.Digest)
	}
	return b
}

func appendCall(b []byte, t int64, op cs.Op) []byte {
	return append(binary.AppendVarint(append(b, recCall), t), byte(op))
}

func appendDeliver(b []byte, t int64, d transport.Delivery) []byte {
	b = binary.AppendUvarint(binary.AppendVarint(append(b, recDeliver), t), uint64(d.From))
	b = binary.AppendUvarint(b, d.Seq)
	return d.Msg.AppendBinary(appendString(b, d.Msg.Kind()))
}

func appendAcked(b []byte, to cs.ID, seq uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(append(b, recAcked), uint64(to)), seq)
}

// replay rebuilds a node's machine and channels from its log's records.
type replay struct {
	id      cs.ID
	n       int
	fp      transport.Fingerprint
	machine cs.Machine
	decode  cs.Decoder
	eff     cs.Effects

	// event, when not nil, receives the inputs and their effects as
	// trace events (TraceFromLog), with t in seconds since the Unix epoch.
	event func(trace.Event)
	t     int64 // the last input's time, never decreasing

	records   int
	snapshots int // snapshot records taken
	state     cs.State
	// trusted and crashed are the failure detector's view (detected):
	// the peers trusted since they were last suspected, and those
	// suspected after being trusted, which are crashed for good.
	trusted, crashed cs.Set
	// declaredBy is the peer that refused this member, having declared
	// it crashed (record 'X'), or 0.
	declaredBy cs.ID
	// votes are the peers this member voted against (record 'V').
	votes cs.Set
	out   map[cs.ID]*transport.Outgoing // every channel id -> j, Self included
	in    map[cs.ID]uint64              // channel j -> id, Self's is out[id].Acked
}

func newReplay(id cs.ID, n int, fp transport.Fingerprint, m cs.Machine, dec cs.Decoder) *replay {
	r := &replay{id: id, n: n, fp: fp, machine: m, decode: dec, state: m.State(),
		out: map[cs.ID]*transport.Outgoing{}, in: map[cs.ID]uint64{}}
	for j := 1; j <= n; j++ {
		r.out[cs.ID(j)] = &transport.Outgoing{}
	}
	return r
}

// channels returns the channels' state for transport.Config.Restore.
func (r *replay) channels() *transport.Channels {
	c := &transport.Channels{Out: map[cs.ID]transport.Outgoing{}, In: map[cs.ID]uint64{}}
	for j, o := range r.out {
		c.Out[j] = *o
		if j != r.id {
			c.In[j] = r.in[j]
		}
	}
	return c
}

// record takes one record of the log.
func (r *replay) record(b []byte) error {
	r.records++
	rd := cs.NewReader(b)
	typ := rd.Byte()
	if r.records == 1 {
		if typ != recHeader {
			return errors.New("the log does not start with its header: not a node's log")
		}
		return r.header(rd)
	}
	switch typ {
	case recCall:
		r.setTime(rd.Int())
		op := cs.Op(rd.Byte())
		if err := rd.Done("call"); err != nil {
			return err
		}
		if op != cs.Entry && op != cs.Exit {
			return fmt.Errorf("a call of %v, not entry or exit", op)
		}
		return r.step(cs.Call(op), 0)
	case recDeliver:
		r.setTime(rd.Int())
		from, seq, kind := cs.ID(rd.Uint()), rd.Uint(), string(rd.Bytes())
		enc := rd.Rest()
		if err := rd.Err(); err != nil {
			return fmt.Errorf("a delivery: %w", err)
		}
		if err := r.delivered(from, seq); err != nil {
			return err
		}
		m, err := r.decode(kind, enc)
		if err != nil {
			return err
		}
		return r.step(cs.Deliver(from, m), seq)
	case recAcked:
		to, seq := cs.ID(rd.Uint()), rd.Uint()
		if err := rd.Done("acknowledgement"); err != nil {
			return err
		}
		return r.acked(to, seq)
	case recDetect:
		r.setTime(rd.Int())
		in := cs.Input{Kind: cs.InSuspect}
		switch rd.Byte() {
		case 'S':
		case 'T':
			in.Kind = cs.InTrust
		default:
			rd.Fail("neither suspect nor trust")
		}
		in.Who = cs.ID(rd.Uint())
		if err := rd.Done("detector output"); err != nil {
			return err
		}
		if in.Who < 1 || int(in.Who) > r.n || in.Who == r.id {
			return fmt.Errorf("a detector output about P%d, not a peer", in.Who)
		}
		r.detected(in)
		return r.step(in, 0)
	case recRefused, recVote:
		r.setTime(rd.Int())
		j := cs.ID(rd.Uint())
		if err := rd.Done("refusal or vote"); err != nil {
			return err
		}
		if j < 1 || int(j) > r.n || j == r.id {
			return fmt.Errorf("a refusal or vote about P%d, not a peer", j)
		}
		if typ == recVote {
			r.votes.Add(j)
		} else {
			r.declaredBy = j
		}
		return nil
	case recSnap:
		if r.records != 2 {
			return fmt.Errorf("a snapshot as record %d: a snapshot follows the header", r.records)
		}
		return r.snapshot(rd)
	}
	return fmt.Errorf("record type %q unknown", typ)
}

// detected takes a failure-detector output into the detector's view: a
// trusted peer suspected is crashed (class T: suspected after being
// trusted means crashed).
func (r *replay) detected(in cs.Input) {
	switch {
	case in.Kind == cs.InTrust:
		r.trusted.Add(in.Who)
	case r.trusted.Has(in.Who):
		r.trusted.Remove(in.Who)
		r.crashed.Add(in.Who)
	}
}

// delivered takes delivery seq on channel from -> id: the next one.
func (r *replay) delivered(from cs.ID, seq uint64) error {
	if from < 1 || int(from) > r.n {
		return fmt.Errorf("a delivery from P%d, not a member", from)
	}
	if from == r.id {
		o := r.out[from]
		if seq != o.Acked+1 || len(o.Queue) == 0 {
			return fmt.Errorf("delivery %d from P%d itself, which sent %d", seq, from, o.Acked+uint64(len(o.Queue)))
		}
		o.Queue, o.Acked = o.Queue[1:], seq
		return nil
	}
	if seq != r.in[from]+1 {
		return fmt.Errorf("delivery %d from P%d after %d", seq, from, r.in[from])
	}
	r.in[from] = seq
	return nil
}

// acked takes peer to's confirmation of channel id -> to up to seq: the
// messages up to it are forgotten.
func (r *replay) acked(to cs.ID, seq uint64) error {
	o := r.out[to]
	if o == nil || to == r.id {
		return fmt.Errorf("an acknowledgement from P%d, not a peer", to)
	}
	if seq > o.Acked+uint64(len(o.Queue)) {
		return fmt.Errorf("P%d acknowledged %d messages, but %d were sent", to, seq, o.Acked+uint64(len(o.Queue)))
	}
	if seq > o.Acked {
		o.Queue, o.Acked = o.Queue[seq-o.Acked:], seq
	}
	return nil
}

// appendSnapshot appends the 'S' record of the replay's state: its
// machine and channels as the records so far left them.
func (r *replay) appendSnapshot(b []byte) []byte {
	b = binary.AppendVarint(append(b, recSnap), r.t)
	b = appendString(b, string(r.machine.AppendState(nil)))
	var enc []byte
	for j := 1; j <= r.n; j++ {
		o := r.out[cs.ID(j)]
		b = binary.AppendUvarint(binary.AppendUvarint(b, o.Acked), uint64(len(o.Queue)))
		for _, m := range o.Queue {
			enc = m.AppendBinary(enc[:0])
			b = appendString(appendString(b, m.Kind()), string(enc))
		}
		b = binary.AppendUvarint(b, r.in[cs.ID(j)])
	}
	return r.votes.AppendBinary(r.crashed.AppendBinary(r.trusted.AppendBinary(b)))
}

// snapshot takes an 'S' record (after its type byte): the machine, fresh,
// is set to the snapshot's state and the channels to its.
func (r *replay) snapshot(rd *cs.Reader) error {
	if r.event != nil {
		return errors.New("the log was compacted (a snapshot replaced its first records), so the node's trace cannot " +
			"be rebuilt from it; run nodes with compaction off (critsec node --compact-every 0) to keep their traces")
	}
	r.setTime(rd.Int())
	state := rd.Bytes()
	for j := 1; j <= r.n && rd.Err() == nil; j++ {
		o := r.out[cs.ID(j)]
		o.Acked = rd.Uint()
		c := rd.Uint()
		if rd.Err() == nil && c > uint64(rd.Len()) {
			rd.Fail("more messages than bytes")
		}
		o.Queue = nil
		for ; c > 0 && rd.Err() == nil; c-- {
			kind, enc := string(rd.Bytes()), rd.Bytes()
			if rd.Err() != nil {
				break
			}
			m, err := r.decode(kind, enc)
			if err != nil {
				return fmt.Errorf("a snapshot's message to P%d: %w", j, err)
			}
			o.Queue = append(o.Queue, m)
		}
		if in := rd.Uint(); cs.ID(j) != r.id {
			r.in[cs.ID(j)] = in
		} else if rd.Err() == nil && in != 0 {
			rd.Fail("a count on the channel from the node itself")
		}
	}
	r.trusted, r.crashed = rd.Set(r.n), rd.Set(r.n)
	r.votes = cs.Set{}
	if rd.Len() > 0 {
		r.votes = rd.Set(r.n)
	}
	if err := rd.Done("snapshot"); err != nil {
		return err
	}
	if err := cs.RestoreState(r.machine, state); err != nil {
		return fmt.Errorf("a snapshot: %w", err)
	}
	r.state = r.machine.State()
	r.snapshots++
	return nil
}

// header checks the log's first record against this node and
// configuration.
func (r *replay) header(rd *cs.Reader) error {
	id := cs.ID(rd.Uint())
	c := rd.Uint()
	if rd.Err() == nil && c > 1<<10 {
		rd.Fail("too many fields")
	}
	if rd.Err() != nil {
		c = 0 // Fail does not stop a loop over a huge count
	}
	var fp transport.Fingerprint
	for range c {
		fp = append(fp, transport.Field{Name: string(rd.Bytes()), Digest: string(rd.Bytes())})
	}
	if err := rd.Done("header"); err != nil {
		return err
	}
	if id != r.id {
		return fmt.Errorf("this is node %d's log, not node %d's: check --id and the data directory", id, r.id)
	}
	if f := r.fp.Diff(fp); f != "" {
		return fmt.Errorf("the log was written under another cluster configuration (field %s differs): "+
			"a node cannot change the problem it runs; use a new data directory for a new cluster", f)
	}
	return nil
}

func (r *replay) setTime(t int64) { r.t = max(r.t, t) }

// step gives in to the machine and takes its effects; seq is a
// delivery's sequence number on its channel.
func (r *replay) step(in cs.Input, seq uint64) error {
	if err := r.eff.Step(r.machine, in); err != nil {
		return fmt.Errorf("the machine refuses the logged %s: %w", in, err)
	}
	t := float64(r.t) / 1e9
	if r.event != nil {
		switch in.Kind {
		case cs.InReceive:
			r.event(trace.Event{T: t, Ev: trace.EvRecv, Node: r.id, From: in.From, Msg: in.Msg.Kind(), Seq: seq})
		case cs.InSuspect:
			r.event(trace.Event{T: t, Ev: trace.EvSuspect, Node: r.id, Who: in.Who})
		case cs.InTrust:
			r.event(trace.Event{T: t, Ev: trace.EvTrust, Node: r.id, Who: in.Who})
		default:
			r.event(trace.Event{T: t, Ev: trace.EvRequest, Node: r.id, Op: in.Op().String()})
		}
	}
	return r.track(r.eff.List)
}

// track takes the effects of an input the machine took: the messages it
// sent join their channels, its state changes are recorded.
func (r *replay) track(effects []cs.Effect) error {
	t := float64(r.t) / 1e9
	for _, e := range effects {
		if e.IsSend() {
			o := r.out[e.To]
			if o == nil {
				return fmt.Errorf("the machine sends %s to P%d, not a member", e.Msg.Kind(), e.To)
			}
			o.Queue = append(o.Queue, e.Msg)
			if r.event != nil {
				r.event(trace.Event{T: t, Ev: trace.EvSend, Node: r.id, To: e.To, Msg: e.Msg.Kind(), Words: e.Msg.Words(),
					Seq: o.Acked + uint64(len(o.Queue))})
			}
			continue
		}
		r.state = e.State
		if r.event != nil {
			r.event(trace.Event{T: t, Ev: trace.EvState, Node: r.id, State: e.State.String()})
		}
	}
	return nil
}
