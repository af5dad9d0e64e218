package node

import (
	"strings"
	"testing"
)

const goodConfig = `alg: gcs
n: 3
l: 1
k: 2
options: {mx: ra}
members:
  1: 127.0.0.1:7001
  2: 127.0.0.1:7002
  3: localhost:7003
data: /var/lib/critsec
tls:
  ca: tls/ca.crt
  cert: tls/node-{id}.crt
  key: tls/node-{id}.key
`

// TestParseConfig reads a good file: the problem resolved as a problem
// file would be, the members in id order, paths relative to the file.
func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("/etc/critsec/cluster.yaml", []byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Problem.Params
	if c.Problem.Alg.Name != "gcs" || p.N != 3 || p.L != 1 || p.K != 2 || p.Options.String("mx") != "ra" {
		t.Errorf("problem %s %+v", c.Problem.Alg.Name, p)
	}
	if strings.Join(c.Members, " ") != "127.0.0.1:7001 127.0.0.1:7002 localhost:7003" {
		t.Errorf("members %v", c.Members)
	}
	if c.Data != "/var/lib/critsec" || c.CA != "/etc/critsec/tls/ca.crt" || NodeFile(c.Cert, 2) != "/etc/critsec/tls/node-2.crt" {
		t.Errorf("paths %q %q %q", c.Data, c.CA, c.Cert)
	}
}

// TestParseConfigRefuses: each bad file is refused with one line that
// names the file and what is wrong.
func TestParseConfigRefuses(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(goodConfig, old, new, 1) }
	for _, c := range []struct{ text, want string }{
		{"", "empty"},
		{"[1, 2]", "want a mapping"},
		{"alg: gcs\n  n: [", "not valid YAML"},
		{goodConfig + "---\nalg: x\n", "more than one YAML document"},
		{replace("data:", "datadir:"), `line 10: unknown field "datadir"`},
		{replace("n: 3\n", "n: 3\nn: 4\n"), "n"},
		{replace("alg: gcs", "alg: nosuch"), `unknown algorithm "nosuch"`},
		{replace("k: 2", "k: 9"), "k = 9 is out of range"},
		{replace("n: 3", "n: 0"), `field "n" = 0 is out of range`},
		{replace("n: 3", "n: three"), `field "n"`},
		{replace("options: {mx: ra}", "options: {kmex: x, nope: 1}"), "option nope does not apply to gcs"},
		{replace("  3: localhost:7003\n", ""), "process 3 has no address"},
		{replace("  3: localhost:7003", "  4: localhost:7003"), `"4" is not a process id`},
		{replace("  3: localhost:7003", "  2: localhost:7003"), "process 2 is listed twice"},
		{replace("localhost:7003", "localhost"), `address "localhost"`},
		{replace("localhost:7003", "localhost:70000"), "port in 1..65535"},
		{replace("  key: tls/node-{id}.key\n", ""), `tls: field "key" is missing`},
		{replace("  ca:", "  roots:"), `unknown field "roots"`},
		{replace("data: /var/lib/critsec\n", ""), `field "data" is missing`},
		{replace("data: /var/lib/critsec", "data: 7"), "data: want a directory name"},
	} {
		_, err := ParseConfig("c.yaml", []byte(c.text))
		if err == nil {
			t.Errorf("accepted:\n%s", c.text)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "c.yaml: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
			t.Errorf("error %q: want one line starting with the file and containing %q", msg, c.want)
		}
	}
}

