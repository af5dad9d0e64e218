package check

import (
	"strings"
	"testing"
)

// TestFullReason: a full depth-first table explains itself, and suggests
// --expected-states only to a run that did not pass it.
func TestFullReason(t *testing.T) {
	for _, expected := range []int{0, 1000} {
		r := fullReason(61440, 1<<16, expected)
		if !strings.Contains(r, "full after 61440 states (65536 slots") || !strings.Contains(r, "--max-memory") {
			t.Errorf("expected %d: %q", expected, r)
		}
		if suggests := strings.Contains(r, "--expected-states"); suggests != (expected == 0) {
			t.Errorf("expected %d: suggests --expected-states: %v", expected, suggests)
		}
	}
}
