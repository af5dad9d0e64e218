// Package check is critsec's explicit-state model checker. It explores every
// interleaving of a set of machines (one per process): delivering a message
// in transit, letting an idle process call Entry or Exit within a
// per-process budget, and, for the fault-tolerant algorithms, crashing a
// process and producing failure-detector outputs. It checks the safety
// property (package property: the global bound lo <= #InCS <= hi, or the
// bounds of every neighborhood) after every state change, the CS method
// invocation convention (Definition 1 of Kamei and Kakugawa's global
// (l,k)-CS paper) and deadlock freedom, and returns a counterexample when
// one of them fails. The search (Search) is breadth-first by default, which
// gives shortest counterexamples; DepthFirst keeps far less in memory, and
// Liveness searches for starvation instead. docs/checker.md defines exactly
// what is explored and docs/design/deadlock-under-a-budget.md what a
// deadlock is under a budget.
//
// Use:
//
//	ms, _ := raymond.New(cs.Params{N: 3, K: 2})
//	prop, _ := property.Global(3, 0, 2)
//	res, err := check.Run(ctx, check.Config{Machines: ms, Property: prop, Budget: 2})
//	if err != nil { ... }            // bad configuration
//	if res.Verdict != check.OK { ... } // res.Violation.Path is the shortest path
//
// ctx stops a long run: its deadline or cancellation ends it Incomplete.
package check

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// Verdict is the outcome of a run.
type Verdict string

const (
	// OK: every reachable state was explored and no property failed.
	OK Verdict = "ok"
	// Violated: a property failed; Result.Violation says which and how.
	Violated Verdict = "violation"
	// Incomplete: a limit (MaxStates, MaxMemory, DeadlockStates, the
	// deadline or cancellation of Run's context) stopped the run before it
	// could decide. Never read it as ok.
	Incomplete Verdict = "incomplete"
)

// Kinds of violations: the trace format's, which a counterexample trace
// claims and trace check confirms.
const (
	// KindBounds: a bound of the property broke after a state change or a
	// crash; the detail names the bound.
	KindBounds = trace.KindBounds
	// KindConvention: a machine refused an Entry or Exit the checker made
	// according to the invocation convention, or reported a state change
	// that does not match its State() (the convention seen from the caller).
	KindConvention = trace.KindConvention
	// KindError: a machine returned an error from Receive, Suspect or Trust
	// (a message or detector input it cannot handle).
	KindError = trace.KindError
	// KindDeadlock: a pending request that no continuation can complete
	// (docs/design/deadlock-under-a-budget.md).
	KindDeadlock = trace.KindDeadlock
	// KindFencing: a fencing property broke (Config.Fencing); the detail
	// says which.
	KindFencing = trace.KindFencing
)

