package alg

import (
	"strings"
	"testing"
)

// FuzzSpec: any problem file is either refused with one line or resolves
// to a problem whose machines build; nothing panics. n is capped at 64 so
// that each input takes milliseconds (Resolve validates the coterie in
// O(n²) pairs).
func FuzzSpec(f *testing.F) {
	for _, s := range []string{
		`{"alg":"gcs","n":10,"l":3,"k":7,"coterie":"grid"}`,
		`{"alg":"raymond","n":5,"k":2,"initial":[1,2]}`,
		`{"alg":"gcs","n":4,"options":{"kmex":"raymond","mx":"ra"}}`,
		`{"alg":"maekawa","n":3,"quorums":[[1,2],[2,3],[1,3]]}`,
		`{"alg":"mutin","n":3,"l":1,"initial":[]}`,
		``, `{}`, `[]`, `{"n":-1}`, `{"alg":"gcs","n":3,"l":-5}`,
		`{"alg":"gcs","n":4,"options":{"kmex":"9Xx27","mx":"ra"}}`,
		`{"alg":"","n":0,"a0aaa":[[10],[0,1],[1,1]]}`,
		`n`, `'`, `{}0`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpec("p", b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "json: ") {
				t.Fatalf("ParseSpec error is not one clean line: %q", err)
			}
			return
		}
		if s.N > 64 || s.Coterie != "" && s.Coterie != "grid" && s.Coterie != "majority" {
			return // large n: slow, not wrong; other coteries are files
		}
		pr, err := Resolve(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("Resolve error is not one line: %q", err)
			}
			return
		}
		ms, err := pr.Machines()
		if err != nil {
			t.Fatalf("resolved %+v, but the machines do not build: %v", s, err)
		}
		if len(ms) != s.N {
			t.Fatalf("%d machines for n = %d", len(ms), s.N)
		}
	})
}

// FuzzOption: an option's Parse accepts exactly its values.
func FuzzOption(f *testing.F) {
	for _, s := range []string{"maekawa", "ra", "co-mutin", "raymond", "", "1", "NaN", "true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range AllOptions() {
			v, err := d.Parse(s)
			if err == nil && d.Kind == Choice && v != s {
				t.Fatalf("%s: %q parsed as %v", d.Name, s, v)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s: error is not one line: %q", d.Name, err)
			}
		}
	})
}
