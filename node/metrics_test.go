package node

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetrics: after one entry and exit of P2 in raymond, P2's metrics
// count its REQUEST to P1 and the REPLY (the token) from P1, one entry and one exit
// wait, fsyncs, and its state OutCS.
func TestMetrics(t *testing.T) {
	_, nodes := startClusterConfig(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	ctx := context.Background()
	if err := nodes[1].Enter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := nodes[1].Exit(ctx); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	nodes[1].MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body := w.Body.String()
	for _, want := range []string{
		`critsec_messages_sent_total{kind="REQUEST",peer="1"} 1`,
		`critsec_messages_received_total{kind="REPLY",peer="1"} 1`,
		"critsec_entry_wait_seconds_count 1",
		"critsec_exit_wait_seconds_count 1",
		"critsec_in_cs 0",
		"critsec_pending_request 0",
		"critsec_refused_frames_total 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in the metrics", want)
		}
	}
	if strings.Contains(body, "critsec_log_fsync_seconds_count 0") || !strings.Contains(body, "critsec_log_fsync_seconds_count") {
		t.Error("no fsync counted")
	}
	if t.Failed() {
		t.Log(body)
	}
}
