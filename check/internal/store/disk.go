package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"syscall"
)

// Disk is the visited set of a depth-first run with a disk directory, in
// the spirit of TLC's DiskFPSet: an open-addressing table of FP in memory
// and a sorted file of FP on disk. When the table reaches its memory share
// (load 3/4 of a table that may not double), it is sorted in place and merged
// with the file into a new sorted file, written sequentially to fps.new,
// fsynced and renamed over fps; the table is then emptied. A small index in
// memory, the first fingerprint of every 4 KiB page of the file, makes a
// membership test that misses the table cost at most one page read (a
// bisection in the file's read-only mapping, or one pread where the system
// has none: diskmap_linux.go), and a Bloom filter over the file (bloom)
// answers most tests of new states without that read.
// Every fingerprint is in exactly one of the table and the file, so Insert
// answers exactly as Memory does: the same states are explored.
//
// The table is indexed by the top bits of x[0], so its slots are nearly in
// fingerprint order and sorting them before a merge is quick.
type Disk struct {
	slots    []FP
	shift    uint32 // index of x is x[0] >> shift
	count    int
	maxBytes uint64 // the table doubles while old and new fit in this
	fixed    bool   // sized up front (Config.ExpectedStates): never doubles

	dir          string   // the run's own directory under DiskDir, removed by close
	f            *os.File // the sorted file, nil before the first merge
	mapped       []byte   // f mapped read-only (mapFile), or nil: pages are read with pread
	onDisk       int64    // fingerprints in f
	index        []FP     // first fingerprint of every page of f
	filter       *bloom   // over the fingerprints of f, nil before the first merge
	page         [diskPageBytes]byte
	merges       int    // merges into the file so far
	reads        int64  // pages read by membership tests
	filterBuilds int    // filters built by merges so far
	crc          uint32 // CRC-32C of the file (a checkpoint checks it)
}

const (
	// diskPageBytes is the unit of a read: 341 fingerprints of 12 bytes and
	// 4 bytes of padding, so that a page never straddles two of the
	// operating system's pages. The last page is not padded.
	diskPageBytes = 4096
	diskPageFPs   = diskPageBytes / fpBytes
	// diskDefaultShare is the table's memory share without a memory limit.
	diskDefaultShare = 1 << 30
)

// MinSlots is the smallest table; tests lower it to force merges.
var MinSlots = 1 << 10

// diskMapFile is mapFile; tests replace it to exercise reads with pread.
var diskMapFile = mapFile

// ValidateDir checks that dir is a directory a run can create its own
// directory in (it removes what it created to find out);
// "" is valid (no disk).
func ValidateDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	d, err := os.MkdirTemp(dir, "critsec-visited-")
	if err != nil {
		return err
	}
	return os.Remove(d)
}

// NewDisk returns an empty set whose files live in a new directory
// under dir. With capacity > 0 the table is sized for capacity fingerprints
// at load 3/4 (capped at maxBytes) and never doubles; else it starts small
// and doubles while the old and the new table fit in maxBytes (0: 1 GiB).
func NewDisk(dir string, capacity int, maxBytes uint64) (*Disk, error) {
	if maxBytes == 0 {
		maxBytes = diskDefaultShare
	}
	size := 1 << 16
	if capacity > 0 {
		size = MinSlots
		for size/4*3 < capacity {
			size *= 2
		}
	}
	limit := maxBytes // a fixed table may have all of it
	if capacity == 0 {
		limit /= 4 // room to double at least once
	}
	for size > MinSlots && uint64(size)*fpBytes > limit {
		size /= 2
	}
	d, err := os.MkdirTemp(dir, "critsec-visited-")
	if err != nil {
		return nil, err
	}
	s := &Disk{maxBytes: maxBytes, fixed: capacity > 0, dir: d}
	s.alloc(size)
	return s, nil
}

func (s *Disk) alloc(size int) {
	s.slots = make([]FP, size)
	s.shift = 32
	for 1<<(32-s.shift) < size {
		s.shift--
	}
}

// Len is the number of fingerprints in the set.
func (s *Disk) Len() int64 { return s.onDisk + int64(s.count) }

// Stats describes the set: its fingerprints, those in the file, and the
// pages membership tests have read.
func (s *Disk) Stats() Stats {
	return Stats{States: s.Len(), OnDisk: s.onDisk, Reads: s.reads, Slots: len(s.slots)}
}

// Close removes the set's files and directory.
func (s *Disk) Close() error {
	var err error
	unmapFile(s.mapped)
	if s.f != nil {
		err = s.f.Close()
	}
	s.f, s.mapped, s.slots, s.index, s.filter = nil, nil, nil, nil, nil
	return errors.Join(err, os.RemoveAll(s.dir))
}

