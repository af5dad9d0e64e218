// Command hello is the tiny HTTP service of critsec run's demo
// (docs/run.md): it answers every request with its name and pid, and
// stops on SIGTERM.
//
//	hello --addr 127.0.0.1:8101 --name copy-1
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8100", "the address to listen on")
	name := flag.String("name", "hello", "the name to answer with")
	flag.Parse()
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "%s (pid %d)\n", *name, os.Getpid())
		})}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
