package store

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Checkpoint is what a depth-first run with check's Config.Checkpoint
// saves so that a later run, in another process, continues it instead of
// starting over (docs/design/visited-set.md, "Checkpoints"), as TLC's -recover does. Depth-first
// search keeps little besides the visited set: the path from the initial
// state, with the index of the next action to try in each of its states,
// and the counts so far. The visited set is the disk set's sorted file
// (Config.DiskDir), saved as a hard link after a merge of the table into
// it; the states on the path are rebuilt by replaying their actions. At a
// checkpoint every visited state is either on the path or fully explored,
// so the continued run explores exactly the states the uninterrupted run
// would, in the same order, with the same counts and verdict.
type Checkpoint struct {
	Version int    `json:"version"`
	Key     string `json:"key"`
	// FPs is the fingerprint file in the checkpoint's directory, OnDisk
	// its number of fingerprints.
	FPs    string `json:"fps"`
	OnDisk int64  `json:"on_disk"`
	FPsCRC uint32 `json:"fps_crc32c"`

	States      int64 `json:"states"`
	Transitions int64 `json:"transitions"`
	Depth       int   `json:"depth"`
	BudgetStops int64 `json:"budget_stops"`
	// Stack is the path, from the initial state.
	Stack []Frame `json:"stack"`
	// Pending is the action into a state visited but not yet entered (a
	// limit stopped the run between the two), or the search's code for none.
	Pending uint32 `json:"pending"`
	// Undecided is the first budget stop left undecided, if any.
	Undecided *[2]string `json:"undecided,omitempty"`

	// Machines and Messages count the keys of the interning tables saved
	// in the files of those names (tables).
	Machines KeyCount `json:"machines"`
	Messages KeyCount `json:"messages"`

	// Parts and Seconds count the runs that made the checkpoint.
	Parts   int     `json:"parts"`
	Seconds float64 `json:"seconds"`
}

// Frame is a state of the path: the action into it (the code root of
// Load at the initial state), the index of its next action to try, and its fingerprint,
// which the replay must reach.
type Frame struct {
	Act  uint32    `json:"act"`
	Next int       `json:"next"`
	FP   [2]uint64 `json:"fp"`
}

// KeyCount is how many keys of a table a checkpoint saved, and the length
// of their file.
type KeyCount struct {
	N     uint32 `json:"n"`
	Bytes int64  `json:"bytes"`
	CRC   uint32 `json:"crc32c"` // of the file's first Bytes bytes
}

const (
	version  = 1
	jsonFile = "checkpoint.json"
	lockFile = "lock"
	// maxJSON bounds what is read: the path of a deep run is
	// some hundreds of frames of about 120 bytes.
	maxJSON = 4 << 20
)

// fpsName is the form of the fingerprint file's name.
var fpsName = regexp.MustCompile(`^fps-[0-9]+-[0-9]+$`)

// TableFiles name the files of the interning tables' keys (AppendKeys,
// ReadKeys).
var TableFiles = [2]string{"machines", "messages"}

// isFPsFile reports whether name is a fingerprint file, or the temporary
// file of a copy of one.
func isFPsFile(name string) bool { return fpsName.MatchString(strings.TrimSuffix(name, ".tmp")) }

// isCheckpointFile reports whether name is one of a checkpoint's files
// (its lock file is not: it stays while a run may hold it).
func isCheckpointFile(name string) bool {
	return strings.HasPrefix(name, jsonFile) || name == TableFiles[0] || name == TableFiles[1] || isFPsFile(name)
}

// Load reads dir's checkpoint: nil when there is none, an error (an
// *UnusableError) when there is one that this run cannot continue: of
// another version, of another check than key, or damaged (its path must
// start with the action code root). A directory without a checkpoint must
// hold nothing but what a first save left unfinished: a checkpoint's files
// are removed when its run ends.
func Load(dir, key string, root uint32) (*Checkpoint, error) {
	f, err := os.Open(filepath.Join(dir, jsonFile))
	if errors.Is(err, os.ErrNotExist) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, ent := range ents {
			if n := ent.Name(); n != lockFile && !isCheckpointFile(n) {
				return nil, Unusable("%s holds %s and no checkpoint: give a directory of the checkpoint's own (its files are removed when the run ends)", dir, n)
			}
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJSON+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxJSON {
		return nil, Unusable("%s is larger than %d MB: not a checkpoint", f.Name(), maxJSON>>20)
	}
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, Unusable("%s: %v", f.Name(), err)
	}
	if c.Version != version {
		return nil, Unusable("%s: version %d, this critsec reads version %d", f.Name(), c.Version, version)
	}
	if k := key; c.Key != k {
		return nil, Unusable("%s is the checkpoint of another check (%s): give another directory, or remove it to start over", f.Name(), keyDiff(c.Key, k))
	}
	if !fpsName.MatchString(c.FPs) || c.OnDisk < 1 || c.States != c.OnDisk || len(c.Stack) == 0 || c.Stack[0].Act != root {
		return nil, Unusable("%s is damaged (fps %q, %d on disk, %d states, %d frames)", f.Name(), c.FPs, c.OnDisk, c.States, len(c.Stack))
	}
	if fi, err := os.Lstat(filepath.Join(dir, c.FPs)); err != nil || !fi.Mode().IsRegular() {
		return nil, Unusable("%s is damaged: its file %s is missing or not a regular file (%v)", f.Name(), c.FPs, err)
	}
	return &c, nil
}

