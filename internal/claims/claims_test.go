package claims

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/claims.md from the studies' CSV files, and testdata/short from the short re-runs")

const (
	root = "../.."
	page = "docs/claims.md"
)

// TestPageInStep: the committed docs/claims.md is what Render makes of the
// committed CSV files; go test ./internal/claims -update rewrites it.
func TestPageInStep(t *testing.T) {
	got, err := Render(root)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, page)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v: create it with go test ./internal/claims -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the studies' CSV files give (- committed, + generated):\n%s\nregenerate it: go test ./internal/claims -update", page, diff(string(want), string(got)))
	}
}

// TestAddedColumns: columns added to the studies' tables, before or after
// the existing ones, change nothing.
func TestAddedColumns(t *testing.T) {
	tmp := t.TempDir()
	copyTree(t, filepath.Join(root, "docs", "experiments"), filepath.Join(tmp, "docs", "experiments"), func(b []byte) []byte {
		var out []string
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if i == 0 {
				line = "seed_first," + line + ",extra_ci95"
			} else {
				line = "7," + line + ",0.5"
			}
			out = append(out, line)
		}
		return []byte(strings.Join(out, "\n") + "\n")
	})
	want, err := Render(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("added columns changed the page:\n%s", diff(string(want), string(got)))
	}
}

// TestBadTables: a missing file, a missing column, a record that is not
// there or a file with no records is refused with one line naming the file
// and what is wrong.
func TestBadTables(t *testing.T) {
	for _, c := range []struct {
		file, from, to, want string
	}{
		{"waiting.csv", "", "", "docs/experiments/waiting.csv: open"},
		{"messages-light.csv", "uncontended_formula", "formula", `docs/experiments/messages-light.csv: no column "uncontended_formula"`},
		{"bv95/bv95.csv", "makki,", "mak,", "docs/experiments/bv95/bv95.csv: no record with [algorithm makki"},
		{"ft07/ft07-messages.csv", ",28,14,28", ",many,14,28", `column "value" holds "many", not a number`},
		{"local/local-messages.csv", "\nlkcs,", "\nlkcs2,", `docs/experiments/local/local-messages.csv: no record with [alg lkcs]`},
		{"ft07/ft07-figure2.csv", "header only", "", "docs/experiments/ft07/ft07-figure2.csv: no record with [alg raymond]"},
	} {
		tmp := t.TempDir()
		src := filepath.Join(root, "docs", "experiments")
		copyTree(t, src, filepath.Join(tmp, "docs", "experiments"), func(b []byte) []byte { return b })
		path := filepath.Join(tmp, "docs", "experiments", c.file)
		b, _ := os.ReadFile(path)
		switch c.from {
		case "":
			os.Remove(path)
		case "header only":
			os.WriteFile(path, b[:bytes.IndexByte(b, '\n')+1], 0o644)
		default:
			os.WriteFile(path, bytes.ReplaceAll(b, []byte(c.from), []byte(c.to)), 0o644)
		}
		_, err := Render(tmp)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s changed: error %v, want one line with %q", c.file, err, c.want)
		}
	}
}

// copyTree copies the CSV files under src to dst, each through edit.
func copyTree(t *testing.T, src, dst string, edit func([]byte) []byte) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".csv") {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, edit(b), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// diff returns the lines that differ between a and b, with their line
// numbers, from a longest common subsequence of lines.
func diff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "-%d: %s\n", i+1, x[i])
			i++
		default:
			fmt.Fprintf(&out, "+%d: %s\n", j+1, y[j])
			j++
		}
	}
	return out.String()
}
