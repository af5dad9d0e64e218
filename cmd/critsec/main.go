// Command critsec checks, simulates and runs distributed critical-section
// algorithms: mutual exclusion, k-mutual exclusion, l-mutual inclusion and
// the global (l,k)-CS problem. See README.md.
//
// Each subcommand lives in its own file and adds itself to rootCmd in init.
// Exit status: 0 success, 1 a violation (or an incomplete check) found by
// the run, 2 bad input (refused before anything runs, one line on standard
// error; also an input file that cannot be read), 3 an I/O or internal error
// writing a result (a trace that cannot be written).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

var rootCmd = &cobra.Command{
	Use:   "critsec",
	Short: "Check, simulate and run distributed critical-section algorithms",
	Long: `critsec makes the distributed critical-section family real: mutual exclusion,
k-mutual exclusion, l-mutual inclusion and the global (l,k)-CS problem
("at least l and at most k processes in the critical section at any time").
Every algorithm is one deterministic state machine, driven by a model checker
(check), a discrete-event simulator (sim), the papers' studies on top of it
(experiment) and trace tools (trace). Start with: critsec sim

Exit status: 0 ok, 1 violation (or an incomplete check), 2 bad input,
3 I/O or internal error.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

var versionCmd = &cobra.Command{
	Use:   "version",
	Short: "Print critsec's module version and the commit it was built from",
	Args:  cobra.NoArgs,
	Run: func(cmd *cobra.Command, _ []string) {
		fmt.Fprintf(cmd.OutOrStdout(), "critsec %s\n", versionString())
	},
}

// versionString is the module version (set with -ldflags "-X
// main.version=...", else the one the go command recorded: a tag for `go
// install ...@v1.2.3`, "(devel)" for a build in a checkout) and, when the
// build recorded it, the commit ("+dirty" with uncommitted changes) and its
// time.
func versionString() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v == "dev" && info.Main.Version != "" {
		v = info.Main.Version
	}
	var rev, at, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return v + ", commit unknown (built without version control information, e.g. by go run)"
	}
	return fmt.Sprintf("%s, commit %s%s (%s)", v, rev, dirty, at)
}

// helpCmd replaces cobra's help command, which answers an unknown topic
// with the root's help and exit status 0.
var helpCmd = &cobra.Command{
	Use:   "help [command]",
	Short: "Help about any command",
	RunE: func(c *cobra.Command, args []string) error {
		cmd, rest, err := c.Root().Find(args)
		if err != nil || len(rest) > 0 {
			return badInput("help: no command %q: see critsec --help for the commands", strings.Join(args, " "))
		}
		return cmd.Help()
	},
}

func init() {
	rootCmd.SetHelpCommand(helpCmd)
	rootCmd.Version = versionString()
	rootCmd.SetVersionTemplate("critsec {{.Version}}\n")
	rootCmd.AddCommand(versionCmd)
	rootCmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{flagError(c, err)} })
}

// usageError marks bad input: the command exits with status 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// badInput returns a usageError with a formatted message.
func badInput(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// failure marks a run that completed and found a problem (a violation): the
// command exits with status 1 after printing its report.
var errFailure = errors.New("failure")

func main() {
	out := &checkedWriter{w: os.Stdout}
	rootCmd.SetOut(out)
	code := run(os.Args[1:])
	if out.err != nil && code != 2 {
		fmt.Fprintln(os.Stderr, "critsec: writing standard output:", out.err)
		code = max(code, 3)
	}
	os.Exit(code)
}

// checkedWriter keeps the first error of the writes to w, so that output
// lost on a full disk or a closed pipe is not reported as success.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.err = err
	return n, err
}

func run(args []string) int {
	rootCmd.InitDefaultCompletionCmd(args...) // cobra's, added here so that the next line covers it
	refuseUnknownSubcommands(rootCmd)
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errFailure):
		return 1
	}
	fmt.Fprintln(rootCmd.ErrOrStderr(), "critsec:", err)
	var u usageError
	if errors.As(err, &u) || isCobraUsage(err) {
		return 2
	}
	return 3
}

// refuseUnknownSubcommands makes every command group below c (a command
// with subcommands and nothing to run itself) refuse an unknown subcommand
// as bad input; cobra would print the group's help and exit 0.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		if sub.HasSubCommands() && !sub.Runnable() {
			sub.Args = cobra.NoArgs
			sub.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
		refuseUnknownSubcommands(sub)
	}
}

// isCobraUsage recognizes cobra's own errors for unknown commands and bad
// arguments, which it returns as plain errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires ", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// badFlagValue matches pflag's error for a value its type cannot parse:
// `invalid argument "x" for "--n" flag: strconv.ParseInt: ...`.
var badFlagValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?--([\w-]+)" flag: `)

// flagError rewrites pflag's errors for values of the wrong type without
// Go's internals (strconv.ParseInt, time: ...): it names the flag, the
// value and what the flag takes.
func flagError(c *cobra.Command, err error) error {
	m := badFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := "another value"
	if fl := c.Flags().Lookup(m[2]); fl != nil {
		switch fl.Value.Type() {
		case "int", "int64", "int32":
			want = "an integer"
		case "uint64", "uint":
			want = "an integer >= 0"
		case "float64":
			want = "a number"
		case "bool":
			want = "true or false"
		case "duration":
			want = "a duration with its unit, like 30s, 5m or 1h"
		case "calls":
			want = "a number of calls, or one per process, P1 first, like 2,1,1"
		}
		if strings.Contains(err.Error(), "value out of range") {
			want += " in the range of its type"
		}
	}
	return fmt.Errorf("--%s %q: want %s", m[2], m[1], want)
}
