package node

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/transport"
)

// Config is a cluster configuration file (YAML), the same for every
// member:
//
//	alg: gcs              # the problem, in the fields of a problem file (alg.Spec):
//	n: 5                  # alg, n, l, k, coterie, quorums, topology, bounds,
//	l: 1                  # clamp, initial, options
//	k: 3
//	members:              # every process id 1..n and its address
//	  1: 127.0.0.1:7001
//	  ...
//	data: /var/lib/critsec  # data directory: node I keeps its files in DATA/node-I
//	tls:
//	  ca: tls/ca.crt        # the cluster CA's certificate
//	  cert: tls/node-{id}.crt  # this node's certificate and key; {id} is the node's id
//	  key: tls/node-{id}.key
//	detector:             # algorithms that take failure-detector input (ftraymond, ftgcs) only
//	  heartbeat: 100ms    # the most a live link stays silent
//	  timeout: 500ms      # a trusted peer silent this long is declared crashed
//	  fence: 250ms        # critsec run stops its command after this long without every peer's echo
//	  grace: 100ms        # ... and kills it this long after that
//	  mode: crash-stop    # or majority: who may declare a member crashed (docs/fencing.md)
//
// Relative paths are relative to the file's directory. ReadConfig
// refuses unknown fields, repeated keys and missing ones with one line
// naming the file, the line and the field.
type Config struct {
	// Spec is the problem as written; Problem is Spec resolved.
	Spec    alg.Spec
	Problem *alg.Problem
	// Members[i-1] is the address (host:port) of process i.
	Members []string
	// Data is the data directory.
	Data string
	// CA, Cert and Key are the TLS files; Cert and Key may contain {id}.
	CA, Cert, Key string
	// Detector is the failure detector's settings: on (Heartbeat > 0)
	// exactly when the algorithm takes failure-detector input
	// (cs.Detecting), with DefaultHeartbeat and DefaultTimeout unless the
	// file's detector field says otherwise (docs/network.md, "Failure
	// detection").
	Detector DetectorConfig
}

// DetectorConfig is the network failure detector's settings.
type DetectorConfig struct {
	// Heartbeat is the longest a live link stays silent (the transport's
	// Heartbeat): each end sends a frame at least this often.
	Heartbeat time.Duration
	// Timeout is how long a trusted peer may stay silent before it is
	// declared crashed, for good.
	Timeout time.Duration
	// Fence is the fence time F: a node whose pings no peer has echoed
	// for F has lost its lease (Node.Lease), and critsec run stops its
	// command (SIGTERM); Grace later the watchdog kills what is left of
	// it (SIGKILL). Timeout must exceed (Fence + Grace) by the clock-rate
	// margin (Validate), so that a peer that declares this node crashed
	// does so after the command is gone (docs/fencing.md).
	Fence, Grace time.Duration
	// Mode is who may declare a member crashed: ModeCrashStop, a node on
	// its own suspicion (up to n−1 crashes tolerated; a partition longer
	// than Timeout splits the cluster), or ModeMajority, a node once a
	// majority of the members vote for it (fewer than n/2 crashes; a
	// partition never splits it). Empty means ModeCrashStop.
	Mode string
}

// The detector's modes (DetectorConfig.Mode).
const (
	ModeCrashStop = "crash-stop"
	ModeMajority  = "majority"
)

// Quorum is how many members' votes declare a member crashed among n: 1
// (the node's own) in crash-stop mode, a majority of n in majority mode.
// A node's lease needs the echoes of n − Quorum peers in majority mode,
// so that every set of voters holds one of them (docs/fencing.md).
func (d DetectorConfig) Quorum(n int) int {
	if d.Mode == ModeMajority {
		return n/2 + 1
	}
	return 1
}

// ClockDrift bounds the relative rate difference of two members' clocks
// that the fence's timing argument allows (docs/fencing.md): 1 %, twenty
// times the 500 ppm that NTP ever slews a clock.
const ClockDrift = 0.01

