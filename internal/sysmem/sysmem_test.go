package sysmem

import "testing"

func TestParse(t *testing.T) {
	const info = "MemTotal:       24577556 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"
	if got := parse(info, "MemAvailable:"); got != 20000000*1024 {
		t.Fatalf("MemAvailable = %d", got)
	}
	for _, bad := range []string{"", "MemAvailable: x kB", "MemAvailable: 99999999999999999999 kB", "MemAvailable:"} {
		if got := parse(bad, "MemAvailable:"); got != 0 {
			t.Errorf("%q: %d, want 0", bad, got)
		}
	}
	if Available() == 0 {
		t.Error("no MemAvailable in /proc/meminfo on this machine")
	}
}