// Config describes one model-checking problem.
type Config struct {
	// Machines are processes 1..n in order (Machines[i].Self() == i+1), in
	// their initial state. Run clones them and never modifies them.
	Machines []cs.Machine
	// Property is the safety property checked after every state change
	// and crash (crashed processes do not count); its N must be the number
	// of machines.
	Property *property.Property
	// Budget is how many Entry/Exit calls each process may make (2 = one
	// entry/exit cycle), 0..MaxBudget. It bounds the otherwise infinite
	// state space.
	Budget int
	// Budgets, when not nil, gives each process its own budget instead
	// (Budgets[i] is P_{i+1}'s; one per machine): a search with budget 2
	// for some processes and 1 for the others explores the runs of the
	// budget-2 system in which only those make a second cycle, a complete
	// part of a space too large to finish
	// (docs/design/deadlock-under-a-budget.md, "Budgets per process").
	Budgets []int
	// Search is the search the run makes: BreadthFirst (the zero value),
	// DepthFirst or Liveness. They keep different things in memory and
	// their verdicts prove different things (see Search).
	Search Search
	// Unordered lets a channel deliver any of its messages, not only the
	// oldest (the default is per-link FIFO).
	Unordered bool
	// Crashes is how many processes may crash (crash-stop). A crashed
	// process takes no further step; messages to it are dropped; messages
	// it sent before crashing stay in transit and are delivered.
	Crashes int
	// Fencing also checks the fencing properties of the tokens
	// (cs.Fencing, property.FenceFailure; docs/fencing.md) after every
	// state change and crash, with k the property's upper bound: at k = 1
	// every entry's Seq exceeds every earlier entry's, and at every k at
	// most k holders (processes InCS, or crashed InCS) are named by no
	// holder's token. Every machine must implement cs.Fencing and the
	// property must be global. The state then keeps the properties'
	// history (the processes that crashed InCS, the largest Seq), so a run
	// finds more states than without.
	Fencing bool
	// Detector is the failure-detector class whose outputs are explored for
	// machines that implement cs.Detecting; nil means no detector outputs.
	Detector Detector
	// MaxStates stops the run (Incomplete) once this many distinct states
	// were found; 0 means no limit.
	MaxStates int
	// MaxMemory stops the run (Incomplete) once the live Go heap (what
	// survived the last garbage collection) exceeds this many bytes,
	// instead of letting the operating system kill the process; 0 means no
	// limit. It is checked between chunks of 256 states (BFS) and every
	// 2^16 states (DFS). Garbage comes on top of the live heap (up to
	// GOGC percent of it): callers that need a hard ceiling also set
	// runtime/debug.SetMemoryLimit, as critsec check does.
	MaxMemory uint64
	// Workers is the number of goroutines expanding states breadth-first;
	// 0 means 1. Results do not depend on it.
	Workers int
	// PartialOrder makes the depth-first search explore, in each state, only
	// an ample subset of the enabled actions when one exists
	// (docs/design/partial-order-reduction.md): every reachable deadlock
	// and every bounds, convention or error violation is still found, with
	// fewer states and transitions. Needs Search DepthFirst.
	PartialOrder bool
	// ExpectedStates sizes the depth-first visited set up front for this
	// many states (0: it starts small and doubles), which avoids the
	// transient of copying a large table into one twice its size.
	ExpectedStates int
	// DiskDir, with Search DepthFirst, keeps the visited set partly on disk, in a
	// directory of its own created under DiskDir and removed when the run
	// ends: fingerprints fill a table in memory, which is merged into a
	// sorted file when full (docs/design/visited-set.md, "The visited set
	// on disk"). The table's share is half of MaxMemory (1 GiB
	// without a limit), and a Bloom filter over the file takes 1 to 2 bytes a state
	// on disk, within a quarter of MaxMemory (512 MiB without a limit);
	// ExpectedStates, when given, sizes the table up front for that many
	// states at load 3/4 within its share, and it then never doubles. Same
	// states, same results; "" keeps the whole set in memory.
	DiskDir string
	// Checkpoint, with Search DepthFirst and DiskDir, is a directory where the run
	// saves its progress every CheckpointEvery and when a limit (MaxMemory,
	// MaxStates) or Run's context stops it; when the directory
	// already holds a checkpoint of the same check (CheckpointID, initial
	// state, Budget and the other options that shape the search), the run
	// continues it. A run that ends (ok, a violation, or a complete search
	// with an undecided budget stop) spends its checkpoint
	// (Result.CheckpointSpent), which the caller then removes
	// (RemoveCheckpoint). See docs/design/visited-set.md, "Checkpoints".
	Checkpoint string
	// CheckpointEvery is the interval between saves; 0 means
	// DefaultCheckpointEvery.
	CheckpointEvery time.Duration
	// CheckpointID tells checks apart that the initial state does not: the
	// algorithm, its variant and options (critsec check puts its problem
	// there). A checkpoint is continued only by a run with the same ID.
	CheckpointID string
	// Progress, when set, is called from time to time during the run (after
	// each BFS level, every 2^18 new states depth-first) with the counts so
	// far. It only observes: results do not depend on it.
	Progress func(Progress)
	// DeadlockStates bounds the exhaustive re-exploration made to decide
	// whether a request left pending when the budget ran out is deadlocked
	// (docs/design/deadlock-under-a-budget.md); 0 means DefaultDeadlockStates.
	DeadlockStates int
	// LivenessStates bounds each process's continuation graph in the
	// starvation search (Search Liveness); 0 means DefaultLivenessStates.
	LivenessStates int
	// FairBound, with Search Liveness, explores only the continuations in which no
	// action stays enabled for more than FairBound consecutive steps
	// without being taken (K-bounded fairness), which keeps the
	// continuation graph finite when counters grow; 0 means no bound
	// (exact weak fairness, which needs a finite continuation graph).
	FairBound int
}

