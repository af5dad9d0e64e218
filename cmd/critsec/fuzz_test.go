package main

import (
	"strings"
	"testing"
)

// FuzzParseIDs: --initial is either a list of ids >= 1 or one line that
// says what is wrong; nothing panics.
func FuzzParseIDs(f *testing.F) {
	for _, s := range []string{"1,2,5", "none", "", "1,,2", " 3 , 4", "-1", "99999999999", "1,x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := parseIDs(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error is not one line: %q", s, err)
			}
			return
		}
		for _, id := range ids {
			if id < 1 {
				t.Fatalf("%q: id %d accepted", s, id)
			}
		}
	})
}
