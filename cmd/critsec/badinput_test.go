package main

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBadInputEverySubcommand runs every subcommand on its family of bad
// inputs: each is refused with exit status 2 and one line that
// starts with "critsec: ", no stack trace, and takes little memory (the
// refusal comes before any large allocation; under 64 MB allocated), and
// none of Go's internals (strconv, time, json) in the message.
func TestBadInputEverySubcommand(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hugeN := file("huge.jsonl", `{"ev":"header","alg":"raymond","n":2000000000,"l":0,"k":3,"seed":1,"initial":[],"lo":0,"hi":3,"runtime":"sim","fifo":true}`+"\n")
	n62 := file("n62.jsonl", `{"ev":"header","alg":"raymond","n":4611686018427387904,"l":0,"k":3,"initial":[],"runtime":"sim","fifo":true}`+"\n")
	badProblem := file("problem", `{"alg":"gcs","n":1e12}`)
	badEvent := file("bad.jsonl", `{"ev":"header","alg":"x","n":2,"l":0,"k":1,"initial":[]}`+"\n"+`{"t":1,"ev":"send","node":7,"to":1,"msg":"A"}`+"\n")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cases := [][]string{
		{"sim", "--alg", "raymond", "--n", "100000", "--k", "3", "--max-memory", "16"},
		{"sim", "--n", "9223372036854775807"},
		{"sim", "--lambda", "Inf"},
		{"sim", "--E", "NaN"},
		{"sim", "--E", "1e308"},
		{"sim", "--Ts", "1e308"},
		{"sim", "--Tt", "1e308"},
		{"sim", "--lambda", "1e-308"},
		{"sim", "--max-time", "1e300"},
		{"sim", "--initial", "1,,2"},
		{"sim", "--coterie", ""},
		{"sim", "--problem", badProblem},
		{"sim", "--alg", "raymond", "--coterie", "grid"},
		{"sim", "--alg", "raymond", "--mx", "ra"},
		{"sim", "--alg", "kmutex", "--fencing"},
		{"check", "--alg", "gcs", "--fencing"},
		{"check", "--n", "65", "--max-states", "10"},
		{"check", "--n", "9223372036854775807"},
		{"check", "--budget", "101"},
		{"check", "--budget", "2,2"},
		{"check", "--budget", "2,x,2"},
		{"check", "--budget", "2,101,2"},
		{"check", "--budget", "5,1,1"},
		{"check", "--max-memory", "NaN"},
		{"check", "--expected-states", "5"},
		{"check", "--search", "dfs", "--workers", "2"},
		{"check", "--alg", "raymond", "--abstract", "mx"},
		{"check", "--alg", "gcs", "--abstract", "mx,"},
		{"check", "--alg", "mutin", "--abstract", "kmex"},
		{"check", "--alg", "mutin", "--abstract", "mx", "--crashes", "1"},
		{"trace", "check", hugeN},
		{"trace", "check", n62},
		{"trace", "check", filepath.Join(dir, "missing.jsonl")},
		{"trace", "nosuch"},
		{"experiment", "nosuch"},
		{"nosuch"},
		{"help", "nosuch"},
		{"help", "sim", "nosuch"},
		{"sim", "--seed", "-1"},
		{"sim", "--n", "x"},
		{"check", "--timeout", "5"},
		{"sim", "--fifo=maybe"},
		{"sim", "--n", "99999999999999999999"},
		{"certs", "--n", "3"},
		{"certs", "--out", dir, "--n", "0"},
		{"certs", "--out", dir, "--n", "3", "--hosts", "a b"},
		{"certs", "--out", file("plain", ""), "--n", "1"},
		{"node", "--id", "1"},
		{"node", "--config", filepath.Join(dir, "missing.yaml"), "--id", "1"},
		{"node", "--config", file("cluster.yaml", "alg: gcs\nn: 3\nmembers: {1: a:1}\ndata: d\ntls: {ca: a, cert: b, key: c}\n"), "--id", "1"},
		{"node", "--config", file("cluster2.yaml", "alg: gcs\nn: [\n"), "--id", "1"},
		{"run", "--config", "c.yaml", "--id", "1"},
		{"run", "--id", "1", "--", "true"},
		{"run", "--policy", "sometimes", "--", "true"},
		{"run", "--policy", "signal", "--", "true"},
		{"run", "--signal-cmd", "true", "--", "true"},
		{"run", "--policy", "signal", "--signal-cmd", "/no/such/script", "--", "true"},
		{"run", "--max-failures", "-1", "--", "true"},
		{"run", "--signal-every", "0s", "--", "true"},
		{"sim", "--alg", "ftraymond", "--crash", "11@50"},
		{"sim", "--alg", "ftraymond", "--crash", "0@50"},
		{"sim", "--alg", "ftraymond", "--crash", "3@-1"},
		{"sim", "--alg", "ftraymond", "--crash", "3@NaN"},
		{"sim", "--alg", "ftraymond", "--crash", "3@1e300"},
		{"sim", "--alg", "ftraymond", "--crash", "3"},
		{"sim", "--alg", "ftraymond", "--crash", "3@5,3@6"},
		{"sim", "--alg", "ftraymond", "--crash", "random:0:1:2"},
		{"sim", "--alg", "ftraymond", "--crash", "random:11:1:2"},
		{"sim", "--alg", "ftraymond", "--crash", "random:2:5:1"},
		{"sim", "--alg", "ftraymond", "--crash", "random:2:5"},
		{"sim", "--alg", "ftraymond", "--detector", "Q"},
		{"sim", "--alg", "ftraymond", "--detect-delay", "-1"},
		{"sim", "--alg", "ftraymond", "--n", "3000", "--detector", "T"},
		{"check", "--alg", "ftraymond", "--crashes", "4"},
		{"check", "--alg", "ftraymond", "--crashes", "-1"},
		{"check", "--alg", "ftraymond", "--detector", "<>P"},
		{"viz", filepath.Join(dir, "missing.jsonl")},
		{"viz", badProblem},
		{"viz", badEvent},
		{"viz", hugeN},
		{"viz", n62},
		{"viz", badEvent, "--serve", "nonsense"},
		{"viz", badEvent, "--serve", "127.0.0.1:99999"},
		{"viz", badEvent, "--serve", busy.Addr().String()},
		{"viz", badEvent, "--window", "0"},
		{"viz", badEvent, "--from", "NaN"},
		{"viz", "../../docs/traces/maekawa-paper-deadlock.jsonl", "--out", filepath.Join(dir, "no", "such", "dir.html")},
		{"viz"},
		{"check", "--alg", "maekawa-paper", "--n", "4", "--viz", filepath.Join(dir, "no", "such", "dir.html")},
	}
	for _, args := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		code, out := runCLI(t, args...)
		runtime.ReadMemStats(&after)
		out = strings.TrimSpace(out)
		if code != 2 || strings.Contains(out, "\n") || !strings.HasPrefix(out, "critsec: ") || strings.Contains(out, "goroutine ") ||
			strings.Contains(out, "strconv.") || strings.Contains(out, "time: ") || strings.Contains(out, "json: ") {
			t.Errorf("%v: exit %d, want 2 and one line:\n%s", args, code, out)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("%v: allocated %d MB to refuse the input", args, alloc>>20)
		}
	}
}
