package node

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/critsec/critsec/cs"
)

// metrics are a node's Prometheus metrics (docs/network.md,
// "Observability"), in a registry of its own.
type metrics struct {
	reg                 *prometheus.Registry
	sent, received      *prometheus.CounterVec // by message kind and peer
	state               prometheus.Gauge       // 1 InCS, 0 OutCS
	pending             prometheus.Gauge       // 0 none, 1 entry, 2 exit
	enterWait, exitWait prometheus.Histogram
	fsync               prometheus.Histogram
	suspicions, trusts  prometheus.Counter
	lateRounds, votes   prometheus.Counter
	detection           prometheus.Histogram
	group               prometheus.Histogram
}

// waitBuckets are the buckets of the entry and exit waits, 100 µs to 30 s.
var waitBuckets = prometheus.ExponentialBucketsRange(1e-4, 30, 16)

func newMetrics(nd *Node) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	f := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "critsec", Name: name, Help: help}
	}
	m.sent = prometheus.NewCounterVec(prometheus.CounterOpts(f("messages_sent_total", "Messages the machine sent, by kind and destination (Self included).")), []string{"kind", "peer"})
	m.received = prometheus.NewCounterVec(prometheus.CounterOpts(f("messages_received_total", "Messages the machine took, by kind and sender (Self included).")), []string{"kind", "peer"})
	m.state = prometheus.NewGauge(prometheus.GaugeOpts(f("in_cs", "1 while the node is InCS, 0 while OutCS.")))
	m.pending = prometheus.NewGauge(prometheus.GaugeOpts(f("pending_request", "The pending request: 0 none, 1 entry, 2 exit.")))
	hist := func(name, help string, b []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "critsec", Name: name, Help: help, Buckets: b})
	}
	m.enterWait = hist("entry_wait_seconds", "From an Enter call taken by the machine to InCS.", waitBuckets)
	m.exitWait = hist("exit_wait_seconds", "From an Exit call taken by the machine to OutCS.", waitBuckets)
	m.fsync = hist("log_fsync_seconds", "Duration of the write-ahead log's fsyncs (one per group commit).", prometheus.ExponentialBucketsRange(1e-5, 1, 16))
	m.group = hist("log_group_inputs", "Inputs per group commit of the write-ahead log.", prometheus.ExponentialBuckets(1, 2, 9))
	m.suspicions = prometheus.NewCounter(prometheus.CounterOpts(f("detector_crashes_total", "Peers the failure detector declared crashed (suspected after being trusted: final).")))
	m.lateRounds = prometheus.NewCounter(prometheus.CounterOpts(f("detector_late_rounds_total", "Detector rounds that came more than a heartbeat late (a paused process or a slow fsync) and so suspected nobody.")))
	m.trusts = prometheus.NewCounter(prometheus.CounterOpts(f("detector_trusts_total", "Peers the failure detector began to trust.")))
	m.detection = hist("detector_detection_seconds", "How long a peer declared crashed had been silent when it was (the detection time).", prometheus.ExponentialBucketsRange(1e-2, 10, 12))
	m.votes = prometheus.NewCounter(prometheus.CounterOpts(f("detector_votes_total", "Votes this node cast against silent peers (majority mode): final; a majority of votes declares a peer crashed.")))
	m.reg.MustRegister(m.sent, m.received, m.state, m.pending, m.enterWait, m.exitWait, m.fsync, m.group, m.suspicions, m.trusts, m.lateRounds, m.detection, m.votes)
	stat := func(name, help string, v func() int64) {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts(f(name, help)), func() float64 { return float64(v()) }))
	}
	stat("log_compactions_total", "Compactions of the write-ahead log: a snapshot replaced the records before it.", func() int64 { return nd.logStats.compactions.Load() })
	stat("reconnects_total", "Connections dialed after the first on a channel.", func() int64 { return nd.tr.Stats().Reconnects })
	stat("retransmissions_total", "Data frames sent again after a reconnection.", func() int64 { return nd.tr.Stats().Retransmitted })
	stat("duplicates_total", "Received frames dropped as already delivered.", func() int64 { return nd.tr.Stats().Duplicates })
	stat("refused_connections_total", "Connections refused: failed TLS handshakes, wrong identities, bad hellos, configuration mismatches.", func() int64 { return nd.tr.Stats().RefusedConns })
	stat("detector_returned_total", "Connections from peers declared crashed: a false suspicion, or a restart of a crashed member; each is refused.", func() int64 { return nd.tr.Stats().Returned })
	stat("refused_frames_total", "Frames refused: oversized, malformed, unknown type or kind, out of sequence.", func() int64 { return nd.tr.Stats().RefusedFrames })
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts(f("messages_unacknowledged", "Messages the node sent that their receivers have not yet logged and acknowledged; 0 on every member, with nothing pending, is the idle cluster in which a member may rejoin on an empty log.")), func() float64 { return float64(nd.tr.Unacked()) }))
	return m
}

// peerLabel is a peer's label value.
func peerLabel(id cs.ID) string { return strconv.Itoa(int(id)) }

// MetricsHandler serves the node's metrics in Prometheus's text format
// (critsec node --metrics ADDR serves it at /metrics).
func (nd *Node) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(nd.metrics.reg, promhttp.HandlerOpts{})
}
