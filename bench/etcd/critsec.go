package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/transport"
)

// startCritsec starts n critsec nodes in this process on loopback (real
// TCP, mutual TLS, a write-ahead log under dir, fsynced unless noSync) for
// problem (YAML lines: alg, n, k). It is the setup of node's benchmarks
// (startClusterWith in node/node_test.go, unexported test code), copied
// here with the exported API only rather than exporting test support from
// package node for one benchmark; cmd/critsec/procs.go writes the same
// configuration for real processes. A third copy would justify a
// node.WriteLoopbackCluster.
func startCritsec(dir, problem string, n int, noSync bool) ([]*node.Node, error) {
	cfg, lns, err := writeCritsec(dir, problem, n)
	if err != nil {
		return nil, err
	}
	nodes := make([]*node.Node, 0, n)
	for i := range n {
		nd, err := node.Start(cfg, cs.ID(i+1), node.Options{
			Listener: lns[i],
			Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
			NoSync:   noSync,
		})
		if err != nil {
			closeAll(nodes)
			return nil, err
		}
		nodes = append(nodes, nd)
	}
	return nodes, nil
}

// writeCritsec writes, in dir, TLS files for n nodes and a configuration
// with problem and n loopback listeners, which it returns open (a node in
// another process needs them closed first).
func writeCritsec(dir, problem string, n int) (*node.Config, []net.Listener, error) {
	ca, err := transport.NewCA("bench")
	if err != nil {
		return nil, nil, err
	}
	write := func(name string, b []byte) error { return os.WriteFile(filepath.Join(dir, name), b, 0o600) }
	if err := write("ca.crt", ca.PEM); err != nil {
		return nil, nil, err
	}
	lns := make([]net.Listener, n)
	var members strings.Builder
	for i := range lns {
		crt, key, err := ca.Issue(cs.ID(i + 1))
		if err != nil {
			return nil, nil, err
		}
		if err := write(fmt.Sprintf("node-%d.crt", i+1), crt); err != nil {
			return nil, nil, err
		}
		if err := write(fmt.Sprintf("node-%d.key", i+1), key); err != nil {
			return nil, nil, err
		}
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(&members, "  %d: %s\n", i+1, lns[i].Addr())
	}
	text := problem + "members:\n" + members.String() + "data: data\ntls:\n  ca: ca.crt\n  cert: node-{id}.crt\n  key: node-{id}.key\n"
	path := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return nil, nil, err
	}
	cfg, err := node.ReadConfig(path)
	if err != nil {
		return nil, nil, err
	}
	return cfg, lns, nil
}

func closeAll(nodes []*node.Node) {
	for _, nd := range nodes {
		nd.Close()
	}
}
