package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
)

// logBuf collects a transport's log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testCluster is n transports on loopback under one CA. Node ids in skip
// get a listener (their address is known to the others) but no transport,
// so a test can play them from a raw socket.
type testCluster struct {
	ca    *CA
	ts    map[cs.ID]*Transport
	lns   map[cs.ID]net.Listener
	logs  map[cs.ID]*logBuf
	mu    sync.Mutex
	conns []net.Conn // every connection dialed, for cutting
}

type clusterOpts struct {
	n            int
	skip         cs.ID
	fingerprints map[cs.ID]Fingerprint
}

var testFingerprint = Fingerprint{{"alg", "raymond"}, {"n", "3"}, {"k", "1"}}

func newCluster(t testing.TB, o clusterOpts) *testCluster {
	t.Helper()
	ca, err := NewCA("test cluster")
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{ca: ca, ts: map[cs.ID]*Transport{}, lns: map[cs.ID]net.Listener{}, logs: map[cs.ID]*logBuf{}}
	addrs := map[cs.ID]string{}
	for id := cs.ID(1); int(id) <= o.n; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c.lns[id], addrs[id] = ln, ln.Addr().String()
	}
	for id := cs.ID(1); int(id) <= o.n; id++ {
		if id == o.skip {
			continue
		}
		ident, err := ca.Identity(id)
		if err != nil {
			t.Fatal(err)
		}
		peers := map[cs.ID]string{}
		for j, a := range addrs {
			if j != id {
				peers[j] = a
			}
		}
		fp := testFingerprint
		if f, ok := o.fingerprints[id]; ok {
			fp = f
		}
		c.logs[id] = &logBuf{}
		tr, err := New(Config{
			Self: id, Listener: c.lns[id], Peers: peers, Identity: ident, Fingerprint: fp,
			Decode: raymond.Decode, MinBackoff: 2 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
			Heartbeat: 200 * time.Millisecond,
			Dial: func(ctx context.Context, addr string) (net.Conn, error) {
				var d net.Dialer
				conn, err := d.DialContext(ctx, "tcp", addr)
				if err == nil {
					c.mu.Lock()
					c.conns = append(c.conns, conn)
					c.mu.Unlock()
				}
				return conn, err
			},
			Logger: slog.New(slog.NewTextHandler(c.logs[id], nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		c.ts[id] = tr
	}
	t.Cleanup(func() {
		for _, tr := range c.ts {
			tr.Close()
		}
		for id, ln := range c.lns {
			if c.ts[id] == nil {
				ln.Close()
			}
		}
	})
	return c
}

// cut closes a random connection dialed so far.
func (c *testCluster) cut(r *rand.Rand) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.conns) > 0 {
		c.conns[r.IntN(len(c.conns))].Close()
	}
}

// TestFIFOExactlyOnceAcrossCuts: three nodes each send a numbered stream
// to every node (itself included) while connections are closed at random;
// every stream arrives whole, in order, each message once.
func TestFIFOExactlyOnceAcrossCuts(t *testing.T) {
	const n, m = 3, 1000
	c := newCluster(t, clusterOpts{n: n})
	stop := make(chan struct{})
	var chaos sync.WaitGroup
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		r := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(1+r.IntN(4)) * time.Millisecond):
				c.cut(r)
			}
		}
	}()
	for from := cs.ID(1); from <= n; from++ {
		go func() {
			for i := 1; i <= m; i++ {
				for to := cs.ID(1); to <= n; to++ {
					if _, err := c.ts[from].Send(to, raymond.Request{Last: int64(i)}); err != nil {
						t.Errorf("P%d send to P%d: %v", from, to, err)
						return
					}
				}
				if i%5 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for self := cs.ID(1); self <= n; self++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := c.ts[self]
			last := map[cs.ID]uint64{}
			deadline := time.After(30 * time.Second)
			for got := 0; got < n*m; got++ {
				select {
				case d := <-tr.Inbox():
					want := last[d.From] + 1
					if d.Seq != want || d.Msg != (raymond.Request{Last: int64(want)}) {
						t.Errorf("P%d: from P%d got seq %d %v, want seq %d REQUEST %d", self, d.From, d.Seq, d.Msg, want, want)
						return
					}
					last[d.From] = d.Seq
					if d.Seq%7 == 0 { // some delivered, unconfirmed: resent after a cut
						tr.Confirm(d.From, d.Seq)
					}
				case <-deadline:
					t.Errorf("P%d: %d of %d messages after 30 s; last %v", self, got, n*m, last)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	chaos.Wait()
	var reconnects, dups, retrans int64
	for id, tr := range c.ts {
		s := tr.Stats()
		reconnects += s.Reconnects
		dups += s.Duplicates
		retrans += s.Retransmitted
		if s.RefusedConns != 0 || s.RefusedFrames != 0 {
			t.Errorf("refusals among honest nodes: P%d %+v; log:\n%s", id, s, grepLines(c.logs[id].String(), "refused"))
		}
	}
	if reconnects == 0 {
		t.Error("no connection was cut: the test tested nothing")
	}
	t.Logf("%d reconnects, %d retransmissions, %d duplicates dropped", reconnects, retrans, dups)
	// Nothing more arrives: each message was delivered once.
	select {
	case d := <-c.ts[1].Inbox():
		t.Errorf("extra delivery %+v", d)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestConfirmedAtOnce: a consumer that confirms a delivery the moment it
// takes it from the inbox, before the transport's receiving goroutine
// runs again, has it acknowledged. The test holds the receiver's inbox
// full, so that the delivery waits at the handover, and takes it while
// holding the channel's lock, which the receiving goroutine would need to
// count it delivered only then; Confirm, which takes only what was
// delivered, would drop the confirmation, and the channel's last message
// would stay unacknowledged for good (and be given again to a member
// that rejoins on an empty log, which forgot that it took it).
func TestConfirmedAtOnce(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 2})
	p1, p2 := c.ts[1], c.ts[2]
	for range cap(p2.inbox) {
		p2.inbox <- Delivery{}
	}
	if _, err := p1.Send(2, raymond.Request{Last: 1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery at the handover", func() bool { return p2.Stats().Delivered == 1 })
	in := p2.in[1]
	in.mu.Lock()
	for range cap(p2.inbox) {
		<-p2.inbox
	}
	d := <-p2.inbox
	delivered := in.delivered
	in.mu.Unlock()
	if d.From != 1 || d.Seq != 1 {
		t.Fatalf("took %+v, want seq 1 from P1", d)
	}
	if delivered != d.Seq {
		t.Fatalf("P2 holds seq %d from P1 while its channel counts %d delivered: a confirmation now is dropped", d.Seq, delivered)
	}
	if u := p1.Unacked(); u != 1 {
		t.Fatalf("P1 counts %d messages unacknowledged before P2 confirms, want 1", u)
	}
	p2.Confirm(d.From, d.Seq)
	waitFor(t, "P1 seeing it acknowledged", func() bool { return p1.Acked(2) == d.Seq })
	if u := p1.Unacked(); u != 0 {
		t.Fatalf("P1 counts %d messages unacknowledged once P2 confirmed, want 0", u)
	}
}

// expectDelivery waits for a message from `from` at tr.
func expectDelivery(t *testing.T, tr *Transport, from cs.ID) {
	t.Helper()
	select {
	case d := <-tr.Inbox():
		if d.From != from {
			t.Fatalf("delivery from P%d, want P%d", d.From, from)
		}
		tr.Confirm(d.From, d.Seq)
	case <-time.After(10 * time.Second):
		t.Fatalf("no delivery from P%d", from)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// readsNothing reports whether conn yields no application data: the read
// fails (a TLS alert or a closed connection) without a byte.
func readsNothing(conn io.Reader) bool {
	b := make([]byte, 1)
	n, err := conn.Read(b)
	return n == 0 && err != nil
}

// TestUnauthenticatedRefused: a client without a certificate, one whose
// certificate another CA signed, one that speaks no TLS and one that
// claims another node's id get nothing; each refusal is counted and
// logged, and the node keeps serving its peers.
func TestUnauthenticatedRefused(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 3})
	target := c.ts[1]
	addr := target.Addr().String()
	other, err := NewCA("another cluster")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Identity(2)
	if err != nil {
		t.Fatal(err)
	}
	ident2, err := c.ca.Identity(2)
	if err != nil {
		t.Fatal(err)
	}
	attempts := []struct {
		name string
		try  func() bool // reports whether the client got nothing
	}{
		{"no certificate", func() bool {
			conn, err := tls.Dial("tcp", addr, &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: ident2.CA, ServerName: NodeName(1)})
			if err != nil {
				return true
			}
			defer conn.Close()
			conn.Write(appendHello(nil, hello{from: 2, to: 1, fingerprint: testFingerprint}))
			return readsNothing(conn)
		}},
		{"certificate of another CA", func() bool {
			conn, err := tls.Dial("tcp", addr, &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{foreign.Cert}, InsecureSkipVerify: true})
			if err != nil {
				return true
			}
			defer conn.Close()
			conn.Write(appendHello(nil, hello{from: 2, to: 1, fingerprint: testFingerprint}))
			return readsNothing(conn)
		}},
		{"no TLS", func() bool {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				return true
			}
			defer conn.Close()
			conn.Write(appendHello(nil, hello{from: 2, to: 1, fingerprint: testFingerprint}))
			b, _ := io.ReadAll(conn)
			return !bytes.Contains(b, []byte{frameWelcome}) || len(b) < 8 // at most a TLS alert
		}},
		{"wrong node identity", func() bool {
			conn, err := tls.Dial("tcp", addr, ident2.clientConfig(1))
			if err != nil {
				return true
			}
			defer conn.Close()
			conn.Write(appendHello(nil, hello{from: 3, to: 1, fingerprint: testFingerprint}))
			return readsNothing(conn)
		}},
	}
	for i, a := range attempts {
		if !a.try() {
			t.Errorf("%s: the client got data", a.name)
		}
		waitFor(t, a.name+" refusal counted", func() bool { return target.Stats().RefusedConns >= int64(i+1) })
	}
	if s := target.Stats(); s.RefusedConns != int64(len(attempts)) {
		t.Errorf("%d refusals counted, want %d", s.RefusedConns, len(attempts))
	}
	for _, want := range []string{"TLS handshake failed", "wrong node identity"} {
		if !strings.Contains(c.logs[1].String(), want) {
			t.Errorf("no log line %q in:\n%s", want, c.logs[1])
		}
	}
	for _, from := range []cs.ID{2, 3} {
		if _, err := c.ts[from].Send(1, raymond.Reply{Count: 1}); err != nil {
			t.Fatal(err)
		}
		expectDelivery(t, target, from)
	}
}

// TestBadFramesRefused: an authenticated peer (node 2, played from a raw
// socket) sends an oversized frame, a frame of unknown type, a message of
// unknown kind, a malformed message and a sequence gap; each connection
// is refused, counted and logged, and node 1 keeps serving node 3.
func TestBadFramesRefused(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 3, skip: 2})
	target := c.ts[1]
	ident2, err := c.ca.Identity(2)
	if err != nil {
		t.Fatal(err)
	}
	data := func(seq uint64, kind string, enc []byte) []byte {
		return appendData(nil, seq, rawMsg{kind, enc})
	}
	bad := []struct {
		name  string
		frame []byte
	}{
		{"oversized", []byte{0x7f, 0xff, 0xff, 0xff, frameData}},
		{"empty", []byte{0, 0, 0, 0}},
		{"unknown type", appendFrame(nil, 99, nil)},
		{"unknown kind", data(1, "HELLO", []byte{'Q', 0})},
		{"malformed message", data(1, "REQUEST", []byte{'Q', 0x80})},
		{"sequence gap", data(5, "REQUEST", []byte{'Q', 2})},
		{"truncated data", appendFrame(nil, frameData, []byte{0x80})},
		{"ping without a stamp", appendFrame(nil, framePing, nil)},
		{"ping with a stamp of 0", appendFrame(nil, framePing, []byte{0, 0})},
		{"ping without votes", appendFrame(nil, framePing, []byte{5})},
		{"ping voting against P200", appendPing(nil, 5, cs.NewSet(200))},
	}
	for i, b := range bad {
		conn, err := tls.Dial("tcp", target.Addr().String(), ident2.clientConfig(1))
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		conn.Write(appendHello(nil, hello{from: 2, to: 1, fingerprint: testFingerprint}))
		f, err := readFrame(bufio.NewReader(conn), DefaultMaxFrame)
		if err != nil || f.typ != frameWelcome {
			t.Fatalf("%s: no welcome: %v %v", b.name, f, err)
		}
		conn.Write(b.frame)
		waitFor(t, b.name+" refused", func() bool { return target.Stats().RefusedFrames >= int64(i+1) })
		conn.Close()
		if _, err := c.ts[3].Send(1, raymond.Reply{Count: int32(i)}); err != nil {
			t.Fatal(err)
		}
		expectDelivery(t, target, 3)
	}
	if s := target.Stats(); s.RefusedFrames != int64(len(bad)) || s.Delivered != int64(len(bad)) {
		t.Errorf("stats %+v: want %d refused frames and as many deliveries from P3", s, len(bad))
	}
	if !strings.Contains(c.logs[1].String(), "refused a frame") {
		t.Errorf("no refusal logged:\n%s", c.logs[1])
	}
}

// TestFingerprintMismatch: two nodes whose configurations differ in k
// refuse each other, and each logs the field.
func TestFingerprintMismatch(t *testing.T) {
	other := Fingerprint{{"alg", "raymond"}, {"n", "3"}, {"k", "2"}}
	c := newCluster(t, clusterOpts{n: 2, fingerprints: map[cs.ID]Fingerprint{2: other}})
	c.ts[1].Send(2, raymond.Reply{Count: 1})
	c.ts[2].Send(1, raymond.Reply{Count: 1})
	for id, tr := range c.ts {
		waitFor(t, "refusals", func() bool { return tr.Stats().RefusedConns >= 2 })
		if log := c.logs[id].String(); !strings.Contains(log, "field=k") && !strings.Contains(log, "configuration field k differs") {
			t.Errorf("P%d does not name field k:\n%s", id, log)
		}
		if s := tr.Stats(); s.Delivered != 0 {
			t.Errorf("P%d delivered %d messages across a mismatch", id, s.Delivered)
		}
	}
}

// TestFingerprintDiff names the first differing field.
func TestFingerprintDiff(t *testing.T) {
	a := Fingerprint{{"alg", "x"}, {"n", "3"}}
	for _, c := range []struct {
		b    Fingerprint
		want string
	}{
		{Fingerprint{{"alg", "x"}, {"n", "3"}}, ""},
		{Fingerprint{{"alg", "x"}, {"n", "4"}}, "n"},
		{Fingerprint{{"alg", "y"}, {"n", "4"}}, "alg"},
		{Fingerprint{{"alg", "x"}}, "n"},
		{Fingerprint{{"alg", "x"}, {"n", "3"}, {"k", "1"}}, "k"},
	} {
		if got := a.Diff(c.b); got != c.want {
			t.Errorf("Diff(%v) = %q, want %q", c.b, got, c.want)
		}
	}
}

// TestSendErrors: unknown peers, oversized messages and a closed
// transport are refused.
func TestSendErrors(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 2})
	tr := c.ts[1]
	if _, err := tr.Send(9, raymond.Reply{}); err == nil {
		t.Error("send to a non-member accepted")
	}
	if _, err := tr.Send(2, rawMsg{"REQUEST", make([]byte, DefaultMaxFrame)}); err == nil {
		t.Error("oversized message accepted")
	}
	tr.Close()
	if _, err := tr.Send(2, raymond.Reply{}); !errors.Is(err, ErrClosed) {
		t.Errorf("send after close: %v", err)
	}
}

