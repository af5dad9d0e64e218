package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
)

// The control endpoint lets a program in any language use a node: HTTP
// with JSON answers on a unix socket, DATA/node-I/ctl.sock by default
// (ControlSocket). A unix socket and not loopback TCP: only users who may
// open the file (the node's own, mode 0600) can make the node enter or
// leave the critical section, where any local user can reach a loopback
// port.
//
//	GET  /status                    the node's Status
//	POST /enter?timeout=30s         Enter; answers once InCS (or the timeout)
//	POST /exit?timeout=30s          Exit; answers once OutCS
//	GET  /metrics                   the node's metrics, Prometheus's text format
//
// Every answer is a StatusJSON; an error adds "error" and sets the code:
// 409 the call breaks the invocation convention (nothing happened), 504
// the timeout passed (the request stays pending: the node enters or
// leaves later, /status shows when), 503 the node is closed, 400 a bad
// query. A client that disconnects leaves its request pending likewise.

// StatusJSON is a control endpoint's answer.
type StatusJSON struct {
	Node      int    `json:"node"`
	State     string `json:"state"`   // InCS or OutCS
	Pending   string `json:"pending"` // none, entry or exit
	Changes   uint64 `json:"changes"`
	WaitingOn []int  `json:"waiting_on"`
	// Fence is Status.Fence, as a trace writes it: {"seq":7,"crashed":[2]}.
	Fence *trace.Fence `json:"fence,omitempty"`
	Error string       `json:"error,omitempty"`
}

// fenceOf returns m's fencing token when m is InCS and gives tokens
// (cs.Fencing), else nil. Only the driver may call it on the node's
// machine.
func fenceOf(m cs.Machine) *cs.Fence {
	f, ok := m.(cs.Fencing)
	if !ok || m.State() != cs.InCS {
		return nil
	}
	tok := f.Fence()
	return &tok
}

// ControlSocket is the default path of node id's control socket.
func ControlSocket(cfg *Config, id cs.ID) string {
	return filepath.Join(NodeDir(cfg, id), "ctl.sock")
}

// ServeControl serves the control endpoint on a unix socket at path
// until ctx ends; a stale socket file left by a killed node is replaced.
func (nd *Node) ServeControl(ctx context.Context, path string) error {
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: nd.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the control endpoint's HTTP handler.
func (nd *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		nd.answer(w, http.StatusOK, nil)
	})
	call := func(op func(*Node, context.Context) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			timeout := 30 * time.Second
			if q := r.URL.Query().Get("timeout"); q != "" {
				d, err := time.ParseDuration(q)
				if err != nil || d <= 0 {
					nd.answer(w, http.StatusBadRequest, fmt.Errorf("timeout=%q: want a positive duration such as 30s", q))
					return
				}
				timeout = d
			}
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			err := op(nd, ctx)
			code := http.StatusOK
			switch {
			case err == nil:
			case errors.Is(err, ErrInvalid):
				code = http.StatusConflict
			case errors.Is(err, context.DeadlineExceeded):
				code = http.StatusGatewayTimeout
			case errors.Is(err, ErrClosed):
				code = http.StatusServiceUnavailable
			default:
				code = http.StatusInternalServerError
			}
			nd.answer(w, code, err)
		}
	}
	mux.Handle("GET /metrics", nd.MetricsHandler())
	mux.HandleFunc("POST /enter", call((*Node).Enter))
	mux.HandleFunc("POST /exit", call((*Node).Exit))
	return mux
}

func (nd *Node) answer(w http.ResponseWriter, code int, err error) {
	s := nd.Status()
	a := StatusJSON{Node: int(nd.id), State: s.State.String(), Pending: s.Pending.String(), Changes: s.Changes, WaitingOn: []int{}}
	for _, id := range s.WaitingOn {
		a.WaitingOn = append(a.WaitingOn, int(id))
	}
	if s.Fence != nil {
		a.Fence = trace.FenceOf(*s.Fence)
	}
	if err != nil {
		a.Error = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(a)
}

// Control is a client of a node's control endpoint.
type Control struct {
	c *http.Client
}

// DialControl returns a client of the control socket at path.
func DialControl(path string) *Control {
	var d net.Dialer
	return &Control{c: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", path) },
	}}}
}

// Do makes the call op ("status", "enter" or "exit") with the given
// timeout for enter and exit, and returns the node's answer; err is
// non-nil when the node could not be reached or answered an error (the
// answer then says which, in Error).
func (c *Control) Do(ctx context.Context, op string, timeout time.Duration) (StatusJSON, error) {
	var a StatusJSON
	method, url := http.MethodPost, "http://node/"+op+"?timeout="+timeout.String()
	switch op {
	case "status":
		method, url = http.MethodGet, "http://node/status"
	case "enter", "exit":
	default:
		return a, fmt.Errorf("unknown call %q: status, enter or exit", op)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return a, err
	}
	resp, err := c.c.Do(req)
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a); err != nil {
		return a, fmt.Errorf("%s: %w", resp.Status, err)
	}
	if a.Error != "" {
		return a, errors.New(a.Error)
	}
	return a, nil
}

// Close releases the client's idle connections.
func (c *Control) Close() { c.c.CloseIdleConnections() }
