package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"slices"
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
	for _, nd := range nodes {
		waitCond(t, fmt.Sprintf("P%d's detector trusting both peers", nd.id), func() bool {
			return strings.Contains(metricsOf(nd), "critsec_detector_trusts_total 2\n")
		})
	}
	entered := make(chan time.Duration, 1)
	go func() {
		began := time.Now()
		if err := nodes[1].Enter(ctx); err != nil {
			t.Errorf("P2 enter: %v", err)
		}
		entered <- time.Since(began)
	}()
	waitCond(t, "P2's request sent", func() bool { // P2 waits for P1's permission
		st := nodes[1].Status()
		return st.State == cs.InCS || st.Pending == cs.Entry && len(st.WaitingOn) > 0
	})
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
	// P2 may have entered on P3's CRASH(1) before its own detector
	// declared P1 crashed; completeness is eventual, so wait for it (within
	// a second: timeout 250 ms).
	wants := []string{"critsec_detector_crashes_total 1", "critsec_detector_trusts_total 2", "critsec_detector_detection_seconds_count 1"}
	var metrics string
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		metrics = metricsOf(nodes[1])
		if !slices.ContainsFunc(wants, func(want string) bool { return !strings.Contains(metrics, want) }) || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range wants {
		if !strings.Contains(metrics, want) {
			t.Errorf("P2's metrics have no %q a second after it entered", want)
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

// TestDetectRounds drives the detector's rounds with a given clock: a
// peer heard from is trusted; a trusted peer silent for more than the
// timeout is suspected at the first round past it; a late round (the
// node paused) suspects nobody and silence is counted from it, so a peer
// silent only during the pause is not suspected, and one silent for a
// whole timeout after it is.
func TestDetectRounds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Millisecond) }
	newNode := func() *Node {
		nd := &Node{det: DetectorConfig{Heartbeat: 100 * time.Millisecond, Timeout: 500 * time.Millisecond},
			peers: []cs.ID{2, 3}, rp: &replay{}, detStart: t0}
		nd.metrics = newMetrics(nd)
		return nd
	}
	heard2 := ms(10)
	heard := func(j cs.ID) time.Time {
		if j == 2 {
			return heard2
		}
		return time.Time{} // P3 never heard
	}
	outputs := func(nd *Node, at int) string {
		var b strings.Builder
		ins, _ := nd.detectAt(ms(at), &fakeView{heard: heard})
		for _, in := range ins {
			nd.rp.detected(in)
			b.WriteString(in.String() + ";")
		}
		return b.String()
	}

	nd := newNode()
	if got := outputs(nd, 50); got != "trust P2;" {
		t.Fatalf("first round: %q, want P2 trusted (heard) and nothing about P3 (never heard)", got)
	}
	for at := 100; at <= 500; at += 50 {
		if got := outputs(nd, at); got != "" {
			t.Fatalf("round at %d ms, P2 silent %d ms: %q, want nothing", at, at-10, got)
		}
	}
	if got := outputs(nd, 550); got != "suspect P2;" {
		t.Fatalf("round at 550 ms, P2 silent 540 ms: %q, want it suspected", got)
	}
	if !nd.rp.crashed.Has(2) || outputs(nd, 600) != "" {
		t.Fatalf("P2 suspected after trust is not crashed for good")
	}

	nd = newNode()
	outputs(nd, 50)
	if got := outputs(nd, 700); got != "" { // paused 650 ms: late
		t.Fatalf("late round: %q, want no suspicion", got)
	}
	for at := 750; at <= 1150; at += 50 {
		if got := outputs(nd, at); got != "" {
			t.Fatalf("%d ms after the pause, P2 silent since 10 ms: %q, want nothing", at-700, got)
		}
	}
	if got := outputs(nd, 1250); got != "suspect P2;" {
		t.Fatalf("550 ms after the pause, P2 still silent: %q, want it suspected", got)
	}

	nd = newNode()
	outputs(nd, 50)
	outputs(nd, 700) // late
	heard2 = ms(720) // P2 speaks after the pause
	for at := 750; at <= 1200; at += 50 {
		if got := outputs(nd, at); got != "" {
			t.Fatalf("round at %d ms, P2 heard at 720 ms: %q, want nothing", at, got)
		}
	}
}

