package viz

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/critsec/critsec/trace"
)

// FuzzBuild: any input gives a page within the limits, or one line saying
// what is wrong (an *InputError); nothing panics or hangs, and a page is
// written whole.
func FuzzBuild(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	more, _ := filepath.Glob("../docs/traces/*.jsonl")
	for _, name := range append(files, more...) {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 5, 0.0)
	}
	f.Add([]byte(`{"ev":"header","n":2,"k":1}`+"\n"+`{"t":1e308,"ev":"crash","node":1}`), 1, 1e308)
	f.Fuzz(func(t *testing.T, b []byte, window int, from float64) {
		opt := Options{Limits: trace.Limits{MaxN: 1000, MaxLine: 4096}, Window: int(uint(window)%50) + 1, Buckets: 4, Lines: 3, From: from}
		d, err := Build(bytes.NewReader(b), "fuzz", opt)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line, an *InputError", err)
			}
			return
		}
		if len(d.Detail) > opt.Window || len(d.Series) > 2*opt.Buckets || d.Lines > 3 || len(d.Kinds) > MaxKinds {
			t.Fatalf("over the limits: %d events, %d points, %d lines, %d kinds", len(d.Detail), len(d.Series), d.Lines, len(d.Kinds))
		}
		for j, e := range d.Detail {
			if m := int(e[5]); m >= len(d.Detail) || (m >= 0 && int(d.Detail[m][5]) != j) {
				t.Fatalf("event %d matched to %d, which does not match back", j, m)
			}
		}
		var page bytes.Buffer
		if err := Write(&page, d); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(page.String(), "</html>\n") || strings.Count(page.String(), "</script>") != 2 {
			t.Fatal("the page is not whole, or the data closes its script element")
		}
	})
}
