// Command rundemo is critsec run's loopback demo (docs/run.md): n members
// of an (l,k)-GCS cluster, each a real critsec run process keeping a copy
// of a tiny HTTP service (examples/hello) running while it is InCS. Each
// member's wish to run flips with a period of its own (a signal script),
// so the count moves; every sample counts the members InCS (control
// sockets), the copies running (processes, from /proc) and the copies
// answering HTTP. It writes the samples as CSV and a plot, and fails if
// more than k copies ever run or any copy is left behind at the end.
//
//	go build -o /tmp/demo/critsec ./cmd/critsec
//	go build -o /tmp/demo/hello ./examples/hello
//	go run ./examples/rundemo -critsec /tmp/demo/critsec -hello /tmp/demo/hello
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/experiment"
	"github.com/critsec/critsec/node"
)

func main() {
	critsec := flag.String("critsec", "critsec", "the critsec binary")
	hello := flag.String("hello", "hello", "the HTTP service binary (examples/hello)")
	n := flag.Int("n", 5, "members")
	l := flag.Int("l", 1, "at least l copies")
	k := flag.Int("k", 3, "at most k copies")
	duration := flag.Duration("duration", 60*time.Second, "how long to run")
	every := flag.Duration("sample", 50*time.Millisecond, "sampling interval")
	csvPath := flag.String("csv", "docs/run/demo.csv", "where to write the samples")
	png := flag.String("plot", "docs/img/run-demo.png", "where to write the plot")
	flag.Parse()
	if err := run(*critsec, *hello, *n, *l, *k, *duration, *every, *csvPath, *png); err != nil {
		fmt.Fprintln(os.Stderr, "rundemo:", err)
		os.Exit(1)
	}
}

func run(critsec, hello string, n, l, k int, duration, every time.Duration, csvPath, png string) error {
	hello, err := filepath.Abs(hello)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "critsec-rundemo-")
	if err != nil {
		return err
	}
	fmt.Println("files in", dir)
	if out, err := exec.Command(critsec, "certs", "--out", filepath.Join(dir, "tls"), "--n", fmt.Sprint(n)).CombinedOutput(); err != nil {
		return fmt.Errorf("critsec certs: %v: %s", err, out)
	}
	var members strings.Builder
	ports := make([]string, n+1)
	for i := 1; i <= n; i++ {
		member, err := freeAddr()
		if err != nil {
			return err
		}
		if ports[i], err = freeAddr(); err != nil {
			return err
		}
		fmt.Fprintf(&members, "  %d: %s\n", i, member)
	}
	yml := fmt.Sprintf("alg: gcs\nn: %d\nl: %d\nk: %d\nmembers:\n%sdata: data\ntls:\n  ca: tls/ca.crt\n  cert: tls/node-{id}.crt\n  key: tls/node-{id}.key\n",
		n, l, k, members.String())
	cfgPath := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cfgPath, []byte(yml), 0o644); err != nil {
		return err
	}
	cfg, err := node.ReadConfig(cfgPath)
	if err != nil {
		return err
	}
	procs := make([]*exec.Cmd, n+1)
	for i := 1; i <= n; i++ {
		// Member i wants in during alternate periods of 2+i seconds.
		script := filepath.Join(dir, fmt.Sprintf("want-%d.sh", i))
		body := fmt.Sprintf("#!/bin/sh\n[ $(( $(date +%%s) / %d %% 2 )) -eq 0 ]\n", 2+i)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			return err
		}
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("run-%d.log", i)))
		if err != nil {
			return err
		}
		cmd := exec.Command(critsec, "run", "--config", cfgPath, "--id", fmt.Sprint(i), "--policy", "signal",
			"--signal-cmd", script, "--signal-every", "250ms", "--grace", "2s",
			"--", hello, "--addr", ports[i], "--name", fmt.Sprintf("copy-%d", i))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return err
		}
		procs[i] = cmd
	}
	t := &experiment.Table{LabelName: "series", Header: []string{"t_seconds", "count"}}
	client := &http.Client{Timeout: every}
	began := time.Now()
	var maxCopies, minCopies, maxIn, minIn, maxServing = 0, n, 0, n, 0
	var belowL, samples int
	for time.Since(began) < duration {
		time.Sleep(every)
		now := time.Since(began).Seconds()
		in := 0
		for i := 1; i <= n; i++ {
			ctl := node.DialControl(node.ControlSocket(cfg, cs.ID(i)))
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			a, err := ctl.Do(ctx, "status", 0)
			cancel()
			ctl.Close()
			if err == nil && a.State == "InCS" {
				in++
			}
		}
		copies := countProcs(hello)
		serving := 0
		for i := 1; i <= n; i++ {
			if resp, err := client.Get("http://" + ports[i] + "/"); err == nil {
				resp.Body.Close()
				serving++
			}
		}
		if now < 2 { // the members are still starting
			continue
		}
		samples++
		if copies < l {
			belowL++
		}
		maxCopies, minCopies = max(maxCopies, copies), min(minCopies, copies)
		maxIn, minIn, maxServing = max(maxIn, in), min(minIn, in), max(maxServing, serving)
		t.Add("members InCS", now, float64(in))
		t.Add("copies running", now, float64(copies))
		t.Add("copies answering HTTP", now, float64(serving))
	}
	for i := 1; i <= n; i++ {
		procs[i].Process.Signal(syscall.SIGTERM)
	}
	for i := 1; i <= n; i++ {
		done := make(chan error, 1)
		go func() { done <- procs[i].Wait() }()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			procs[i].Process.Kill()
			fmt.Printf("member %d did not stop within 40 s (waiting for its exit from the CS) and was killed\n", i)
		}
	}
	time.Sleep(100 * time.Millisecond)
	left := countProcs(hello)
	if err := os.MkdirAll(filepath.Dir(csvPath), 0o755); err != nil {
		return err
	}
	if err := t.SaveCSV(csvPath); err != nil {
		return err
	}
	if err := t.Plot(experiment.Chart{Title: fmt.Sprintf("critsec run: (l,k) = (%d,%d), %d members, gcs", l, k, n),
		X: "t_seconds", Y: "count", XLabel: "seconds", YLabel: "count", Dense: true}, png); err != nil {
		return err
	}
	fmt.Printf("%d samples every %v over %v: members InCS %d..%d; copies running %d..%d (below l = %d in %d samples, %.1f%%); answering HTTP at most %d\n",
		samples, every, duration, minIn, maxIn, minCopies, maxCopies, l, belowL, 100*float64(belowL)/float64(max(samples, 1)), maxServing)
	fmt.Printf("copies left after every member stopped: %d\nwrote %s and %s\n", left, csvPath, png)
	var errs []error
	if maxCopies > k || maxIn > k {
		errs = append(errs, fmt.Errorf("more than k = %d: %d copies, %d members InCS", k, maxCopies, maxIn))
	}
	if left > 0 {
		errs = append(errs, fmt.Errorf("%d copies left behind", left))
	}
	return errors.Join(errs...)
}

// freeAddr returns a loopback address with a free port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// countProcs counts the live processes running the binary exe.
func countProcs(exe string) int {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	c := 0
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || !strings.HasPrefix(string(b), exe+"\x00") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && !strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z") {
			c++
		}
	}
	return c
}
