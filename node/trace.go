package node

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
	"github.com/critsec/critsec/wal"
)

// TraceHeader is the header of the traces of cfg's cluster: the problem,
// its property, runtime "node", FIFO channels.
func TraceHeader(cfg *Config) trace.Header {
	p := cfg.Problem
	h := trace.Header{
		Alg: p.Alg.Name, L: p.Params.L, K: p.Params.K, Initial: p.Params.Initial,
		Coterie: p.Coterie, Quorums: p.Params.Quorums, Runtime: "node", FIFO: true,
	}
	if h.Initial == nil {
		h.Initial = []cs.ID{}
	}
	h.SetProperty(p.Property)
	return h
}

// LogPath is the path of node id's write-ahead log.
func LogPath(cfg *Config, id cs.ID) string { return filepath.Join(NodeDir(cfg, id), "wal") }

// NodeDir is node id's directory: DATA/node-I, where it keeps its log,
// its control socket and, under critsec run, its command's record.
func NodeDir(cfg *Config, id cs.ID) string {
	return filepath.Join(cfg.Data, fmt.Sprintf("node-%d", id))
}

// TraceFromLog replays node id's write-ahead log, read-only, and gives
// each input and its effects to event as trace events, in log order, with
// t the wall-clock time the node took the input (seconds since the Unix
// epoch): a request or a recv, then the sends and the state change it
// caused. The log holds exactly the inputs the node committed, each
// once, across crashes and restarts, so the events are what the node did
// as the rest of the cluster saw it; the traces of a cluster's members
// merge by t (on one host, or clocks kept in step) into one trace of the
// run. It returns the number of records read.
func TraceFromLog(cfg *Config, id cs.ID, event func(trace.Event)) (int, error) {
	ms, err := cfg.Problem.Machines()
	if err != nil {
		return 0, err
	}
	rp := newReplay(id, cfg.Problem.Params.N, cfg.Fingerprint(), ms[id-1], cfg.Problem.Decoder())
	rp.event = event
	rc, err := wal.Read(LogPath(cfg, id), rp.record)
	return rc.Records, err
}

// WriteClusterTrace writes to w one trace of the whole cluster's run: the
// events of every member's log (TraceFromLog) merged by t, ties broken by
// node id and then log order. Run it on logs the nodes no longer write
// (after they stopped). A recv's t is always later than its send's (the
// receiver took the message after the sender committed the input that
// sent it), so the merge keeps every message's send before its recv, and
// a node's state changes in the order the others could see them. extra
// events, such as the crash of a member killed by the caller at a known
// time, are merged in by t too.
func WriteClusterTrace(cfg *Config, w io.Writer, extra ...trace.Event) (int, error) {
	type stamped struct {
		ev  trace.Event
		seq int
	}
	var evs []stamped
	for _, e := range extra {
		evs = append(evs, stamped{e, len(evs)})
	}
	for id := cs.ID(1); int(id) <= cfg.Problem.Params.N; id++ {
		if _, err := TraceFromLog(cfg, id, func(e trace.Event) { evs = append(evs, stamped{e, len(evs)}) }); err != nil {
			return 0, fmt.Errorf("P%d: %w", id, err)
		}
	}
	slices.SortFunc(evs, func(a, b stamped) int {
		return cmp.Or(cmp.Compare(a.ev.T, b.ev.T), cmp.Compare(a.ev.Node, b.ev.Node), cmp.Compare(a.seq, b.seq))
	})
	events := make([]trace.Event, len(evs))
	for i, e := range evs {
		events[i] = e.ev
	}
	events = declaredCrashed(events)
	tw := trace.NewWriter(w, TraceHeader(cfg))
	for _, e := range events {
		tw.Event(e)
	}
	return len(events), tw.Flush()
}

// declaredCrashed makes a member declared crashed a crashed process of the
// trace, as the algorithms' model has it (a trusting detector's suspicion
// after a trust means a crash): at the first declaration of j (a suspect
// of j by a node that trusted j, or a crash event already there), a crash
// event of j, and none of j's events after it, nor the receipts of the
// messages j sent after it. A member declared crashed may still be alive
// (paused or cut off) and log steps of its own until it learns it; its
// command is fenced by then (docs/fencing.md), and the steps it takes are
// not the cluster's any more. events are in merged order.
func declaredCrashed(events []trace.Event) []trace.Event {
	trusted := map[[2]cs.ID]bool{}
	crashed := map[cs.ID]bool{}
	sent := map[[2]cs.ID]uint64{} // the last seq of link from -> to sent before from crashed
	out := events[:0:0]
	for _, e := range events {
		switch {
		case crashed[e.Node]:
			continue // a step of a declared member
		case e.Ev == trace.EvRecv && crashed[e.From] && e.Seq > sent[[2]cs.ID{e.From, e.Node}]:
			continue // a message the declared member sent after its declaration
		case e.Ev == trace.EvTrust:
			trusted[[2]cs.ID{e.Node, e.Who}] = true
		case e.Ev == trace.EvSend:
			sent[[2]cs.ID{e.Node, e.To}] = e.Seq
		case e.Ev == trace.EvCrash:
			crashed[e.Node] = true
		case e.Ev == trace.EvSuspect && trusted[[2]cs.ID{e.Node, e.Who}] && !crashed[e.Who]:
			crashed[e.Who] = true
			out = append(out, trace.Event{T: e.T, Ev: trace.EvCrash, Node: e.Who})
		}
		out = append(out, e)
	}
	return out
}
