package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/critsec/critsec/cs"
)

// The wire format. A frame is a 4-byte big-endian length, then that many
// bytes: a type byte and the type's body. Integers in bodies are varints
// (binary.AppendUvarint), strings are length-prefixed. Every frame is
// read into memory whole, so the length is checked against the limit
// before anything is allocated.
const (
	// frameHello opens a connection, from the dialing sender: version,
	// from, to, the fingerprint's fields, and the highest sequence number
	// the sender has seen acknowledged on the link.
	frameHello byte = iota + 1
	// frameWelcome accepts a Hello: the highest sequence number the
	// receiver has confirmed on the link (the sender resends what
	// follows), and the highest it has seen acknowledged on its own link
	// to the sender.
	frameWelcome
	// frameRefuse refuses a Hello: the reason, naming what differs.
	frameRefuse
	// frameData carries one message: sequence number, kind, encoding.
	frameData
	// frameAck acknowledges every message up to a sequence number, and
	// echoes the stamp of the sender's latest ping (0: none yet); the
	// receiver also sends it as its heartbeat.
	frameAck
	// framePing is the sender's heartbeat, every half heartbeat: a stamp
	// of the sender's clock, which the receiver echoes in its next Ack,
	// and the sender's votes (a set of process ids, cs.Set's encoding).
	framePing
)

// version is the wire format's version, sent in the Hello.
const version = 2

// DefaultMaxFrame is the default limit on a frame's length: 1 MiB holds a
// message listing 100 000 process ids (MUTIN's Response1 at alg.MaxN).
const DefaultMaxFrame = 1 << 20

// errFrame is wrapped by the errors for frames that break the format.
var errFrame = errors.New("bad frame")

// frame is one frame: its type and its body.
type frame struct {
	typ  byte
	body []byte
}

// appendFrame appends the frame of type typ whose body is body.
func appendFrame(b []byte, typ byte, body []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(1+len(body)))
	b = append(b, typ)
	return append(b, body...)
}

// readFrame reads one frame of at most max bytes (type and body). A
// length over max or zero is refused before anything is read beyond it.
func readFrame(r *bufio.Reader, max int) (frame, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if n == 0 || uint64(n) > uint64(max) {
		return frame{}, fmt.Errorf("%w: length %d outside 1..%d", errFrame, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, err
	}
	return frame{typ: b[0], body: b[1:]}, nil
}

// hello is the body of a Hello frame.
type hello struct {
	from, to    cs.ID
	fingerprint Fingerprint
	acked       uint64
}

func appendHello(b []byte, h hello) []byte {
	body := []byte{version}
	body = binary.AppendUvarint(body, uint64(h.from))
	body = binary.AppendUvarint(body, uint64(h.to))
	body = binary.AppendUvarint(body, uint64(len(h.fingerprint)))
	for _, f := range h.fingerprint {
		body = appendString(appendString(body, f.Name), f.Digest)
	}
	return appendFrame(b, frameHello, binary.AppendUvarint(body, h.acked))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// parseHello reads a Hello body; ids must fit a cs.ID and the fields be
// at most maxFields.
func parseHello(body []byte) (hello, error) {
	r := cs.NewReader(body)
	if v := r.Byte(); r.Err() == nil && v != version {
		return hello{}, fmt.Errorf("%w: hello of wire version %d, this node speaks %d", errFrame, v, version)
	}
	h := hello{from: id(r), to: id(r)}
	c := r.Uint()
	if c > maxFields {
		r.Fail("too many fingerprint fields")
	}
	for i := uint64(0); i < c && r.Err() == nil; i++ {
		h.fingerprint = append(h.fingerprint, Field{Name: string(r.Bytes()), Digest: string(r.Bytes())})
	}
	h.acked = r.Uint()
	if err := r.Done("hello"); err != nil {
		return hello{}, fmt.Errorf("%w: %v", errFrame, err)
	}
	return h, nil
}

// maxFields bounds a fingerprint's length.
const maxFields = 64

// id reads a process id, 1..2^31-1.
func id(r *cs.Reader) cs.ID {
	v := r.Uint()
	if v < 1 || v > 1<<31-1 {
		r.Fail("process id out of range")
		return 0
	}
	return cs.ID(v)
}

// welcome is the body of a Welcome frame: the receiver's confirmed
// sequence number on the sender's link, and what it has seen acknowledged
// on its own link to the sender.
type welcome struct {
	confirmed, acked uint64
}

func appendWelcome(b []byte, w welcome) []byte {
	return appendFrame(b, frameWelcome, binary.AppendUvarint(binary.AppendUvarint(nil, w.confirmed), w.acked))
}

func parseWelcome(body []byte) (welcome, error) {
	r := cs.NewReader(body)
	w := welcome{confirmed: r.Uint(), acked: r.Uint()}
	if err := r.Done("welcome"); err != nil {
		return welcome{}, fmt.Errorf("%w: %v", errFrame, err)
	}
	return w, nil
}

// appendAck appends an Ack frame: the sequence number confirmed and the
// ping stamp echoed.
func appendAck(b []byte, seq, echo uint64) []byte {
	return appendFrame(b, frameAck, binary.AppendUvarint(binary.AppendUvarint(nil, seq), echo))
}

// parseAck reads the body of an Ack.
func parseAck(body []byte) (seq, echo uint64, err error) {
	r := cs.NewReader(body)
	seq, echo = r.Uint(), r.Uint()
	if err := r.Done("acknowledgement"); err != nil {
		return 0, 0, fmt.Errorf("%w: %v", errFrame, err)
	}
	return seq, echo, nil
}

// appendPing appends a Ping frame with the sender's stamp and votes.
func appendPing(b []byte, stamp uint64, votes cs.Set) []byte {
	return appendFrame(b, framePing, votes.AppendBinary(binary.AppendUvarint(nil, stamp)))
}

// parsePing reads the body of a Ping: a stamp, at least 1, and a set of
// ids in 1..n.
func parsePing(body []byte, n int) (uint64, cs.Set, error) {
	r := cs.NewReader(body)
	stamp := r.Uint()
	votes := r.Set(n)
	if err := r.Done("ping"); err != nil || stamp == 0 {
		return 0, cs.Set{}, fmt.Errorf("%w: ping without a stamp and a set of votes", errFrame)
	}
	return stamp, votes, nil
}

// appendData appends the Data frame of message m with sequence number
// seq.
func appendData(b []byte, seq uint64, m cs.Message) []byte {
	body := binary.AppendUvarint(nil, seq)
	kind := cs.AppendKind(nil, m)
	body = append(binary.AppendUvarint(body, uint64(len(kind))), kind...)
	return appendFrame(b, frameData, m.AppendBinary(body))
}

// parseData reads a Data body: the sequence number, the kind and the
// message's encoding (decoded by the caller).
func parseData(body []byte) (seq uint64, kind string, enc []byte, err error) {
	r := cs.NewReader(body)
	seq = r.Uint()
	kind = string(r.Bytes())
	if err := r.Err(); err != nil || seq == 0 {
		return 0, "", nil, fmt.Errorf("%w: data frame without a sequence number and a kind", errFrame)
	}
	return seq, kind, r.Rest(), nil
}
