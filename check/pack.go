package check

import "github.com/critsec/critsec/cs"

// Packed states. The BFS frontier holds its states packed into 64-bit
// words, one after another, rather than as gstate values: no pointers for
// the garbage collector to follow or write barriers to pay, one allocation
// per chunk of states, and about half the memory. A packed state is:
//
//	word 0             crashed
//	word 1             crashesLeft (8 bits) | len(flight) << 32
//	n words            per process: m | state << 32 | pending << 40 | budget (8 bits) << 48
//	len(flight) words  per message in transit: link << 32 | m
//	n words            with a failure detector only: suspect
//	4 words            with the fencing properties only: zombies,
//	                   zombieNamed, lastSeq, lastID
//	1 word             with an exit guard and without the fencing
//	                   properties: zombies
type packer struct {
	n        int
	detector bool
	fencing  bool
	guarded  bool
	// the unpacked state and its buffers, valid until the next unpack
	s       gstate
	procs   []proc
	flight  []inflight
	suspect []uint64
}

func newPacker(x *model) *packer {
	return &packer{n: x.n, detector: x.detector != nil, fencing: x.fenceK > 0, guarded: x.guard != nil}
}

// appendPacked appends s packed to b.
func (pk *packer) appendPacked(b []uint64, s *gstate) []uint64 {
	b = append(b, s.crashed, uint64(uint8(s.crashesLeft))|uint64(len(s.flight))<<32)
	for _, p := range s.procs {
		b = append(b, uint64(p.m)|uint64(p.state)<<32|uint64(p.pending)<<40|uint64(uint8(p.budget))<<48)
	}
	for _, e := range s.flight {
		b = append(b, uint64(e.link)<<32|uint64(e.m))
	}
	if pk.detector {
		b = append(b, s.suspect...)
	}
	switch {
	case pk.fencing:
		b = append(b, s.zombies, s.zombieNamed, s.lastSeq, uint64(s.lastID))
	case pk.guarded:
		b = append(b, s.zombies)
	}
	return b
}

// unpack returns the packed state at w, in pk's buffers: valid until the
// next call, and not to be modified.
func (pk *packer) unpack(w []uint64) *gstate {
	nf := int(w[1] >> 32)
	pk.s = gstate{crashed: w[0], crashesLeft: int8(uint8(w[1]))}
	pk.procs = pk.procs[:0]
	for _, v := range w[2 : 2+pk.n] {
		pk.procs = append(pk.procs, proc{m: uint32(v), state: cs.State(v >> 32), pending: cs.Op(v >> 40), budget: int8(uint8(v >> 48))})
	}
	pk.flight = pk.flight[:0]
	for _, v := range w[2+pk.n : 2+pk.n+nf] {
		pk.flight = append(pk.flight, inflight{link: uint16(v >> 32), m: uint32(v)})
	}
	pk.s.procs, pk.s.flight = pk.procs, pk.flight
	if pk.detector {
		at := 2 + pk.n + nf
		pk.suspect = append(pk.suspect[:0], w[at:at+pk.n]...)
		pk.s.suspect = pk.suspect
	}
	at := 2 + pk.n + nf
	if pk.detector {
		at += pk.n
	}
	pk.s.fencing, pk.s.guarded = pk.fencing, pk.guarded
	switch {
	case pk.fencing:
		pk.s.zombies, pk.s.zombieNamed, pk.s.lastSeq, pk.s.lastID = w[at], w[at+1], w[at+2], cs.ID(w[at+3])
	case pk.guarded:
		pk.s.zombies = w[at]
	}
	return &pk.s
}

// frontier is one BFS level: packed states in arenas, each arena the
// candidates of one chunk of the level before (chunkOut.words), so that no
// state is copied again.
type frontier struct {
	arenas [][]uint64
	refs   []stateRef
}

// stateRef locates a state of a frontier: arenas[arena][off:].
type stateRef struct{ arena, off uint32 }

func (f *frontier) len() int { return len(f.refs) }

func (f *frontier) at(i int) []uint64 {
	r := f.refs[i]
	return f.arenas[r.arena][r.off:]
}
