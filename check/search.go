package check

import "fmt"

// Search is the search a run makes (Config.Search): what it keeps in
// memory and what its verdict proves. docs/checker.md, "Choosing a
// search", compares them.
//
// Config.PartialOrder is a bool beside Search, not a Search of its own:
// it reduces what the depth-first search explores, it does not choose
// what is searched, so it is orthogonal to the choice (one search today,
// possibly more later) and the verdict it gives is the depth-first one.
// A checkpoint's key holds it (a checkpoint needs DepthFirst), as a run
// with and a run without the reduction visit different states.
type Search int

const (
	// BreadthFirst, the zero value, explores level by level on
	// Config.Workers goroutines, keeping every state of the current and
	// the next level and 24-40 bytes a visited state. Its verdict covers
	// every state reachable under the budget; a counterexample is a
	// shortest one; results do not depend on the number of workers
	// (docs/design/visited-set.md, "Breadth-first search").
	BreadthFirst Search = iota
	// DepthFirst explores the same graph depth-first on one goroutine,
	// keeping only 12 bytes of fingerprint a visited state (optionally on
	// disk, Config.DiskDir) and the current path, for state spaces whose
	// frontier does not fit in memory. Same verdicts and, on an ok run,
	// the same state count as BreadthFirst; a counterexample is the path
	// followed, not necessarily a shortest one (docs/design/visited-set.md,
	// "Depth-first search"). Config.PartialOrder, Config.ExpectedStates,
	// Config.DiskDir and Config.Checkpoint need it.
	DepthFirst
	// Liveness replaces the safety search by the search for starvation
	// (liveness.go; docs/design/liveness.md): a request that stays pending
	// forever on a weakly fair cycle of the continuations, with unlimited
	// calls, of the states reachable under the budget, found as a lasso
	// (Violation.Cycle). It keeps the budget-bounded states and each
	// process's continuation graph (Config.LivenessStates); properties are
	// still checked on every state explored. An ok proves that no such
	// request starves (docs/design/liveness.md, "What a verdict proves").
	// FIFO channels, no crash and no detector only; Config.LivenessStates
	// and Config.FairBound need it.
	Liveness
)

// String is the search's name on the command line: "bfs", "dfs" or
// "liveness".
func (s Search) String() string {
	switch s {
	case BreadthFirst:
		return "bfs"
	case DepthFirst:
		return "dfs"
	case Liveness:
		return "liveness"
	}
	return fmt.Sprintf("Search(%d)", int(s))
}
