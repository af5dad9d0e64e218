package alg

import "testing"

func TestLookup(t *testing.T) {
	if _, err := Lookup("raymond"); err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup("nope"); err == nil {
		t.Fatal("unknown algorithm accepted")
	}
}
