package main

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"critsec/trace"
)

var traceCmd = &cobra.Command{
	Use:   "trace",
	Short: "Tools for critsec traces (JSON Lines, docs/trace.md)",
}

var traceCheckCmd = &cobra.Command{
	Use:   "check FILE",
	Short: "Re-check a trace on its own: bounds, message matching, requests",
	Long: `trace check reads a trace written by any runtime (sim, check, node) and
re-checks the run it records, without the algorithm:

  - lo <= #InCS <= hi from the header's initial configuration on and after
    every event (the header's "lo"/"hi", or l/k when absent); crashed
    processes no longer count;
  - every recv is matched by an earlier unmatched send on the same link with
    the same message kind, the oldest one when the header says "fifo": true;
  - a state event follows the matching pending request (entry -> InCS,
    exit -> OutCS); requests follow the invocation convention, one at a time;
  - node ids lie in 1..n, time never decreases, crashed processes stay silent.

Messages still in transit at the end are fine. It prints "ok: ..." and how
many times each process entered and exited (naming any that never did), or
the first violation with its line number.

Exit status: 0 ok, 1 violation, 2 unreadable or malformed file.`,
	Args: cobra.ExactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		path := args[0]
		f, err := os.Open(path)
		if err != nil {
			return badInput("trace check: %v", err)
		}
		defer f.Close()
		rep, err := trace.Check(f)
		var fe *trace.FormatError
		if errors.As(err, &fe) {
			return badInput("trace check %s: malformed trace: %v", path, fe)
		}
		if err != nil {
			return badInput("trace check %s: %v", path, err)
		}
		w := cmd.OutOrStdout()
		if v := rep.Violation; v != nil {
			fmt.Fprintf(w, "violation: %s line %d (t=%g, %s): %s; InCS: %s\n", path, v.Line, v.T, v.Event, v.Reason, idList(v.InCS))
			return errFailure
		}
		fmt.Fprintf(w, "ok: %d events, max #InCS %d, min #InCS %d (bounds %d..%d), %d messages unreceived, %d requests pending\n",
			rep.Events, rep.MaxInCS, rep.MinInCS, rep.Lo, rep.Hi, rep.Unreceived, rep.Pending)
		en, ex := rep.Entries[1:], rep.Exits[1:]
		fmt.Fprintf(w, "per process: entries %d..%d, exits %d..%d; never entered: %s; never exited: %s\n",
			slices.Min(en), slices.Max(en), slices.Min(ex), slices.Max(ex), idList(rep.NeverEntered()), idList(rep.NeverExited()))
		return nil
	},
}

func init() {
	traceCmd.AddCommand(traceCheckCmd)
	rootCmd.AddCommand(traceCmd)
}