// DefaultDeadlockStates is Config.DeadlockStates when it is zero.
const DefaultDeadlockStates = 200_000

// MaxN is the largest number of processes Run accepts.
const MaxN = 64

// MaxBudget is the largest budget (Config.Budget, Config.Budgets) Run
// accepts.
const MaxBudget = 100

// Progress is a snapshot of a run in progress.
type Progress struct {
	States, Transitions int64
	Depth               int
	Seconds             float64
	// DiskStates is how many of States are in the visited set's file
	// (Config.DiskDir); DiskReads how many pages of it this run's
	// membership tests have read (each a disk read once the file no
	// longer fits in the page cache).
	DiskStates, DiskReads int64
	// ResumedStates is how many of States the earlier runs of a
	// checkpoint found (Config.Checkpoint); Seconds is this run's.
	ResumedStates int64
	// Position, depth-first, is the share of the search tree to the left
	// of the current path, were sibling subtrees of equal size: a rough
	// guide to how far a long run is, usually an understatement.
	Position float64
}

// Result is what Run found.
type Result struct {
	Verdict Verdict
	// Violation is set when Verdict is Violated.
	Violation *Violation
	// Reason says which limit made the run Incomplete.
	Reason string
	// States is the number of distinct states found (the initial one
	// included); Transitions the number of actions executed from them.
	States, Transitions int64
	// Depth is the largest number of steps from the initial state to a
	// state explored (the BFS level).
	Depth int
	// BudgetStops counts terminal states with a pending request that the
	// deadlock analysis showed completable once the budget is refilled.
	BudgetStops int64
	// Seconds is the wall-clock duration of the run.
	Seconds float64
	// Position is, for a depth-first run stopped by a limit, where its path
	// stood (Progress.Position).
	Position float64
	// CheckpointSpent reports that the run ended by itself (ok, or a
	// violation, or a complete search with a budget stop left undecided):
	// its checkpoint (Config.Checkpoint) is of no further use, and the
	// caller removes it with RemoveCheckpoint once the result is safe.
	CheckpointSpent bool
	// Resumed describes the earlier runs this one continued from its
	// checkpoint (Config.Checkpoint), or is nil; the counts above include
	// theirs, Seconds does not.
	Resumed *Resumption
	// LivenessStates is the number of states of the continuation graphs
	// the starvation search explored (Search Liveness), all processes'.
	LivenessStates int64
	// LivenessDeadEnds counts the continuation states all of whose steps
	// the fairness bound (Config.FairBound) cut: schedules the bound
	// excludes, not deadlocks (docs/design/liveness.md, "What a verdict proves").
	LivenessDeadEnds int64
}

// StatesPerSecond is the rate of this run: States / Seconds, not counting
// the states of the earlier runs it continued (Resumed).
func (r Result) StatesPerSecond() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	s := r.States
	if r.Resumed != nil {
		s -= r.Resumed.States
	}
	return float64(s) / r.Seconds
}

// Violation is a failed property and a shortest path to it.
type Violation struct {
	// Kind is KindBounds, KindConvention, KindError or KindDeadlock.
	Kind string
	// Detail is one line saying what failed.
	Detail string
	// Path leads from the initial state to the violation. For bounds,
	// convention and error violations, its last step is the failing one. For
	// a deadlock it leads to a state where the request cannot complete
	// (for a global deadlock found by a fair continuation, the path includes
	// that continuation and may exceed the budget).
	Path []Step
	// Cycle, for a starvation (KindStarvation), is the index in Path of
	// the first step of the cycle: Path[:Cycle] is the stem, Path[Cycle:]
	// returns to the state it starts from and repeats forever. 0 otherwise.
	Cycle int
}

