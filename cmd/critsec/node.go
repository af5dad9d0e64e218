package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/trace"
	"github.com/critsec/critsec/transport"
)

var nodeFlags struct {
	config  string
	id      int
	check   bool
	fsync   bool
	ctl     string
	cut     time.Duration
	trace   string
	metr    string
	compact int
	rejoin  bool
}

var nodeCmd = &cobra.Command{
	Use:   "node --config FILE --id I",
	Short: "Run one member of a cluster over the network (docs/network.md)",
	Long: `node runs process I of the cluster that FILE describes: its machine, and a
reliable FIFO channel to and from every other member over TCP with mutual TLS
1.3 (docs/network.md). FILE is YAML: the problem in the fields of a problem
file (alg, n, l, k, coterie, quorums, topology, bounds, clamp, initial,
options), members (every id 1..n and its host:port), data (a directory) and
tls (ca, cert, key; {id} in a file name is replaced by I). Every member must
run the same problem and members: peers whose configuration differs are
refused, with a log line naming the field. critsec certs makes the TLS files
of a test cluster.

--check reads FILE and the TLS files, prints the problem and the
configuration's fingerprint, and exits.

The node writes every input of its machine to a write-ahead log,
DATA/node-I/wal, before it acts on it; killed (even with kill -9) and
started again, it replays the log and goes on as if it had been slow.
--fsync=false skips the fsync of each group of inputs: the log then
survives the process's death but not the machine's.

A node whose log was lost (deleted, or its tail torn by a power loss with
--fsync=false) while its peers remember the member stops, saying so; restore
the log, or start the member on an empty log with --rejoin-with-empty-log:
it then starts from its machine's initial state and continues the channels
where the peers are, which is safe only if the member was OutCS with nothing
pending and held nothing (no token, no permission) when its log was lost
(docs/network.md, "A lost log").

--compact-every N compacts the log when it holds N records: a snapshot of
the machine and its channels replaces them, so the log stays bounded
(default 65536; 0 never compacts).

--trace FILE writes, when the node stops, its trace in the common format
(runtime node, t wall-clock seconds since the Unix epoch), made from its
log: every input the node committed since its log began, across restarts.
A compacted log has lost its history, so --trace turns compaction off.
critsec cluster merges its members' logs the same way.

--metrics ADDR serves Prometheus metrics (messages by kind and peer, state,
entry and exit waits, reconnections, retransmissions, refusals, fsync
times) at http://ADDR/metrics; the control socket serves them too.

Applications use the node through its control socket (HTTP and JSON on a
unix socket, DATA/node-I/ctl.sock unless --ctl): critsec ctl enter, exit,
status. The node logs to standard error until SIGINT or SIGTERM.

Exit status: 0 stopped by a signal, or --check passed; 2 bad input (the
configuration, the id, the TLS files); 3 the node stopped on an error.`,
	Args: cobra.NoArgs,
	RunE: func(c *cobra.Command, _ []string) error {
		f := nodeFlags
		cfg, id, err := loadMember("node", f.config, f.id)
		if err != nil {
			return err
		}
		n := cfg.Problem.Params.N
		if f.check {
			fmt.Fprintf(c.OutOrStdout(), "ok: P%d of %s, n = %d, at %s\n", id, cfg.Problem.Alg.Name, n, cfg.Members[id-1])
			for _, fld := range cfg.Fingerprint() {
				fmt.Fprintf(c.OutOrStdout(), "  %-9s %s\n", fld.Name, fld.Digest)
			}
			return nil
		}
		compact := c.Flags().Changed("compact-every")
		switch {
		case f.compact < 0:
			return badInput("node: --compact-every %d is out of range: give a number of records, or 0 never to compact", f.compact)
		case f.trace != "" && compact && f.compact > 0:
			return badInput("node: --trace needs the log's whole history, which --compact-every %d would drop: give one of them", f.compact)
		case f.compact == 0 || f.trace != "":
			f.compact = -1 // node.Options: never
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		log := slog.New(slog.NewTextHandler(c.ErrOrStderr(), nil))
		opts := node.Options{Logger: log, NoSync: !f.fsync, CompactEvery: f.compact, RejoinWithEmptyLog: f.rejoin}
		if f.cut > 0 {
			opts.Transport = func(tc *transport.Config) { tc.Dial = cutConnections(ctx, f.cut) }
		}
		nd, err := node.Start(cfg, id, opts)
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		sock, ctlErr, err := serveMember(ctx, "node", nd, cfg, f.ctl, f.metr)
		if err != nil {
			return err
		}
		log.Info("node started", "node", f.id, "alg", cfg.Problem.Alg.Name, "n", n, "addr", cfg.Members[id-1], "ctl", sock)
		select {
		case <-ctx.Done():
		case <-nd.Done():
		case err := <-ctlErr:
			if err != nil {
				nd.Close()
				return fmt.Errorf("node: %w", err)
			}
		}
		err = nd.Err()
		nd.Close()
		if err != nil && !errors.Is(err, node.ErrClosed) {
			return fmt.Errorf("node: %w", err)
		}
		if f.trace != "" {
			return writeNodeTrace(cfg, id, f.trace)
		}
		return nil
	},
}

func init() {
	nodeCmd.Flags().StringVar(&nodeFlags.config, "config", "", "the cluster's configuration file (YAML)")
	nodeCmd.Flags().IntVar(&nodeFlags.id, "id", 0, "this node's process id, 1..n")
	nodeCmd.Flags().BoolVar(&nodeFlags.check, "check", false, "only read and check the configuration and the TLS files")
	nodeCmd.Flags().BoolVar(&nodeFlags.fsync, "fsync", true, "fsync the write-ahead log at each group commit")
	nodeCmd.Flags().BoolVar(&nodeFlags.rejoin, "rejoin-with-empty-log", false, "start on an empty log although the peers remember this member (unsafe unless it was OutCS and held nothing: docs/network.md)")
	nodeCmd.Flags().StringVar(&nodeFlags.ctl, "ctl", "", "the control socket's path (default DATA/node-I/ctl.sock)")
	nodeCmd.Flags().StringVar(&nodeFlags.metr, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9101; also on the control socket)")
	nodeCmd.Flags().IntVar(&nodeFlags.compact, "compact-every", node.DefaultCompactEvery, "compact the write-ahead log (a snapshot replaces its records) when it holds this many records; 0: never")
	nodeCmd.Flags().StringVar(&nodeFlags.trace, "trace", "", "when the node stops, write its trace (from its log: every run since the log began) to this file")
	nodeCmd.Flags().DurationVar(&nodeFlags.cut, "cut-every", 0, "fault injection: close one of the connections this node dialed, at random, this often (critsec cluster --chaos)")
	rootCmd.AddCommand(nodeCmd)
}

// loadMember reads the cluster configuration at path for member id of
// command cmd and checks its TLS files; its errors are bad input.
func loadMember(cmd, path string, id int) (*node.Config, cs.ID, error) {
	if path == "" {
		return nil, 0, badInput("%s: --config is required: the cluster's YAML file", cmd)
	}
	cfg, err := node.ReadConfig(path)
	if err != nil {
		return nil, 0, badInput("%s: %v", cmd, err)
	}
	if n := cfg.Problem.Params.N; id < 1 || id > n {
		return nil, 0, badInput("%s: --id %d is not a member: ids run from 1 to n = %d", cmd, id, n)
	}
	m := cs.ID(id)
	if _, err := transport.LoadIdentity(node.NodeFile(cfg.CA, m), node.NodeFile(cfg.Cert, m), node.NodeFile(cfg.Key, m)); err != nil {
		return nil, 0, badInput("%s: tls: %v", cmd, err)
	}
	return cfg, m, nil
}

// serveMember serves node nd's control socket (at ctl, or the default
// path) and, if metrics is not empty, its metrics over HTTP, until ctx
// ends; it returns the socket's path and a channel of the servers'
// errors. On an error nd is closed.
func serveMember(ctx context.Context, cmd string, nd *node.Node, cfg *node.Config, ctl, metrics string) (string, <-chan error, error) {
	sock := ctl
	if sock == "" {
		sock = node.ControlSocket(cfg, nd.ID())
	}
	errs := make(chan error, 2)
	go func() { errs <- nd.ServeControl(ctx, sock) }()
	if metrics != "" {
		ln, err := net.Listen("tcp", metrics)
		if err != nil {
			nd.Close()
			return "", nil, badInput("%s: --metrics %s: %v", cmd, metrics, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", nd.MetricsHandler())
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { <-ctx.Done(); srv.Close() }()
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}()
	}
	return sock, errs, nil
}

// cutConnections returns a dialer whose connections are closed one at a
// time, chosen at random, every d until ctx ends: critsec cluster
// --chaos's connection cuts, which the channels must hide.
func cutConnections(ctx context.Context, d time.Duration) func(context.Context, string) (net.Conn, error) {
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			mu.Lock()
			if len(conns) > 0 {
				i := rand.IntN(len(conns))
				conns[i].Close()
				conns = slices.Delete(conns, i, i+1)
			}
			mu.Unlock()
		}
	}()
	var dialer net.Dialer
	return func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}
}

// writeNodeTrace writes node id's trace, made from its log
// (node.TraceFromLog), to path.
func writeNodeTrace(cfg *node.Config, id cs.ID, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("node: --trace: %w", err)
	}
	tw := trace.NewWriter(f, node.TraceHeader(cfg))
	_, err = node.TraceFromLog(cfg, id, tw.Event)
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("node: --trace %s: %w", path, err)
	}
	return nil
}
