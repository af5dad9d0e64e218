package check

import (
	"fmt"

	"github.com/critsec/critsec/check/internal/store"
)

// The depth-first visited set lives in package store: in memory
// (store.Memory) or, with Config.DiskDir, partly on disk (store.Disk). This
// file is what the search and Config need of it.

// fpOf returns f's first 96 bits, the fingerprint the visited set stores;
// the all-zero value, which marks an empty slot, is mapped to another (a
// bias of 2^-96, far below the collision bound).
func fpOf(f fingerprint) store.FP {
	x := store.FP{uint32(f.a), uint32(f.a >> 32), uint32(f.b)}
	if x == (store.FP{}) {
		x[0] = 1
	}
	return x
}

// ValidateDiskDir checks that dir, a Config.DiskDir, is a directory a run
// can create its own directory in (it removes what it created to find out);
// "" is valid (no disk).
func ValidateDiskDir(dir string) error { return store.ValidateDir(dir) }

// validateDisk checks Config.DiskDir.
func (c Config) validateDisk() error {
	if c.DiskDir == "" {
		return nil
	}
	if c.Search != DepthFirst {
		return needs("DiskDir", searchDFS, "only the depth-first visited set can be kept on disk")
	}
	if err := store.ValidateDir(c.DiskDir); err != nil {
		return &FieldError{Field: "DiskDir", Value: c.DiskDir, Why: "is not a writable directory: " + err.Error()}
	}
	return nil
}

// diskShare is the memory share of the table of a run with DiskDir: half of
// the live-heap limit, the rest being for the path and the tables of
// machines and messages.
func (c Config) diskShare() uint64 { return c.MaxMemory / 2 }

// diskReason is the Incomplete reason of a run whose visited set on disk
// failed.
func diskReason(states int64, err error) string {
	return fmt.Sprintf("%v after %d states (depth-first, --disk-dir)", err, states)
}
