package node

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
)

// TestDetectorCrash: ftraymond (n = 3, k = 1) over loopback with the
// network failure detector (heartbeat 50 ms, timeout 250 ms). P1 enters
// and is stopped while InCS, as a crash; the detectors of P2 and P3
// declare it crashed and P2's waiting request completes within a second.
// P1 restarted on its log is refused by the others, learns that it was
// declared crashed and stops with ErrCrashed instead of rejoining.
func TestDetectorCrash(t *testing.T) {
	problem := "alg: ftraymond\nn: 3\nk: 1\ndetector:\n  heartbeat: 50ms\n  timeout: 250ms\n"
	cfg, nodes := startClusterConfig(t, problem, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := nodes[0].Enter(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // every detector trusts every peer by now
	entered := make(chan time.Duration, 1)
	go func() {
		began := time.Now()
		if err := nodes[1].Enter(ctx); err != nil {
			t.Errorf("P2 enter: %v", err)
		}
		entered <- time.Since(began)
	}()
	time.Sleep(100 * time.Millisecond) // P2 waits for P1's permission
	if s, _ := nodes[1].State(); s != cs.OutCS {
		t.Fatalf("P2 entered while P1 was InCS with k = 1")
	}
	crashed := time.Now()
	nodes[0].Close()
	took := <-entered
	if after := time.Since(crashed); after > time.Second {
		t.Errorf("P2 entered %v after P1's crash: over a second", after)
	}
	t.Logf("P2 entered %v after asking, %v after P1 stopped", took, time.Since(crashed))
	w := httptest.NewRecorder()
	nodes[1].MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{"critsec_detector_crashes_total 1", "critsec_detector_trusts_total 2", "critsec_detector_detection_seconds_count 1"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("P2's metrics have no %q", want)
		}
	}

	// P1 restarts on its log: refused, it stops.
	ln, err := net.Listen("tcp", cfg.Members[0])
	if err != nil {
		t.Fatal(err)
	}
	nd, err := Start(cfg, 1, testOptions(ln, nil))
	if err != nil {
		t.Fatal(err)
	}
	nodes[0] = nd
	select {
	case <-nd.Done():
	case <-ctx.Done():
		t.Fatal("P1, declared crashed, restarted and was never stopped")
	}
	if !errors.Is(nd.Err(), ErrCrashed) {
		t.Errorf("P1 stopped with %v, want ErrCrashed", nd.Err())
	}
	if nodes[1].Stats().Returned == 0 && nodes[2].Stats().Returned == 0 {
		t.Errorf("no peer counted the crashed member's return")
	}
	if err := nodes[1].Exit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := nodes[2].Enter(ctx); err != nil {
		t.Fatalf("P3 after P1's return was refused: %v", err)
	}
}
