package tokenk

import (
	"strings"
	"testing"

	"github.com/critsec/critsec/cs"
)

func TestValidate(t *testing.T) {
	if err := Validate(cs.Params{N: 3, K: 2}, "x", "here"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[*cs.Params]string{
		{N: 3, K: 4}:                      "k = 4 is out of range",
		{N: 3, K: 2, L: 1}:                "guarantees no lower bound",
		{N: 3, K: 2, Initial: []cs.ID{1}}: "starts with every process OutCS (here)",
		{N: 0, K: 1}:                      "n = 0 is out of range",
	} {
		if err := Validate(*p, "x", "here"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error with %q", *p, err, want)
		}
	}
}

func TestPhase(t *testing.T) {
	for p, want := range map[Phase][2]string{Idle: {"OutCS", "none"}, Waiting: {"OutCS", "entry"}, InCS: {"InCS", "none"}} {
		if got := [2]string{p.State().String(), p.Pending().String()}; got != want {
			t.Errorf("phase %d: %v, want %v", p, got, want)
		}
	}
}