// FenceSlack is the time the watchdog may take, past its deadline, to
// kill the command's process group (a timer's lateness and the kill).
const FenceSlack = 20 * time.Millisecond

// Validate checks the detector's settings against each other: a timeout
// of at least three heartbeats, a fence of at least a heartbeat (a ping
// leaves every half heartbeat), and the fencing inequality
// Timeout·(1−ρ) > (Fence + Grace)·(1+ρ) + FenceSlack, with ρ = ClockDrift.
func (d DetectorConfig) Validate() error {
	switch {
	case d.Timeout < 3*d.Heartbeat:
		return fmt.Errorf("timeout %v is under 3 heartbeats (%v): a live peer would be declared crashed for one late frame",
			d.Timeout, 3*d.Heartbeat)
	case d.Fence < d.Heartbeat:
		return fmt.Errorf("fence %v is under a heartbeat (%v): a live link would lose its lease between two echoes", d.Fence, d.Heartbeat)
	case d.Grace < 0:
		return fmt.Errorf("grace %v is negative", d.Grace)
	}
	if need := minTimeout(d.Fence, d.Grace); d.Timeout <= need {
		return fmt.Errorf("timeout %v does not exceed fence %v + grace %v with the %.0f %% clock-rate margin and %v of slack (%v): "+
			"a peer could act on a suspicion of a member whose command still runs; raise the timeout or lower fence and grace",
			d.Timeout, d.Fence, d.Grace, 100*ClockDrift, FenceSlack, need.Round(time.Millisecond))
	}
	return nil
}

// minTimeout is the least timeout the fencing inequality allows for
// fence f and grace g.
func minTimeout(f, g time.Duration) time.Duration {
	return time.Duration(float64(f+g)*(1+ClockDrift)/(1-ClockDrift)) + FenceSlack
}

// The detector's defaults.
const (
	DefaultHeartbeat = 100 * time.Millisecond
	DefaultTimeout   = 500 * time.Millisecond
)

// maxConfigBytes bounds a configuration file.
const maxConfigBytes = 1 << 20

// configFields are the fields of a configuration file besides the
// problem's.
var configFields = []string{"members", "data", "tls"}

// optionalFields are the fields a configuration may leave out.
var optionalFields = []string{"detector"}

// specFields are the problem's fields (alg.Spec's JSON names).
var specFields = []string{"alg", "n", "l", "k", "coterie", "quorums", "topology", "bounds", "clamp", "initial", "options"}

// ReadConfig reads and validates the configuration file at path.
func ReadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes: a cluster configuration is a small YAML file", path, maxConfigBytes)
	}
	return ParseConfig(path, b)
}

