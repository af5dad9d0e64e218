package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// count returns "1 request" or "3 requests": c and noun, in the plural
// (noun + "s") unless c is 1.
func count(c int64, noun string) string {
	if c == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", c, noun)
}

// printSummary writes a run's summary s to w: as indented JSON (stable key
// order, the struct's field order) with --json, else as text.
func printSummary(w io.Writer, asJSON bool, s any, text func(io.Writer)) error {
	if !asJSON {
		text(w)
		return nil
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n", b)
	return nil
}

// outcome is a run's exit, after its report: errFailure (status 1) when
// it failed (a violation, or incomplete), which wins over an error writing
// its trace (status 3; then printed on standard error); else that error.
func outcome(cmd *cobra.Command, failed bool, traceErr error) error {
	switch {
	case failed && traceErr != nil:
		fmt.Fprintf(cmd.ErrOrStderr(), "critsec: %v\n", traceErr)
		return errFailure
	case failed:
		return errFailure
	}
	return traceErr
}