// keyDiff names the first part (between " | ") where a checkpoint's key,
// saved, differs from this run's.
func keyDiff(saved, this string) string {
	a, b := strings.Split(saved, " | "), strings.Split(this, " | ")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("saved: %s; this run: %s", a[i], b[i])
		}
	}
	return fmt.Sprintf("saved: %s; this run: %s", saved, this)
}

// AppendKeys appends the keys of ids saved.N to n-1 (key(id) each) to the
// table file name, after its first saved.Bytes bytes (past them is what a
// save interrupted by a crash wrote), fsynced, and returns the new count.
func AppendKeys(name string, saved KeyCount, n uint32, key func(id uint32) []byte) (KeyCount, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return saved, err
	}
	err = f.Truncate(saved.Bytes)
	var buf []byte
	for id := saved.N; id < n && err == nil; id++ {
		k := key(id)
		buf = append(binary.AppendUvarint(buf, uint64(len(k))), k...)
		if len(buf) >= 1<<20 || id == n-1 {
			saved.CRC = crc32.Update(saved.CRC, castagnoli, buf)
			_, err = f.WriteAt(buf, saved.Bytes)
			saved.Bytes += int64(len(buf))
			buf = buf[:0]
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return saved, err
	}
	saved.N = n
	return saved, nil
}

// maxKeyBytes bounds a key of a table file.
const maxKeyBytes = 1 << 20

// ReadKeys reads the first want.N keys of a table file, which must take
// want.Bytes bytes with checksum want.CRC.
func ReadKeys(name string, want KeyCount) ([]string, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, Unusable("%s is missing: damaged", name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < want.Bytes || want.Bytes < 0 || int64(want.N) > want.Bytes {
		return nil, Unusable("%s: shorter than the %d bytes of %d keys the checkpoint says (%v): damaged", name, want.Bytes, want.N, err)
	}
	crc := crc32.New(castagnoli)
	r := bufio.NewReader(io.TeeReader(io.LimitReader(f, want.Bytes), crc))
	keys := make([]string, 0, want.N)
	// A read of the file fails with a *fs.PathError (an I/O error);
	// anything else is what the file holds.
	for range want.N {
		n, err := binary.ReadUvarint(r)
		if err == nil && (n == 0 || n > maxKeyBytes) {
			err = fmt.Errorf("a key of %d bytes", n)
		}
		var b []byte
		if err == nil {
			b = make([]byte, n)
			_, err = io.ReadFull(r, b)
		}
		var ioErr *fs.PathError
		if errors.As(err, &ioErr) {
			return nil, err
		}
		if err != nil {
			return nil, Unusable("%s: key %d of %d: %v: damaged", name, len(keys), want.N, err)
		}
		keys = append(keys, string(b))
	}
	if _, err := r.ReadByte(); err != io.EOF || crc.Sum32() != want.CRC {
		return nil, Unusable("%s: %d keys do not take the %d bytes with checksum %08x the checkpoint says: damaged", name, want.N, want.Bytes, want.CRC)
	}
	return keys, nil
}

// Save writes c into dir, whose current checkpoint's file is
// current ("" for none): it removes any other fingerprint file (left by a
// failed save), then links (or copies) the visited set's file under a name
// of its count, makes that and the table files durable with the
// directory, then replaces checkpoint.json by an atomic rename and removes
// the earlier checkpoint's file. A crash at any point leaves the earlier or
// the new checkpoint whole.
func Save(dir, current string, disk *Disk, c *Checkpoint) error {
	if err := removeFPs(dir, current); err != nil {
		return err
	}
	if err := disk.flush(); err != nil {
		return err
	}
	c.Version = version
	c.OnDisk, c.FPsCRC = disk.onDisk, disk.crc
	c.FPs = fmt.Sprintf("fps-%d-%d", c.Parts, c.States)
	if c.FPs == current {
		return fmt.Errorf("checkpoint %s: a save of %d states by run %d already exists", dir, c.States, c.Parts)
	}
	name := filepath.Join(dir, c.FPs)
	if err := linkOrCopy(disk.fileName(), name); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "\t")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, jsonFile+".new")
	if err := writeSynced(tmp, append(b, '\n')); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, jsonFile)); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := removeFPs(dir, c.FPs); err != nil {
		return err
	}
	Saved(dir)
	return nil
}

// Saved is called after each save; tests replace it to copy a checkpoint
// a run saved on its way.
var Saved = func(dir string) {}

// removeFPs removes dir's fingerprint files (and the temporary files of
// failed copies) but keep ("" keeps none).
func removeFPs(dir, keep string) error {
	return removeIn(dir, func(n string) bool { return isFPsFile(n) && n != keep })
}

// Remove removes the checkpoint in dir but its lock file.
func Remove(dir string) error { return removeIn(dir, isCheckpointFile) }

// removeIn removes the files of dir whose names match.
func removeIn(dir string, match func(name string) bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, ent := range ents {
		if match(ent.Name()) {
			errs = append(errs, os.Remove(filepath.Join(dir, ent.Name())))
		}
	}
	return errors.Join(errs...)
}

func writeSynced(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// syncDir makes a rename in dir durable (not possible, nor needed, on
// Windows).
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
