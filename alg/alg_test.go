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

func TestBuild(t *testing.T) {
	// raymond takes no lower bound; mutin's k is n; maekawa's is 1.
	for _, c := range []struct {
		name         string
		l, k         int
		wantL, wantK int
		lo, hi       int
	}{
		{"raymond", 2, 3, 0, 3, 0, 3},
		{"mutin", 2, 3, 2, 5, 2, 5},
		{"maekawa", 0, 4, 0, 1, 0, 1},
		{"gcs", 1, 3, 1, 3, 1, 3},
	} {
		ms, p, lo, hi, err := Build(c.name, 5, c.l, c.k, "grid")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(ms) != 5 || p.L != c.wantL || p.K != c.wantK || lo != c.lo || hi != c.hi {
			t.Errorf("%s: %d machines, l=%d k=%d, bounds %d..%d; want 5, l=%d k=%d, %d..%d", c.name, len(ms), p.L, p.K, lo, hi, c.wantL, c.wantK, c.lo, c.hi)
		}
	}
	for _, bad := range []struct {
		name, cot string
		l, k      int
	}{{"nope", "grid", 0, 1}, {"gcs", "grid", 3, 3}, {"gcs", "nope", 1, 3}, {"mutin", "grid", 5, 0}} {
		if _, _, _, _, err := Build(bad.name, 5, bad.l, bad.k, bad.cot); err == nil {
			t.Errorf("Build(%s, l=%d, k=%d, %s) accepted", bad.name, bad.l, bad.k, bad.cot)
		}
	}
}
