package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/trace"
	"github.com/critsec/critsec/viz"
)

// vizFlags are the flags of `critsec viz`.
type vizFlags struct {
	out     string
	serve   string
	opt     viz.Options
	maxN    int
	maxLine int
}

func newVizCmd() *cobra.Command {
	var f vizFlags
	cmd := &cobra.Command{
		Use:   "viz TRACE",
		Short: "Draw a trace as one self-contained HTML page: space-time diagram, #InCS chart, step-through",
		Long: `viz reads a trace written by any runtime (sim --trace, check --trace,
node) and writes one HTML page that needs no network: a space-time
diagram (one line per process, messages as arrows coloured by kind and
grouped by their prefix, CS intervals shaded, requests, crashes and
suspicions marked), a chart of #InCS over time with the bounds (for a local
problem, of a neighborhood you choose), zoom and pan, details on hover,
and for short traces (checker counterexamples) a step-through, one event at
a time, that shows the violated property at the step where it breaks.
TRACE "-" is standard input. See docs/viz.md.

A long trace is read as a stream: the chart covers all of it (#InCS
aggregated into at most 2*--buckets points), the diagram shows a detail
window of --window events from --from.

The page goes to --out (default: TRACE with .html for .jsonl; standard
output for "-"), or is served at --serve HOST:PORT until interrupted.

Exit status: 0 written, 2 bad input (an unreadable or malformed trace, a
bad address), 3 I/O error writing the page.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runViz(cmd, args[0], &f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.out, "out", "", `write the page to this file ("-": standard output)`)
	fs.StringVar(&f.serve, "serve", "", "serve the page over HTTP at this address, e.g. 127.0.0.1:8080, until interrupted")
	fs.IntVar(&f.opt.Window, "window", viz.DefaultWindow, "the most events drawn in detail, >= 1")
	fs.Float64Var(&f.opt.From, "from", 0, "the time where the detail window starts")
	fs.IntVar(&f.opt.Buckets, "buckets", viz.DefaultBuckets, "points of the whole-trace #InCS chart (between this and twice it), 1..1000000")
	fs.IntVar(&f.opt.Lines, "lines", viz.DefaultLines, "the most process lines drawn (P1..P_lines), 1..10000")
	fs.IntVar(&f.maxN, "max-n", trace.DefaultMaxN, fmt.Sprintf("refuse a header whose n is above this, 1..%d", trace.MaxID))
	fs.IntVar(&f.maxLine, "max-line", trace.DefaultMaxLine, "refuse a line longer than this many bytes, >= 1")
	return cmd
}

func init() { rootCmd.AddCommand(newVizCmd()) }

func runViz(cmd *cobra.Command, path string, f *vizFlags) error {
	switch {
	case f.opt.Window < 1 || f.opt.Window > 10_000_000:
		return badInput("--window %d is out of range: need 1 <= window <= 10000000", f.opt.Window)
	case f.opt.Buckets < 1 || f.opt.Buckets > 1_000_000:
		return badInput("--buckets %d is out of range: need 1 <= buckets <= 1000000", f.opt.Buckets)
	case f.opt.Lines < 1 || f.opt.Lines > 10_000:
		return badInput("--lines %d is out of range: need 1 <= lines <= 10000", f.opt.Lines)
	case f.maxN < 1 || f.maxN > trace.MaxID:
		return badInput("--max-n %d is out of range: need 1 <= max-n <= %d", f.maxN, trace.MaxID)
	case f.maxLine < 1:
		return badInput("--max-line %d is out of range: need >= 1", f.maxLine)
	case f.opt.From != f.opt.From || f.opt.From > 1e300 || f.opt.From < -1e300:
		return badInput("--from %v: want a finite time", f.opt.From)
	case f.serve != "" && f.out != "":
		return badInput("--serve and --out: choose one (serve the page, or write it to a file)")
	}
	f.opt.Limits = trace.Limits{MaxN: f.maxN, MaxLine: f.maxLine}
	var ln net.Listener
	if f.serve != "" {
		// Listening first refuses a bad address before the trace is read.
		if _, _, err := net.SplitHostPort(f.serve); err != nil {
			return badInput("--serve %q: want HOST:PORT, e.g. 127.0.0.1:8080", f.serve)
		}
		var err error
		if ln, err = net.Listen("tcp", f.serve); err != nil {
			return badInput("--serve %s: %v", f.serve, netReason(err))
		}
		defer ln.Close()
	}
	name, in, err := openTrace(cmd, path)
	if err != nil {
		return badInput("viz: %v", err)
	}
	defer in.Close()
	out := f.out
	if out == "" && ln == nil {
		out = "-"
		if path != "-" {
			out = strings.TrimSuffix(path, ".jsonl") + ".html"
		}
	}
	// The page's file is created before the trace is read, so a path that
	// cannot be written is refused at once; it is removed if no page comes.
	var of *os.File
	if out != "" && out != "-" {
		if of, err = os.Create(out); err != nil {
			return badInput("viz: --out %s: %v", out, err)
		}
		defer of.Close()
	}
	d, err := viz.Build(in, filepath.Base(name), f.opt)
	if err != nil {
		if of != nil {
			of.Close()
			os.Remove(out)
		}
		return vizReadError(name, err)
	}
	var page bytes.Buffer
	if err := viz.Write(&page, d); err != nil {
		return err
	}
	if ln != nil {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		fmt.Fprintf(cmd.OutOrStdout(), "serving %s (%d events) at http://%s/ ; interrupt to stop\n", name, d.Events, ln.Addr())
		return servePage(ctx, ln, page.Bytes())
	}
	if of == nil {
		_, err := cmd.OutOrStdout().Write(page.Bytes())
		return err
	}
	if _, err := of.Write(page.Bytes()); err != nil {
		return fmt.Errorf("viz: writing %s: %w", out, err)
	}
	if err := of.Close(); err != nil {
		return fmt.Errorf("viz: writing %s: %w", out, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "viz: %s (%d events, %d in detail) -> %s\n", name, d.Events, len(d.Detail), out)
	return nil
}

// netReason is the operating system's reason in a listen error, without
// Go's "listen tcp" prefix.
func netReason(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// servePage serves page at every path of ln until ctx ends.
func servePage(ctx context.Context, ln net.Listener, page []byte) error {
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// vizReadError is the one-line error for a trace viz cannot draw.
func vizReadError(name string, err error) error {
	var le *trace.LimitError
	switch {
	case errors.As(err, &le) && le.What == "n":
		return badInput("viz %s: %v; raise the limit with --max-n", name, err)
	case errors.As(err, &le) && le.What == "line":
		return badInput("viz %s: %v; raise the limit with --max-line BYTES", name, err)
	}
	return badInput("viz %s: cannot draw the trace: %v", name, err)
}

// writeCheckViz writes the page of the counterexample of res, whose
// trace has header h, to vf, the open --viz file of critsec check; without
// a counterexample the file is removed.
func writeCheckViz(vf *os.File, path string, h trace.Header, res check.Result) error {
	if res.Violation == nil {
		vf.Close()
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("--viz %s: %w", path, err)
		}
		return nil
	}
	var tr bytes.Buffer
	if err := check.WriteTrace(&tr, h, res.Violation.Path); err != nil {
		return fmt.Errorf("--viz %s: %w", path, err)
	}
	title := fmt.Sprintf("%s counterexample: %s", h.Alg, res.Violation.Kind)
	if err := viz.Page(vf, io.Reader(&tr), title, viz.Options{}); err != nil {
		return fmt.Errorf("--viz %s: %w", path, err)
	}
	if err := vf.Close(); err != nil {
		return fmt.Errorf("--viz %s: %w", path, err)
	}
	return nil
}
