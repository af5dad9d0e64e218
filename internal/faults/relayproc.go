package faults

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/critsec/critsec/fence"
)

// RelayEnv, in the environment of a test binary of this package, makes
// it the hub's relay for that many members (RelayMain, from TestMain).
const RelayEnv = "CRITSEC_FAULTS_RELAY"

// relayProc is the hub's relay, run as a process of its own in the hub's
// namespace, in the real-time scheduling class: every link of a cluster
// runs through it, and in the test process a machine short of processor
// time (or the test's own work) stalled it for over half a second, every
// link at once — a partition nobody meant, which splits a crash-stop
// cluster. Its standard input takes the delays, one "ID NANOSECONDS"
// line each; it answers each, and its start, with "ok" on its standard
// output.
type relayProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	ctl  io.WriteCloser
	acks *bufio.Reader
}

// startRelay starts the relay for n members in namespace ns, from this
// test binary.
func startRelay(ns string, n int) (*relayProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	cmd := exec.Command("ip", "netns", "exec", ns, exe)
	cmd.Env = append(os.Environ(), RelayEnv+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	ctl, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	p := &relayProc{cmd: cmd, ctl: ctl, acks: bufio.NewReader(out)}
	if err := p.ack(); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// ack reads the relay's answer to its start or to a delay.
func (p *relayProc) ack() error {
	line, err := p.acks.ReadString('\n')
	if err != nil {
		return fmt.Errorf("relay: no answer: %w", err)
	}
	if line = strings.TrimSpace(line); line != "ok" {
		return fmt.Errorf("relay: %s", line)
	}
	return nil
}

// setDelay sets member id's delay and returns once the relay applies it.
func (p *relayProc) setDelay(id int, d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := fmt.Fprintf(p.ctl, "%d %d\n", id, int64(d)); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	return p.ack()
}

// close stops the relay, closing every relayed connection.
func (p *relayProc) close() {
	p.ctl.Close()
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// RelayMain is the relay process for n members, in the hub's namespace:
// it relays until ctl ends, setting each delay ctl gives and answering
// "ok" to out (after its start too). It returns the exit code.
func RelayMain(n int, ctl io.Reader, out, stderr io.Writer) int {
	if err := fence.Prioritize(); err != nil {
		fmt.Fprintf(stderr, "relay: at normal scheduling priority (%v): a loaded machine may stall every link\n", err)
	}
	r, err := newRelay(n)
	if err != nil {
		fmt.Fprintf(out, "%v\n", err)
		return 1
	}
	defer r.close()
	fmt.Fprintln(out, "ok")
	sc := bufio.NewScanner(ctl)
	for sc.Scan() {
		var id int
		var d int64
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &id, &d); err != nil || id < 1 || id > n {
			fmt.Fprintf(out, "delay %q: want ID NANOSECONDS, ID in 1..%d\n", sc.Text(), n)
			continue
		}
		r.setDelay(id, time.Duration(d))
		fmt.Fprintln(out, "ok")
	}
	return 0
}
