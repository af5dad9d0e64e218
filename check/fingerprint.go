package check

import (
	"math/bits"
)

// fingerprint is the 128-bit hash of a global state's canonical encoding.
// Visited states are stored as fingerprints only; two distinct states with
// equal fingerprints would make the checker skip one of them. With N distinct
// states and a hash that behaves like a random function, the probability of
// any collision is at most N(N-1)/2 / 2^128 (about 1.5e-24 for N = 10^8); see
// docs/design/visited-set.md.
type fingerprint struct{ a, b uint64 }

// isZero reports the empty-slot marker of fpSet.
func (f fingerprint) isZero() bool { return f.a == 0 && f.b == 0 }

const (
	murmurC1 = 0x87c37b91114253d5
	murmurC2 = 0x4cf5ad432745937f
	// murmurSeed is fixed so that fingerprints, and so every result, are the
	// same in every run.
	murmurSeed = 0x63726974736563 // "critsec"
)

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// block mixes one 16-byte block (k1, k2) into h1, h2 (MurmurHash3_x64_128's
// body).
func block(h1, h2, k1, k2 uint64) (uint64, uint64) {
	k1 *= murmurC1
	k1 = bits.RotateLeft64(k1, 31)
	k1 *= murmurC2
	h1 ^= k1
	h1 = bits.RotateLeft64(h1, 27)
	h1 += h2
	h1 = h1*5 + 0x52dce729
	k2 *= murmurC2
	k2 = bits.RotateLeft64(k2, 33)
	k2 *= murmurC1
	h2 ^= k2
	h2 = bits.RotateLeft64(h2, 31)
	h2 += h1
	h2 = h2*5 + 0x38495ab5
	return h1, h2
}

// tail1 mixes the last k1 word (a tail of 1 to 8 bytes) into h1.
func tail1(h1, k1 uint64) uint64 {
	k1 *= murmurC1
	k1 = bits.RotateLeft64(k1, 31)
	k1 *= murmurC2
	return h1 ^ k1
}

// finish is MurmurHash3_x64_128's finalization for n bytes.
func finish(h1, h2 uint64, n int) fingerprint {
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	f := fingerprint{h1, h2}
	if f.isZero() {
		f.b = 1 // zero marks an empty slot
	}
	return f
}

// hasher computes MurmurHash3_x64_128 (Austin Appleby, public domain) with
// a fixed seed of a sequence of 64-bit words (their little-endian bytes),
// one word at a time: fast, well mixed, and deterministic across runs and
// machines. It is not cryptographic; the collision bound of fingerprint
// assumes only that it spreads canonical encodings like a random function,
// as model checkers' hash compaction does (SPIN, TLC).
type hasher struct {
	h1, h2, k1 uint64
	n          int  // bytes so far
	half       bool // k1 holds the first word of a block
}

func newHasher() hasher { return hasher{h1: murmurSeed, h2: murmurSeed} }

func (h *hasher) add(w uint64) {
	h.n += 8
	if !h.half {
		h.k1, h.half = w, true
		return
	}
	h.h1, h.h2 = block(h.h1, h.h2, h.k1, w)
	h.half = false
}

// sum returns the hash of the words added.
func (h *hasher) sum() fingerprint {
	h1 := h.h1
	if h.half {
		h1 = tail1(h1, h.k1)
	}
	return finish(h1, h.h2, h.n)
}

// fpSet is an open-addressing hash set of fingerprints (linear probing),
// for one goroutine at a time.
type fpSet struct {
	slots []fingerprint
	count int
}

func newFPSet(capacity int) *fpSet {
	size := 1024
	for size*3/4 < capacity {
		size *= 2
	}
	return &fpSet{slots: make([]fingerprint, size)}
}

// insert adds f and reports whether it was new.
func (s *fpSet) insert(f fingerprint) bool {
	if (s.count+1)*4 > len(s.slots)*3 {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := f.a & mask; ; i = (i + 1) & mask {
		switch x := s.slots[i]; {
		case x == f:
			return false
		case x.isZero():
			s.slots[i] = f
			s.count++
			return true
		}
	}
}

func (s *fpSet) grow() {
	old := s.slots
	s.slots = make([]fingerprint, 2*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, f := range old {
		if f.isZero() {
			continue
		}
		i := f.a & mask
		for !s.slots[i].isZero() {
			i = (i + 1) & mask
		}
		s.slots[i] = f
	}
}

// visitedShardBits is log2 of the number of shards of a shardedSet.
const visitedShardBits = 6

// shardedSet is a set of fingerprints split by their top bits into shards,
// which separate goroutines may insert into at the same time, one
// goroutine per shard.
type shardedSet struct {
	shards [1 << visitedShardBits]*fpSet
}

func newShardedSet() *shardedSet {
	v := &shardedSet{}
	for i := range v.shards {
		v.shards[i] = newFPSet(0)
	}
	return v
}

// shardOf returns the shard of f: its top bits (fpSet indexes by f.a).
func shardOf(f fingerprint) int { return int(f.b >> (64 - visitedShardBits)) }

// insert adds f and reports whether it was new.
func (v *shardedSet) insert(f fingerprint) bool { return v.shards[shardOf(f)].insert(f) }
