package main

import (
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/fence"
)

var watchdogCmd = &cobra.Command{
	Use:    "watchdog -- CMD [ARGS...]",
	Short:  "The watchdog critsec run puts between itself and its command (package fence)",
	Hidden: true,
	Long: `watchdog runs CMD in its own process group and kills the whole group with
SIGKILL when the lease deadline it reads on file descriptor 3 passes, or when
that pipe ends (critsec run died). critsec run starts it; it is not meant to be
run by hand (docs/fencing.md).`,
	Args: func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return badInput("watchdog: no command: give it after --")
		}
		return nil
	},
	RunE: func(c *cobra.Command, args []string) error {
		var st syscall.Stat_t
		if syscall.Fstat(3, &st) != nil {
			return badInput("watchdog: no deadline pipe on file descriptor 3: critsec run starts the watchdog, not a user")
		}
		os.Exit(fence.Watch(args, os.NewFile(3, "deadlines"), os.Stdin, os.Stdout, os.Stderr))
		return nil
	},
}

func init() { rootCmd.AddCommand(watchdogCmd) }
