package faults

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// needNet skips the test, with the reason, where namespaces cannot be made.
func needNet(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("fault injection skipped: %v", err)
	}
}

// TestNet: member 1 reaches member 2's service address through the hub's
// relay, which dials it from member 1's relay address; a delay of 50 ms
// on member 2 makes an echo take at least 100 ms; a cut of member 1 stops
// the echo until Heal, and so does a loss of 100 %. Close removes every
// namespace.
func TestNet(t *testing.T) {
	needNet(t)
	nt, err := NewNet(3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := nt.Close(); err != nil {
			t.Error(err)
		}
		for _, ns := range append(nt.Members, nt.Hub) {
			if err := run("ip", "netns", "exec", ns, "true"); err == nil {
				t.Errorf("namespace %s left after Close", ns)
			}
		}
	}()
	ln, err := listenIn(nt.Members[1], MemberAddr(2))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	from := make(chan string, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			from <- c.RemoteAddr().(*net.TCPAddr).IP.String()
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	// echo dials member 2 from member 1 and times one round trip.
	echo := func() (time.Duration, error) {
		c, err := dialIn(nt.Members[0], fmt.Sprintf("%s.0.1:0", subnet), MemberAddr(2))
		if err != nil {
			return 0, err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		start := time.Now()
		if _, err := c.Write([]byte("ping")); err != nil {
			return 0, err
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	if _, err := echo(); err != nil {
		t.Fatalf("echo: %v", err)
	}
	if ip := <-from; ip != subnet+".2.1" {
		t.Errorf("member 2 sees the connection from %s, want %s.2.1", ip, subnet)
	}
	if err := nt.SetDelay(2, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d, err := echo(); err != nil || d < 100*time.Millisecond {
		t.Errorf("echo with 50 ms on member 2: %v %v, want at least 100ms", d, err)
	}
	if err := nt.SetDelay(2, 0); err != nil {
		t.Fatal(err)
	}
	if err := nt.Cut([]int{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := echo(); err == nil {
		t.Error("echo across a cut")
	}
	if err := nt.Heal(); err != nil {
		t.Fatal(err)
	}
	if _, err := echo(); err != nil {
		t.Errorf("echo after Heal: %v", err)
	}
	if err := nt.SetLoss(2, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := echo(); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("echo with 100%% loss: %v", err)
	}
	nt.Heal()
	if _, err := echo(); err != nil {
		t.Errorf("echo after the loss healed: %v", err)
	}
}
