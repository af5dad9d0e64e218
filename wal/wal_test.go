package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// write commits recs to a new log at path in groups of two.
func write(t *testing.T, path string, recs []string) {
	t.Helper()
	l, rc, err := Open(path, true, func([]byte) error { return errors.New("a new log has no record") })
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Created || rc.Records != 0 {
		t.Fatalf("new log: %+v", rc)
	}
	for i, r := range recs {
		if err := l.Add([]byte(r)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := l.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Commit(); err != nil {
		t.Fatal(err)
	}
	if l.Syncs != (len(recs)+1)/2 {
		t.Errorf("%d fsyncs for %d groups", l.Syncs, (len(recs)+1)/2)
	}
	l.Close()
}

// readAll opens the log at path and returns its records and recovery.
func readAll(t *testing.T, path string) ([]string, Recovery, *Log, error) {
	t.Helper()
	var got []string
	l, rc, err := Open(path, true, func(b []byte) error { got = append(got, string(b)); return nil })
	return got, rc, l, err
}

var records = []string{"entry", "deliver REQUEST from 2", strings.Repeat("x", 70000), "exit", "e"}

// TestRoundTrip: what was committed is read back, in order, and appends
// go on after it.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "wal")
	write(t, path, records)
	got, rc, l, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, records) || rc.Torn != 0 || rc.Created || rc.Records != len(records) {
		t.Fatalf("read back %d records, %+v", len(got), rc)
	}
	l.Add([]byte("more"))
	l.Commit()
	l.Close()
	got, _, l, err = readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if !slices.Equal(got, append(slices.Clone(records), "more")) {
		t.Fatalf("after an append: %q", got[len(got)-1])
	}
	if err := l.Add(nil); err == nil {
		t.Error("an empty record was accepted")
	}
}

// TestTornTail: a last record cut anywhere, or zeros the file system
// appended, are cut off; the records before are kept and appends go on.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	write(t, whole, records)
	full, _ := os.ReadFile(whole)
	last := headerLen + len(records[len(records)-1])
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"header cut", full[:len(full)-last+3]},
		{"payload cut", full[:len(full)-1]},
		{"last record's checksum wrong", append(full[:len(full)-1:len(full)-1], 'X')},
		{"zeros appended", append(slices.Clone(full), make([]byte, 4096)...)},
		{"zeros instead of the last record", append(full[:len(full)-last:len(full)-last], make([]byte, last)...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			os.WriteFile(path, c.data, 0o600)
			got, rc, l, err := readAll(t, path)
			if err != nil {
				t.Fatal(err)
			}
			want := records
			if len(c.data) < len(full) || c.name == "last record's checksum wrong" || strings.HasPrefix(c.name, "zeros instead") {
				want = records[:len(records)-1]
			}
			if !slices.Equal(got, want) || rc.Torn == 0 {
				t.Fatalf("read %d records (want %d), torn %d", len(got), len(want), rc.Torn)
			}
			l.Add([]byte("after"))
			l.Commit()
			l.Close()
			got, rc, l, err = readAll(t, path)
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			if !slices.Equal(got, append(slices.Clone(want), "after")) || rc.Torn != 0 {
				t.Fatalf("after repair and append: %d records, torn %d", len(got), rc.Torn)
			}
		})
	}
}

// TestCorruptMiddle: a damaged record with records after it is refused
// with ErrCorrupt, naming the record and its offset; the file is left
// as it was.
func TestCorruptMiddle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal")
	write(t, path, records)
	full, _ := os.ReadFile(path)
	for _, c := range []struct {
		name string
		at   int
		want string
	}{
		{"payload", headerLen + len(records[0]) + headerLen + 3, "record 2 at byte 13: checksum mismatch"},
		{"length", headerLen + len(records[0]) + 3, "record 2 at byte 13: length"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := slices.Clone(full)
			bad[c.at] ^= 0x40
			os.WriteFile(path, bad, 0o600)
			_, _, _, err := readAll(t, path)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrCorrupt with %q", err, c.want)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, bad) {
				t.Error("a refused log was modified")
			}
		})
	}
}

// TestReadError: the reader's refusal stops Open and names the record.
func TestReadError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal")
	write(t, path, records)
	_, _, err := Open(path, false, func(b []byte) error {
		if string(b) == "exit" {
			return fmt.Errorf("not an input")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "record 4 at byte") || !strings.Contains(err.Error(), "not an input") {
		t.Fatalf("got %v", err)
	}
}

// TestLocked: a second Open of a log that is open fails with ErrLocked,
// and succeeds once the first is closed.
func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal")
	write(t, path, records)
	_, _, l, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := readAll(t, path); !errors.Is(err, ErrLocked) {
		t.Errorf("second open: %v", err)
	}
	l.Close()
	_, _, l, err = readAll(t, path)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	l.Close()
}

// TestRewrite: a rewrite replaces the records, appends go on after the new
// ones, and a rewrite stopped before its rename (a crash there) leaves the
// old log whole, its leftover file removed by the next Open.
func TestRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal")
	write(t, path, records)

	// A crash before the rename: the old log survives.
	_, _, l, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	rewriteHook = func(step string) error { return fmt.Errorf("crash while %s", step) }
	err = l.Rewrite([][]byte{[]byte("snapshot")})
	rewriteHook = func(string) error { return nil }
	if err == nil || !strings.Contains(err.Error(), "crash while renaming") {
		t.Fatalf("rewrite with a crash before the rename: %v", err)
	}
	if err := os.WriteFile(path+newSuffix, []byte("torn"), 0o600); err != nil { // as a crash mid-write leaves it
		t.Fatal(err)
	}
	l.Close()
	got, _, l, err := readAll(t, path)
	if err != nil || !slices.Equal(got, records) {
		t.Fatalf("after a crash before the rename: %q, %v; want the old records", got, err)
	}
	if _, err := os.Stat(path + newSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open left the crashed rewrite's file: %v", err)
	}

	// A rewrite that completes, then an append.
	if err := l.Rewrite([][]byte{[]byte("header"), []byte("snapshot")}); err != nil {
		t.Fatal(err)
	}
	if l.Records != 2 {
		t.Errorf("Records = %d after rewriting two", l.Records)
	}
	if err := l.Add([]byte("after")); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit(); err != nil {
		t.Fatal(err)
	}
	// The lock moved to the new file: a second opener is refused.
	if _, _, err := Open(path, true, func([]byte) error { return nil }); !errors.Is(err, ErrLocked) {
		t.Errorf("opening the rewritten log while in use: %v, want ErrLocked", err)
	}
	l.Close()
	got, _, l, err = readAll(t, path)
	if err != nil || !slices.Equal(got, []string{"header", "snapshot", "after"}) {
		t.Fatalf("after the rewrite: %q, %v", got, err)
	}
	l.Close()
}
