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
// the timeout passed, 503 the node is closed, 400 a bad query. After a
// timeout "request" says which of two things happened: "pending" (the
// node took the request, which stays pending: it enters or leaves later,
// /status shows when, and the request cannot be withdrawn) or "dropped"
// (the node had not taken it: nothing happened). A client that
// disconnects leaves a request it made pending likewise. Idle
// connections are closed (controlIdleTimeout), and so are connections
// that do not send a request's header in time (controlHeaderTimeout).

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
	// Request, after a timeout (504), is "pending" (ErrPending) or
	// "dropped" (ErrDropped).
	Request string `json:"request,omitempty"`
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

// The control server's timeouts: an idle connection is closed, and so is
// one that does not send a request's header in time. Variables so that
// tests can shorten them.
var (
	controlIdleTimeout   = 30 * time.Second
	controlHeaderTimeout = 5 * time.Second
)

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
	srv := &http.Server{Handler: nd.Handler(), ReadHeaderTimeout: controlHeaderTimeout, IdleTimeout: controlIdleTimeout,
		MaxHeaderBytes: 16 << 10}
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
	call := func(name string, op func(*Node, context.Context) error) http.HandlerFunc {
		hint := "" // how a pending request ends
		if name == "enter" {
			hint = " (exit once the node is InCS)"
		}
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
			code, request := http.StatusOK, ""
			switch {
			case err == nil:
			case errors.Is(err, ErrInvalid):
				code = http.StatusConflict
			case errors.Is(err, ErrPending):
				code, request = http.StatusGatewayTimeout, "pending"
				err = fmt.Errorf("timed out after %s: the %s request stays pending: the node completes it later "+
					"(status shows when), and it cannot be withdrawn%s", timeout, name, hint)
			case errors.Is(err, ErrDropped):
				code, request = http.StatusGatewayTimeout, "dropped"
				err = fmt.Errorf("timed out after %s before the node took the %s request: nothing happened; ask again",
					timeout, name)
			case errors.Is(err, ErrClosed):
				code = http.StatusServiceUnavailable
			default:
				code = http.StatusInternalServerError
			}
			nd.answerRequest(w, code, err, request)
		}
	}
	mux.Handle("GET /metrics", nd.MetricsHandler())
	mux.HandleFunc("POST /enter", call("enter", (*Node).Enter))
	mux.HandleFunc("POST /exit", call("exit", (*Node).Exit))
	return mux
}

func (nd *Node) answer(w http.ResponseWriter, code int, err error) {
	nd.answerRequest(w, code, err, "")
}

func (nd *Node) answerRequest(w http.ResponseWriter, code int, err error, request string) {
	s := nd.Status()
	a := StatusJSON{Node: int(nd.id), State: s.State.String(), Pending: s.Pending.String(), Changes: s.Changes, WaitingOn: []int{},
		Request: request}
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
