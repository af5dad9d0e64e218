// Package wal is a write-ahead log: one append-only file of records, each
// framed by its length and a CRC-32C checksum, appended in groups with one
// fsync per group (group commit). It keeps the inputs of a networked
// node's machine (docs/network.md, "Durability").
//
// A record is a 4-byte little-endian length L (1 <= L <= MaxRecord), the
// 4-byte little-endian CRC-32C (Castagnoli) of the payload, and the L
// bytes of the payload. Open reads every record back in order. A crash
// in the middle of an append leaves a torn tail: a last record cut short,
// or bytes the file system extended with zeros. Open cuts such a tail off
// (nothing in it was acknowledged, since a group is acknowledged only
// after its fsync). A record that fails its checksum with records after
// it is corruption, not a crash: Open refuses the log with ErrCorrupt.
package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// MaxRecord is the largest payload of a record.
const MaxRecord = 16 << 20

// headerLen is the length of a record's frame before its payload.
const headerLen = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrLocked: another process has the log open (Open takes an exclusive
// lock, which the kernel releases when the process dies).
var ErrLocked = errors.New("log in use by another process")

// ErrCorrupt: a record before the log's end is damaged (checksum or
// length wrong with more data after it). The log cannot be repaired
// without losing records that may have been acknowledged.
var ErrCorrupt = errors.New("log corrupt")

// Log is an open log, positioned at its end for appending. It is not safe
// for concurrent use: one goroutine (a node's driver) appends and
// commits.
type Log struct {
	f    *os.File
	path string
	sync bool
	buf  []byte
	err  error // a failed write: the file's end is unknown, the log is unusable

	// Records counts the records in the log; Syncs the fsyncs of commits
	// and SyncTime their total duration.
	Records  int
	Syncs    int
	SyncTime time.Duration
}

// Recovery says what Open found.
type Recovery struct {
	// Records is the number of records read back.
	Records int
	// Torn is the number of bytes cut off the end (a torn tail), 0 if the
	// log ended cleanly.
	Torn int64
	// Created reports that the file did not exist.
	Created bool
}

// Open opens the log at path, creating it (and its directory) if needed,
// locks it against other processes (ErrLocked),
// gives every record's payload to read in order, cuts off a torn tail and
// returns the log ready to append. read's slice is valid only during the
// call; an error from read stops Open and is returned wrapped with the
// record's position. With sync, Commit fsyncs the file; without, a commit
// survives the process's death (kill -9) but not the machine's.
func Open(path string, sync bool, read func(rec []byte) error) (*Log, Recovery, error) {
	var rc Recovery
	if err := mkdirAll(filepath.Dir(path)); err != nil {
		return nil, rc, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		rc.Created = true
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, rc, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, rc, fmt.Errorf("%w: %s: is this node already running?", ErrLocked, path)
		}
		return nil, rc, fmt.Errorf("%s: lock: %w", path, err)
	}
	if err := os.Remove(path + newSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		f.Close()
		return nil, rc, fmt.Errorf("%s: removing the rewrite a crash left: %w", path, err)
	}
	if rc.Created {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, rc, err
		}
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, rc, err
		}
	}
	end, n, err := scan(f, path, read)
	if err != nil {
		f.Close()
		return nil, rc, err
	}
	rc.Records = n
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, rc, err
	}
	if st.Size() > end {
		rc.Torn = st.Size() - end
		err := f.Truncate(end)
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return nil, rc, fmt.Errorf("%s: cutting off a torn tail of %d bytes: %w", path, rc.Torn, err)
		}
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		f.Close()
		return nil, rc, err
	}
	return &Log{f: f, path: path, sync: sync, Records: n}, rc, nil
}

// Read reads the log at path without changing it (a torn tail is
// counted in Recovery.Torn, not cut off), giving every record's payload
// to read in order, as Open does.
func Read(path string, read func(rec []byte) error) (Recovery, error) {
	var rc Recovery
	f, err := os.Open(path)
	if err != nil {
		return rc, err
	}
	defer f.Close()
	end, n, err := scan(f, path, read)
	if err != nil {
		return rc, err
	}
	st, err := f.Stat()
	if err != nil {
		return rc, err
	}
	rc.Records, rc.Torn = n, st.Size()-end
	return rc, nil
}

