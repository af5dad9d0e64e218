//go:build !linux

package store

import "os"

// mapFile maps nothing here: the set reads pages with pread.
func mapFile(*os.File, int64) []byte { return nil }

// unmapFile undoes mapFile.
func unmapFile([]byte) {}
