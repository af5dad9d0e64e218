package node

import (
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestIdleStrangers: a stranger holds as many idle TCP connections to
// every member as it can (80), from one address (127.0.0.2), redialing
// at once those the handshake deadline closes, while the members of an
// ftraymond cluster (silent peers are declared crashed after 1.5 s, a
// margin for this shared machine's load; the stranger held the slots for
// 5 s) enter and exit with their connections cut every 30 ms, so that
// they must handshake again all along. The stranger's
// connections are refused beyond the per-address limit, the members'
// handshakes go through (none is refused), and no member is declared
// crashed (with one global limit only, the stranger took every handshake
// slot, and the members' reconnections were refused).
func TestIdleStrangers(t *testing.T) {
	cuts := &cutter{}
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, nodes := startClusterWith(t, "alg: ftraymond\nn: 3\nk: 1\ndetector:\n  heartbeat: 100ms\n  timeout: 1500ms\n", 3, cuts, func(o *Options) { o.Logger = logger })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, nd := range nodes {
		addr := nd.tr.Addr().String()
		for range 80 {
			wg.Go(func() { // one idle connection at a time, redialed when closed
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
				for ctx.Err() == nil {
					c, err := d.DialContext(ctx, "tcp", addr)
					if err != nil {
						time.Sleep(time.Millisecond)
						continue
					}
					go func() { <-ctx.Done(); c.Close() }()
					held := time.Now()
					c.Read(make([]byte, 1)) // until the node closes it
					c.Close()
					if time.Since(held) < time.Second { // refused: try again later
						time.Sleep(500 * time.Millisecond)
					}
				}
			})
		}
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %v", what, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	wait("the stranger refused", func() bool {
		for _, nd := range nodes {
			if nd.Stats().RefusedConns < 16 {
				return false
			}
		}
		return true
	})
	go func() {
		for i := 0; ctx.Err() == nil; i += 7 {
			cuts.cut(i)
			time.Sleep(30 * time.Millisecond)
		}
	}()
	reconnects := make([]int64, len(nodes))
	for i, nd := range nodes {
		reconnects[i] = nd.Stats().Reconnects
	}
	var members sync.WaitGroup
	for i, nd := range nodes {
		members.Go(func() {
			for cycles := 0; cycles < 10 || nd.Stats().Reconnects < reconnects[i]+10; cycles++ {
				if ctx.Err() != nil {
					return
				}
				if err := nd.Enter(ctx); err != nil {
					t.Errorf("P%d enter: %v", nd.id, err)
					return
				}
				if err := nd.Exit(ctx); err != nil {
					t.Errorf("P%d exit: %v", nd.id, err)
					return
				}
			}
		})
	}
	members.Wait()
	var refused []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "refused a connection") && !strings.Contains(line, "remote=127.0.0.2:") {
			refused = append(refused, line)
		}
	}
	if len(refused) > 0 {
		t.Errorf("%d connections of members refused, the first: %s", len(refused), refused[0])
	}
	for _, nd := range nodes {
		w := httptest.NewRecorder()
		nd.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if !strings.Contains(w.Body.String(), "critsec_detector_crashes_total 0") || nd.Err() != nil {
			t.Errorf("P%d declared a member crashed, or stopped (%v)", nd.id, nd.Err())
		}
	}
}
