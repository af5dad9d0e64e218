package store

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only, or returns nil where it
// cannot (the set then reads pages with pread). A membership test that
// misses the table reads one page of the file; mapped, that is a binary
// search in memory the page cache already holds, without the system call
// and the copy a pread costs (docs/design/visited-set.md, "The visited set on disk").
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || int64(int(size)) != size {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	_ = syscall.Madvise(b, syscall.MADV_RANDOM) // only advice: a page at a time, no read-ahead
	return b
}

// unmapFile undoes mapFile.
func unmapFile(b []byte) {
	if b != nil {
		_ = syscall.Munmap(b) // fails only for a range that was never mapped
	}
}
