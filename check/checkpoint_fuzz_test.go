package check_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/critsec/critsec/check"
)

// FuzzCheckpointJSON: whatever checkpoint.json says next to a real
// checkpoint's files, a run that finds it either continues it or refuses
// it with an error; it never panics, and --max-states bounds it.
func FuzzCheckpointJSON(f *testing.F) {
	cfg := func(t testing.TB, ck string) check.Config {
		return check.Config{Machines: raymondMachines(t, 3, 2), Property: global(t, 3, 0, 2), Budget: 2, Search: check.DepthFirst,
			DiskDir: t.TempDir(), Checkpoint: ck, CheckpointID: "fuzz", MaxStates: 1000}
	}
	saved := f.TempDir()
	if res, err := check.Run(f.Context(), cfg(f, saved)); err != nil || res.Verdict != check.Incomplete {
		f.Fatalf("saving: %v %s", err, res.Verdict)
	}
	valid, err := os.ReadFile(filepath.Join(saved, "checkpoint.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"stack":[{"act":4294967295,"next":99}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ck := t.TempDir()
		copyDir(t, saved, ck)
		if err := os.WriteFile(filepath.Join(ck, "checkpoint.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		c := cfg(t, ck)
		c.MaxStates = 3000
		check.Run(t.Context(), c) // an error or a result; a panic fails the test
	})
}