// ParseConfig reads the configuration file contents b; name is used in
// errors and its directory resolves relative paths.
func ParseConfig(name string, b []byte) (*Config, error) {
	fail := func(line int, format string, args ...any) error {
		if line > 0 {
			return fmt.Errorf("%s: line %d: %s", name, line, fmt.Sprintf(format, args...))
		}
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	d := yaml.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fail(0, "empty: want a YAML mapping with alg, n, members, data and tls")
		}
		return nil, fail(0, "not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var more yaml.Node
	if d.Decode(&more) != io.EOF {
		return nil, fail(0, "more than one YAML document: a configuration is one mapping")
	}
	top := &doc
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top.Kind != yaml.MappingNode {
		return nil, fail(top.Line, "want a mapping with alg, n, members, data and tls")
	}
	c := &Config{}
	spec := map[string]any{}
	var members, tlsNode, detNode *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if seen[k.Value] {
			return nil, fail(k.Line, "field %q given twice", k.Value)
		}
		seen[k.Value] = true
		switch {
		case slices.Contains(specFields, k.Value):
			var x any
			if err := v.Decode(&x); err != nil {
				return nil, fail(v.Line, "%s: %s", k.Value, yamlError(err))
			}
			if m, ok := x.(map[string]any); ok && k.Value == "options" {
				for name, v := range m {
					if v != nil {
						m[name] = fmt.Sprint(v) // leader: 3 as in a problem file's "3"
					}
				}
			}
			spec[k.Value] = x
		case k.Value == "members":
			members = v
		case k.Value == "tls":
			tlsNode = v
		case k.Value == "detector":
			detNode = v
		case k.Value == "data":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "" {
				return nil, fail(v.Line, "data: want a directory name")
			}
			c.Data = v.Value
		default:
			return nil, fail(k.Line, "unknown field %q: the fields are %s, %s, %s", k.Value, strings.Join(specFields, ", "),
				strings.Join(configFields, ", "), strings.Join(optionalFields, ", "))
		}
	}
	for _, f := range append([]string{"alg"}, configFields...) {
		if !seen[f] {
			return nil, fail(0, "field %q is missing", f)
		}
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, fail(0, "problem fields: %v", err)
	}
	if c.Spec, err = alg.ParseSpec(name, js); err != nil {
		return nil, err
	}
	if c.Problem, err = alg.Resolve(c.Spec); err != nil {
		return nil, fail(0, "%v", err)
	}
	n := c.Problem.Params.N
	if c.Members, err = parseMembers(members, n); err != nil {
		return nil, fail(members.Line, "members: %v", err)
	}
	if err := c.parseTLS(tlsNode); err != nil {
		return nil, fail(tlsNode.Line, "tls: %v", err)
	}
	if err := c.parseDetector(detNode); err != nil {
		line := 0
		if detNode != nil {
			line = detNode.Line
		}
		return nil, fail(line, "detector: %v", err)
	}
	dir := filepath.Dir(name)
	for _, p := range []*string{&c.Data, &c.CA, &c.Cert, &c.Key} {
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return c, nil
}

// yamlError is a decoding error without the library's prefix.
func yamlError(err error) string {
	return strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n", "; "), "yaml: ")
}

// parseMembers reads the members mapping: every id 1..n once, each with
// a host:port address.
func parseMembers(v *yaml.Node, n int) ([]string, error) {
	if v.Kind != yaml.MappingNode {
		return nil, errors.New("want a mapping from process id to host:port")
	}
	addrs := make([]string, n)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, a := v.Content[i], v.Content[i+1]
		id, err := strconv.Atoi(k.Value)
		if err != nil || id < 1 || id > n {
			return nil, fmt.Errorf("line %d: %q is not a process id: ids run from 1 to n = %d", k.Line, k.Value, n)
		}
		if addrs[id-1] != "" {
			return nil, fmt.Errorf("line %d: process %d is listed twice", k.Line, id)
		}
		host, port, err := net.SplitHostPort(a.Value)
		p, perr := strconv.Atoi(port)
		if a.Kind != yaml.ScalarNode || err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("line %d: process %d: address %q: want host:port with a port in 1..65535", a.Line, id, a.Value)
		}
		addrs[id-1] = a.Value
	}
	for i, a := range addrs {
		if a == "" {
			return nil, fmt.Errorf("process %d has no address: list every process 1..%d", i+1, n)
		}
	}
	return addrs, nil
}

// parseTLS reads the tls mapping: ca, cert and key, all required.
func (c *Config) parseTLS(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return errors.New("want a mapping with ca, cert and key")
	}
	fields := map[string]*string{"ca": &c.CA, "cert": &c.Cert, "key": &c.Key}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, f := v.Content[i], v.Content[i+1]
		p := fields[k.Value]
		if p == nil {
			return fmt.Errorf("line %d: unknown field %q: the fields are ca, cert and key", k.Line, k.Value)
		}
		if *p != "" {
			return fmt.Errorf("line %d: field %q given twice", k.Line, k.Value)
		}
		if f.Kind != yaml.ScalarNode || f.Value == "" {
			return fmt.Errorf("line %d: %s: want a file name", f.Line, k.Value)
		}
		*p = f.Value
	}
	for _, name := range []string{"ca", "cert", "key"} {
		if *fields[name] == "" {
			return fmt.Errorf("field %q is missing", name)
		}
	}
	return nil
}

