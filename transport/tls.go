package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/critsec/critsec/cs"
)

// Node identity. Each node's certificate, signed by the cluster's CA,
// carries the DNS name NodeName(id) (besides its host names): a dialer
// asks for that name as the TLS server name, so the standard verification
// proves it reached node id, and a listener reads the dialer's id from
// the one such name in its certificate.

// NodeName is the certificate name of node id: "node-3".
func NodeName(id cs.ID) string { return "node-" + strconv.Itoa(int(id)) }

// nodeID returns the id of the one NodeName in cert's DNS names.
func nodeID(cert *x509.Certificate) (cs.ID, error) {
	var ids []cs.ID
	for _, name := range cert.DNSNames {
		s, ok := strings.CutPrefix(name, "node-")
		if !ok {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil || v < 1 || NodeName(cs.ID(v)) != name {
			continue
		}
		ids = append(ids, cs.ID(v))
	}
	if len(ids) != 1 {
		return 0, fmt.Errorf("certificate %q names %d nodes, want exactly one node-<id>", cert.Subject.CommonName, len(ids))
	}
	return ids[0], nil
}

// Identity is what a node needs for mutual TLS: the cluster's CA (the only
// issuer it trusts) and its own certificate and key.
type Identity struct {
	CA   *x509.CertPool
	Cert tls.Certificate
}

// LoadIdentity reads the PEM files of the CA certificate, the node's
// certificate and its key.
func LoadIdentity(caFile, certFile, keyFile string) (Identity, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return Identity{}, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return Identity{}, fmt.Errorf("%s: no PEM certificate in it", caFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return Identity{}, fmt.Errorf("%s, %s: %w", certFile, keyFile, err)
	}
	return Identity{CA: pool, Cert: cert}, nil
}

// serverConfig is the listener's TLS: 1.3 only, a client certificate
// signed by the CA required.
func (id Identity) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.Cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    id.CA,
	}
}

// clientConfig is the dialer's TLS towards node peer: 1.3 only, the
// server's certificate signed by the CA and naming NodeName(peer).
func (id Identity) clientConfig(peer cs.ID) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.Cert},
		RootCAs:      id.CA,
		ServerName:   NodeName(peer),
	}
}

// CA is a cluster's certificate authority: it signs the node certificates.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is Cert in PEM form.
	PEM []byte
}

// certValidity is how long generated certificates are valid.
const certValidity = 5 * 365 * 24 * time.Hour

// NewCA makes a self-signed CA with an ECDSA P-256 key, named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Issue makes node id's certificate and key (ECDSA P-256), valid for
// server and client authentication, with the DNS names NodeName(id) and
// localhost, the address 127.0.0.1, and hosts (names or addresses). It
// returns both in PEM form.
func (ca *CA) Issue(id cs.ID, hosts ...string) (certPEM, keyPEM []byte, err error) {
	if id < 1 {
		return nil, nil, errors.New("node ids start at 1")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: NodeName(id)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{NodeName(id), "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// KeyPEM is the CA's key in PEM form.
func (ca *CA) KeyPEM() ([]byte, error) {
	kder, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// Identity returns node id's Identity under this CA, with a new
// certificate (for tests and in-process clusters).
func (ca *CA) Identity(id cs.ID) (Identity, error) {
	certPEM, keyPEM, err := ca.Issue(id)
	if err != nil {
		return Identity{}, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return Identity{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return Identity{CA: pool, Cert: cert}, nil
}

// serial is a random 127-bit certificate serial number (positive, as
// RFC 5280 requires).
func serial() *big.Int {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24)
	b[0] &= 0x7f
	return new(big.Int).SetBytes(b[:])
}
