package node_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
	"github.com/critsec/critsec/transport"
)

// Run a three-node Raymond cluster on loopback TCP with mutual TLS, all in
// one process: each member opens the same configuration file, and each
// node in turn enters and leaves the critical section. critsec certs and
// critsec cluster do the same from the command line.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "critsec-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The cluster's CA and one certificate per member (critsec certs).
	ca, err := transport.NewCA("example")
	if err != nil {
		log.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			log.Fatal(err)
		}
	}
	write("ca.crt", ca.PEM)
	const n = 3
	listeners := make([]net.Listener, n)
	var members strings.Builder
	for i := range n {
		crt, key, err := ca.Issue(cs.ID(i + 1))
		if err != nil {
			log.Fatal(err)
		}
		write(fmt.Sprintf("node-%d.crt", i+1), crt)
		write(fmt.Sprintf("node-%d.key", i+1), key)
		// Port 0 picks a free port; the members list names the one given.
		if listeners[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(&members, "  %d: %s\n", i+1, listeners[i].Addr())
	}
	write("cluster.yaml", []byte("alg: raymond\nn: 3\nk: 1\nmembers:\n"+members.String()+
		"data: data\ntls:\n  ca: ca.crt\n  cert: node-{id}.crt\n  key: node-{id}.key\n"))

	nodes := make([]*node.Node, n)
	for i := range nodes {
		nodes[i], err = node.Open(filepath.Join(dir, "cluster.yaml"), cs.ID(i+1), node.Options{
			Listener: listeners[i],
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			NoSync:   true,
		})
		if err != nil {
			log.Fatal(err)
		}
		defer nodes[i].Close()
	}
	ctx := context.Background()
	for _, nd := range nodes {
		if err := nd.Enter(ctx); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("P%d in the critical section\n", nd.ID())
		if err := nd.Exit(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// P1 in the critical section
	// P2 in the critical section
	// P3 in the critical section
}