// TestFingerprint: equal problems stated differently agree; a change of
// one field is named.
func TestFingerprint(t *testing.T) {
	fp := func(text string) []string {
		c, err := ParseConfig("c.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range c.Fingerprint() {
			out = append(out, f.Name+"="+f.Digest)
		}
		return out
	}
	base := fp(goodConfig)
	same := fp(strings.Replace(strings.Replace(goodConfig, "options: {mx: ra}", "options:\n  mx: ra\n  kmex: co-mutin", 1), "data: /var/lib/critsec", "data: elsewhere", 1))
	if strings.Join(base, " ") != strings.Join(same, " ") {
		t.Errorf("same problem, different fingerprints:\n%v\n%v", base, same)
	}
	c1, _ := ParseConfig("c.yaml", []byte(goodConfig))
	for _, ch := range []struct{ old, new, field string }{
		{"k: 2", "k: 3", "k"},
		{"alg: gcs", "alg: gcs-paper", "alg"},
		{"options: {mx: ra}", "options: {mx: maekawa}", "options"},
		{"127.0.0.1:7002", "127.0.0.1:7009", "members"},
	} {
		c2, err := ParseConfig("c.yaml", []byte(strings.Replace(goodConfig, ch.old, ch.new, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if got := c1.Fingerprint().Diff(c2.Fingerprint()); got != ch.field {
			t.Errorf("%s -> %s: differing field %q, want %q", ch.old, ch.new, got, ch.field)
		}
	}
}

// FuzzParseConfig: any file is refused with one line naming the file, or
// yields a configuration with an address for every process.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(goodConfig))
	f.Add([]byte("alg: raymond\nn: 2\nmembers: {1: a:1, 2: b:2}\ndata: d\ntls: {ca: a, cert: b, key: c}\n"))
	f.Add([]byte("members: &a {1: *a}\n"))
	// Inputs fuzzing found that reach branches the seeds above do not.
	for _, s := range []string{"Ƈ", "?", "", "alg: 0\nn: 0\nl: 0\nk: 0\noptions: {A: 0}\nmembers:\n 0080: 080\ndata: A\ntls:", "@"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig("c.yaml", b)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "c.yaml: ") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			return
		}
		if len(c.Members) != c.Problem.Params.N {
			t.Fatalf("%d members for n = %d", len(c.Members), c.Problem.Params.N)
		}
	})
}

// TestDetectorConfig: the detector's defaults keep the fencing inequality
// (timeout > (fence + grace) with the clock-rate margin), given settings
// are read, and settings that break it are refused with one line naming
// the fields.
func TestDetectorConfig(t *testing.T) {
	ft := strings.NewReplacer("alg: gcs", "alg: ftraymond", "l: 1\n", "", "options: {mx: ra}\n", "").Replace(goodConfig)
	c, err := ParseConfig("c.yaml", []byte(ft))
	if err != nil {
		t.Fatal(err)
	}
	want := DetectorConfig{Heartbeat: DefaultHeartbeat, Timeout: DefaultTimeout, Fence: DefaultTimeout / 2, Grace: DefaultTimeout / 5, Mode: ModeCrashStop}
	if c.Detector != want {
		t.Errorf("defaults %+v, want %+v", c.Detector, want)
	}
	c, err = ParseConfig("c.yaml", []byte(ft+"detector: {heartbeat: 50ms, timeout: 1s, fence: 300ms, grace: 200ms, mode: majority}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (DetectorConfig{Heartbeat: 50e6, Timeout: 1e9, Fence: 300e6, Grace: 200e6, Mode: ModeMajority}); c.Detector != want {
		t.Errorf("read %+v, want %+v", c.Detector, want)
	}
	for _, bad := range []struct{ detector, want string }{
		{"{timeout: 500ms, fence: 400ms}", "timeout 500ms does not exceed fence 400ms + grace 100ms"},
		{"{timeout: 500ms, fence: 300ms, grace: 180ms}", "raise the timeout or lower fence and grace"},
		{"{heartbeat: 100ms, timeout: 1s, fence: 50ms}", "fence 50ms is under a heartbeat"},
		{"{heartbeat: 100ms, timeout: 200ms}", "under 3 heartbeats"},
		{"{fence: soon}", `fence: "soon" is not a positive duration`},
		{"{fences: 1s}", `unknown field "fences"`},
		{"{mode: quorum}", `mode: "quorum" is not crash-stop or majority`},
	} {
		_, err := ParseConfig("c.yaml", []byte(ft+"detector: "+bad.detector+"\n"))
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("detector %s: error %v, want one line with %q", bad.detector, err, bad.want)
		}
	}
}
