package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/internal/testcluster"
	"github.com/critsec/critsec/node"
)

// procCluster is a cluster of critsec node processes on loopback, each
// started from this executable: critsec cluster's and the tests'.
type procCluster struct {
	dir     string
	cfgPath string
	cfg     *node.Config
	exe     string
	args    []string // extra arguments of every node
	procs   []*exec.Cmd
	exited  []<-chan struct{}
}

// asMainEnv makes a test binary run as critsec (TestMain), so that the
// tests start node processes without building the command.
const asMainEnv = "CRITSEC_AS_MAIN"

// newProcCluster writes, in dir, TLS files for n nodes and a
// configuration with problem (YAML lines) and n free loopback ports.
func newProcCluster(dir, problem string, n int, args ...string) (*procCluster, error) {
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port, released for the node
		if err != nil {
			return nil, err
		}
		addrs[i] = ln.Addr().String()
		ln.Close()
	}
	path, err := testcluster.Write(dir, problem, addrs, "")
	if err != nil {
		return nil, err
	}
	cfg, err := node.ReadConfig(path)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return &procCluster{dir: dir, cfgPath: path, cfg: cfg, exe: exe, args: args,
		procs: make([]*exec.Cmd, n), exited: make([]<-chan struct{}, n)}, nil
}

// start starts node id, its standard error appended to DIR/node-I.log.
// The cluster's trace is merged from the members' whole logs, so they
// are never compacted.
func (c *procCluster) start(id cs.ID) error {
	return c.startAs(id, append([]string{"node", "--config", c.cfgPath, "--id", fmt.Sprint(id), "--compact-every", "0"}, c.args...))
}

// startRun starts member id as critsec run with args (flags, --, the
// command), its standard output and error appended to DIR/node-I.log.
func (c *procCluster) startRun(id cs.ID, args ...string) error {
	return c.startAs(id, append([]string{"run", "--config", c.cfgPath, "--id", fmt.Sprint(id)}, args...))
}

func (c *procCluster) startAs(id cs.ID, args []string) error {
	cmd := exec.Command(c.exe, args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	done, err := testcluster.Start(cmd, filepath.Join(c.dir, fmt.Sprintf("node-%d.log", id)))
	if err != nil {
		return err
	}
	c.procs[id-1], c.exited[id-1] = cmd, done
	return nil
}

// ctl returns a client of node id's control socket.
func (c *procCluster) ctl(id cs.ID) *node.Control {
	return node.DialControl(node.ControlSocket(c.cfg, id))
}

// ready waits until node id answers on its control socket.
func (c *procCluster) ready(ctx context.Context, id cs.ID) error {
	ctl := c.ctl(id)
	defer ctl.Close()
	for {
		if _, err := ctl.Do(ctx, "status", 0); err == nil {
			return nil
		}
		select {
		case <-c.exited[id-1]:
			return fmt.Errorf("node %d exited: see %s", id, filepath.Join(c.dir, fmt.Sprintf("node-%d.log", id)))
		case <-ctx.Done():
			return fmt.Errorf("node %d: not ready: %w", id, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// kill kills node id with SIGKILL and waits for it.
func (c *procCluster) kill(id cs.ID) {
	c.procs[id-1].Process.Signal(syscall.SIGKILL)
	<-c.exited[id-1]
}

// stop asks every running node to stop (SIGTERM) and waits, killing
// those still running after 10 s.
func (c *procCluster) stop() {
	for i, p := range c.procs {
		if p != nil {
			select {
			case <-c.exited[i]:
			default:
				p.Process.Signal(syscall.SIGTERM)
			}
		}
	}
	for i, p := range c.procs {
		if p == nil {
			continue
		}
		select {
		case <-c.exited[i]:
		case <-time.After(10 * time.Second):
			p.Process.Signal(syscall.SIGKILL)
			<-c.exited[i]
		}
	}
}
