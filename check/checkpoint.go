package check

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
	"time"
)

// A checkpoint is what a depth-first run with Config.Checkpoint saves so
// that a later run, in another process, continues it instead of starting
// over (docs/design/visited-set.md, "Checkpoints"), as TLC's -recover does. Depth-first
// search keeps little besides the visited set: the path from the initial
// state, with the index of the next action to try in each of its states,
// and the counts so far. The visited set is the disk set's sorted file
// (Config.DiskDir), saved as a hard link after a merge of the table into
// it; the states on the path are rebuilt by replaying their actions. At a
// checkpoint every visited state is either on the path or fully explored,
// so the continued run explores exactly the states the uninterrupted run
// would, in the same order, with the same counts and verdict.
type checkpoint struct {
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
	Stack []savedFrame `json:"stack"`
	// Pending is the action into a state visited but not yet entered (a
	// limit stopped the run between the two), or noAction.
	Pending uint32 `json:"pending"`
	// Undecided is the first budget stop left undecided, if any.
	Undecided *[2]string `json:"undecided,omitempty"`

	// Machines and Messages count the keys of the interning tables saved
	// in the files of those names (tables).
	Machines keyCount `json:"machines"`
	Messages keyCount `json:"messages"`

	// Parts and Seconds count the runs that made the checkpoint.
	Parts   int     `json:"parts"`
	Seconds float64 `json:"seconds"`
}

// savedFrame is a state of the path: the action into it (noAction at the
// initial state), the index of its next action to try, and its fingerprint,
// which the replay must reach.
type savedFrame struct {
	Act  uint32    `json:"act"`
	Next int       `json:"next"`
	FP   [2]uint64 `json:"fp"`
}

// keyCount is how many keys of a table a checkpoint saved, and the length
// of their file.
type keyCount struct {
	N     uint32 `json:"n"`
	Bytes int64  `json:"bytes"`
	CRC   uint32 `json:"crc32c"` // of the file's first Bytes bytes
}

const (
	checkpointVersion = 1
	checkpointJSON    = "checkpoint.json"
	checkpointLock    = "lock"
	// checkpointMaxJSON bounds what is read: the path of a deep run is
	// some hundreds of frames of about 120 bytes.
	checkpointMaxJSON = 4 << 20
)

// fpsName is the form of the fingerprint file's name.
var fpsName = regexp.MustCompile(`^fps-[0-9]+-[0-9]+$`)

// tableFiles name the files of the interning tables' keys (tables).
var tableFiles = [2]string{"machines", "messages"}

// isFPsFile reports whether name is a fingerprint file, or the temporary
// file of a copy of one.
func isFPsFile(name string) bool { return fpsName.MatchString(strings.TrimSuffix(name, ".tmp")) }

// isCheckpointFile reports whether name is one of a checkpoint's files
// (its lock file is not: it stays while a run may hold it).
func isCheckpointFile(name string) bool {
	return strings.HasPrefix(name, checkpointJSON) || name == tableFiles[0] || name == tableFiles[1] || isFPsFile(name)
}

// checkpointError is a checkpoint this run cannot continue: another
// check's, or damaged (Run reports it as ErrConfig, exit status 2 in the
// CLI; an I/O error reading a checkpoint is not one).
type checkpointError struct{ msg string }

func (e *checkpointError) Error() string { return e.msg }

func unusable(format string, args ...any) error {
	return &checkpointError{fmt.Sprintf(format, args...)}
}

// DefaultCheckpointEvery is the interval between two saves of a run with
// Config.Checkpoint and no Config.CheckpointEvery.
const DefaultCheckpointEvery = 10 * time.Minute

// Resumption describes the earlier runs a run continued (Result.Resumed).
type Resumption struct {
	// States and Transitions are the counts at the checkpoint.
	States, Transitions int64
	// Parts is how many runs made the checkpoint; Seconds their time.
	Parts   int
	Seconds float64
}

// validateCheckpoint checks Config.Checkpoint and CheckpointEvery.
func (c Config) validateCheckpoint() error {
	switch {
	case c.Checkpoint == "" && c.CheckpointEvery != 0:
		return fmt.Errorf("check: CheckpointEvery needs Checkpoint")
	case c.Checkpoint == "":
		return nil
	case c.DiskDir == "":
		return fmt.Errorf("check: Checkpoint needs DiskDir (a checkpoint saves the visited set's file on disk)")
	case c.CheckpointEvery < 0:
		return fmt.Errorf("check: CheckpointEvery = %v is out of range: need >= 0", c.CheckpointEvery)
	}
	if err := ValidateDiskDir(c.Checkpoint); err != nil {
		return fmt.Errorf("check: Checkpoint %q is not a writable directory: %v", c.Checkpoint, err)
	}
	return nil
}

