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

// FuzzParseList: the list flags of the experiments (--n, --lambda,
// --format) give values their parser accepts, none twice, or one line.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"4,16,64", "0.1,0.1", "", ",", "1e-300", "NaN,Inf", "svg,png", "9999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(n int, err error) {
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error is not one line: %q", s, err)
			}
			if err == nil && n == 0 {
				t.Fatalf("%q: an empty list accepted", s)
			}
		}
		sizes, err := parseList("n", s, "an integer >= 4", studySize)
		for _, v := range sizes {
			if v < 4 {
				t.Fatalf("%q: n = %d accepted", s, v)
			}
		}
		check(len(sizes), err)
		rates, err := parseList("lambda", s, "a rate", studyRate)
		for _, v := range rates {
			if !(v > 0) || v > 1e12 {
				t.Fatalf("%q: lambda = %v accepted", s, v)
			}
		}
		check(len(rates), err)
		formats, err := parseList("format", s, "a format", plotFormat)
		check(len(formats), err)
	})
}