// TestLease: with ftraymond (heartbeat 50 ms, timeout 250 ms, so fence
// 125 ms) a node's lease is renewed by its peers' echoes and runs no more
// than the fence ahead; when a peer stops, the lease lapses within the
// fence, before the node declares the peer crashed, and is renewed once
// it has (the declared peer no longer counts). An algorithm without a
// failure detector has no bound.
func TestLease(t *testing.T) {
	_, nodes := startClusterConfig(t, "alg: ftraymond\nn: 3\nk: 1\ndetector:\n  heartbeat: 50ms\n  timeout: 250ms\n", 3, nil)
	p1 := nodes[0]
	fence := p1.Detector().Fence
	waitLease := func(what string, ok func(Lease, time.Time) bool) time.Time {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if now := time.Now(); ok(p1.Lease(), now) {
				return now
			}
		}
		t.Fatalf("P1's lease never %s: %+v", what, p1.Lease())
		return time.Time{}
	}
	waitLease("valid", func(l Lease, now time.Time) bool { return l.Bounded && l.Valid(now) })
	for range 20 {
		if l, now := p1.Lease(), time.Now(); l.Until.Sub(now) > fence {
			t.Fatalf("lease until %v, %v ahead: more than the fence %v", l.Until, l.Until.Sub(now), fence)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stopped := time.Now()
	nodes[2].Close()
	lapsed := waitLease("lapsed", func(l Lease, now time.Time) bool { return !l.Valid(now) })
	if took := lapsed.Sub(stopped); took > fence+20*time.Millisecond {
		t.Errorf("lease lapsed %v after P3 stopped: more than the fence %v", took, fence)
	}
	declared := func() bool { p1.mu.Lock(); defer p1.mu.Unlock(); return p1.cut.Has(3) }
	if declared() {
		t.Errorf("P3 declared crashed before P1's lease lapsed")
	}
	waitLease("renewed after P3 was declared crashed", func(l Lease, now time.Time) bool { return l.Valid(now) })
	if !declared() {
		t.Errorf("lease renewed while P3, silent, still counts")
	}

	_, nodes = startClusterConfig(t, "alg: raymond\nn: 2\nk: 1\n", 2, nil)
	if l := nodes[0].Lease(); l.Bounded {
		t.Errorf("raymond's lease %+v is bounded: nobody acts on a suspicion", l)
	}
}

// metricsOf returns nd's Prometheus metrics as its handler serves them.
func metricsOf(nd *Node) string {
	w := httptest.NewRecorder()
	nd.MetricsHandler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	return w.Body.String()
}

// fakeView is a transport as the detector sees it, with a given clock of
// hearing and given votes.
type fakeView struct {
	heard func(cs.ID) time.Time
	votes map[cs.ID]cs.Set
	muted cs.Set
}

func (f *fakeView) LastHeard(j cs.ID) time.Time                        { return f.heard(j) }
func (f *fakeView) RefuseIf(j cs.ID, silent func(time.Time) bool) bool { return silent(f.heard(j)) }
func (f *fakeView) Votes(j cs.ID) cs.Set                               { return f.votes[j] }
func (f *fakeView) MuteIf(j cs.ID, silent func(time.Time) bool) bool {
	if !f.muted.Has(j) && silent(f.heard(j)) {
		f.muted.Add(j)
	}
	return f.muted.Has(j)
}

// TestMajorityVotes: in majority mode (n = 5, so 3 votes declare) a
// trusted peer silent for the timeout gets this node's vote, once, and is
// suspected only when the votes in the peers' pings make a majority with
// it; votes of a peer about itself do not count.
func TestMajorityVotes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	nd := &Node{det: DetectorConfig{Heartbeat: 100 * time.Millisecond, Timeout: 500 * time.Millisecond, Mode: ModeMajority},
		peers: []cs.ID{2, 3, 4, 5}, rp: &replay{}, detStart: t0}
	nd.metrics = newMetrics(nd)
	for _, j := range nd.peers {
		nd.rp.trusted.Add(j)
	}
	heard := func(j cs.ID) time.Time {
		if j == 2 {
			return t0 // P2 silent from the start
		}
		return t0.Add(time.Hour) // the others always heard
	}
	fv := &fakeView{heard: heard, votes: map[cs.ID]cs.Set{}}
	round := func(at time.Duration) ([]cs.Input, []cs.ID) {
		ins, votes := nd.detectAt(t0.Add(at), fv)
		for _, j := range votes {
			nd.rp.votes.Add(j)
		}
		return ins, votes
	}
	for at := 50 * time.Millisecond; at <= 500*time.Millisecond; at += 50 * time.Millisecond {
		if ins, votes := round(at); len(ins)+len(votes) != 0 {
			t.Fatalf("at %v, before the timeout: %v, votes %v", at, ins, votes)
		}
	}
	if ins, votes := round(550 * time.Millisecond); len(ins) != 0 || !slices.Equal(votes, []cs.ID{2}) {
		t.Fatalf("past the timeout: %v, votes %v; want a vote against P2 and no suspicion", ins, votes)
	}
	if _, votes := round(650 * time.Millisecond); len(votes) != 0 {
		t.Fatalf("voted again: %v", votes)
	}
	fv.votes[3] = cs.NewSet(2)
	fv.votes[2] = cs.NewSet(2) // P2 about itself: not counted
	if ins, _ := round(700 * time.Millisecond); len(ins) != 0 {
		t.Fatalf("2 votes of 5 (and P2's own): %v, want no suspicion", ins)
	}
	fv.votes[5] = cs.NewSet(2, 4)
	if ins, _ := round(750 * time.Millisecond); !slices.Equal(ins, []cs.Input{{Kind: cs.InSuspect, Who: 2}}) {
		t.Fatalf("3 votes of 5: %v, want P2 suspected", ins)
	}
}
