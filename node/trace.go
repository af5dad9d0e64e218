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
	tw := trace.NewWriter(w, TraceHeader(cfg))
	for _, e := range evs {
		tw.Event(e.ev)
	}
	return len(evs), tw.Flush()
}
