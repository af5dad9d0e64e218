package main

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
)

// TestCerts: critsec certs writes a CA and node certificates (keys 0600)
// that two transports load and talk over; node 2's certificate chains to
// the CA with its node name and the loopback address.
func TestCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	code, out := runCLI(t, "certs", "--out", dir, "--n", "2", "--hosts", "db.example,10.0.0.7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, name := range []string{"ca.crt", "ca.key", "node-1.crt", "node-1.key", "node-2.crt", "node-2.key"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o644)
		if strings.HasSuffix(name, ".key") {
			want = 0o600
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: permissions %v, want %v", name, st.Mode().Perm(), want)
		}
	}
	caPEM, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	crtPEM, _ := os.ReadFile(filepath.Join(dir, "node-2.crt"))
	blk, _ := pem.Decode(crtPEM)
	crt, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node-2", "127.0.0.1", "localhost", "db.example", "10.0.0.7"} {
		if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("node-2.crt for %s: %v", name, err)
		}
	}
	if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, DNSName: "node-1"}); err == nil {
		t.Error("node-2.crt passes as node-1")
	}

	// Two nodes with the files talk.
	var lns [2]net.Listener
	for i := range lns {
		if lns[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	var ts [2]*transport.Transport
	for i := range ts {
		id := cs.ID(i + 1)
		ident, err := transport.LoadIdentity(filepath.Join(dir, "ca.crt"), filepath.Join(dir, transport.NodeName(id)+".crt"), filepath.Join(dir, transport.NodeName(id)+".key"))
		if err != nil {
			t.Fatal(err)
		}
		ts[i], err = transport.New(transport.Config{Self: id, Listener: lns[i], Peers: map[cs.ID]string{3 - id: lns[1-i].Addr().String()}, Identity: ident, Decode: raymond.Decode})
		if err != nil {
			t.Fatal(err)
		}
		defer ts[i].Close()
	}
	ts[0].Send(2, raymond.Reply{Count: 7})
	select {
	case d := <-ts[1].Inbox():
		if d.From != 1 || d.Msg != (raymond.Reply{Count: 7}) {
			t.Errorf("delivered %+v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing delivered")
	}

	// The files are not overwritten without --force.
	if code, out := runCLI(t, "certs", "--out", dir, "--n", "2"); code != 2 || !strings.Contains(out, "exists") {
		t.Errorf("second run: exit %d: %s", code, out)
	}
	if code, out := runCLI(t, "certs", "--out", dir, "--n", "2", "--force"); code != 0 {
		t.Errorf("--force: exit %d: %s", code, out)
	}
}
