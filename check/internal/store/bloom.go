package store

// bloom is a blocked Bloom filter (Putze, Sanders and Singler, "Cache-,
// hash- and space-efficient Bloom filters", WEA 2007) over the fingerprints
// in a Disk's file. A membership test that the table misses asks it
// first: "no" is exact (a Bloom filter has no false negatives), so the test
// answers without reading a page of the file; "maybe" reads the page as
// before. Every new state is such a test, so once the file no longer fits
// in the page cache the filter saves a disk read for nearly every new
// state (docs/design/visited-set.md, "The visited set on disk").
//
// One lookup touches one block of 512 bits, a cache line: the block is
// chosen by x[1], and filterK bit positions within it by x[2] and x[0]. A
// fingerprint's 96 bits are a hash of the state, so these are independent
// of each other and of the file's order (x[0] first).
type bloom struct {
	blocks   [][8]uint64
	capacity int64 // fingerprints it was sized for, filterBits bits each
}

const (
	// filterBits is the filter's memory per fingerprint it is sized for;
	// a filter is sized for twice the fingerprints it starts with, so it
	// holds between 2*filterBits and filterBits bits of each: 1 to 2 bytes
	// a state against the 12 of the file, false positives about 0.1 % to
	// 2.5 % (TestFilterFalsePositives).
	filterBits = 8
	// filterK is the number of bits a fingerprint sets in its block.
	filterK = 6
)

// newBloom returns an empty filter sized for capacity fingerprints.
func newBloom(capacity int64) *bloom {
	n := max(1, (capacity*filterBits+511)/512)
	return &bloom{blocks: make([][8]uint64, n), capacity: capacity}
}

// block returns x's block and the bits x sets in it.
func (f *bloom) block(x FP) (*[8]uint64, [8]uint64) {
	b := &f.blocks[uint64(x[1])*uint64(len(f.blocks))>>32]
	var m [8]uint64
	h := uint64(x[2])<<32 | uint64(x[0])
	for range filterK {
		m[h>>6&7] |= 1 << (h & 63)
		h >>= 9
	}
	return b, m
}

// add puts x in the filter.
func (f *bloom) add(x FP) {
	b, m := f.block(x)
	for i := range b {
		b[i] |= m[i]
	}
}

// mayHave reports false only if x was never added; a nil filter knows
// nothing, and says true.
func (f *bloom) mayHave(x FP) bool {
	if f == nil {
		return true
	}
	b, m := f.block(x)
	for i := range b {
		if b[i]&m[i] != m[i] {
			return false
		}
	}
	return true
}
