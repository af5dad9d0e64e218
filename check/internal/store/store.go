// Package store holds what a depth-first search of package check keeps
// outside its search: the visited set of 96-bit fingerprints, in memory
// (Memory) or partly on disk (Disk, with its Bloom filter and the file's
// read-only mapping), and the files of a checkpoint (Checkpoint, Save,
// Load, Lock). It knows nothing of states or actions: the search hands it
// fingerprints, and the checkpoint's path as numbers.
package store

import (
	"errors"
	"fmt"
	"hash/crc32"
)

// FP is a 96-bit fingerprint: the first 96 bits of a state's 128-bit hash.
// A depth-first search stores these, 12 bytes a state, so that the largest
// spaces fit: with N distinct states the probability of any collision is
// at most N(N-1)/2 / 2^96, about 6e-12 for N = 10^9 (docs/design/visited-set.md). The
// all-zero value marks an empty slot and is never stored.
type FP [3]uint32

// fpBytes is the size of a slot, and of a fingerprint in a file.
const fpBytes = 12

// Set is a visited set as the search uses it: Memory and Disk.
type Set interface {
	// Insert adds x and reports whether it was new. ErrFull: the set may
	// grow no further; any other error leaves the set unusable.
	Insert(x FP) (added bool, err error)
	// Stats describes the set.
	Stats() Stats
	// Close releases the set's memory mapping, files and directory.
	Close() error
}

// Stats describes a visited set.
type Stats struct {
	// States is the number of fingerprints in the set.
	States int64
	// OnDisk is the number in the file, and Reads the pages membership
	// tests have read from it (Disk only).
	OnDisk, Reads int64
	// Slots is the size of the table in memory.
	Slots int
}

// ErrFull is Memory's answer to an insert when its table is full and may
// not double within its memory share.
var ErrFull = errors.New("the visited set is full")

// UnusableError is a checkpoint, or a visited-set file, that a run cannot
// continue: another check's, or damaged (an I/O error reading one is not).
type UnusableError struct{ msg string }

// Error returns what is wrong with the checkpoint or file.
func (e *UnusableError) Error() string { return e.msg }

// Unusable returns an *UnusableError with the formatted message.
func Unusable(format string, args ...any) error {
	return &UnusableError{fmt.Sprintf(format, args...)}
}

// castagnoli is the CRC-32C table of the set's file and a checkpoint's.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)
