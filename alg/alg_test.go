package alg

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
)

func TestLookup(t *testing.T) {
	if _, err := Lookup("raymond"); err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup("nope"); err == nil {
		t.Fatal("unknown algorithm accepted")
	}
}

func intp(v int) *int { return &v }

func TestResolve(t *testing.T) {
	// raymond takes no lower bound; mutin's k is n; maekawa's is 1; l and k
	// follow n when not given.
	for _, c := range []struct {
		spec   Spec
		lo, hi int
		cot    string
	}{
		{Spec{Alg: "raymond", N: 5, K: intp(3)}, 0, 3, ""},
		{Spec{Alg: "mutin", N: 5, L: intp(2)}, 2, 5, "grid"},
		{Spec{Alg: "maekawa", N: 5, Coterie: "majority"}, 0, 1, "majority"},
		{Spec{Alg: "gcs", N: 5, L: intp(1), K: intp(3)}, 1, 3, "grid"},
		{Spec{Alg: "gcs", N: 10}, 3, 7, "grid"},
		{Spec{Alg: "kmutex", N: 9}, 0, 6, "grid"},
	} {
		pr, err := Resolve(c.spec)
		if err != nil {
			t.Fatalf("%+v: %v", c.spec, err)
		}
		lo, hi := pr.Property.GlobalBounds()
		if lo != c.lo || hi != c.hi || pr.Params.L != c.lo || pr.Params.K != c.hi || pr.Coterie != c.cot {
			t.Errorf("%+v: bounds %d..%d, params l=%d k=%d, coterie %q; want %d..%d, %q", c.spec, lo, hi, pr.Params.L, pr.Params.K, pr.Coterie, c.lo, c.hi, c.cot)
		}
		ms, err := pr.Machines()
		if err != nil || len(ms) != c.spec.N {
			t.Errorf("%+v: %d machines, %v", c.spec, len(ms), err)
		}
		for _, o := range pr.Alg.Options {
			if _, ok := pr.Params.Options[o.Name]; !ok {
				t.Errorf("%+v: option %s has no value", c.spec, o.Name)
			}
		}
	}
}

func TestResolveBadInput(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Alg: "nope", N: 5}, "unknown algorithm"},
		{Spec{Alg: "gcs", N: 0}, "n = 0 is out of range"},
		{Spec{Alg: "gcs", N: MaxN + 1}, "at most n ="},
		{Spec{Alg: "gcs", N: 5, L: intp(3), K: intp(3)}, "need l < k"},
		{Spec{Alg: "gcs", N: 5, L: intp(-1), K: intp(3)}, "need l >= 0"},
		{Spec{Alg: "gcs", N: 5, K: intp(6)}, "need 1 <= k <= n"},
		{Spec{Alg: "gcs", N: 5, Coterie: "nope"}, "coterie nope"},
		{Spec{Alg: "raymond", N: 5, L: intp(1)}, "guarantees no lower bound"},
		{Spec{Alg: "mutin", N: 5, K: intp(3)}, "always allows at most 5"},
		{Spec{Alg: "raymond", N: 5, Coterie: "grid"}, "raymond uses no coterie"},
		{Spec{Alg: "raymond", N: 5, Options: map[string]string{"mx": "ra"}}, "option mx does not apply to raymond (only to gcs, gcs-paper, kmutex"},
		{Spec{Alg: "gcs", N: 5, Options: map[string]string{"mx": "nope"}}, `mx = "nope": choose maekawa or ra`},
		{Spec{Alg: "gcs", N: 5, Options: map[string]string{"zz": "1"}}, "no algorithm takes it"},
		{Spec{Alg: "gcs", N: 5, Initial: []cs.ID{1, 1}}, "listed twice"},
		{Spec{Alg: "gcs", N: 5, Initial: []cs.ID{6}}, "unknown process id 6"},
		{Spec{Alg: "gcs", N: 5, L: intp(1), K: intp(3), Initial: []cs.ID{}}, "0 processes InCS, outside the bounds 1..3"},
		{Spec{Alg: "gcs", N: 3, Coterie: "grid", Quorums: [][]cs.ID{{1}, {1}, {1}}}, "give one"},
		{Spec{Alg: "gcs", N: 3, Quorums: [][]cs.ID{{1}, {2}, {3}}}, "quorums:"},
	} {
		_, err := Resolve(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resolve(%+v) = %v, want an error containing %q", c.spec, err, c.want)
		}
	}
}

// TestOptionsAgree: an option declared by several algorithms is declared
// alike (the CLI registers one flag for it), and each default parses.
func TestOptionsAgree(t *testing.T) {
	for _, d := range AllOptions() {
		for _, name := range d.Algorithms {
			a, _ := Lookup(name)
			for _, o := range a.Options {
				if o.Name == d.Name && !reflect.DeepEqual(o, d.Option) {
					t.Errorf("option %s: %s declares %+v, others %+v", d.Name, name, o, d.Option)
				}
			}
		}
		if v, err := d.Parse(d.DefaultString()); err != nil || v != d.Default {
			t.Errorf("option %s: default %v parses as %v, %v", d.Name, d.Default, v, err)
		}
	}
}

func TestReadSpec(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "problem")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := ReadSpec(write(`{"alg":"gcs","n":10,"l":2,"k":5,"coterie":"majority","options":{"kmex":"raymond"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Alg != "gcs" || s.N != 10 || *s.L != 2 || *s.K != 5 || s.Coterie != "majority" || s.Options["kmex"] != "raymond" {
		t.Fatalf("got %+v", s)
	}
	for body, want := range map[string]string{
		``:                        "empty: want a JSON object",
		`{"alg":"gcs","n":"ten"}`: `field "n": a JSON string is not allowed here (want an integer)`,
		`{"alg":"gcs","m":1}`:     `unknown field "m": the fields are`,
		`{"alg":"gcs"} {}`:        "more than one JSON value",
		`{"alg":"","n":4}`:        `field "alg" is empty`,
		`{"alg":"gcs","n":0}`:     `field "n" = 0 is out of range`,
		"{\n\"alg\":}":            "line 2: not valid JSON",
	} {
		_, err := ReadSpec(write(body))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "json:") {
			t.Errorf("%q: %v, want an error containing %q and no Go internals", body, err, want)
		}
	}
	big := write(`{"alg":"` + strings.Repeat("x", maxSpecBytes) + `"}`)
	if _, err := ReadSpec(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a large file: %v", err)
	}
}

// TestOptionParse: an Int option takes integers in its range only, a
// Choice option its choices only (the registered algorithms declare
// Choice options today; Int is for counts such as the number of INFORM
// messages of the token K-mutex algorithm).
func TestOptionParse(t *testing.T) {
	nu := Option{Name: "nu", Kind: Int, Default: 2, Min: 0, Max: 10}
	for s, want := range map[string]any{"0": 0, "10": 10, "3": 3} {
		if v, err := nu.Parse(s); err != nil || v != want {
			t.Errorf("nu %q: %v, %v", s, v, err)
		}
	}
	for _, s := range []string{"-1", "11", "2.5", "", "x", "99999999999999999999"} {
		if _, err := nu.Parse(s); err == nil || !strings.Contains(err.Error(), "need an integer in 0..10") {
			t.Errorf("nu %q: %v", s, err)
		}
	}
	if nu.Usage() != ", 0..10" || mxOption.Usage() != mxOption.Help+": maekawa or ra" {
		t.Errorf("usage: %q, %q", nu.Usage(), mxOption.Usage())
	}
}
