package node

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
)

// partition cuts the links between pairs of in-process nodes: a cut pair
// dials no connection to each other, and those it had are closed.
type partition struct {
	mu      sync.Mutex
	blocked map[[2]cs.ID]bool
	conns   map[[2]cs.ID][]net.Conn
	next    cs.ID
}

func newPartition() *partition {
	return &partition{blocked: map[[2]cs.ID]bool{}, conns: map[[2]cs.ID][]net.Conn{}}
}

// adjust is startClusterWith's hook: node i (in start order) dials
// through the partition.
func (p *partition) adjust(o *Options) {
	p.next++
	from := p.next
	o.Transport = func(tc *transport.Config) {
		byAddr := map[string]cs.ID{}
		for id, a := range tc.Peers {
			byAddr[a] = id
		}
		tc.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			key := [2]cs.ID{from, byAddr[addr]}
			p.mu.Lock()
			cut := p.blocked[key]
			p.mu.Unlock()
			if cut {
				return nil, errors.New("partitioned")
			}
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				p.mu.Lock()
				p.conns[key] = append(p.conns[key], c)
				p.mu.Unlock()
			}
			return c, err
		}
	}
}

// cut partitions a from b, both ways.
func (p *partition) cut(a, b cs.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, key := range [][2]cs.ID{{a, b}, {b, a}} {
		p.blocked[key] = true
		for _, c := range p.conns[key] {
			c.Close()
		}
		p.conns[key] = nil
	}
}

// heal lifts every cut.
func (p *partition) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.blocked)
}

const majorityProblem = "alg: ftraymond\nn: 3\nk: 1\ndetector:\n  heartbeat: 50ms\n  timeout: 250ms\n  mode: majority\n"

// declaredBy returns the peers nd declared crashed.
func declaredBy(nd *Node) []cs.ID {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.cut.Members()
}

// waitCond polls cond for up to 10 s.
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// majorityHolder starts three in-process members in majority mode
// through a partition, and returns them with P1 InCS and holding a lease,
// and a context for the rest of the test.
func majorityHolder(t *testing.T) (*partition, []*Node, context.Context) {
	t.Helper()
	p := newPartition()
	_, nodes := startClusterWith(t, majorityProblem, 3, nil, p.adjust)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	if err := nodes[0].Enter(ctx); err != nil {
		t.Fatal(err)
	}
	waitCond(t, "P1's lease", func() bool { return nodes[0].Lease().Valid(time.Now()) })
	return p, nodes, ctx
}

// TestMajorityPartition: majority mode, n = 3, k = 1. The holder P1 cut
// off from both others loses its lease within the fence and never
// declares anyone (it cannot gather two votes); P2 and P3 vote against it
// and declare it crashed, and P2's waiting entry completes after P1's
// lease ended. Healed, P1 is refused and stops with ErrCrashed.
func TestMajorityPartition(t *testing.T) {
	p, nodes, ctx := majorityHolder(t)
	entered := make(chan time.Time, 1)
	go func() {
		err := nodes[1].Enter(ctx)
		if err != nil {
			t.Errorf("P2 enter: %v", err)
		}
		entered <- time.Now()
	}()
	p.cut(1, 2)
	p.cut(1, 3)
	var p2In time.Time
	select {
	case p2In = <-entered:
	case <-ctx.Done():
		t.Fatal("P2 never entered after P1 was cut off")
	}
	if l := nodes[0].Lease(); l.Valid(p2In) {
		t.Fatalf("P2 entered at %v while P1's lease ran until %v", p2In.Format(time.StampMicro), l.Until.Format(time.StampMicro))
	}
	for _, i := range []int{1, 2} {
		waitCond(t, "P1 declared crashed", func() bool { return len(declaredBy(nodes[i])) == 1 })
	}
	time.Sleep(500 * time.Millisecond) // the fault goes on: two timeouts more
	if d := declaredBy(nodes[0]); len(d) != 0 {
		t.Errorf("P1, cut off from the majority, declared %v crashed", d)
	}
	if nodes[0].Lease().Valid(time.Now()) {
		t.Errorf("P1's lease renewed while cut off")
	}
	p.heal()
	select {
	case <-nodes[0].Done():
	case <-ctx.Done():
		t.Fatal("P1 did not stop after the partition healed")
	}
	if err := nodes[0].Err(); !errors.Is(err, ErrCrashed) {
		t.Errorf("P1 stopped with %v, want ErrCrashed", err)
	}
	if err := nodes[1].Exit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMajorityNonTransitive: majority mode, n = 3: P1 (the holder) and P2
// cut from each other, both still linked to P3. Each votes against the
// other, P3 against neither: nobody is declared crashed, P1 keeps its
// lease (P3's echo is one of any majority's) and P2 waits; healed, P1
// exits and P2 enters.
func TestMajorityNonTransitive(t *testing.T) {
	p, nodes, ctx := majorityHolder(t)
	p.cut(1, 2)
	entered := make(chan error, 1)
	go func() { entered <- nodes[1].Enter(ctx) }()
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) { // four timeouts
		for i, nd := range nodes {
			if d := declaredBy(nd); len(d) != 0 {
				t.Fatalf("P%d declared %v crashed: no majority voted against anyone", i+1, d)
			}
		}
		if s, _ := nodes[1].State(); s == cs.InCS {
			t.Fatal("P2 entered while P1 was InCS")
		}
	}
	if !nodes[0].Lease().Valid(time.Now()) {
		t.Error("P1 lost its lease though P3 echoes it")
	}
	p.heal()
	if err := nodes[0].Exit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-entered; err != nil {
		t.Fatalf("P2 never entered after the heal: %v", err)
	}
}
