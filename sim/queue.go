package sim

import "critsec/cs"

// Event kinds.
const (
	// evArrive: a message copy reaches node's input queue.
	evArrive uint8 = iota + 1
	// evHandle: node's processor finishes the receive overhead of the job
	// at the head of its input queue (or is free for a local call) and
	// runs it.
	evHandle
	// evTimer: the workload makes node call op (Entry or Exit).
	evTimer
	// evCrash: node crashes.
	evCrash
	// evDetect: node's failure detector starts suspecting who.
	evDetect
)

// event is one entry of the event queue. It is a plain struct kept in a
// slice-backed heap, so scheduling an event allocates nothing.
type event struct {
	t    float64
	seq  uint64
	msg  cs.Message // evArrive
	node int32      // where the event happens
	from int32      // evArrive: sender; evDetect: the suspected process
	kind uint8
	op   cs.Op // evTimer
}

// queue is a binary min-heap of events ordered by (t, seq); seq increases
// with every push, so events at equal times come out in the order they were
// scheduled and runs repeat exactly. push and pop cost O(log n).
type queue struct {
	ev  []event
	seq uint64
}

func (q *queue) len() int { return len(q.ev) }

func before(a, b *event) bool { return a.t < b.t || (a.t == b.t && a.seq < b.seq) }

// push schedules e (its seq is assigned here).
func (q *queue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.ev = append(q.ev, e)
	h := q.ev
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *queue) pop() event {
	h := q.ev
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = event{} // drop the message reference
	h = h[:last]
	q.ev = h
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && before(&h[r], &h[l]) {
			m = r
		}
		if !before(&h[m], &h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top
}

// peek returns the earliest event without removing it.
func (q *queue) peek() *event { return &q.ev[0] }