// scan reads the records of f from its start and returns the offset just
// after the last good one and their number.
func scan(f *os.File, path string, read func([]byte) error) (end int64, n int, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size := st.Size()
	r := bufio.NewReaderSize(f, 1<<16)
	var h [headerLen]byte
	var rec []byte
	for {
		k, err := io.ReadFull(r, h[:])
		switch {
		case k == 0 && err == io.EOF:
			return end, n, nil
		case err == io.ErrUnexpectedEOF:
			return end, n, nil // a header cut short: torn
		case err != nil:
			return 0, 0, err
		}
		length := binary.LittleEndian.Uint32(h[0:4])
		sum := binary.LittleEndian.Uint32(h[4:8])
		why := ""
		if length == 0 || length > MaxRecord {
			why = fmt.Sprintf("length %d outside 1..%d", length, MaxRecord)
		} else {
			if cap(rec) < int(length) {
				rec = make([]byte, length)
			}
			rec = rec[:length]
			if _, err := io.ReadFull(r, rec); err == io.ErrUnexpectedEOF || err == io.EOF {
				return end, n, nil // a payload cut short: torn
			} else if err != nil {
				return 0, 0, err
			}
			if crc32.Checksum(rec, castagnoli) != sum {
				why = "checksum mismatch"
			}
		}
		if why != "" {
			torn, err := tornAt(f, end, int64(length), size)
			if err != nil {
				return 0, 0, err
			}
			if torn {
				return end, n, nil
			}
			return 0, 0, fmt.Errorf("%w: %s: record %d at byte %d: %s, and %d bytes follow it: the log is damaged before its end "+
				"(not a torn write); restore the data directory from a copy, or remove it only if this node may rejoin with no memory",
				ErrCorrupt, path, n+1, end, why, size-end)
		}
		if err := read(rec); err != nil {
			return 0, 0, fmt.Errorf("%s: record %d at byte %d: %w", path, n+1, end, err)
		}
		n++
		end += headerLen + int64(length)
	}
}

// tornAt reports whether the bad record at off is a torn tail: it reaches
// the end of the file (the last append, cut short or not all persisted),
// or everything from off on is zero (the file system extended the file
// and the data never came).
func tornAt(f *os.File, off, length, size int64) (bool, error) {
	if length >= 1 && length <= MaxRecord && off+headerLen+length >= size {
		return true, nil
	}
	r := bufio.NewReader(io.NewSectionReader(f, off, size-off))
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if c != 0 {
			return false, nil
		}
	}
}

// Add appends a record to the group being built; Commit writes it. rec
// must not be empty or longer than MaxRecord.
func (l *Log) Add(rec []byte) error {
	if len(rec) == 0 || len(rec) > MaxRecord {
		return fmt.Errorf("wal: a record of %d bytes: records hold 1 to %d bytes", len(rec), MaxRecord)
	}
	l.buf = binary.LittleEndian.AppendUint32(l.buf, uint32(len(rec)))
	l.buf = binary.LittleEndian.AppendUint32(l.buf, crc32.Checksum(rec, castagnoli))
	l.buf = append(l.buf, rec...)
	l.Records++
	return nil
}

// Commit writes the group of records added since the last commit, in one
// write, and fsyncs the file if the log syncs. Once it returns nil the
// group survives a crash of the process (and, with sync, of the machine).
// After an error the log is unusable.
func (l *Log) Commit() error {
	if l.err != nil {
		return l.err
	}
	if len(l.buf) == 0 {
		return nil
	}
	if _, err := l.f.Write(l.buf); err != nil {
		l.err = fmt.Errorf("wal: %s: %w", l.path, err)
		return l.err
	}
	l.buf = l.buf[:0]
	if l.sync {
		start := time.Now()
		if err := l.f.Sync(); err != nil {
			l.err = fmt.Errorf("wal: %s: fsync: %w", l.path, err)
			return l.err
		}
		l.Syncs++
		l.SyncTime += time.Since(start)
	}
	return nil
}

// Rewrite replaces the log by one holding exactly recs, atomically: a
// crash at any moment leaves either the old log or the new one at path,
// never a mix (compaction: the records of a snapshot replace the records
// it summarises). The new file is written beside the old one (path +
// ".new"), locked, fsynced, renamed over it, and the directory fsynced;
// appends then go to the new file. Records added and not committed are
// dropped. After an error before the rename the old log is unchanged and
// still usable; after one from the rename on, the log is unusable.
func (l *Log) Rewrite(recs [][]byte) error {
	if l.err != nil {
		return l.err
	}
	l.buf = l.buf[:0]
	tmp := l.path + newSuffix
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("wal: rewriting %s: %w", l.path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(err)
	}
	var buf []byte
	for _, rec := range recs {
		if len(rec) == 0 || len(rec) > MaxRecord {
			return fail(fmt.Errorf("a record of %d bytes: records hold 1 to %d bytes", len(rec), MaxRecord))
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rec)))
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(rec, castagnoli))
		buf = append(buf, rec...)
	}
	if _, err := f.Write(buf); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil { // always: the rename must never expose a file not on disk
		return fail(err)
	}
	if err := rewriteHook("renaming"); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return fail(err)
	}
	old := l.f
	l.f, l.Records = f, len(recs)
	old.Close()
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		l.err = fmt.Errorf("wal: rewriting %s: fsync of its directory: %w", l.path, err)
		return l.err
	}
	return nil
}

// newSuffix names the file Rewrite writes before renaming it over the log;
// Open removes one left by a crash.
const newSuffix = ".new"

// rewriteHook is called by Rewrite at its steps; tests make it fail to
// stop a rewrite there, as a crash would.
var rewriteHook = func(step string) error { return nil }

// Err returns why the log is unusable (a failed write, or a rewrite that
// failed after its rename), or nil.
func (l *Log) Err() error { return l.err }

// Close closes the file; records added and not committed are dropped.
func (l *Log) Close() error { return l.f.Close() }

// mkdirAll creates dir and its missing parents, fsyncing each parent that
// gained an entry, so that the log's directory survives a crash.
func mkdirAll(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// syncDir fsyncs a directory, so that its entries (a new file) are
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
