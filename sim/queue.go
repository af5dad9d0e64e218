package sim

import "github.com/critsec/critsec/cs"

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
	// evTrust: node's failure detector stops suspecting who.
	evTrust
)

// event is one entry of the event queue: a plain struct without pointers,
// kept in a slice-backed heap, so scheduling an event allocates nothing and
// the garbage collector never scans the heap. A message in transit waits
// in the queue's slab, at index slot.
type event struct {
	t    float64
	seq  uint64
	node int32 // where the event happens
	from int32 // evArrive: sender; evDetect, evTrust: the process suspected or trusted
	slot int32 // evArrive: the message's index in queue.msgs
	kind uint8
	op   cs.Op // evTimer
}

// queue is a binary min-heap of events ordered by (t, seq); seq increases
// with every push, so events at equal times come out in the order they were
// scheduled and runs repeat exactly. push and pop cost O(log n) moves of
// 32-byte entries (a 4-ary heap measured no faster).
type queue struct {
	ev  []event
	seq uint64
	// msgs holds the messages of evArrive events; free lists its unused
	// slots.
	msgs []cs.Message
	free []int32
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
		if !before(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// pushMsg schedules the arrival of m.
func (q *queue) pushMsg(e event, m cs.Message) {
	if n := len(q.free); n > 0 {
		e.slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.msgs[e.slot] = m
	} else {
		e.slot = int32(len(q.msgs))
		q.msgs = append(q.msgs, m)
	}
	q.push(e)
}

// takeMsg returns the message of an evArrive event and frees its slot.
func (q *queue) takeMsg(e *event) cs.Message {
	m := q.msgs[e.slot]
	q.msgs[e.slot] = nil
	q.free = append(q.free, e.slot)
	return m
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *queue) pop() event {
	h := q.ev
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	q.ev = h
	if last == 0 {
		return top
	}
	// Sift the hole at the root down, then put x in it.
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
		if !before(&h[m], &x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
	return top
}

// peek returns the earliest event without removing it.
func (q *queue) peek() *event { return &q.ev[0] }
