package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/node"
)

var ctlFlags struct {
	config  string
	id      int
	socket  string
	timeout time.Duration
}

var ctlCmd = &cobra.Command{
	Use:   "ctl (enter | exit | status) (--config FILE --id I | --socket PATH)",
	Short: "Ask a running node to enter or leave the critical section, or for its status",
	Long: `ctl talks to a running critsec node through its control socket (HTTP and
JSON on a unix socket: DATA/node-I/ctl.sock from the cluster's configuration
and the id, or --socket). It prints the node's answer, one JSON line:

  {"node":3,"state":"OutCS","pending":"entry","changes":4,"waiting_on":[1,2]}

enter and exit wait until the node is InCS or OutCS, at most --timeout.
After a timeout the answer's "request" says what happened: "pending" (the
node took the request, which stays pending: status shows when it
completes; it cannot be withdrawn, so after an enter, exit once InCS) or
"dropped" (the node had not taken it: nothing happened; ask again). waiting_on, while a request is pending, lists the peers the
node sent a message to since the request began that have sent nothing
back since (docs/network.md). fence, while InCS with an algorithm that
gives fencing tokens (ftraymond, ftgcs, raymond), is the CS period's token:
{"seq":7,"crashed":[2]} (docs/fencing.md).

Exit status: 0 done; 2 bad input; 3 the node is unreachable, refused the
call (enter while InCS or pending, exit while OutCS), or the timeout passed.`,
	Args: cobra.ExactArgs(1),
	RunE: func(c *cobra.Command, args []string) error {
		f := ctlFlags
		op := args[0]
		if op != "enter" && op != "exit" && op != "status" {
			return badInput("ctl: %q: the calls are enter, exit and status", op)
		}
		if f.timeout <= 0 {
			return badInput("ctl: --timeout %s: want a positive duration such as 30s", f.timeout)
		}
		sock := f.socket
		if sock == "" {
			if f.config == "" {
				return badInput("ctl: give --config FILE and --id I, or --socket PATH")
			}
			cfg, err := node.ReadConfig(f.config)
			if err != nil {
				return badInput("ctl: %v", err)
			}
			if n := cfg.Problem.Params.N; f.id < 1 || f.id > n {
				return badInput("ctl: --id %d is not a member: ids run from 1 to n = %d", f.id, n)
			}
			sock = node.ControlSocket(cfg, cs.ID(f.id))
		}
		ctl := node.DialControl(sock)
		defer ctl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), f.timeout+5*time.Second)
		defer cancel()
		a, err := ctl.Do(ctx, op, f.timeout)
		if a.State != "" {
			b, _ := json.Marshal(a)
			fmt.Fprintln(c.OutOrStdout(), string(b))
		}
		if err != nil {
			return fmt.Errorf("ctl %s: %w", op, err)
		}
		return nil
	},
}

func init() {
	ctlCmd.Flags().StringVar(&ctlFlags.config, "config", "", "the cluster's configuration file (YAML)")
	ctlCmd.Flags().IntVar(&ctlFlags.id, "id", 0, "the node's process id, 1..n")
	ctlCmd.Flags().StringVar(&ctlFlags.socket, "socket", "", "the node's control socket (instead of --config and --id)")
	ctlCmd.Flags().DurationVar(&ctlFlags.timeout, "timeout", 30*time.Second, "how long enter and exit wait")
	rootCmd.AddCommand(ctlCmd)
}
