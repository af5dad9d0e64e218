package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/trace"
)

var traceCmd = &cobra.Command{
	Use:   "trace",
	Short: "Tools for critsec traces (JSON Lines, docs/trace.md)",
}

var traceLimits trace.Limits

var traceCheckCmd = &cobra.Command{
	Use:   "check FILE",
	Short: "Re-check a trace on its own: bounds, message matching, requests, the claimed verdict",
	Long: `trace check reads a trace written by any runtime (sim, check, node) and
re-checks the run it records, without the algorithm. FILE "-" is standard
input.

  - the header's safety property from its initial configuration on and
    after every event: lo <= #InCS <= hi (the header's "lo"/"hi", or l/k
    when absent), or for a local problem l_i <= #InCS in N_i+P_i <= k_i for
    every process (the header's "neighbors" and "lk"); crashed processes no
    longer count;
  - every recv is matched by an earlier unmatched send on the same link with
    the same message kind, the oldest one when the header says "fifo": true;
  - a state event follows the matching pending request (entry -> InCS,
    exit -> OutCS); requests follow the invocation convention, one at a time;
  - node ids lie in 1..n, time never decreases, crashed processes stay silent.

Messages still in transit at the end are fine. It prints "ok: ..." and how
many times each process entered and exited (naming any that never did), or
the first violation with its line number.

A counterexample written by critsec check --trace says in its header what it
demonstrates ("demonstrates": bounds, deadlock, ...); a trace written by
critsec sim --trace ends with the run's verdict, if any ("ev":"verdict":
bounds, deadlock, convention, error, fencing, starvation or livelock;
docs/trace.md). trace check then first prints "confirmed", "not confirmed" or
"cannot confirm" with the reason: a deadlock is confirmed when at the end no
message is in transit to a live process and every live process waits in a
request, or, after the drain event critsec sim writes when its workload stops
(no Entry call follows it), when every idle live process is OutCS and some
pending request is one that no bound holds; a deadlock under a budget (some
process could still call) cannot be confirmed from a trace alone. A starvation is confirmed when the named
process's request, made at the time the verdict gives, is still pending at
the end, at least the verdict's bound later, and another process changed
state after it had waited the bound; a livelock when no process changed
state after the time the verdict gives, messages were received after the last
state change, the trace ends at least the bound later, and requests are
pending at the end.

Memory: about 80 bytes per process of the header's n, plus a few times the
longest line; n above --max-n and lines above --max-line are refused before
anything is read further.

Exit status: 0 ok (nothing claimed, no violation); 1 a violation: found in a
trace that claims nothing, or the claimed one, confirmed; 2 the trace cannot
be taken at its word: unreadable, malformed, over a limit, or its claimed
verdict not confirmed.`,
	Args: cobra.ExactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		switch {
		case traceLimits.MaxN < 1 || traceLimits.MaxN > trace.MaxID:
			return badInput("--max-n %d is out of range: need 1 <= max-n <= %d", traceLimits.MaxN, trace.MaxID)
		case traceLimits.MaxLine < 1:
			return badInput("--max-line %d is out of range: need >= 1", traceLimits.MaxLine)
		}
		name, in, err := openTrace(cmd, args[0])
		if err != nil {
			return badInput("trace check: %v", err)
		}
		defer in.Close()
		rep, err := trace.CheckLimits(in, traceLimits)
		if err != nil {
			return traceReadError(name, err)
		}
		printTraceReport(cmd.OutOrStdout(), name, rep)
		switch {
		case rep.Claim == nil && rep.Violation == nil:
			return nil
		case rep.Claim == nil || rep.Confirmation == trace.Confirmed:
			return errFailure
		}
		return badInput("trace check %s: %s: the %s the trace claims", name, rep.Confirmation, rep.Claim.Kind)
	},
}

// openTrace opens path, or standard input for "-", and returns the name to
// show in messages.
func openTrace(cmd *cobra.Command, path string) (string, io.ReadCloser, error) {
	if path == "-" {
		return "standard input", io.NopCloser(cmd.InOrStdin()), nil
	}
	f, err := os.Open(path)
	return path, f, err
}