// Step is one action of a path with the events it caused, in the order
// they happened; every event's T is the step number (1-based).
type Step struct {
	// T is the step number, from 1.
	T      int
	Action Action
	Events []trace.Event
}

// String is the readable form "3: deliver P1->P2 REQUEST".
func (s Step) String() string { return fmt.Sprintf("%d: %s", s.T, s.Action) }

// ActionKind names the kinds of actions the checker explores.
type ActionKind uint8

const (
	// Deliver: Node receives a message from From.
	Deliver ActionKind = iota + 1
	// Request: Node calls Op (Entry or Exit).
	Request
	// Crash: Node crashes.
	Crash
	// Suspect: Node's failure detector starts suspecting Who.
	Suspect
	// Trust: Node's failure detector stops suspecting Who.
	Trust
	// Grant: the ideal object Index (compositional checking, package
	// ideal) is granted to Node.
	Grant
)

// Action is one step of the global transition system.
type Action struct {
	Kind ActionKind
	// Node is the process that acts (the receiver of a delivery).
	Node cs.ID
	// From is the sender of a delivered message.
	From cs.ID
	// Index is the position of the delivered message in its channel, 0 for
	// the oldest (always 0 with FIFO channels).
	Index int
	// Op is the method a Request calls.
	Op cs.Op
	// Who is the process a Suspect or Trust is about.
	Who cs.ID
	// Msg is the kind of the delivered message, or the path of the
	// granted ideal object (filled in paths).
	Msg string
}

// String is the readable form used in paths: "deliver P1->P2 REQUEST",
// "P2 entry", "crash P3", "P1 suspects P3", "P1 trusts P3".
func (a Action) String() string {
	switch a.Kind {
	case Deliver:
		s := fmt.Sprintf("deliver P%d->P%d %s", a.From, a.Node, a.Msg)
		if a.Index > 0 {
			s += fmt.Sprintf(" (message %d of the channel)", a.Index+1)
		}
		return s
	case Request:
		return fmt.Sprintf("P%d %s", a.Node, a.Op)
	case Crash:
		return fmt.Sprintf("crash P%d", a.Node)
	case Suspect:
		return fmt.Sprintf("P%d suspects P%d", a.Node, a.Who)
	case Trust:
		return fmt.Sprintf("P%d trusts P%d", a.Node, a.Who)
	case Grant:
		return fmt.Sprintf("ideal %s grants P%d", a.Msg, a.Node)
	}
	return "?"
}

