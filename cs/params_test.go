package cs_test

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
)

// TestCheckKExclusion: a k-mutual exclusion algorithm refuses a lower bound
// with its own name and hint, and still refuses sizes CheckSize refuses.
func TestCheckKExclusion(t *testing.T) {
	for _, c := range []struct {
		p    cs.Params
		want string // "" for no error
	}{
		{cs.Params{N: 4, K: 2}, ""},
		{cs.Params{N: 4, K: 2, L: 1}, "l = 1: alg solves k-mutual exclusion and guarantees no lower bound; use l = 0 (or gcs)"},
		{cs.Params{N: 4, K: 5}, "k = 5 is out of range"},
		{cs.Params{N: 0, K: 1}, "n = 0 is out of range"},
	} {
		err := c.p.CheckKExclusion("alg", " (or gcs)")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want no error", c.p, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}