// rawMsg is a message of any kind and encoding, to send bad ones.
type rawMsg struct {
	kind string
	enc  []byte
}

func (m rawMsg) Kind() string                 { return m.kind }
func (rawMsg) Words() int                     { return 0 }
func (m rawMsg) AppendBinary(b []byte) []byte { return append(b, m.enc...) }

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// TestHandshakeSlotsBounded: strangers that connect and stay silent, from
// several addresses (loopback's 127.0.0.2, .3, ...), hold at most
// maxUnauthenticated slots; the next connection is refused at once, and
// once they leave, peers connect again.
func TestHandshakeSlotsBounded(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 2})
	target := c.ts[1]
	var idle []net.Conn
	for i := range maxUnauthenticated {
		conn, err := dialFrom(fmt.Sprintf("127.0.0.%d", 2+i/maxUnauthenticatedFrom), target.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, conn)
	}
	// P2's own connection may hold a slot for a moment: the slots are full
	// once a stranger is refused.
	waitFor(t, "a refusal", func() bool {
		conn, err := net.Dial("tcp", target.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetReadDeadline(time.Now().Add(time.Second))
		return readsNothing(conn) && target.Stats().RefusedConns > 0
	})
	if !strings.Contains(c.logs[1].String(), "already wait for their handshake") {
		t.Errorf("refusal not logged:\n%s", c.logs[1])
	}
	for _, conn := range idle {
		conn.Close()
	}
	if _, err := c.ts[2].Send(1, raymond.Reply{Count: 1}); err != nil {
		t.Fatal(err)
	}
	expectDelivery(t, target, 2)
}

// dialFrom dials addr over TCP from the local address ip (any port).
func dialFrom(ip, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return d.Dial("tcp", addr)
}

// TestHandshakeSlotsPerAddress: strangers from one address hold at most
// maxUnauthenticatedFrom slots, and a peer from another address is
// welcomed meanwhile.
func TestHandshakeSlotsPerAddress(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 2})
	target := c.ts[1]
	var idle []net.Conn
	defer func() {
		for _, conn := range idle {
			conn.Close()
		}
	}()
	for range 4 * maxUnauthenticatedFrom {
		conn, err := dialFrom("127.0.0.2", target.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, conn)
	}
	waitFor(t, "refusals", func() bool { return target.Stats().RefusedConns >= 3*maxUnauthenticatedFrom })
	if !strings.Contains(c.logs[1].String(), "connections from 127.0.0.2 already wait for their handshake") {
		t.Errorf("refusal not logged:\n%s", c.logs[1])
	}
	if _, err := c.ts[2].Send(1, raymond.Reply{Count: 1}); err != nil {
		t.Fatal(err)
	}
	expectDelivery(t, target, 2)
}
