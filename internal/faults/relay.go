package faults

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// relay is the hub's TCP relay, in the relay process (relayProc): one
// listener per member J, to which the hub sends the connections to J's
// service address; it dials J from the caller's relay address and copies
// both ways, each chunk held for the current delay of the two ends.
type relay struct {
	mu    sync.Mutex
	delay []time.Duration // by member id - 1
	lns   []net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// newRelay starts the relay for n members in this process's namespace
// (the relay process runs in the hub's).
func newRelay(n int) (*relay, error) {
	r := &relay{delay: make([]time.Duration, n), conns: map[net.Conn]bool{}}
	for j := 1; j <= n; j++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("%s.0.254:%d", subnet, relayPort+j))
		if err != nil {
			r.close()
			return nil, err
		}
		r.lns = append(r.lns, ln)
		r.wg.Go(func() { r.serve(ln, j, n) })
	}
	return r, nil
}

func (r *relay) setDelay(id int, d time.Duration) {
	r.mu.Lock()
	r.delay[id-1] = d
	r.mu.Unlock()
}

// between is the delay of a chunk between members i and j.
func (r *relay) between(i, j int) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.delay[i-1] + r.delay[j-1]
}

// track records c as open (false: c is closed, or the relay is).
func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		c.Close()
		return false
	}
	r.conns[c] = true
	return true
}

func (r *relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

// serve relays the connections to member j.
func (r *relay) serve(ln net.Listener, j, n int) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			return
		}
		r.wg.Go(func() {
			defer r.untrack(c)
			var i int
			if a, ok := c.RemoteAddr().(*net.TCPAddr); ok && a.IP.To4() != nil {
				i = int(a.IP.To4()[3])
			}
			if i < 1 || i > n {
				return // not from a member
			}
			up, err := dial(fmt.Sprintf("%s.2.%d:0", subnet, i), MemberAddr(j))
			if err != nil || !r.track(up) {
				return
			}
			defer r.untrack(up)
			done := make(chan struct{}, 2)
			go func() { r.copy(up, c, i, j); done <- struct{}{} }()
			go func() { r.copy(c, up, i, j); done <- struct{}{} }()
			<-done // one way ended: end both
		})
	}
}

// chunk is bytes read at a time.
type chunk struct {
	b  []byte
	at time.Time
}

// copy copies src to dst, each chunk written once the delay between i
// and j has passed since it was read; at most 64 chunks wait.
func (r *relay) copy(dst, src net.Conn, i, j int) {
	q := make(chan chunk, 64)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{b[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range q {
		time.Sleep(time.Until(ch.at.Add(r.between(i, j))))
		if _, err := dst.Write(ch.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range q { // let the reader end
	}
}

// close stops accepting, closes every relayed connection and waits.
func (r *relay) close() {
	for _, ln := range r.lns {
		ln.Close()
	}
	r.mu.Lock()
	conns := r.conns
	r.conns = nil
	r.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	r.wg.Wait()
}
