//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes an exclusive lock (flock) on dir's lock file, held
// until unlock: two runs continuing one checkpoint at once would cut each
// other's files. It reports held when another process holds it.
func Lock(dir string) (unlock func(), held bool, err error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return func() { f.Close() }, false, nil // closing releases the lock
}
