package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSemaphore runs n contenders, each acquiring and releasing a permit
// rounds times and holding it a little (to widen the window for a
// violation), and checks that never more than k hold one at once, that
// k do hold at once at some point (the semaphore is not a mutex), and
// that every round completes.
func TestSemaphore(t *testing.T) {
	ec, err := startEtcd(t.TempDir(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.close()
	for _, c := range []struct{ n, k, rounds int }{{5, 2, 30}, {4, 3, 20}, {3, 1, 20}} {
		var (
			in, most atomic.Int64
			done     atomic.Int64
			wg       sync.WaitGroup
		)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for range c.n {
			l, err := newEtcdLocker(ec.endpoints, 2) // a client and session
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			sem := NewSemaphore(l.s, "/test-sem-"+string(rune('0'+c.k)), c.k)
			wg.Go(func() {
				for range c.rounds {
					if err := sem.Acquire(ctx); err != nil {
						t.Error(err)
						return
					}
					now := in.Add(1)
					for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
					}
					time.Sleep(time.Millisecond)
					in.Add(-1)
					if err := sem.Release(ctx); err != nil {
						t.Error(err)
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		if got := most.Load(); got != int64(c.k) {
			t.Errorf("n=%d k=%d: at most %d holders at once, want exactly %d", c.n, c.k, got, c.k)
		}
		if got := done.Load(); got != int64(c.n*c.rounds) {
			t.Errorf("n=%d k=%d: %d rounds done, want %d", c.n, c.k, got, c.n*c.rounds)
		}
	}
}

// TestSemaphoreWaits checks that a contender beyond the k-th waits until
// a holder releases.
func TestSemaphoreWaits(t *testing.T) {
	ec, err := startEtcd(t.TempDir(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.close()
	ctx := context.Background()
	var sems []*Semaphore
	for range 3 {
		l, err := newEtcdLocker(ec.endpoints, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		sems = append(sems, NewSemaphore(l.s, "/wait", 2))
	}
	for _, s := range sems[:2] {
		if err := s.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan error, 1)
	go func() { got <- sems[2].Acquire(ctx) }()
	select {
	case err := <-got:
		t.Fatalf("third contender entered with two holders (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := sems[1].Release(ctx); err != nil { // the second, not the first
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("third contender still waiting 5 s after a release")
	}
}
