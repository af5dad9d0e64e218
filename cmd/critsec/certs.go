package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
)

var certsFlags struct {
	out   string
	n     int
	hosts string
	force bool
}

var certsCmd = &cobra.Command{
	Use:   "certs --out DIR --n N",
	Short: "Make a cluster CA and a certificate for each of n nodes (mutual TLS, docs/network.md)",
	Long: `certs makes the files a test cluster needs for mutual TLS between its nodes
(docs/network.md): a certificate authority and, for each node 1..n, a
certificate it signs, all with ECDSA P-256 keys:

  DIR/ca.crt, DIR/ca.key             the cluster CA (keep ca.key offline)
  DIR/node-I.crt, DIR/node-I.key     node I's certificate and key

A node's certificate names it (DNS name node-I, which peers check) and is
valid for localhost and 127.0.0.1, and for each of --hosts (names or IP
addresses, separated by commas). Keys are written with permissions 0600, certificates 0644. DIR is
created if needed; files already there are not overwritten unless --force.

Exit status: 0 written; 2 bad input (n out of range, files in the way).`,
	Args: cobra.NoArgs,
	RunE: func(c *cobra.Command, _ []string) error {
		f := certsFlags
		switch {
		case f.out == "":
			return badInput("certs: --out is required: the directory to write the files to")
		case f.n < 1 || f.n > alg.MaxN:
			return badInput("certs: --n = %d is out of range: need 1 <= n <= %d", f.n, alg.MaxN)
		}
		var hosts []string
		if f.hosts != "" {
			hosts = strings.Split(f.hosts, ",")
		}
		for _, h := range hosts {
			if net.ParseIP(h) == nil && (h == "" || strings.ContainsAny(h, " /:")) {
				return badInput("certs: --hosts: %q is not a host name or an IP address: give them separated by commas", h)
			}
		}
		files := map[string][]byte{}
		names := []string{"ca.crt", "ca.key"}
		for i := 1; i <= f.n; i++ {
			names = append(names, fmt.Sprintf("node-%d.crt", i), fmt.Sprintf("node-%d.key", i))
		}
		if !f.force {
			for _, name := range names {
				if _, err := os.Lstat(filepath.Join(f.out, name)); err == nil {
					return badInput("certs: %s exists: choose another --out, or --force to overwrite", filepath.Join(f.out, name))
				}
			}
		}
		ca, err := transport.NewCA("critsec cluster CA")
		if err != nil {
			return err
		}
		if files["ca.key"], err = ca.KeyPEM(); err != nil {
			return err
		}
		files["ca.crt"] = ca.PEM
		for i := 1; i <= f.n; i++ {
			crt, key, err := ca.Issue(cs.ID(i), hosts...)
			if err != nil {
				return err
			}
			files[fmt.Sprintf("node-%d.crt", i)], files[fmt.Sprintf("node-%d.key", i)] = crt, key
		}
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return badInput("certs: %v", err)
		}
		for _, name := range names {
			if err := writeCertFile(filepath.Join(f.out, name), files[name]); err != nil {
				return err
			}
		}
		fmt.Fprintf(c.OutOrStdout(), "wrote the CA and %d node certificates to %s\n", f.n, f.out)
		return nil
	},
}

// writeCertFile writes b to path, a key (".key") with permissions 0600 and
// anything else 0644; an existing file is replaced and given those
// permissions.
func writeCertFile(path string, b []byte) error {
	perm := fs.FileMode(0o644)
	if strings.HasSuffix(path, ".key") {
		perm = 0o600
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, perm); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil { // WriteFile keeps an old file's mode
		return errors.Join(err, os.Remove(tmp))
	}
	return os.Rename(tmp, path)
}

func init() {
	certsCmd.Flags().StringVar(&certsFlags.out, "out", "", "directory to write the files to")
	certsCmd.Flags().IntVar(&certsFlags.n, "n", 0, "number of nodes (ids 1..n)")
	certsCmd.Flags().StringVar(&certsFlags.hosts, "hosts", "", "more host names or addresses the node certificates are valid for, separated by commas")
	certsCmd.Flags().BoolVar(&certsFlags.force, "force", false, "overwrite files already in --out")
	rootCmd.AddCommand(certsCmd)
}
