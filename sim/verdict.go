package sim

import (
	"fmt"

	"github.com/critsec/critsec/cs"
)

// The verdicts at the end of a run, beside the checks made at every event:
// the drain's limits, starvation and livelock. docs/experiments.md
// ("Starvation, livelock and the drain's limits") says why the bounds are
// what they are.

// StarveFactor and StarveFloor make the default starvation bound:
// StarveFactor times the longest waiting time of a request completed by
// the stop (a request must have waited more than that to be starved), and
// at least StarveFloor times Tt + Ts + Tr + E (one message and one CS: for
// runs with few completed requests, and for light loads, where most
// requests wait for no one and the few that meet a holder wait for its
// CS).
const (
	StarveFactor = 2
	StarveFloor  = 100
)

// MinDrainEvents is the least default event limit of a drain
// (Config.DrainEvents): the drain takes at most as many events as the run
// before it, and at least this many.
const MinDrainEvents = 10_000_000

// starveBound is Config.StarveAfter, or the bound derived from the waiting
// times completed so far.
func (e *engine) starveBound() float64 {
	c := e.cfg
	if c.StarveAfter > 0 {
		return c.StarveAfter
	}
	return max(StarveFactor*max(e.entryW.max, e.exitW.max), StarveFloor*(c.Tt+c.Ts+c.Tr+c.E))
}

// drainTime is the drain's limit in simulated time without a state change.
func (e *engine) drainTime() float64 {
	if e.cfg.DrainTime > 0 {
		return e.cfg.DrainTime
	}
	return e.starve
}

// drainCut ends the drain, with Result.DrainCut saying why, when the next
// event is a message's (an arrival, or a handling) and comes more than
// drainTime after the later of the stop and the last state change (the
// drain makes no new requests, so it sees at most two state changes per
// process: its time is bounded), or when the drain has taken its limit of
// events. Other events do not cut it: there are finitely many (the Entry
// timers the stop left, which do nothing, Exit timers, crashes and the
// detector's plan).
func (e *engine) drainCut() bool {
	since := max(e.stopAt, e.lastState)
	next := e.q.peek()
	if limit := e.drainTime(); (next.kind == evArrive || next.kind == evHandle) && next.t > since+limit {
		e.now = max(e.now, since+limit)
		e.cutQuiet = limit
		e.res.DrainCut = fmt.Sprintf("the drain reached its time limit: no state change for %.6g time units (since t=%.6g; the limit is %.6g from the later of that and the stop at t=%.6g)", e.now-e.lastState, e.lastState, limit, e.stopAt)
		return true
	}
	limit := e.cfg.DrainEvents
	if limit == 0 {
		limit = max(MinDrainEvents, e.stopEvents)
	}
	if e.res.Events-e.stopEvents >= limit {
		e.res.DrainCut = fmt.Sprintf("the drain reached its event limit: %d events after the stop at t=%.6g", limit, e.stopAt)
		return true
	}
	return false
}

// verdicts gives the verdicts of the end of a run that no check stopped,
// the most precise true statement first that trace check can confirm: a
// starvation, observed up to the stop of the workload (a drain makes no
// new entries, so the exits it leaves waiting are not starved; the
// starved request is still pending at the end); then a drain that ended
// with no event left and a request that no bound holds (a deadlock of the
// drain: no continuation without new entries completes it, which trace
// check confirms after the trace's drain event; a starvation before the
// stop comes first, because the workload would have made more entries);
// then a livelock at the end, then a cut drain, which leaves the
// run incomplete. A deadlock without a drain (no event left) stopped the
// run before: every live process waits for ever, which says more than a
// starvation.
func (e *engine) verdicts() {
	if e.res.Violation != nil || e.res.Stop == StopMemory {
		return
	}
	if !e.stopping {
		e.starve = e.starveBound()
	}
	e.res.StarveBound = e.starve
	e.curKind = 0
	if !e.starved() {
		if e.stuck != "" {
			e.fail(KindDeadlock, e.stuck)
			return
		}
		if !e.livelocked() {
			return
		}
	}
	e.res.Violation.Event = "end of the run"
	if e.res.DrainCut != "" {
		e.res.Violation.Event = "drain cut"
	}
}

// starved reports a starvation: a live process's request made at r and
// still pending, with r + bound before the end of the observation (the stop
// of the workload, or the end) and a state change of another process after
// r + bound. The oldest such request is named.
func (e *engine) starved() bool {
	end, last, entries := e.now, e.lastState, e.res.Entries
	if e.stopping {
		end, last, entries = e.stopAt, e.stopState, e.stopEntries
	}
	b, blocked := e.starve, e.exitsBlocked()
	oldest, count := e.oldestPending(func(nd *node) bool {
		return nd.reqTime+b < end && last > nd.reqTime+b && !(blocked && nd.pending == cs.Exit)
	})
	if count == 0 {
		return false
	}
	nd := &e.nodes[oldest]
	also := ""
	if count > 1 {
		also = fmt.Sprintf("; %d requests in all waited longer than the bound", count)
	}
	e.fail(KindStarvation, fmt.Sprintf("P%d's %s request, made at t=%.6g, was still pending %.6g time units later (at t=%.6g), longer than the starvation bound %.6g, while the other processes completed %d CS entries, the last state change at t=%.6g%s",
		oldest, nd.pending, nd.reqTime, end-nd.reqTime, end, b, entries-nd.reqEntries, last, also))
	v := e.res.Violation
	v.Who, v.Since, v.Bound = cs.ID(oldest), nd.reqTime, b
	e.res.Starved = count
	return true
}

// livelocked reports a livelock: requests of live processes pending at the
// end, and messages delivered with no state change for at least the
// starvation bound (or the drain's time limit, when that cut it). When the
// drain was not cut, the quiet time runs to the last delivery, not to the
// end: events that change nothing (the Entry timers a drain leaves) can
// come long after the messages stopped, which is no livelock.
func (e *engine) livelocked() bool {
	end, limit := e.now, e.starve
	if e.cutQuiet > 0 {
		limit = e.cutQuiet
	} else {
		end = e.lastDeliver
	}
	delivered := e.res.Delivered - e.delivered
	// lastState + limit <= end, as trace check confirms it.
	if e.lastState+limit > end || delivered == 0 {
		return false
	}
	blocked := e.exitsBlocked()
	oldest, count := e.oldestPending(func(nd *node) bool { return !(blocked && nd.pending == cs.Exit) })
	if count == 0 {
		return false
	}
	nd := &e.nodes[oldest]
	e.fail(KindLivelock, fmt.Sprintf("no state change for %.6g time units (since t=%.6g) while %d messages were delivered and %d requests are pending, the oldest P%d's %s request made at t=%.6g",
		end-e.lastState, e.lastState, delivered, count, oldest, nd.pending, nd.reqTime))
	v := e.res.Violation
	v.Since, v.Bound = e.lastState, limit
	return true
}

// oldestPending returns the live process with the oldest pending request
// that keep accepts (ties by id), and how many such requests there are.
func (e *engine) oldestPending(keep func(*node) bool) (oldest int32, count int) {
	for id := int32(1); int(id) <= e.n; id++ {
		nd := &e.nodes[id]
		if nd.crashed || nd.pending == cs.None || !keep(nd) {
			continue
		}
		count++
		if oldest == 0 || nd.reqTime < e.nodes[oldest].reqTime {
			oldest = id
		}
	}
	return oldest, count
}