// Validate checks c and returns an error naming the field, its value and
// the allowed range.
func (c Config) Validate() error {
	n := len(c.Machines)
	switch {
	case n < 1 || n > MaxN:
		return &FieldError{Field: "Machines", Value: fmt.Sprintf("%d processes", n), Why: fmt.Sprintf("is out of range: need 1 <= n <= %d", MaxN)}
	case c.Property == nil:
		return fmt.Errorf("check: Property is nil: give the safety property to check (property.Global, property.Local)")
	case c.Property.N() != n:
		return fmt.Errorf("check: Property is over %d processes but Machines has %d", c.Property.N(), n)
	case c.Budgets != nil && len(c.Budgets) != n:
		return &FieldError{Field: "Budgets", Value: fmt.Sprint(c.Budgets), Why: fmt.Sprintf("gives %d budgets for %d processes: give one budget, or one per process (P1 first)", len(c.Budgets), n)}
	case slices.ContainsFunc(c.Budgets, func(b int) bool { return b < 0 || b > MaxBudget }):
		return outOfRange("Budgets", c.Budgets, fmt.Sprintf("need 0 <= budget <= %d", MaxBudget))
	case c.Budget < 0 || c.Budget > MaxBudget:
		return outOfRange("Budget", c.Budget, fmt.Sprintf("need 0 <= budget <= %d", MaxBudget))
	case c.Crashes < 0 || c.Crashes > n:
		return outOfRange("Crashes", c.Crashes, fmt.Sprintf("need 0 <= crashes <= n = %d", n))
	case c.MaxStates < 0:
		return outOfRange("MaxStates", c.MaxStates, "need >= 0 (0: no limit)")
	case c.Workers < 0 || c.Workers > 256:
		return outOfRangeOr0("Workers", c.Workers, "need 1 <= workers <= 256", "one")
	case c.Search < BreadthFirst || c.Search > Liveness:
		return outOfRange("Search", c.Search, "need BreadthFirst, DepthFirst or Liveness")
	case c.PartialOrder && c.Search != DepthFirst:
		return needs("PartialOrder", searchDFS, "its cycle proviso uses the depth-first stack")
	case c.ExpectedStates > 0 && c.Search != DepthFirst:
		return needs("ExpectedStates", searchDFS, "it sizes the depth-first visited set")
	case c.DeadlockStates < 0:
		return outOfRangeOr0("DeadlockStates", c.DeadlockStates, "need >= 1", "DefaultDeadlockStates")
	case c.ExpectedStates < 0:
		return outOfRange("ExpectedStates", c.ExpectedStates, "need >= 0 (0: grow as needed)")
	}
	if err := c.validateFencing(); err != nil {
		return err
	}
	if err := c.validateExitGuard(); err != nil {
		return err
	}
	if err := c.validateLiveness(); err != nil {
		return err
	}
	if err := c.validateIdeals(); err != nil {
		return err
	}
	if err := c.validateDisk(); err != nil {
		return err
	}
	if err := c.validateCheckpoint(); err != nil {
		return err
	}
	for i, m := range c.Machines {
		if m == nil {
			return fmt.Errorf("check: Machines[%d] is nil", i)
		}
		if _, ok := m.(cs.Detecting); ok && c.Detector != nil && c.Detector.InitiallySuspects() {
			if err := suspectAll(m.Clone(), n); err != nil {
				return fmt.Errorf("check: detector %s starts suspecting every process, which process %d cannot take: %v", c.Detector.Name(), i+1, err)
			}
		}
		if m.Self() != cs.ID(i+1) {
			return fmt.Errorf("check: Machines[%d].Self() = %d: want %d (processes 1..n in order)", i, m.Self(), i+1)
		}
		if m.Pending() != cs.None {
			return fmt.Errorf("check: process %d starts with a pending %s request: want none", i+1, m.Pending())
		}
	}
	return nil
}

// validateFencing checks that the fencing properties can be checked.
func (c Config) validateFencing() error {
	if !c.Fencing {
		return nil
	}
	if !c.Property.IsGlobal() {
		return fmt.Errorf("check: Fencing needs a global property (k-mutual exclusion), not %s", c.Property)
	}
	for i, m := range c.Machines {
		if _, ok := m.(cs.Fencing); !ok {
			return fmt.Errorf("check: Fencing: process %d's machine (%T) gives no fencing tokens (cs.Fencing)", i+1, m)
		}
	}
	return nil
}

// validateExitGuard checks that an exit guard (property.CrashBounds) can
// be evaluated exactly: its Reported counts a trusting detector's
// suspicion of a crashed process as a report, which holds only when no
// process crashes before every module trusted it. Crashes wait for the
// initialization of cs.Initializing machines, which must wait for those
// trusts (cs.TrustGated declares it; a crash that finds a module that
// never trusted the process is an error violation).
func (c Config) validateExitGuard() error {
	if c.Property.ExitGuard() == nil || c.Crashes == 0 {
		return nil
	}
	if _, ok := c.Detector.(Trusting); !ok {
		return nil
	}
	for i, m := range c.Machines {
		if _, ok := m.(cs.Initializing); !ok {
			return fmt.Errorf("check: the exit guard under detector T needs every process to be trusted by every module before any crash, which process %d's machine (%T) cannot ensure: it has no initialization for crashes to wait for (cs.Initializing); use detector P", i+1, m)
		}
	}
	return nil
}

// ErrConfig is wrapped by Run's errors for a bad Config.
var ErrConfig = errors.New("bad check configuration")
