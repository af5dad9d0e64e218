package check

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/critsec/critsec/check/internal/store"
)

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
		return needs("CheckpointEvery", "Checkpoint", "")
	case c.Checkpoint == "":
		return nil
	case c.DiskDir == "":
		return needs("Checkpoint", "DiskDir", "a checkpoint saves the visited set's file on disk")
	case c.CheckpointEvery < 0:
		return outOfRangeOr0("CheckpointEvery", c.CheckpointEvery, "need > 0", "DefaultCheckpointEvery")
	}
	if err := store.ValidateDir(c.Checkpoint); err != nil {
		return &FieldError{Field: "Checkpoint", Value: c.Checkpoint, Why: "is not a writable directory: " + err.Error()}
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

// The interning tables. A state's fingerprint hashes the ids of its
// machines and messages, which a run assigns in the order it meets their
// contents (intern.go): a continued run must give every content the id the
// saved run gave it, or its fingerprints would not match the saved ones. A
// checkpoint therefore saves each table's keys in id order, in a file
// appended to at every save ("machines", "messages"); the continued run
// checks the ids it has already assigned (the initial state's, the same in
// every run) against them and reserves the others for their keys.

// keyTable is one interning table as a checkpoint sees it: its file, its
// number of ids, the key of an id, and reserve.
type keyTable struct {
	file    string
	n       uint32
	key     func(id uint32) []byte
	reserve func(keys []string) error
}

// keyTables returns the machine and the message table, in store.TableFiles'
// order.
func (e *explorer) keyTables() [2]keyTable {
	t := e.x.tab
	return [2]keyTable{
		{store.TableFiles[0], t.machines.n, func(id uint32) []byte { return machineKey(nil, t.machine(id).m) }, t.machines.reserve},
		{store.TableFiles[1], t.msgs.n, func(id uint32) []byte { return t.msg(id).enc }, t.msgs.reserve},
	}
}

// saveTables appends the keys of the ids not saved yet to dir's table
// files, fsynced, and returns the new counts.
func (e *explorer) saveTables(dir string, saved [2]store.KeyCount) ([2]store.KeyCount, error) {
	for i, tb := range e.keyTables() {
		var err error
		if saved[i], err = store.AppendKeys(filepath.Join(dir, tb.file), saved[i], tb.n, tb.key); err != nil {
			return saved, err
		}
	}
	return saved, nil
}

// seedTables reads dir's table files as far as c counts them, checks the
// ids this run has assigned, and reserves the others.
func (e *explorer) seedTables(dir string, c *store.Checkpoint) error {
	counts := [2]store.KeyCount{c.Machines, c.Messages}
	for i, tb := range e.keyTables() {
		keys, err := store.ReadKeys(filepath.Join(dir, tb.file), counts[i])
		if err != nil {
			return err
		}
		if uint32(len(keys)) < tb.n {
			return store.Unusable("%s: %d keys, but this check starts with %d: the checkpoint of another check", tb.file, len(keys), tb.n)
		}
		for id := range tb.n {
			if keys[id] != string(tb.key(id)) {
				return store.Unusable("%s: key %d differs from this check's: the checkpoint of another check", tb.file, id)
			}
		}
		if err := tb.reserve(keys); err != nil {
			return store.Unusable("%s: %v: damaged", tb.file, err)
		}
	}
	e.savedKeys = counts
	return nil
}

// RemoveCheckpoint removes the checkpoint in dir (Config.Checkpoint) but
// its lock file: a caller does so once it has kept the result of a run
// that spent it (Result.CheckpointSpent). Left in place, a spent
// checkpoint is only continued to the same end again.
func RemoveCheckpoint(dir string) error { return store.Remove(dir) }
