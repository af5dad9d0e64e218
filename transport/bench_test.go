package transport

import (
	"errors"
	"testing"
	"time"

	"github.com/critsec/critsec/alg/raymond"
)

// BenchmarkRoundTrip measures a message's latency on loopback: P1 sends
// REQUEST to P2, whose consumer answers REPLY at once; one op is the round
// trip, two messages over TLS 1.3 on established connections. The
// "µs/msg" metric is half of it.
//
//	go test ./transport -run '^$' -bench RoundTrip -benchtime 20000x -count 5
func BenchmarkRoundTrip(b *testing.B) {
	c := newCluster(b, clusterOpts{n: 2})
	p1, p2 := c.ts[1], c.ts[2]
	go func() {
		for d := range p2.Inbox() {
			p2.Confirm(d.From, d.Seq)
			if _, err := p2.Send(1, raymond.Reply{Count: 1}); err != nil {
				return
			}
		}
	}()
	roundTrip := func(i int) {
		if _, err := p1.Send(2, raymond.Request{Last: int64(i)}); err != nil {
			b.Fatal(err)
		}
		d := <-p1.Inbox()
		p1.Confirm(d.From, d.Seq)
	}
	roundTrip(0) // connect
	b.ResetTimer()
	for i := range b.N {
		roundTrip(i + 1)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(2*b.N), "µs/msg")
}

// BenchmarkStream measures the throughput of one channel: P1 sends b.N
// messages to P2 back to back; one op is one message delivered.
//
//	go test ./transport -run '^$' -bench Stream -benchtime 200000x -count 5
func BenchmarkStream(b *testing.B) {
	c := newCluster(b, clusterOpts{n: 2})
	p1, p2 := c.ts[1], c.ts[2]
	if _, err := p1.Send(2, raymond.Request{}); err != nil {
		b.Fatal(err)
	}
	<-p2.Inbox() // connected
	b.ResetTimer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range b.N {
			d := <-p2.Inbox()
			p2.Confirm(d.From, d.Seq)
		}
	}()
	for i := range b.N {
		for {
			_, err := p1.Send(2, raymond.Request{Last: int64(i)})
			if !errors.Is(err, ErrQueueFull) {
				if err != nil {
					b.Fatal(err)
				}
				break
			}
			time.Sleep(10 * time.Microsecond) // acknowledgements lag behind
		}
	}
	<-done
}
