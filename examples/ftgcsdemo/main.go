// Command ftgcsdemo is the service and the tools of the ftgcs demo under
// critsec run (docs/ft-global-lk-cs.md, "Run for real"; demo.sh runs it
// end to end). Every copy of the service appends its own records to one
// shared log, stamped with the machine's monotonic clock, so that the
// number of copies running over time comes from the copies themselves:
//
//	ftgcsdemo serve -log F -member I -addr A   the service: HTTP on A, a start record, a beat every -every, a stop on SIGTERM
//	ftgcsdemo running -log F                   the members whose copy beat within the last 100 ms
//	ftgcsdemo wait -log F -copies N            wait until exactly N copies beat within the last 100 ms
//	ftgcsdemo kill -log F -member I -pid P     record the kill, then SIGKILL P (the member's critsec run)
//	ftgcsdemo end -log F                       record the end of the run
//	ftgcsdemo plot -log F -l L -k K -out PNG   the copies over time: numbers, and a plot with l, k and the kills
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/critsec/critsec/fence"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("give a subcommand: serve, running, wait, kill, end or plot"))
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	logPath := fs.String("log", "", "the shared log of records")
	member := fs.Int("member", 0, "the member id (serve, kill)")
	addr := fs.String("addr", "127.0.0.1:0", "serve: the address to listen on")
	every := fs.Duration("every", 20*time.Millisecond, "serve: how often a copy writes a beat")
	pid := fs.Int("pid", 0, "kill: the process to kill")
	copies := fs.Int("copies", 0, "wait: the number of copies to wait for")
	timeout := fs.Duration("timeout", time.Minute, "wait: how long to wait")
	l := fs.Int("l", 0, "plot: the lower bound")
	k := fs.Int("k", 0, "plot: the upper bound")
	out := fs.String("out", "", "plot: the image to write (.png or .svg)")
	fs.Parse(os.Args[2:])
	if *logPath == "" {
		fail(errors.New("-log is required: the shared log of records"))
	}
	var err error
	switch os.Args[1] {
	case "serve":
		if *member < 1 || *every <= 0 {
			fail(fmt.Errorf("serve: -member %d -every %v: give the member's id and a positive interval", *member, *every))
		}
		err = serve(*logPath, *member, *addr, *every)
	case "running":
		var ms []int
		if ms, err = running(*logPath); err == nil {
			for _, m := range ms {
				fmt.Println(m)
			}
		}
	case "wait":
		err = wait(*logPath, *copies, *timeout)
	case "kill":
		if *pid <= 0 || *member < 1 {
			fail(fmt.Errorf("kill: -pid %d -member %d: give the process id of the member's critsec run and the member's id", *pid, *member))
		}
		if err = appendRecord(*logPath, kindKill, *member, *pid); err == nil {
			err = syscall.Kill(*pid, syscall.SIGKILL)
		}
	case "end":
		err = appendRecord(*logPath, kindEnd, 0, 0)
	case "plot":
		err = plot(*logPath, *l, *k, *out)
	default:
		err = fmt.Errorf("unknown subcommand %q: give serve, running, wait, kill, end or plot", os.Args[1])
	}
	var broken boundsBroken
	if errors.As(err, &broken) {
		fmt.Fprintln(os.Stderr, "ftgcsdemo:", err)
		os.Exit(1)
	}
	if err != nil {
		fail(err)
	}
}

// fail reports err, a bad input or a failure to run, with exit status 2.
func fail(err error) {
	fmt.Fprintln(os.Stderr, "ftgcsdemo:", err)
	os.Exit(2)
}

// appendRecord appends one record, stamped now, in one write.
func appendRecord(path, kind string, member, pid int) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%d %s %d %d\n", fence.Now(), kind, member, pid)
	return errors.Join(err, f.Close())
}

// serve is the service: it answers HTTP with its member and pid, and
// writes a start record, a beat every every and a stop record on SIGTERM.
func serve(path string, member int, addr string, every time.Duration) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var mu sync.Mutex
	write := func(kind string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(f, "%d %s %d %d\n", fence.Now(), kind, member, os.Getpid())
	}
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "copy of member %d (pid %d)\n", member, os.Getpid())
		})}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	write(kindStart)
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				write(kindStop)
				shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				srv.Shutdown(shut)
				return
			case <-tick.C:
				write(kindBeat)
			}
		}
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// fresh is how recent a copy's last beat must be for it to count as
// running in running and wait: five beats.
const fresh = 100 * time.Millisecond

// running returns the members whose copy's last record is a start or a
// beat within fresh.
func running(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := readRecords(f)
	if err != nil {
		return nil, err
	}
	last := map[int]record{}
	for _, r := range recs {
		if r.kind == kindStart || r.kind == kindBeat || r.kind == kindStop {
			last[r.pid] = r
		}
	}
	now := fence.Now()
	var ms []int
	for _, r := range last {
		if r.kind != kindStop && now-r.t < int64(fresh) {
			ms = append(ms, r.member)
		}
	}
	slices.Sort(ms)
	return ms, nil
}

// wait polls running until it finds exactly n copies.
func wait(path string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ms, err := running(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if len(ms) == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not %d copies running after %v: %v", n, timeout, ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