// checkpointKey identifies the check a checkpoint belongs to: the caller's
// CheckpointID (the algorithm and its options, which the initial state does
// not always tell apart), the initial state's fingerprint, and everything in
// Config that shapes the explored graph or a verdict. Limits and the sizes of
// tables may differ between parts.
func (e *explorer) checkpointKey() string {
	c := e.cfg
	det := "none"
	if c.Detector != nil {
		det = c.Detector.Name()
	}
	fp := fingerprintOf(e.root)
	budget := fmt.Sprint(c.Budget)
	if c.Budgets != nil {
		budget = fmt.Sprint(c.Budgets)
	}
	return fmt.Sprintf("%s | initial state %016x%016x | budget %s, unordered %v, crashes %d, detector %s, por %v, deadlock states %d | property %v",
		c.CheckpointID, fp.a, fp.b, budget, c.Unordered, c.Crashes, det, c.PartialOrder, c.DeadlockStates, *c.Property)
}

// loadCheckpoint reads dir's checkpoint: nil when there is none, an error
// when there is one that this run cannot continue. A directory without a
// checkpoint must hold nothing but what a first save left unfinished: a
// checkpoint's files are removed when its run ends.
func (e *explorer) loadCheckpoint(dir string) (*checkpoint, error) {
	f, err := os.Open(filepath.Join(dir, checkpointJSON))
	if errors.Is(err, os.ErrNotExist) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, ent := range ents {
			if n := ent.Name(); n != checkpointLock && !isCheckpointFile(n) {
				return nil, unusable("%s holds %s and no checkpoint: give a directory of the checkpoint's own (its files are removed when the run ends)", dir, n)
			}
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, checkpointMaxJSON+1))
	if err != nil {
		return nil, err
	}
	if len(b) > checkpointMaxJSON {
		return nil, unusable("%s is larger than %d MB: not a checkpoint", f.Name(), checkpointMaxJSON>>20)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, unusable("%s: %v", f.Name(), err)
	}
	if c.Version != checkpointVersion {
		return nil, unusable("%s: version %d, this critsec reads version %d", f.Name(), c.Version, checkpointVersion)
	}
	if k := e.checkpointKey(); c.Key != k {
		return nil, unusable("%s is the checkpoint of another check (%s): give another directory, or remove it to start over", f.Name(), keyDiff(c.Key, k))
	}
	if !fpsName.MatchString(c.FPs) || c.OnDisk < 1 || c.States != c.OnDisk || len(c.Stack) == 0 || c.Stack[0].Act != noAction {
		return nil, unusable("%s is damaged (fps %q, %d on disk, %d states, %d frames)", f.Name(), c.FPs, c.OnDisk, c.States, len(c.Stack))
	}
	if fi, err := os.Lstat(filepath.Join(dir, c.FPs)); err != nil || !fi.Mode().IsRegular() {
		return nil, unusable("%s is damaged: its file %s is missing or not a regular file (%v)", f.Name(), c.FPs, err)
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

// The interning tables. A state's fingerprint hashes the ids of its
// machines and messages, which a run assigns in the order it meets their
// contents (intern.go): a continued run must give every content the id the
// saved run gave it, or its fingerprints would not match the saved ones. A
// checkpoint therefore saves each table's keys in id order, in a file
// appended to at every save ("machines", "messages"); the continued run
// checks the ids it has already assigned (the initial state's, the same in
// every run) against them and reserves the others for their keys.
const maxKeyBytes = 1 << 20

// keyTable is one interning table as a checkpoint sees it: its file, its
// number of ids, the key of an id, and reserve.
type keyTable struct {
	file    string
	n       uint32
	key     func(id uint32) []byte
	reserve func(keys []string) error
}

// keyTables returns the machine and the message table, in tableFiles'
// order.
func (e *explorer) keyTables() [2]keyTable {
	t := e.x.tab
	return [2]keyTable{
		{tableFiles[0], t.machines.n, func(id uint32) []byte { return machineKey(nil, t.machine(id).m) }, t.machines.reserve},
		{tableFiles[1], t.msgs.n, func(id uint32) []byte { return t.msg(id).enc }, t.msgs.reserve},
	}
}

// saveTables appends the keys of the ids not saved yet to dir's table
// files, fsynced, and returns the new counts.
func (e *explorer) saveTables(dir string, saved [2]keyCount) ([2]keyCount, error) {
	for i, tb := range e.keyTables() {
		f, err := os.OpenFile(filepath.Join(dir, tb.file), os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return saved, err
		}
		// Past the saved length is what a save interrupted by a crash wrote.
		err = f.Truncate(saved[i].Bytes)
		var buf []byte
		for id := saved[i].N; id < tb.n && err == nil; id++ {
			k := tb.key(id)
			buf = append(binary.AppendUvarint(buf, uint64(len(k))), k...)
			if len(buf) >= 1<<20 || id == tb.n-1 {
				saved[i].CRC = crc32.Update(saved[i].CRC, castagnoli, buf)
				_, err = f.WriteAt(buf, saved[i].Bytes)
				saved[i].Bytes += int64(len(buf))
				buf = buf[:0]
			}
		}
		if err == nil {
			err = f.Sync()
		}
		if err = errors.Join(err, f.Close()); err != nil {
			return saved, err
		}
		saved[i].N = tb.n
	}
	return saved, nil
}

// seedTables reads dir's table files as far as c counts them, checks the
// ids this run has assigned, and reserves the others.
func (e *explorer) seedTables(dir string, c *checkpoint) error {
	counts := [2]keyCount{c.Machines, c.Messages}
	for i, tb := range e.keyTables() {
		keys, err := readKeys(filepath.Join(dir, tb.file), counts[i])
		if err != nil {
			return err
		}
		if uint32(len(keys)) < tb.n {
			return unusable("%s: %d keys, but this check starts with %d: the checkpoint of another check", tb.file, len(keys), tb.n)
		}
		for id := range tb.n {
			if keys[id] != string(tb.key(id)) {
				return unusable("%s: key %d differs from this check's: the checkpoint of another check", tb.file, id)
			}
		}
		if err := tb.reserve(keys); err != nil {
			return unusable("%s: %v: damaged", tb.file, err)
		}
	}
	e.savedKeys = counts
	return nil
}

// readKeys reads the first want.N keys of a table file, which must take
// want.Bytes bytes with checksum want.CRC.
func readKeys(name string, want keyCount) ([]string, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, unusable("%s is missing: damaged", name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < want.Bytes || want.Bytes < 0 || int64(want.N) > want.Bytes {
		return nil, unusable("%s: shorter than the %d bytes of %d keys the checkpoint says (%v): damaged", name, want.Bytes, want.N, err)
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
			return nil, unusable("%s: key %d of %d: %v: damaged", name, len(keys), want.N, err)
		}
		keys = append(keys, string(b))
	}
	if _, err := r.ReadByte(); err != io.EOF || crc.Sum32() != want.CRC {
		return nil, unusable("%s: %d keys do not take the %d bytes with checksum %08x the checkpoint says: damaged", name, want.N, want.Bytes, want.CRC)
	}
	return keys, nil
}

// saveCheckpoint writes c into dir, whose current checkpoint's file is
// current ("" for none): it removes any other fingerprint file (left by a
// failed save), then links (or copies) the visited set's file under a name
// of its count, makes that and the table files durable with the
// directory, then replaces checkpoint.json by an atomic rename and removes
// the earlier checkpoint's file. A crash at any point leaves the earlier or
// the new checkpoint whole.
func saveCheckpoint(dir, current string, disk *diskFPSet, c *checkpoint) error {
	if err := removeFPs(dir, current); err != nil {
		return err
	}
	if err := disk.flush(); err != nil {
		return err
	}
	c.Version = checkpointVersion
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
	tmp := filepath.Join(dir, checkpointJSON+".new")
	if err := writeSynced(tmp, append(b, '\n')); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, checkpointJSON)); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := removeFPs(dir, c.FPs); err != nil {
		return err
	}
	checkpointSaved(dir)
	return nil
}

// checkpointSaved is called after each save; tests replace it to copy a
// checkpoint a run saved on its way.
var checkpointSaved = func(dir string) {}

// removeFPs removes dir's fingerprint files (and the temporary files of
// failed copies) but keep ("" keeps none).
func removeFPs(dir, keep string) error {
	return removeIn(dir, func(n string) bool { return isFPsFile(n) && n != keep })
}

// RemoveCheckpoint removes the checkpoint in dir (Config.Checkpoint) but
// its lock file: a caller does so once it has kept the result of a run
// that spent it (Result.CheckpointSpent). Left in place, a spent
// checkpoint is only continued to the same end again.
func RemoveCheckpoint(dir string) error { return removeIn(dir, isCheckpointFile) }

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
