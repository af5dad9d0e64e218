package main

import "testing"

// TestExperimentFTGCSBadInput: each bad flag is refused with one line,
// exit status 2.
func TestExperimentFTGCSBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--n", "1"},
		{"--l", "3", "--k", "3"},
		{"--k", "21"},
		{"--crash", "21@5"},
		{"--crash", "random:20:1:2"},
		{"--crash", "2@x"},
		{"--detector", "S"},
		{"--detector", "Q"},
		{"--lambda", "0"},
		{"--E", "-1"},
		{"--detect-delay", "NaN"},
		{"--after", "0"},
		{"--seeds", "0"},
		{"--entries", "0"},
		{"--sweep-n", "2"},
		{"--sweep-n", "5,5"},
		{"--sweep-l", "3"},
		{"--sweep-crashes", "-1"},
		{"--sweep-crashes", "5", "--sweep-n", "5"},
		{"--out", " "},
	} {
		refusesOneLine(t, []string{"experiment", "ftgcs"}, args)
	}
}
