// Package testcluster holds what critsec cluster and the fault-injection
// harness share to run a cluster of real critsec processes: the files
// (a CA and a certificate per member for mutual TLS, the cluster's
// configuration, node.Config) and the start of a member's process with
// its output appended to a log.
package testcluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
)

// Write writes in dir tls/ca.crt, tls/node-I.crt and tls/node-I.key for
// members 1..len(addrs) (the certificates also valid for the addresses'
// hosts), and dir/cluster.yaml: problem (YAML lines: alg, n, l, k, ...),
// member I at addrs[I-1], the data directory dir/data and the TLS files,
// then extra (YAML lines, such as a detector section). It returns the
// configuration's path.
func Write(dir, problem string, addrs []string, extra string) (string, error) {
	ca, err := transport.NewCA("critsec cluster")
	if err != nil {
		return "", err
	}
	tlsDir := filepath.Join(dir, "tls")
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		return "", err
	}
	write := func(name string, b []byte) error { return os.WriteFile(filepath.Join(tlsDir, name), b, 0o600) }
	if err := write("ca.crt", ca.PEM); err != nil {
		return "", err
	}
	var members strings.Builder
	for i, addr := range addrs {
		var hosts []string
		if h, _, err := net.SplitHostPort(addr); err == nil && h != "127.0.0.1" {
			hosts = append(hosts, h)
		}
		crt, key, err := ca.Issue(cs.ID(i+1), hosts...)
		if err != nil {
			return "", err
		}
		if err := errors.Join(write(fmt.Sprintf("node-%d.crt", i+1), crt), write(fmt.Sprintf("node-%d.key", i+1), key)); err != nil {
			return "", err
		}
		fmt.Fprintf(&members, "  %d: %s\n", i+1, addr)
	}
	text := problem + "members:\n" + members.String() +
		"data: data\ntls:\n  ca: tls/ca.crt\n  cert: tls/node-{id}.crt\n  key: tls/node-{id}.key\n" + extra
	path := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// Start starts cmd with its standard output and error appended to the
// file at log, and returns a channel closed once it exited (and was
// waited for).
func Start(cmd *exec.Cmd, log string) (<-chan struct{}, error) {
	logf, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	return done, nil
}