// Insert adds x and reports whether it was new. An error (a failed read,
// write or sync of the file) leaves the set unusable.
func (s *Disk) Insert(x FP) (added bool, err error) {
	i, found := s.probe(x)
	if found {
		return false, nil
	}
	if s.onDisk > 0 {
		if on, err := s.onFile(x); on || err != nil {
			return false, err
		}
	}
	if (s.count+1)*4 > len(s.slots)*3 {
		if !s.fixed && uint64(3*len(s.slots))*fpBytes <= s.maxBytes {
			s.grow()
		} else if err := s.merge(); err != nil {
			return false, err
		}
		i, _ = s.probe(x)
	}
	s.slots[i] = x
	s.count++
	return true, nil
}

// Has reports whether x is in the set.
func (s *Disk) Has(x FP) (bool, error) {
	if _, found := s.probe(x); found {
		return true, nil
	}
	if s.onDisk == 0 {
		return false, nil
	}
	return s.onFile(x)
}

// probe returns x's slot in the table and whether x is there; when it is
// not, the slot is the empty one where it would go.
func (s *Disk) probe(x FP) (int, bool) {
	mask := uint32(len(s.slots) - 1)
	for i := x[0] >> s.shift; ; i = (i + 1) & mask {
		switch y := s.slots[i]; {
		case y == x:
			return int(i), true
		case y == FP{}:
			return int(i), false
		}
	}
}

func (s *Disk) grow() {
	old := s.slots
	s.alloc(2 * len(old))
	mask := uint32(len(s.slots) - 1)
	for _, x := range old {
		if x == (FP{}) {
			continue
		}
		i := x[0] >> s.shift
		for s.slots[i] != (FP{}) {
			i = (i + 1) & mask
		}
		s.slots[i] = x
	}
}

// cmpFP orders fingerprints by x[0], then x[1], then x[2].
func cmpFP(a, b FP) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// filterCapacity is the capacity of a filter for a file of n fingerprints:
// 2n, or as many as half the table's share holds at filterBits bits each.
// A file that outgrows a filter of the largest capacity keeps adding to it:
// its false positives grow (22 % at twice its capacity), its answers
// stay exact.
func (s *Disk) filterCapacity(n int64) int64 {
	return max(1, min(2*n, int64(s.maxBytes/2*8/filterBits)))
}

