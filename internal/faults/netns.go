package faults

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The addresses, private to the namespaces a Net creates (none of them
// exists in the namespace the harness runs in, so no packet leaves):
//
//	10.213.0.I/24   member I's veth, on the bridge in the hub namespace
//	10.213.0.254    the bridge, in the hub
//	10.213.1.I      member I's service address (the cluster file's), on its loopback
//	10.213.2.I      in the hub: where the relay dials member J from, for a connection from I
//
// A member reaches 10.213.1.0/24 and 10.213.2.0/24 through the hub, which
// sends every connection to 10.213.1.J:7000 (DNAT) to its relay for J: the
// relay adds the delays (Net.SetDelay) and dials J from 10.213.2.I, so that
// J's namespace sees, by address, which peer a packet is from (Net.Cut).
const (
	subnet      = "10.213"
	servicePort = 7000
	relayPort   = 9000 // + J: the relay for member J
)

// MemberAddr is member id's address in the cluster file.
func MemberAddr(id int) string { return fmt.Sprintf("%s.1.%d:%d", subnet, id, servicePort) }

// netSeq numbers the Nets of a process, for unique namespace names.
var netSeq atomic.Int64

// Net is a hub network namespace holding a bridge, and one namespace per
// member joined to it by a veth pair, created by NewNet and removed by
// Close.
type Net struct {
	// Hub is the hub's namespace; Members[I-1] member I's.
	Hub     string
	Members []string
	relay   *relayProc
	cut     [][]bool // cut[i][j]: member i+1 drops packets from and to member j+1
	loss    []int    // percent of packets member i+1 drops on its veth, each way
}

// Available says why network namespaces cannot be made here, or nil.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) to create network namespaces")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("needs %s on PATH (Debian: apt-get install iproute2 nftables)", tool)
		}
	}
	name := fmt.Sprintf("csfprobe%d", os.Getpid())
	if err := run("ip", "netns", "add", name); err != nil {
		return fmt.Errorf("cannot create a network namespace: %w", err)
	}
	defer run("ip", "netns", "del", name)
	if err := run("ip", "netns", "exec", name, "nft", "add", "table", "inet", "probe"); err != nil {
		return fmt.Errorf("nftables does not work in a network namespace: %w", err)
	}
	return nil
}

// run runs a command, its output in the error.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// runIn runs nft's script (stdin) in namespace ns.
func nftIn(ns, script string) error {
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft in %s: %v: %s\n%s", ns, err, bytes.TrimSpace(out), script)
	}
	return nil
}

// NewNet creates the namespaces of n members (names unique to this
// process), their links and the hub's relay. On error, what was made is
// removed.
func NewNet(n int) (_ *Net, err error) {
	removeStale()
	prefix := fmt.Sprintf("csf%d-%d", os.Getpid(), netSeq.Add(1))
	nt := &Net{Hub: prefix + "-hub", cut: make([][]bool, n), loss: make([]int, n)}
	for i := range n {
		nt.Members = append(nt.Members, fmt.Sprintf("%s-m%d", prefix, i+1))
		nt.cut[i] = make([]bool, n)
	}
	defer func() {
		if err != nil {
			nt.Close()
		}
	}()
	hub := func(args ...string) error { return run("ip", append([]string{"-n", nt.Hub}, args...)...) }
	steps := []func() error{
		func() error { return run("ip", "netns", "add", nt.Hub) },
		func() error { return hub("link", "set", "lo", "up") },
		func() error { return hub("link", "add", "br0", "type", "bridge") },
		func() error { return hub("addr", "add", subnet+".0.254/24", "dev", "br0") },
		func() error { return hub("link", "set", "br0", "up") },
	}
	for i, ns := range nt.Members {
		id := i + 1
		m := func(args ...string) error { return run("ip", append([]string{"-n", ns}, args...)...) }
		veth := fmt.Sprintf("v%d", id)
		steps = append(steps,
			func() error { return run("ip", "netns", "add", ns) },
			func() error { return m("link", "set", "lo", "up") },
			func() error { return m("link", "add", "eth0", "type", "veth", "peer", "name", veth, "netns", nt.Hub) },
			func() error { return m("addr", "add", fmt.Sprintf("%s.0.%d/24", subnet, id), "dev", "eth0") },
			func() error { return m("addr", "add", fmt.Sprintf("%s.1.%d/32", subnet, id), "dev", "lo") },
			func() error { return m("link", "set", "eth0", "up") },
			func() error { return m("route", "add", subnet+".1.0/24", "via", subnet+".0.254") },
			func() error { return m("route", "add", subnet+".2.0/24", "via", subnet+".0.254") },
			func() error { return hub("link", "set", veth, "master", "br0", "up") },
			func() error { return hub("addr", "add", fmt.Sprintf("%s.2.%d/32", subnet, id), "dev", "lo") },
			func() error {
				return hub("route", "add", fmt.Sprintf("%s.1.%d/32", subnet, id), "via", fmt.Sprintf("%s.0.%d", subnet, id))
			},
		)
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	var nat strings.Builder
	nat.WriteString("table ip faults_nat {\n  chain pre {\n    type nat hook prerouting priority dstnat;\n")
	for id := 1; id <= n; id++ {
		fmt.Fprintf(&nat, "    ip daddr %s.1.%d tcp dport %d dnat to %s.0.254:%d\n", subnet, id, servicePort, subnet, relayPort+id)
	}
	nat.WriteString("  }\n  chain post {\n    type nat hook postrouting priority srcnat;\n  }\n}\n")
	if err := nftIn(nt.Hub, nat.String()); err != nil {
		return nil, err
	}
	if nt.relay, err = startRelay(nt.Hub, n); err != nil {
		return nil, err
	}
	return nt, nil
}

// removeStale removes the namespaces left by a harness process that no
// longer exists (killed before its cleanup ran).
func removeStale() {
	ents, _ := os.ReadDir("/var/run/netns")
	for _, e := range ents {
		var pid, seq int
		var rest string
		if n, _ := fmt.Sscanf(e.Name(), "csf%d-%d-%s", &pid, &seq, &rest); n == 3 && pid != os.Getpid() {
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				run("ip", "netns", "del", e.Name())
			}
		}
	}
}

