// Command fencing is the example resource of docs/fencing.md: an HTTP
// service over an append-only file that refuses the writes of stale
// holders by their fencing tokens.
//
//	fencing --file data.jsonl --k 1 --addr 127.0.0.1:8200
//
// A holder writes with its member id and the token critsec gave its
// command (CRITSEC_FENCE, CRITSEC_FENCE_CRASHED):
//
//	curl --data-binary 'hello' \
//	  "http://127.0.0.1:8200/write?member=2&seq=$CRITSEC_FENCE&crashed=$CRITSEC_FENCE_CRASHED"
//
// 200 means written; 409 a stale token (the holder must stop); 400 a
// malformed request.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"
)

// maxBody bounds a write's data.
const maxBody = 1 << 20

func main() {
	file := flag.String("file", "fencing.jsonl", "the store's file (created if missing)")
	k := flag.Int("k", 1, "the cluster's k: with 1, tokens are also ordered by seq")
	addr := flag.String("addr", "127.0.0.1:8200", "the address to listen on")
	flag.Parse()
	st, err := Open(*file, *k)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fencing:", err)
		os.Exit(2)
	}
	// Every write is on disk before its answer (Store.Write), so the
	// service may be stopped by any signal.
	srv := &http.Server{Addr: *addr, Handler: handler(st), ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// handler serves POST /write?member=M&seq=S&crashed=A,B with the data as
// the body.
func handler(st *Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /write", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		member, err := strconv.Atoi(q.Get("member"))
		if err != nil {
			http.Error(w, fmt.Sprintf("member %q: want the holder's member id", q.Get("member")), http.StatusBadRequest)
			return
		}
		t, err := ParseToken(member, q.Get("seq"), q.Get("crashed"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, fmt.Sprintf("body: at most %d bytes", maxBody), http.StatusBadRequest)
			return
		}
		switch err := st.Write(t, string(data)); {
		case errors.Is(err, ErrStale):
			http.Error(w, err.Error(), http.StatusConflict)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			fmt.Fprintln(w, "ok")
		}
	})
	return mux
}
