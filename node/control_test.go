package node

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestControl: the control socket's calls and answers: status, enter and
// exit, an invalid call (409, nothing happens), a timeout (504, the
// request stays pending and says so, waiting_on names the holder, and the
// node enters later), a bad query (400), a closed node (503).
func TestControl(t *testing.T) {
	_, nodes := startClusterConfig(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	ctls := make([]*Control, 2)
	for i, nd := range nodes {
		sock := filepath.Join(dir, string(rune('a'+i))+".sock")
		go nd.ServeControl(ctx, sock)
		ctls[i] = DialControl(sock)
		defer ctls[i].Close()
	}
	do := func(i int, op string, timeout time.Duration) (StatusJSON, error) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); { // until the socket is up
			a, err := ctls[i].Do(ctx, op, timeout)
			if err == nil || !strings.Contains(err.Error(), "connect") {
				return a, err
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("the control socket never came up")
		return StatusJSON{}, nil
	}
	if a, err := do(0, "status", 0); err != nil || a.State != "OutCS" || a.Pending != "none" || a.Node != 1 {
		t.Fatalf("status: %+v %v", a, err)
	}
	if a, err := do(0, "enter", time.Second); err != nil || a.State != "InCS" {
		t.Fatalf("enter: %+v %v", a, err)
	}
	if a, err := do(0, "enter", time.Second); err == nil || !strings.Contains(err.Error(), "invalid call") || a.State != "InCS" || a.Pending != "none" {
		t.Errorf("enter while InCS: %+v %v", a, err)
	}
	a, err := do(1, "enter", 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stays pending") || a.Request != "pending" || a.Pending != "entry" ||
		!slices.Equal(a.WaitingOn, []int{1}) {
		t.Errorf("enter while P1 holds the CS: %+v %v", a, err)
	}
	if _, err := do(0, "exit", time.Second); err != nil {
		t.Fatal(err)
	}
	for s := range nodes[1].Watch(ctx) {
		if s.State.String() == "InCS" {
			break
		}
	}
	if a, err := do(1, "status", 0); err != nil || a.State != "InCS" || len(a.WaitingOn) != 0 || a.Changes != 1 {
		t.Errorf("P2 after P1's exit: %+v %v", a, err)
	}
	resp, err := ctls[1].c.Post("http://node/exit?timeout=-1s", "", nil)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad timeout: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	nodes[1].Close()
	if _, err := do(1, "exit", time.Second); err == nil || !strings.Contains(err.Error(), "node closed") {
		t.Errorf("exit on a closed node: %v", err)
	}
}

// TestControlClosesIdle: the control server closes a connection that
// sends nothing, and one left idle after a request.
func TestControlClosesIdle(t *testing.T) {
	defer func(h, i time.Duration) { controlHeaderTimeout, controlIdleTimeout = h, i }(controlHeaderTimeout, controlIdleTimeout)
	controlHeaderTimeout, controlIdleTimeout = 100*time.Millisecond, 200*time.Millisecond
	_, nodes := startClusterConfig(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	go nodes[0].ServeControl(ctx, sock)
	dial := func() net.Conn {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); { // until the socket is up
			if c, err := net.Dial("unix", sock); err == nil {
				return c
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("the control socket never came up")
		return nil
	}
	// closed reads from c until the server closes it (at most 10 s).
	closed := func(c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Errorf("%s: not closed by the server: %v", what, err)
		}
		c.Close()
	}
	closed(dial(), "a connection that sends nothing")
	c := dial()
	if _, err := io.WriteString(c, "GET /status HTTP/1.1\r\nHost: node\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	closed(c, "an idle connection after a request")
}

// TestControlDropped: an enter that times out before the node takes it (a
// node on a new log waits for its peer, which is down) is reported as
// dropped, and nothing is pending.
func TestControlDropped(t *testing.T) {
	cfg, nodes := startClusterConfig(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	nodes[0].Close()
	nodes[1].Close()
	if err := os.Remove(LogPath(cfg, 1)); err != nil {
		t.Fatal(err)
	}
	p1, err := Start(cfg, 1, testOptions(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	nodes[0] = p1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	go p1.ServeControl(ctx, sock)
	ctl := DialControl(sock)
	defer ctl.Close()
	var a StatusJSON
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); { // until the socket is up
		if a, err = ctl.Do(ctx, "enter", 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "connect") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "nothing happened") || a.Request != "dropped" || a.Pending != "none" {
		t.Errorf("enter on a node waiting for its peer: %+v %v", a, err)
	}
}
