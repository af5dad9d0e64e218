package topology

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseSpec: ParseSpec never panics, its errors are one line, and an
// accepted spec prints in a canonical form that parses back to itself; a
// small accepted spec builds a valid connected graph named by that form.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"ring:5", "grid:3x4", "torus:6x6", "random:60:0.1:7", "star:2", "wheel:4", "complete:3", "path:2", "random:5:1e-3:18446744073709551615",
		"grid:1x", "torus:x", "random:::", "random:\n", "random:1:0:18700000000000000000", "\U00023041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of more than one line: %v", s, err)
			}
			return
		}
		again, err := ParseSpec(sp.String())
		if err != nil || again != sp {
			t.Fatalf("%q: canonical form %q reads back as %+v, %v", s, sp, again, err)
		}
		if sp.N > 300 {
			return
		}
		g, err := sp.Build()
		if err != nil {
			t.Fatalf("%q: accepted but not built: %v", s, err)
		}
		if g.N() != sp.N || g.String() != sp.String() {
			t.Fatalf("%q: built %d processes named %q", s, g.N(), g)
		}
		checkGraph(t, s, g)
	})
}

// FuzzRead: Read never panics, its errors are one line and start with the
// line at fault where there is one, and an accepted file describes a valid
// connected graph that Write and Read reproduce.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"1 2\n", "n 4\n1 2\n2 3\n3 4\n4 1\n", "1,2\n2\t3 # c\n", "1 1\n", "n 3\n1 2\n", "1 2\n2 1\n", "n 2\nn 2\n1 2\n", "",
		"n 2\n\n100 0", "n", "\u00eb", "10000000000000000000 0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Read(bytes.NewReader(b), "fuzz")
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Fatalf("%q: error of more than one line: %v", b, err)
			}
			if !strings.HasPrefix(msg, "line ") && !strings.HasPrefix(msg, "no links") && !strings.HasPrefix(msg, "the graph is disconnected") && !strings.HasPrefix(msg, "n = ") && !strings.HasPrefix(msg, "bufio.Scanner") {
				t.Fatalf("%q: error names no line: %v", b, err)
			}
			return
		}
		checkGraph(t, "fuzz", g)
		var out bytes.Buffer
		if err := Write(&out, g); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&out, "back")
		if err != nil || !back.Equal(g) {
			t.Fatalf("%q: Write then Read gave %v, %v", b, back, err)
		}
	})
}

// FuzzReadBounds: ReadBounds never panics, its errors are one line, and
// accepted bounds satisfy 0 <= l_i < k_i <= |N_i|+1 for every process.
func FuzzReadBounds(f *testing.F) {
	for _, s := range []string{"1: 0 1\n2: 0 2\n3: 1 max\n4: 0 2\n", "1: 0 1\n", "5: 0 1\n", "1: 2 1\n", "\u06ab", "\n ", "1:0 7"} {
		f.Add([]byte(s))
	}
	g, err := Parse("star:4")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		bs, err := ReadBounds(bytes.NewReader(b), g)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of more than one line: %v", b, err)
			}
			return
		}
		if err := g.Check(bs); err != nil {
			t.Fatalf("%q: accepted bounds fail: %v", b, err)
		}
	})
}