// onFile reports whether x is in the file: unless the filter rules it out,
// the index names the only page that can hold it, which is read once, in
// the mapping or with pread.
func (s *Disk) onFile(x FP) (on bool, err error) {
	if !s.filter.mayHave(x) {
		return false, nil
	}
	p := pageOf(s.index, x)
	if p < 0 {
		return false, nil
	}
	if s.index[p] == x {
		return true, nil
	}
	n := int(min(diskPageFPs, s.onDisk-int64(p)*diskPageFPs))
	off := int64(p) * diskPageBytes
	s.reads++
	if s.mapped == nil {
		buf := s.page[:n*fpBytes]
		if _, err := s.f.ReadAt(buf, off); err != nil {
			return false, fmt.Errorf("visited set on disk: read page %d of %s: %w", p, s.fileName(), err)
		}
		return pageHas(buf, n, s.index[p], x), nil
	}
	// A read error under a mapping is a fault, not an error value: the
	// runtime turns it into a panic here (SetPanicOnFault), and this into
	// the error a pread would give. Nothing but the mapped page is read
	// below, so every panic caught here is one on the mapping.
	defer func() {
		if r := recover(); r != nil {
			on, err = false, fmt.Errorf("visited set on disk: read page %d of %s: %v", p, s.fileName(), r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return pageHas(s.mapped[off:off+int64(n)*fpBytes], n, s.index[p], x), nil
}

// The file's fingerprints are hashes, spread evenly over their range, so the
// position of x among them is close to x's share of the range: pageOf and
// pageHas start there and search outwards, touching a few cache lines of the
// index and of the page where a bisection of either touches a dozen
// (docs/design/visited-set.md, "Lookups that start where the fingerprint should
// be"). Their answers are those of a bisection whatever the fingerprints
// (TestPageOf, TestPageHas).

// pageOf returns the last page of index (the first fingerprint of each)
// whose first fingerprint is at most x, or -1 if there is none.
func pageOf(index []FP, x FP) int {
	n := len(index)
	if n == 0 || cmpFP(index[0], x) > 0 {
		return -1
	}
	// index[lo] <= x < index[hi], where index[n] is above every fingerprint.
	// From the guess g, steps of 1, 2, 4 ... bracket x; then bisect.
	lo, hi := 0, n
	if g := int(uint64(x[0]) * uint64(n) >> 32); cmpFP(index[g], x) <= 0 {
		lo = g
		for step := 1; lo+step < n; step *= 2 {
			if cmpFP(index[lo+step], x) > 0 {
				hi = lo + step
				break
			}
			lo += step
		}
	} else {
		hi = g // g > 0, since index[0] <= x
		for step := 1; hi-step > 0; step *= 2 {
			if cmpFP(index[hi-step], x) <= 0 {
				lo = hi - step
				break
			}
			hi -= step
		}
	}
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if cmpFP(index[m], x) <= 0 {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// pageHas reports whether x is among the n sorted fingerprints of page;
// first is the page's first fingerprint (the index's entry), less than x.
func pageHas(page []byte, n int, first, x FP) bool {
	at := func(i int) FP { return getFP(page[i*fpBytes:]) }
	last := at(n - 1)
	if c := cmpFP(last, x); c <= 0 {
		return c == 0
	}
	// first < x < last: guess by the first 64 bits, then step to x's place.
	k := func(y FP) uint64 { return uint64(y[0])<<32 | uint64(y[1]) }
	i := 1
	if span := k(last) - k(first); span > 0 {
		hi, lo := bits.Mul64(k(x)-k(first), uint64(n-1))
		q, _ := bits.Div64(hi, lo, span) // k(x)-k(first) <= span, so q <= n-1
		i = max(1, min(n-2, int(q)))
	}
	for cmpFP(at(i), x) > 0 {
		i-- // stops at 0 at the latest: first < x
	}
	for cmpFP(at(i), x) < 0 {
		i++ // stops at n-1 at the latest: x < last
	}
	return at(i) == x
}

func getFP(b []byte) FP {
	return FP{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])}
}

func putFP(b []byte, x FP) {
	binary.LittleEndian.PutUint32(b, x[0])
	binary.LittleEndian.PutUint32(b[4:], x[1])
	binary.LittleEndian.PutUint32(b[8:], x[2])
}

// merge sorts the table's fingerprints in place, merges them with the file
// into fps.new (sequential reads and writes), syncs it, renames it over fps
// and empties the table. The table's fingerprints are added to the filter;
// when the file outgrows the filter, a filter sized for twice the new file
// (filterCapacity) replaces it, filled as the merge writes.
func (s *Disk) merge() error {
	mem := s.slots[:0]
	for _, x := range s.slots {
		if x != (FP{}) {
			mem = append(mem, x) // in place: the write never passes the read
		}
	}
	slices.SortFunc(mem, cmpFP)
	total := s.onDisk + int64(len(mem))
	var grown *bloom
	if c := s.filterCapacity(total); s.filter == nil || total > s.filter.capacity && c > s.filter.capacity {
		s.filter = nil // garbage before the new one is allocated
		grown = newBloom(c)
		s.filterBuilds++
	} else {
		for _, x := range mem {
			s.filter.add(x)
		}
	}

	name := s.fileName()
	nf, err := os.OpenFile(name+".new", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("visited set on disk: %w", err)
	}
	crc := crc32.New(castagnoli)
	w := &fpWriter{w: bufio.NewWriterSize(io.MultiWriter(nf, crc), 1<<20), index: make([]FP, 0, (total+diskPageFPs-1)/diskPageFPs), filter: grown}
	r := &fpReader{left: s.onDisk}
	if s.f != nil {
		r.r = bufio.NewReaderSize(io.NewSectionReader(s.f, 0, 1<<62), 1<<20)
	}
	d, err := r.next()
	for _, x := range mem {
		for err == nil && r.ok && cmpFP(d, x) < 0 {
			w.put(d)
			d, err = r.next()
		}
		w.put(x) // never equal to d: the table holds no fingerprint of the file
	}
	for err == nil && r.ok {
		w.put(d)
		d, err = r.next()
	}
	if err == nil {
		err = w.w.Flush()
	}
	if err == nil {
		err = nf.Sync()
	}
	if err == nil {
		err = os.Rename(name+".new", name)
	}
	if err != nil {
		nf.Close()
		return fmt.Errorf("visited set on disk: merge into %s: %w", name, err)
	}
	unmapFile(s.mapped)
	if s.f != nil {
		s.f.Close() // renamed over: its blocks are freed now
	}
	s.f, s.index, s.onDisk, s.crc = nf, w.index, total, crc.Sum32()
	if grown != nil {
		s.filter = grown
	}
	s.mapped = diskMapFile(nf, w.bytes())
	clear(s.slots)
	s.count = 0
	s.merges++
	return nil
}

// fpWriter writes fingerprints in pages and records the first of each (and
// adds each to filter, if there is one).
type fpWriter struct {
	w      *bufio.Writer
	n      int64
	index  []FP
	filter *bloom
	b      [fpBytes]byte
	pad    [diskPageBytes - diskPageFPs*fpBytes]byte
}

func (w *fpWriter) put(x FP) {
	k := w.n % diskPageFPs
	if k == 0 {
		if w.n > 0 {
			w.w.Write(w.pad[:]) // errors come back from Flush
		}
		w.index = append(w.index, x)
	}
	if w.filter != nil {
		w.filter.add(x)
	}
	putFP(w.b[:], x)
	w.w.Write(w.b[:])
	w.n++
}

// bytes is the length of what w wrote: full pages, padded but the last.
func (w *fpWriter) bytes() int64 {
	if w.n == 0 {
		return 0
	}
	full := (w.n - 1) / diskPageFPs
	return full*diskPageBytes + (w.n-full*diskPageFPs)*fpBytes
}

// fpReader reads the fingerprints of the file in order.
type fpReader struct {
	r    *bufio.Reader
	n    int64 // read so far
	left int64
	ok   bool // the last next returned a fingerprint
	b    [diskPageBytes - diskPageFPs*fpBytes]byte
}

func (r *fpReader) next() (FP, error) {
	if r.left == 0 {
		r.ok = false
		return FP{}, nil
	}
	if r.n > 0 && r.n%diskPageFPs == 0 {
		if _, err := io.ReadFull(r.r, r.b[:]); err != nil {
			return FP{}, err
		}
	}
	var b [fpBytes]byte
	if _, err := io.ReadFull(r.r, b[:]); err != nil {
		return FP{}, err
	}
	r.n++
	r.left--
	r.ok = true
	return getFP(b[:]), nil
}

// flush merges the table into the file, so that the file holds every
// fingerprint of the set (a checkpoint saves the file alone).
func (s *Disk) flush() error {
	if s.count == 0 {
		return nil
	}
	return s.merge()
}

// fileName is the path of the sorted file (which flush makes complete).
func (s *Disk) fileName() string { return filepath.Join(s.dir, "fps") }

// OpenDisk is NewDisk holding the n fingerprints of the sorted
// file src (a checkpoint's), which it links, or copies, into its own
// directory; src is never written. The file is read once, in order, to
// rebuild the page index and to check that it holds exactly n strictly
// increasing fingerprints with CRC-32C crc: a damaged or foreign file is
// refused (an *UnusableError).
func OpenDisk(dir string, capacity int, maxBytes uint64, src string, n int64, crc uint32) (*Disk, error) {
	s, err := NewDisk(dir, capacity, maxBytes)
	if err != nil {
		return nil, err
	}
	if err := s.adopt(src, n, crc); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Disk) adopt(src string, n int64, want uint32) error {
	name := s.fileName()
	if err := linkOrCopy(src, name); err != nil {
		return err
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	s.f = f
	// Page by page: the index takes each page's first fingerprint.
	crc := crc32.New(castagnoli)
	r := bufio.NewReaderSize(io.TeeReader(f, crc), 1<<20)
	page := make([]byte, diskPageBytes)
	s.filter = newBloom(s.filterCapacity(n))
	var prev FP
	var size int64
	for left := n; left > 0; {
		k := min(left, diskPageFPs)
		b := page[:k*fpBytes]
		if left > diskPageFPs {
			b = page // a full page, padded
		}
		if _, err := io.ReadFull(r, b); errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Unusable("%s: %d fingerprints expected, reading the %dth: %v", src, n, n-left+1, err)
		} else if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		for j := range int(k) {
			x := getFP(b[j*fpBytes:])
			if x == (FP{}) || (left < n || j > 0) && cmpFP(prev, x) >= 0 {
				return Unusable("%s: fingerprint %d is out of order: not a visited-set file", src, n-left+int64(j)+1)
			}
			prev = x
			s.filter.add(x)
		}
		s.index = append(s.index, getFP(b))
		size += int64(len(b))
		left -= k
	}
	if _, err := r.ReadByte(); err == nil {
		return Unusable("%s: more than %d fingerprints (%d bytes): not this checkpoint's file", src, n, size)
	} else if err != io.EOF {
		return fmt.Errorf("%s: %w", src, err)
	}
	if crc.Sum32() != want {
		return Unusable("%s: checksum %08x, the checkpoint says %08x: damaged", src, crc.Sum32(), want)
	}
	s.onDisk, s.crc = n, want
	s.mapped = diskMapFile(f, size)
	return nil
}

// linkOrCopy makes dst a hard link to src, or, where the two are on
// different file systems, a copy: written to dst.tmp, fsynced, renamed; a
// failed copy leaves nothing behind.
func linkOrCopy(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if err = errors.Join(err, out.Close()); err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
