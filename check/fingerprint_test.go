package check

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// hash128 is MurmurHash3_x64_128 of data as Appleby's reference code
// computes it, byte by byte, with the checker's seed: the reference for
// hasher.
func hash128(data []byte) fingerprint {
	h1, h2 := uint64(murmurSeed), uint64(murmurSeed)
	n := len(data)
	p := data
	for len(p) >= 16 {
		h1, h2 = block(h1, h2, binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:]))
		p = p[16:]
	}
	var k1, k2 uint64
	switch len(p) {
	case 15:
		k2 ^= uint64(p[14]) << 48
		fallthrough
	case 14:
		k2 ^= uint64(p[13]) << 40
		fallthrough
	case 13:
		k2 ^= uint64(p[12]) << 32
		fallthrough
	case 12:
		k2 ^= uint64(p[11]) << 24
		fallthrough
	case 11:
		k2 ^= uint64(p[10]) << 16
		fallthrough
	case 10:
		k2 ^= uint64(p[9]) << 8
		fallthrough
	case 9:
		k2 ^= uint64(p[8])
		k2 *= murmurC2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= murmurC1
		h2 ^= k2
		fallthrough
	case 8:
		k1 ^= uint64(p[7]) << 56
		fallthrough
	case 7:
		k1 ^= uint64(p[6]) << 48
		fallthrough
	case 6:
		k1 ^= uint64(p[5]) << 40
		fallthrough
	case 5:
		k1 ^= uint64(p[4]) << 32
		fallthrough
	case 4:
		k1 ^= uint64(p[3]) << 24
		fallthrough
	case 3:
		k1 ^= uint64(p[2]) << 16
		fallthrough
	case 2:
		k1 ^= uint64(p[1]) << 8
		fallthrough
	case 1:
		k1 ^= uint64(p[0])
		h1 = tail1(h1, k1)
	}
	return finish(h1, h2, n)
}

// TestHasher: feeding words to hasher gives the hash of their
// little-endian bytes, for every length from 0 to 9 words (odd and even
// numbers of 8-byte halves of a block).
func TestHasher(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 10 {
		for range 100 {
			h := newHasher()
			var b []byte
			for range n {
				w := r.Uint64()
				h.add(w)
				b = binary.LittleEndian.AppendUint64(b, w)
			}
			if got, want := h.sum(), hash128(b); got != want {
				t.Fatalf("%d words: hasher %x, hash128 of the bytes %x", n, got, want)
			}
		}
	}
}