// NodeFile returns a TLS file name for node id: {id} replaced.
func NodeFile(pattern string, id cs.ID) string {
	return strings.ReplaceAll(pattern, "{id}", strconv.Itoa(int(id)))
}

// parseDetector reads the detector field v (nil when absent): allowed only
// for an algorithm that takes failure-detector input, which gets the
// defaults without it.
func (c *Config) parseDetector(v *yaml.Node) error {
	ms, err := c.Problem.Machines()
	if err != nil {
		return err
	}
	_, detecting := ms[0].(cs.Detecting)
	if !detecting {
		if v != nil {
			return fmt.Errorf("%s takes no failure-detector input: remove the field (ftraymond and ftgcs do)", c.Problem.Alg.Name)
		}
		return nil
	}
	c.Detector = DetectorConfig{Heartbeat: DefaultHeartbeat, Timeout: DefaultTimeout, Mode: ModeCrashStop}
	if v == nil {
		c.Detector.Fence, c.Detector.Grace = c.Detector.Timeout/2, c.Detector.Timeout/5
		return c.Detector.Validate()
	}
	var raw map[string]string
	if err := v.Decode(&raw); err != nil {
		return fmt.Errorf("want a mapping with heartbeat and timeout (durations such as 100ms): %s", yamlError(err))
	}
	fence, grace := time.Duration(-1), time.Duration(-1)
	if m, ok := raw["mode"]; ok {
		if m != ModeCrashStop && m != ModeMajority {
			return fmt.Errorf("mode: %q is not crash-stop or majority", m)
		}
		c.Detector.Mode = m
		delete(raw, "mode")
	}
	for key, val := range raw {
		d, err := time.ParseDuration(val)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s: %q is not a positive duration (such as 100ms)", key, val)
		}
		switch key {
		case "heartbeat":
			c.Detector.Heartbeat = d
		case "timeout":
			c.Detector.Timeout = d
		case "fence":
			fence = d
		case "grace":
			grace = d
		default:
			return fmt.Errorf("unknown field %q: the fields are heartbeat, timeout, fence, grace and mode", key)
		}
	}
	c.Detector.Fence, c.Detector.Grace = c.Detector.Timeout/2, c.Detector.Timeout/5
	if fence >= 0 {
		c.Detector.Fence = fence
	}
	if grace >= 0 {
		c.Detector.Grace = grace
	}
	return c.Detector.Validate()
}

// Fingerprint is what every member must agree on: the resolved problem
// (algorithm, n, bounds, coterie, topology, initial configuration,
// options) and the members' addresses, one digest per field, so a
// mismatch names the field. The data directory and the TLS files are each
// node's own and are not in it.
func (c *Config) Fingerprint() transport.Fingerprint {
	p := c.Problem.Params
	opts := make([]string, 0, len(p.Options))
	for k, v := range p.Options {
		opts = append(opts, fmt.Sprintf("%s=%v", k, v))
	}
	slices.Sort(opts)
	initial := p.Initial
	if len(initial) == 0 {
		initial = nil // none given and none by default agree
	}
	fields := []struct {
		name string
		v    any
	}{
		{"alg", c.Problem.Alg.Name},
		{"n", p.N},
		{"l", p.L},
		{"k", p.K},
		{"bounds", [][]int{p.Li, p.Ki}},
		{"quorums", p.Quorums},
		{"topology", p.Neighbors},
		{"initial", initial},
		{"options", opts},
		{"members", c.Members},
		{"detector", []any{c.Detector.Heartbeat, c.Detector.Timeout, c.Detector.Fence, c.Detector.Grace, c.Detector.Mode}},
	}
	fp := make(transport.Fingerprint, len(fields))
	for i, f := range fields {
		b, _ := json.Marshal(f.v) // ints, strings and lists of them
		sum := sha256.Sum256(b)
		fp[i] = transport.Field{Name: f.name, Digest: hex.EncodeToString(sum[:8])}
	}
	return fp
}
