package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Kind is a kind of fault.
type Kind int

// The kinds of fault. Each lasts a Fault's For and is then undone.
const (
	// Pause stops the target's critsec run process (SIGSTOP) and resumes
	// it (SIGCONT); its command, in a group of its own, keeps running.
	Pause Kind = iota
	// PauseTree pauses critsec run and every process below it but the
	// copies of the service (a watchdog child, say): a frozen member
	// whose command still runs.
	PauseTree
	// Kill kills the target's critsec run and every process below it
	// (SIGKILL), as a service manager kills a unit, and starts it again
	// on the same data directory.
	Kill
	// KillSupervisor kills only the target's critsec run (SIGKILL),
	// leaving its command running, and starts it again (unless Down).
	KillSupervisor
	// Isolate cuts the target off from every other member (nftables in
	// the namespaces).
	Isolate
	// Minority cuts off a minority: the target and the lowest other ids,
	// (n-1)/2 members in all.
	Minority
	// Loss makes the target drop Pct percent of its packets each way.
	Loss
	// Delay makes the relay hold the target's traffic for Delay each way.
	Delay
	nKinds
)

var kindNames = [nKinds]string{"pause", "pause-tree", "kill", "kill-supervisor", "isolate", "minority", "loss", "delay"}

// String is the kind's name, as in the summary tables.
func (k Kind) String() string {
	if k < 0 || k >= nKinds {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return kindNames[k]
}

// Kinds lists every kind of fault.
func Kinds() []Kind {
	var ks []Kind
	for k := range nKinds {
		ks = append(ks, k)
	}
	return ks
}

// Fault is one fault of a schedule.
type Fault struct {
	Kind Kind
	// Target is the member hit; 0 picks a member InCS at the time (the
	// lowest; waiting for one if none is).
	Target int
	// For is how long the fault lasts (for kills: how long the member
	// stays down).
	For time.Duration
	// Pct is Loss's percentage, Delay Delay's delay.
	Pct   int
	Delay time.Duration
	// Down leaves a killed member down (kills only).
	Down bool
	// After is the pause before the fault, in a schedule (0: the
	// schedule's default).
	After time.Duration
}

// String is the fault in a few words: kind, duration, parameters.
func (f Fault) String() string {
	s := fmt.Sprintf("%s %s", f.Kind, f.For)
	switch f.Kind {
	case Loss:
		s += fmt.Sprintf(" %d%%", f.Pct)
	case Delay:
		s += " " + f.Delay.String()
	}
	if f.Down {
		s += " down"
	}
	return s
}

// Injected is a fault as it was injected: on which members, when, from
// which line of the record to which.
type Injected struct {
	Fault
	Members []int
	// At is when it began, Undone when undoing it ended: on a loaded
	// machine the rules of a cut take a while to set and to remove, so
	// the fault lasts longer than For.
	At, Undone time.Time
	From, Upto int // record lengths when it began and when it was undone
}

// String is the fault, its members, its lines of the record and how long
// it lasted in fact.
func (in Injected) String() string {
	return fmt.Sprintf("%s on %v (record lines %d-%d, %v in fact)", in.Fault, in.Members, in.From, in.Upto,
		in.Undone.Sub(in.At).Round(time.Millisecond))
}

// Excused splits the spans with fewer than l copies (Report.Under) into
// those a fault explains and the others. A fault on a holder takes its
// copy as a crash would: its lease lapses (pause, cut, loss, delay) or it
// is killed, and the copy runs again once the fault is undone and the
// lease renewed, or another member's once the faulted one is declared
// crashed. The fault-tolerant specification counts such a member among
// the processes crashed InCS, which may leave fewer than l live ones
// (property.FaultTolerantGlobal: the bound is S2, on exits, and the
// recovery R closes the deficit), so copies may run below l then. A span
// is explained by a fault when it begins at or after the line at which
// the fault was injected and its last line was written no later than
// within after the fault was undone.
func Excused(lines []Line, under []Span, faults []Injected, within time.Duration) (excused, not []Span) {
	for _, s := range under {
		end := lines[s.To].UnixMs
		ok := false
		for _, in := range faults {
			if s.From >= in.From && !in.Undone.IsZero() && end <= in.Undone.Add(within).UnixMilli() {
				ok = true
				break
			}
		}
		if ok {
			excused = append(excused, s)
		} else {
			not = append(not, s)
		}
	}
	return excused, not
}

// recordLen is the record's number of lines so far.
func (c *Cluster) recordLen() int {
	lines, _ := c.ReadRecord()
	return len(lines)
}

// Inject injects f, waits its For, and undoes it: a killed member is
// started again and waited for on its control socket.
func (c *Cluster) Inject(ctx context.Context, f Fault) (Injected, error) {
	in := Injected{Fault: f}
	id := f.Target
	if id == 0 {
		for {
			if h := c.Holders(ctx); len(h) > 0 {
				id = h[0]
				break
			}
			select {
			case <-ctx.Done():
				return in, fmt.Errorf("%s: no member InCS to hit: %w", f, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	in.Members = []int{id}
	if f.Kind == Minority {
		for o := 1; len(in.Members) < (c.cfg.N-1)/2; o++ {
			if o != id {
				in.Members = append(in.Members, o)
			}
		}
	}
	in.From, in.At = c.recordLen(), time.Now()
	var undo func() error
	switch f.Kind {
	case Pause, PauseTree:
		procs := []int{c.PID(id)}
		if f.Kind == PauseTree {
			for _, p := range Descendants(c.PID(id)) {
				if !c.isCopy(p) {
					procs = append(procs, p)
				}
			}
		}
		for _, p := range procs {
			Signal(p, syscall.SIGSTOP)
		}
		undo = func() error {
			for _, p := range slices.Backward(procs) {
				Signal(p, syscall.SIGCONT)
			}
			return nil
		}
	case Kill, KillSupervisor:
		if f.Kind == Kill {
			c.KillUnit(id)
		} else {
			c.Kill(id)
		}
		undo = func() error {
			if f.Down {
				return nil
			}
			if err := c.Start(id); err != nil {
				return err
			}
			return c.Ready(ctx, id)
		}
	case Isolate, Minority:
		if err := c.Net.Cut(in.Members); err != nil {
			return in, err
		}
		undo = c.Net.Heal
	case Loss:
		if err := c.Net.SetLoss(id, f.Pct); err != nil {
			return in, err
		}
		undo = c.Net.Heal
	case Delay:
		if err := c.Net.SetDelay(id, f.Delay); err != nil {
			return in, err
		}
		undo = func() error { return c.Net.SetDelay(id, 0) }
	default:
		return in, fmt.Errorf("fault kind %d unknown", int(f.Kind))
	}
	select {
	case <-ctx.Done():
	case <-time.After(f.For):
	}
	err := undo()
	in.Upto, in.Undone = c.recordLen(), time.Now()
	if err != nil {
		return in, fmt.Errorf("%s: undoing it: %w", in, err)
	}
	return in, nil
}

// isCopy says whether process p is a copy of the service (its command
// line names the record).
func (c *Cluster) isCopy(p int) bool {
	b, err := readCmdline(p)
	return err == nil && strings.Contains(b, c.Record)
}