// Close stops the relay and removes the namespaces (and with them their
// links and rules).
func (nt *Net) Close() error {
	if nt.relay != nil {
		nt.relay.close()
	}
	var errs []error
	for _, ns := range append(slices.Clone(nt.Members), nt.Hub) {
		if _, err := os.Stat("/var/run/netns/" + ns); err == nil {
			errs = append(errs, run("ip", "netns", "del", ns))
		}
	}
	return errors.Join(errs...)
}

// Cut drops every packet between the members of side and the others (a
// partition), on top of the cuts already made.
func (nt *Net) Cut(side []int) error {
	in := make([]bool, len(nt.Members))
	for _, id := range side {
		in[id-1] = true
	}
	for i := range in {
		for j := range in {
			if in[i] != in[j] {
				nt.cut[i][j] = true
			}
		}
	}
	return nt.apply()
}

// Heal removes every cut and every loss.
func (nt *Net) Heal() error {
	for i := range nt.cut {
		clear(nt.cut[i])
	}
	clear(nt.loss)
	return nt.apply()
}

// SetLoss makes member id drop pct percent of the packets it sends and
// of those it receives, at random (nftables' numgen).
func (nt *Net) SetLoss(id, pct int) error {
	nt.loss[id-1] = pct
	return nt.apply()
}

// SetDelay makes the relay hold every byte to and from member id for d
// (each way; a connection between two delayed members gets both delays),
// from when it returns.
func (nt *Net) SetDelay(id int, d time.Duration) error { return nt.relay.setDelay(id, d) }

// apply rewrites each member's rules (table inet faults) from cut and
// loss, in every namespace at once: one after the other, on a loaded
// machine where each nft takes a few hundred milliseconds to start, a cut
// of 200 ms lasted over a second between the first namespace cut and the
// last healed, past the detector's timeout.
func (nt *Net) apply() error {
	errs := make([]error, len(nt.Members))
	var wg sync.WaitGroup
	for i, ns := range nt.Members {
		var peers []string
		for j, c := range nt.cut[i] {
			if c {
				peers = append(peers, fmt.Sprintf("%s.1.%d, %s.2.%d", subnet, j+1, subnet, j+1))
			}
		}
		var b strings.Builder
		b.WriteString("flush ruleset\ntable inet faults {\n")
		for _, dir := range []struct{ chain, hook, iface, addr string }{{"in", "input", "iifname", "saddr"}, {"out", "output", "oifname", "daddr"}} {
			fmt.Fprintf(&b, "  chain %s {\n    type filter hook %s priority 0;\n", dir.chain, dir.hook)
			if len(peers) > 0 {
				fmt.Fprintf(&b, "    ip %s { %s } drop\n", dir.addr, strings.Join(peers, ", "))
			}
			switch p := nt.loss[i]; {
			case p >= 100:
				fmt.Fprintf(&b, "    %s \"eth0\" drop\n", dir.iface)
			case p > 0:
				fmt.Fprintf(&b, "    %s \"eth0\" numgen random mod 100 < %d drop\n", dir.iface, p)
			}
			b.WriteString("  }\n")
		}
		b.WriteString("}\n")
		wg.Go(func() { errs[i] = nftIn(ns, b.String()) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// inNetns runs f on a thread in network namespace ns; sockets f creates
// stay in it. The thread is not given back to the runtime: it ends with f
// (so no child of the harness may have PR_SET_PDEATHSIG: it fires when the
// thread that forked it exits, which may be this one).
func inNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		fd, err := syscall.Open("/var/run/netns/"+ns, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer syscall.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// listenIn listens on addr in namespace ns.
func listenIn(ns, addr string) (ln net.Listener, err error) {
	err = inNetns(ns, func() error {
		ln, err = net.Listen("tcp", addr)
		return err
	})
	return ln, err
}

// dialIn dials addr from local in namespace ns.
func dialIn(ns, local, addr string) (c net.Conn, err error) {
	err = inNetns(ns, func() error {
		c, err = dial(local, addr)
		return err
	})
	return c, err
}

// dial dials addr from local, in this thread's namespace.
func dial(local, addr string) (net.Conn, error) {
	la, err := net.ResolveTCPAddr("tcp", local)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{LocalAddr: la, Timeout: 2 * time.Second}
	return d.Dial("tcp", addr)
}