// traceReadError is the one-line error for a trace that cannot be read:
// malformed, over a limit (with the flag that raises it), or an I/O error.
func traceReadError(name string, err error) error {
	var fe *trace.FormatError
	if !errors.As(err, &fe) {
		return badInput("trace check %s: %v", name, err)
	}
	var le *trace.LimitError
	switch {
	case errors.As(err, &le) && le.What == "n" && le.Value <= trace.MaxID:
		return badInput("trace check %s: %v; raise the limit with --max-n %d", name, fe, le.Value)
	case errors.As(err, &le) && le.What == "line":
		return badInput("trace check %s: %v; raise the limit with --max-line BYTES", name, fe)
	}
	return badInput("trace check %s: malformed trace: %v", name, fe)
}

// printTraceReport prints the answer to the header's claim, if any, then
// the violation or the summary.
func printTraceReport(w io.Writer, name string, rep *trace.Report) {
	if cl := rep.Claim; cl != nil {
		fmt.Fprintf(w, "%s: %s (the trace's claim): %s\n", rep.Confirmation, cl.Kind, rep.ClaimNote)
		if cl.Detail != "" {
			fmt.Fprintf(w, "claimed: %s\n", cl.Detail)
		}
	}
	if v := rep.Violation; v != nil {
		fmt.Fprintf(w, "violation: %s line %d (t=%g, %s): %s; InCS: %s\n", name, v.Line, v.T, v.Event, v.Reason, fewIDs(v.InCS))
		return
	}
	word := "ok"
	if rep.Claim != nil {
		word = "replayed"
	}
	bounds := fmt.Sprintf("bounds %d..%d", rep.Lo, rep.Hi)
	if g := rep.Property.ExitGuard(); g != nil {
		bounds += fmt.Sprintf(", every exit keeping %d", g.L())
	}
	if !rep.Property.IsGlobal() {
		bounds = fmt.Sprintf("local bounds l_i..k_i on each of %s", count(int64(rep.Property.N()), "neighborhood"))
	}
	fmt.Fprintf(w, "%s: %s, max #InCS %d, min #InCS %d (%s), %s unreceived, %s pending\n",
		word, count(rep.Events, "event"), rep.MaxInCS, rep.MinInCS, bounds, count(rep.Unreceived, "message"), count(int64(rep.Pending), "request"))
	en, ex := rep.Entries[1:], rep.Exits[1:]
	fmt.Fprintf(w, "per process: entries %d..%d, exits %d..%d; never entered: %s; never exited: %s\n",
		slices.Min(en), slices.Max(en), slices.Min(ex), slices.Max(ex), fewIDs(rep.NeverEntered()), fewIDs(rep.NeverExited()))
	if rep.FenceK > 0 {
		entries := fmt.Sprintf("%d entries", rep.Fences)
		if rep.Fences == 1 {
			entries = "1 entry"
		}
		fmt.Fprintf(w, "fencing: %s with tokens, both fencing properties hold (k = %d; docs/fencing.md)\n", entries, rep.FenceK)
	}
}

// fewIDs is idList for at most 10 ids, then how many there are in all: a
// trace of a million processes gets a readable line.
func fewIDs(ids []cs.ID) string {
	if len(ids) <= 10 {
		return idList(ids)
	}
	return fmt.Sprintf("%s ... (%d processes)", idList(ids[:10]), len(ids))
}

func init() {
	fs := traceCheckCmd.Flags()
	fs.IntVar(&traceLimits.MaxN, "max-n", trace.DefaultMaxN, fmt.Sprintf("refuse a header whose n is above this, 1..%d (memory: about %d bytes per process)", trace.MaxID, trace.BytesPerProcess))
	fs.IntVar(&traceLimits.MaxLine, "max-line", trace.DefaultMaxLine, "refuse a line longer than this many bytes, >= 1")
	traceCmd.AddCommand(traceCheckCmd)
	rootCmd.AddCommand(traceCmd)
}
