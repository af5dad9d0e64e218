package main

import (
	"strings"
	"testing"
)

// TestAnalyze: three copies, one killed (its beats stop before the kill
// record: it counts until the kill), a replacement started later: the
// count is 3, then 2 during the detection, then 3; the replacement's delay
// and the spans are reported.
func TestAnalyze(t *testing.T) {
	log := `100 start 1 11
110 start 2 12
120 start 3 13
200 beat 1 11
200 beat 2 12
200 beat 3 13
300 beat 1 11
300 beat 2 12
310 kill 1 900
400 beat 2 12
400 beat 3 13
900 start 4 14
1000 beat 2 12
1000 beat 3 13
1000 beat 4 14
1100 end 0 0
1150 beat 3 13
1150 beat 4 14
1200 stop 2 12
`
	recs, err := readRecords(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze(recs, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.steady != 120 || a.end != 1100 || a.min != 2 || a.max != 3 || a.maxAll != 3 {
		t.Errorf("steady %d end %d, copies %d..%d, at most %d; want 120 1100, 2..3, 3", a.steady, a.end, a.min, a.max, a.maxAll)
	}
	if len(a.kills) != 1 {
		t.Fatalf("kills %+v", a.kills)
	}
	k := a.kills[0]
	if k.member != 1 || k.gone != 310 || k.replaced-k.t != 590 || k.minDuring != 2 || k.maxDuring != 2 || k.minAfter != 3 || k.maxAfter != 3 {
		t.Errorf("kill %+v: want P1 replaced after 590, 2..2 during, 3..3 after", k)
	}
	if got, got2 := a.count(305), a.count(311); got != 3 || got2 != 2 {
		t.Errorf("%d copies at 305, %d at 311 (P1's last beat at 300, its kill at 310), want 3 and 2", got, got2)
	}
}

// TestBadRecords: a malformed line is refused with its number; a log
// without an end record or never reaching k copies is refused.
func TestBadRecords(t *testing.T) {
	for _, log := range []string{"1 start 1\n", "x start 1 2\n", "1 begin 1 2\n", "1 start -1 2\n"} {
		if _, err := readRecords(strings.NewReader(log)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: %v", log, err)
		}
	}
	for _, log := range []string{"1 start 1 2\n", "1 start 1 2\n2 end 0 0\n"} {
		recs, err := readRecords(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := analyze(recs, 3); err == nil {
			t.Errorf("%q analyzed", log)
		}
	}
}
