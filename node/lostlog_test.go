package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
)

// lockedBuffer is a bytes.Buffer safe for the nodes' loggers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLostLog: P2 of a raymond cluster that has passed messages on every
// channel is stopped and its log deleted, or its tail cut off as a power
// loss with fsync off leaves it. Restarted, it stops with ErrLogLost and
// says how to recover, before its machine takes any input; the peers name
// it in their logs and keep running (without the checks,
// P2's messages were dropped as duplicates and the peers' resent ones
// refused as "sequence number 5 after 0", over and over). With
// RejoinWithEmptyLog, P2 on an empty log continues the peers' numbering:
// it enters and leaves, and so do the others.
func TestLostLog(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(path string) error
		rejoin bool
	}{
		{"deleted", os.Remove, false},
		{"torn", func(path string) error {
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			return os.Truncate(path, st.Size()*2/3)
		}, false},
		{"rejoin", os.Remove, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs lockedBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the nodes' log:\n%s", logs.String())
				}
			})
			cfg, nodes := startClusterWith(t, "alg: raymond\nn: 3\nk: 1\n", 3, nil, func(o *Options) {
				o.Logger = logger
				o.NoSync = true
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cycle := func(nd *Node) {
				t.Helper()
				if err := nd.Enter(ctx); err != nil {
					t.Fatalf("P%d enter: %v", nd.id, err)
				}
				if err := nd.Exit(ctx); err != nil {
					t.Fatalf("P%d exit: %v", nd.id, err)
				}
			}
			for range 2 {
				for _, nd := range nodes {
					cycle(nd)
				}
			}
			// The cluster is idle when P2 stops: every message sent has
			// been acknowledged, so none is given again to P2 on an empty
			// log, which forgot that it took it (docs/network.md, "A lost
			// log": rejoin only a member killed while the cluster was idle).
			for !settled(nodes) {
				select {
				case <-ctx.Done():
					t.Fatal("the messages were never all acknowledged")
				case <-time.After(5 * time.Millisecond):
				}
			}
			nodes[1].Close()
			if err := c.damage(LogPath(cfg, 2)); err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", cfg.Members[1])
			if err != nil {
				t.Fatal(err)
			}
			o := testOptions(ln, nil)
			o.Logger, o.NoSync, o.RejoinWithEmptyLog = logger, true, c.rejoin
			p2, err := Start(cfg, 2, o)
			if err != nil {
				t.Fatal(err)
			}
			nodes[1] = p2
			if c.rejoin {
				for _, nd := range []*Node{nodes[1], nodes[0], nodes[2], nodes[1]} {
					cycle(nd)
				}
				for _, nd := range nodes {
					if err := nd.Err(); err != nil {
						t.Errorf("P%d stopped: %v", nd.id, err)
					}
				}
				return
			}
			enter := make(chan error, 1)
			if c.name == "deleted" {
				go func() { enter <- p2.Enter(ctx) }()
			}
			select {
			case <-p2.Done():
			case <-ctx.Done():
				t.Fatal("P2 on a lost log still runs")
			}
			if err := p2.Err(); !errors.Is(err, ErrLogLost) || !strings.Contains(err.Error(), "--rejoin-with-empty-log") {
				t.Errorf("P2 stopped with %v, want ErrLogLost and how to recover", err)
			}
			if c.name == "deleted" { // a new log: no input before every peer answered
				if err := <-enter; !errors.Is(err, ErrDropped) && !errors.Is(err, ErrClosed) {
					t.Errorf("P2's enter: %v, want it not taken", err)
				}
				if s := p2.Status(); s.Changes != 0 || s.Pending != cs.None {
					t.Errorf("P2 took input before stopping: %+v", s)
				}
			}
			for _, id := range []int{0, 2} {
				if err := nodes[id].Err(); err != nil {
					t.Errorf("P%d stopped: %v", id+1, err)
				}
			}
			for !strings.Contains(logs.String(), "P2's log lost messages it acknowledged") {
				select {
				case <-ctx.Done():
					t.Fatalf("no peer named P2's lost log:\n%s", logs.String())
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	}
}

// settled reports whether every message the nodes sent has been
// acknowledged, every channel between them carried some, and no node sent
// any while it looked. An acknowledged message was taken, logged and
// answered by its receiver (the node confirms an input after handing its
// sends to the transport), so the answers are counted too; a message sent
// after its sender was looked at answers one not yet acknowledged then,
// and shows in the second look. The nodes run raymond, which sends nothing
// to itself: a node's Sent is what its peers acknowledged, summed.
func settled(nodes []*Node) bool {
	sent := make([]int64, len(nodes))
	for k, i := range nodes {
		sent[k] = i.Stats().Sent
		var acked uint64
		for _, j := range nodes {
			if i == j {
				continue
			}
			a := i.tr.Acked(j.id)
			if a == 0 {
				return false
			}
			acked += a
		}
		if acked != uint64(sent[k]) {
			return false
		}
	}
	for k, i := range nodes {
		if i.Stats().Sent != sent[k] {
			return false
		}
	}
	return true
}
