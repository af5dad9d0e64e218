package detector

import "testing"

func TestReports(t *testing.T) {
	// Under T, the initial suspicion reports nothing; a suspicion after a
	// trust of the same pair does, and stays.
	r := NewReports(T)
	r.Suspect(1, 2)
	r.Suspect(1, 3)
	if r.Reported(1, 2) || r.Reported(1, 3) {
		t.Fatal("T: an initial suspicion counted as a report")
	}
	r.Trust(1, 2)
	r.Trust(3, 1)
	r.Suspect(1, 2)
	if !r.Reported(1, 2) || r.Reported(2, 1) || r.Reported(1, 3) {
		t.Fatalf("T: reports (1,2) (2,1) (1,3) = %v %v %v, want true false false", r.Reported(1, 2), r.Reported(2, 1), r.Reported(1, 3))
	}
	r.Trust(1, 2)
	if !r.Reported(1, 2) {
		t.Fatal("T: a report was withdrawn by a later trust")
	}
	// Under P and S every suspicion is a report.
	for _, c := range []Class{P, S} {
		r := NewReports(c)
		r.Suspect(2, 1)
		if !r.Reported(2, 1) || r.Reported(1, 2) {
			t.Fatalf("%v: reports (2,1) (1,2) = %v %v, want true false", c, r.Reported(2, 1), r.Reported(1, 2))
		}
	}
}
