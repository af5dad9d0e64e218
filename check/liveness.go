package check

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/critsec/critsec/cs"
)

// Starvation (docs/design/liveness.md).
//
// Search Liveness replaces the safety search by a search for a request that
// a weakly fair scheduler can postpone forever. The model:
//
//   - Stems: the states reachable under the budget (Config.Budget), explored
//     breadth-first as usual (every property is checked on the way).
//   - Continuations: from every stem state s in which process r has a pending
//     request, every process may make any number of further calls (budgets
//     refilled to unlimited), with every delivery and grant, no crash.
//   - The continuation graph of r is the part of that graph in which r's
//     request stays pending: a transition that completes it leaves the graph.
//   - Fairness units: delivering the head of channel j -> i; the next call of
//     idle process i; granting ideal object c to i. A cycle is weakly fair
//     iff every unit that is enabled in every state of the cycle is taken on
//     it.
//   - With Config.FairBound = K > 0 the states of the continuation graph also
//     hold the age of each enabled unit (for how many consecutive steps it
//     has been enabled without being taken), and a step that would make an
//     age exceed K is not explored (K-bounded fairness). Every cycle of that
//     graph is weakly fair (an age that returns to its value around a cycle
//     was reset on it). The bound makes the graph finite for algorithms
//     whose counters (Lamport clocks, sequence numbers) grow only while some
//     process is served: their plain continuation graph is infinite, as an
//     unfair scheduler can let the other processes run forever while the
//     messages of r wait.
//
// A starvation is a reachable nontrivial strongly connected component of the
// continuation graph of some r that is weakly fair: every unit enabled in all
// its states is taken on one of its internal edges. Then a cycle through
// all of its states and one such edge per unit is a weakly fair cycle on
// which r stays pending; with the stem, a lasso. Components are found by
// Tarjan's algorithm, iteratively, from every stem state in which r is
// pending (the roots, with all ages zero).

// KindStarvation: a request that stays pending forever on a weakly fair
// cycle (Search Liveness). The path is a lasso: Violation.Cycle is the
// index of its first cycle step; the steps from there repeat forever.
const KindStarvation = "starvation"

// DefaultLivenessStates is Config.LivenessStates when it is zero.
const DefaultLivenessStates = 200_000

// maxUnits bounds the fairness units (a bit each in a uint64).
const maxUnits = 64

// lnode is a state of a continuation graph.
type lnode struct {
	s       *gstate
	ages    []uint8 // nil without FairBound
	enabled uint64  // the fairness units enabled in s
	parent  int32   // DFS tree parent, -1 for a root
	root    int32   // the stem state (phase-1 id) this node descends from
	act     uint32  // the action from parent (actCode)
	index   int32
	low     int32
	comp    int32 // -1 while on the Tarjan stack or unfinished
	edges   []ledge
}

// ledge is an edge inside a continuation graph.
type ledge struct {
	to   int32
	unit uint8
	act  uint32
}

// livenessRun is one liveness search.
type livenessRun struct {
	e     *explorer
	st    *stepper
	units int
	// delivery is the set of delivery units, the only ones with ages.
	delivery uint64
	res      *Result
	// phase 1: the stem states, by id (e.parent, e.act give their paths)
	stems []*gstate
}

// unit returns the fairness unit of action a; crashes and detector outputs
// have none (the starvation model has neither: validateLiveness).
func (l *livenessRun) unit(a Action) (int, bool) {
	x := l.e.x
	switch a.Kind {
	case Deliver:
		return int(x.link(a.From, a.Node)), true
	case Request:
		return x.n*x.n + int(a.Node) - 1, true
	case Grant:
		return x.n*x.n + x.n + (int(a.Node)-1)*len(x.ideals) + a.Index, true
	}
	return 0, false
}

// runLiveness is Run with Search Liveness.
func (e *explorer) runLiveness() Result {
	res := Result{}
	l := &livenessRun{e: e, st: e.workers[0].st, res: &res}
	l.units = e.x.n*e.x.n + e.x.n + e.x.n*len(e.x.ideals)
	l.delivery = 1<<(e.x.n*e.x.n) - 1
	if v := e.initialViolation(); v != nil {
		res.Verdict, res.Violation = Violated, v
		return res
	}
	if reason, v := l.stemSearch(); v != nil || reason != "" {
		res.Verdict, res.Violation, res.Reason = Violated, v, reason
		if v == nil {
			res.Verdict = Incomplete
		}
		return res
	}
	var limited []string
	for r := cs.ID(1); int(r) <= e.x.n; r++ {
		v, reason := l.search(r)
		if v != nil {
			res.Verdict, res.Violation = Violated, v
			return res
		}
		if reason == errLimit {
			// The other processes are still searched: one of them may
			// have a starvation.
			limited = append(limited, fmt.Sprintf("P%d", r))
			continue
		}
		if reason != "" {
			res.Verdict, res.Reason = Incomplete, reason
			return res
		}
	}
	if limited != nil {
		res.Verdict = Incomplete
		res.Reason = fmt.Sprintf("the continuation graph of %s has more than %d states (--liveness-states): no weakly fair starvation cycle among those explored, which proves nothing about the rest (raise --liveness-states, or lower --fair-bound)",
			strings.Join(limited, ", "), e.cfg.LivenessStates)
		return res
	}
	res.Verdict = OK
	return res
}

// errLimit is search's reason when the continuation graph passed
// Config.LivenessStates.
const errLimit = "limit"

// stemSearch explores the budget-bounded graph breadth-first, keeping every
// state (the stems are small models), with the parents and actions in
// e.parent and e.act. It returns a violation or an Incomplete reason.
func (l *livenessRun) stemSearch() (string, *Violation) {
	e, st := l.e, l.st
	seen := newFPSet(0)
	seen.insert(fingerprintOf(e.root))
	l.stems = append(l.stems, e.root)
	e.parent = append(e.parent, 0)
	e.act = append(e.act, noAction)
	l.res.States = 1
	var acts []Action
	for id := 0; id < len(l.stems); id++ {
		if id&0xff == 0 {
			if reason := l.limits(); reason != "" {
				return reason, nil
			}
		}
		s := l.stems[id]
		acts = st.actions(s, acts[:0])
		for _, a := range acts {
			if a.Kind == Crash {
				continue
			}
			l.res.Transitions++
			if p := st.apply(s, a); p != nil {
				return "", e.violation(0, &finding{from: id, act: actCode(a), prob: *p})
			}
			if !seen.insert(fingerprintOf(&st.next)) {
				continue
			}
			l.stems = append(l.stems, st.materialize())
			e.parent = append(e.parent, uint32(id))
			e.act = append(e.act, actCode(a))
			l.res.States++
			if e.cfg.MaxStates > 0 && l.res.States >= int64(e.cfg.MaxStates) {
				return fmt.Sprintf("max-states %d reached in the budget-bounded stem graph", e.cfg.MaxStates), nil
			}
		}
	}
	return "", nil
}

// limits returns the Incomplete reason of the run's context (a timeout, an
// interruption) or the memory limit, or "".
func (l *livenessRun) limits() string {
	e := l.e
	switch e.stopped() {
	case limitTimeout:
		return fmt.Sprintf("timeout %v reached (liveness search)", e.timeout)
	case limitInterrupt:
		return "interrupted (liveness search)"
	}
	if overMemory(e.cfg.MaxMemory) {
		return fmt.Sprintf("memory limit %.1f GB reached (liveness search)", float64(e.cfg.MaxMemory)/(1<<30))
	}
	return ""
}

// enabledUnits returns the actions enabled in s (no crash) and their units.
func (l *livenessRun) enabledUnits(s *gstate, dst []Action) ([]Action, uint64) {
	dst = l.st.actions(s, dst[:0])
	n := 0
	var mask uint64
	for _, a := range dst {
		u, ok := l.unit(a)
		if !ok {
			continue
		}
		dst[n] = a
		n++
		mask |= 1 << u
	}
	return dst[:n], mask
}

// augFP is the fingerprint of a continuation state: its state's, with the
// ages when there are any.
func augFP(s *gstate, ages []uint8) fingerprint {
	f := fingerprintOf(s)
	if ages == nil {
		return f
	}
	h := newHasher()
	h.add(f.a)
	h.add(f.b)
	var w uint64
	for i, a := range ages {
		w |= uint64(a) << (8 * (i % 8))
		if i%8 == 7 {
			h.add(w)
			w = 0
		}
	}
	h.add(w)
	return h.sum()
}

// frameL is one state on the Tarjan DFS stack.
type frameL struct {
	node int32
	acts []Action
	next int
	// pruned counts the steps the fairness bound cut; out the others (an
	// edge in the graph, or one that completes r).
	pruned, out int
}

// search runs Tarjan's algorithm on the continuation graph of r from every
// stem state in which r is pending. It returns a starvation or another
// violation found on the way, or an Incomplete reason.
func (l *livenessRun) search(r cs.ID) (*Violation, string) {
	c := &continuation{l: l, r: r, limit: l.e.cfg.LivenessStates, bound: l.e.cfg.FairBound, visited: map[fingerprint]int32{}}
	for root := range l.stems {
		if v, reason := c.fromStem(root); v != nil || reason != "" {
			return v, reason
		}
	}
	return nil, ""
}

// continuation is one search of the continuation graph of r
// (livenessRun.search): its nodes, their fingerprints, Tarjan's stack and
// the depth-first stack.
type continuation struct {
	l            *livenessRun
	r            cs.ID
	limit, bound int // Config.LivenessStates, Config.FairBound
	nodes        []lnode
	visited      map[fingerprint]int32
	tstack       []int32 // Tarjan's stack
	dfs          []frameL
	index, comps int32
	acts         []Action // enabledUnits' buffer
}

// fromStem searches the continuations of the stem state root when r is
// pending there and the state was not reached from an earlier stem.
func (c *continuation) fromStem(root int) (*Violation, string) {
	l := c.l
	s0 := l.stems[root]
	if s0.procs[c.r-1].pending == cs.None || s0.isCrashed(c.r) {
		return nil, ""
	}
	s := refill(s0)
	var ages []uint8
	if c.bound > 0 {
		ages = make([]uint8, l.e.x.n*l.e.x.n)
	}
	fp := augFP(s, ages)
	if _, ok := c.visited[fp]; ok {
		return nil, ""
	}
	if len(c.nodes) >= c.limit {
		return nil, errLimit
	}
	_, en := l.enabledUnits(s, c.acts)
	id := c.newNode(s, ages, en, -1, int32(root), noAction)
	c.visited[fp] = id
	if v := c.push(id); v != nil {
		return v, ""
	}
	for len(c.dfs) > 0 {
		top := &c.dfs[len(c.dfs)-1]
		if top.next < len(top.acts) {
			if v, reason := c.step(top); v != nil || reason != "" {
				return v, reason
			}
			continue
		}
		if v := c.finish(); v != nil {
			return v, ""
		}
	}
	return nil, ""
}

// newNode adds the node of state s to the graph and to Tarjan's stack.
func (c *continuation) newNode(s *gstate, ages []uint8, enabled uint64, parent, root int32, act uint32) int32 {
	id := int32(len(c.nodes))
	c.nodes = append(c.nodes, lnode{s: s, ages: ages, enabled: enabled, parent: parent, root: root, act: act, index: c.index, low: c.index, comp: -1})
	c.index++
	c.tstack = append(c.tstack, id)
	c.l.res.LivenessStates++
	return id
}

// push puts node id on the depth-first stack; a node with nothing enabled
// is a global deadlock (every process waits, no message in transit, with
// unlimited calls), reachable whatever the fairness.
func (c *continuation) push(id int32) *Violation {
	a, _ := c.l.enabledUnits(c.nodes[id].s, nil)
	if len(a) == 0 {
		s := c.nodes[id].s
		return c.l.violationAt(c.nodes, id, nil, problem{KindDeadlock, c.l.e.x.globalDeadlock(s, s.pendingMask())}, false)
	}
	c.dfs = append(c.dfs, frameL{node: id, acts: a})
	return nil
}

// step takes top's next action: a step that completes r's request leaves
// the graph, one the fairness bound cuts is not explored, one to a known
// node is an edge, and one to a new node pushes it.
func (c *continuation) step(top *frameL) (*Violation, string) {
	l, st := c.l, c.l.st
	u := &c.nodes[top.node]
	a := top.acts[top.next]
	top.next++
	l.res.Transitions++
	if p := st.apply(u.s, a); p != nil {
		return l.violationAt(c.nodes, top.node, []uint32{actCode(a)}, problem{p.kind, p.detail + " (in a continuation beyond the budget)"}, false), ""
	}
	if st.next.procs[c.r-1].pending == cs.None {
		top.out++
		return nil, "" // r's request completes: the edge leaves the graph
	}
	succ := st.materialize()
	var en uint64
	c.acts, en = l.enabledUnits(succ, c.acts)
	unit, _ := l.unit(a) // a is one of enabledUnits'
	nages, fair := c.age(u, en, unit)
	if !fair {
		top.pruned++
		return nil, "" // K-bounded fairness: the step is not explored
	}
	top.out++
	fp := augFP(succ, nages)
	if id, ok := c.visited[fp]; ok {
		u.edges = append(u.edges, ledge{to: id, unit: uint8(unit), act: actCode(a)})
		if c.nodes[id].comp < 0 {
			u.low = min(u.low, c.nodes[id].index)
		}
		return nil, ""
	}
	if len(c.nodes) >= c.limit {
		return nil, errLimit
	}
	if len(c.nodes)&0xff == 0 {
		if reason := l.limits(); reason != "" {
			return nil, reason
		}
	}
	id := c.newNode(succ, nages, en, top.node, u.root, actCode(a))
	c.visited[fp] = id
	c.nodes[top.node].edges = append(c.nodes[top.node].edges, ledge{to: id, unit: uint8(unit), act: actCode(a)})
	return c.push(id), ""
}

// age is the ages of the delivery units of a successor of u, reached by
// unit, whose enabled units are en: nil without a fairness bound, and
// false when an age exceeds the bound (the step is not explored).
func (c *continuation) age(u *lnode, en uint64, unit int) ([]uint8, bool) {
	if c.bound <= 0 {
		return nil, true
	}
	n := c.l.e.x.n
	ages := make([]uint8, n*n)
	for m := en & c.l.delivery; m != 0; m &= m - 1 {
		v := bits.TrailingZeros64(m)
		if u.enabled&(1<<v) != 0 && v != unit {
			ages[v] = u.ages[v] + 1
			if int(ages[v]) > c.bound {
				return nil, false
			}
		}
	}
	return ages, true
}

// finish pops the node on top of the depth-first stack, whose actions are
// all taken, and closes its component if it is the root of one: it
// returns the starvation of r when the component is fair.
func (c *continuation) finish() *Violation {
	top := c.dfs[len(c.dfs)-1]
	u := &c.nodes[top.node]
	if top.out == 0 && top.pruned > 0 {
		c.l.res.LivenessDeadEnds++ // the bound cut every step
	}
	c.dfs = c.dfs[:len(c.dfs)-1]
	if len(c.dfs) > 0 {
		p := &c.nodes[c.dfs[len(c.dfs)-1].node]
		p.low = min(p.low, u.low)
	}
	if u.low != u.index {
		return nil
	}
	k := len(c.tstack) - 1
	for c.tstack[k] != top.node {
		k--
	}
	members := c.tstack[k:]
	c.tstack = c.tstack[:k]
	comp := c.comps
	c.comps++
	for _, m := range members {
		c.nodes[m].comp = comp
	}
	if v := c.l.fairComponent(c.r, c.nodes, members, comp); v != nil {
		return v
	}
	// Only the parents and actions of finished nodes are needed again (for
	// a stem's path).
	for _, m := range members {
		c.nodes[m].s, c.nodes[m].ages, c.nodes[m].edges = nil, nil, nil
	}
	return nil
}

// fairComponent checks the component c (its members) and, when it is
// nontrivial and weakly fair, returns the starvation of r with a lasso.
func (l *livenessRun) fairComponent(r cs.ID, nodes []lnode, members []int32, c int32) *Violation {
	all := ^uint64(0)
	var taken uint64
	internal := 0
	for _, m := range members {
		all &= nodes[m].enabled
		for _, ed := range nodes[m].edges {
			if nodes[ed.to].comp == c {
				taken |= 1 << ed.unit
				internal++
			}
		}
	}
	if internal == 0 || all&^taken != 0 {
		return nil
	}
	// A fair cycle: from start, take one internal edge per unit enabled
	// everywhere, then visit a state where each unit that is still enabled
	// all along the cycle and not taken is disabled; then return.
	in := map[int32]bool{}
	for _, m := range members {
		in[m] = true
	}
	start := members[0]
	var cyc []ledge
	pos := start
	walk := func(to int32) {
		cyc = append(cyc, shortestWalk(nodes, in, pos, to)...)
		pos = to
	}
	take := func(u uint8) {
		// the internal u-edge whose source is nearest to pos
		best, bestLen := ledge{to: -1}, -1
		var from int32
		dist := distancesFrom(nodes, in, pos)
		for _, m := range members {
			d, ok := dist[m]
			if !ok {
				continue
			}
			for _, ed := range nodes[m].edges {
				if ed.unit == u && in[ed.to] && (bestLen < 0 || d < bestLen) {
					best, bestLen, from = ed, d, m
				}
			}
		}
		walk(from)
		cyc = append(cyc, best)
		pos = best.to
	}
	// at least one step
	for _, ed := range nodes[start].edges {
		if in[ed.to] {
			cyc = append(cyc, ed)
			pos = ed.to
			break
		}
	}
	for u := all; u != 0; u &= u - 1 {
		take(uint8(bits.TrailingZeros64(u)))
	}
	for {
		cont, tk := nodes[start].enabled, uint64(0)
		for _, ed := range cyc {
			cont &= nodes[ed.to].enabled
			tk |= 1 << ed.unit
		}
		miss := cont &^ tk
		if miss == 0 {
			break
		}
		u := bits.TrailingZeros64(miss)
		for _, m := range members {
			if nodes[m].enabled&(1<<u) == 0 {
				walk(m)
				break
			}
		}
	}
	walk(start)
	codes := make([]uint32, len(cyc))
	for i, ed := range cyc {
		codes[i] = ed.act
	}
	op := nodes[start].s.procs[r-1].pending
	detail := fmt.Sprintf("P%d's %s request stays pending forever: the %d steps after \"cycle:\" return to the state they start from and repeat forever, and every action enabled all along them is taken on them (weak fairness)", r, op, len(cyc))
	return l.violationAt(nodes, start, codes, problem{KindStarvation, detail}, true)
}

// violationAt builds the violation p whose path is the stem graph's path to
// the root of node, the DFS tree path from there to node, then extra (its
// cycle when lasso is set).
func (l *livenessRun) violationAt(nodes []lnode, node int32, extra []uint32, p problem, lasso bool) *Violation {
	e := l.e
	var codes []uint32 // backwards: the tree path, then the stem
	for m := node; nodes[m].parent >= 0; m = nodes[m].parent {
		codes = append(codes, nodes[m].act)
	}
	for id := int(nodes[node].root); id != 0; id = int(e.parent[id]) {
		codes = append(codes, e.act[id])
	}
	slices.Reverse(codes)
	cycle := len(codes)
	codes = append(codes, extra...)
	v := e.replayViolation(codes, &finding{act: noAction, prob: p})
	if lasso {
		v.Cycle = cycle
	}
	return v
}

// distancesFrom returns the BFS distances from src to the members reachable
// over internal edges.
func distancesFrom(nodes []lnode, in map[int32]bool, src int32) map[int32]int {
	dist := map[int32]int{src: 0}
	q := []int32{src}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, ed := range nodes[u].edges {
			if !in[ed.to] {
				continue
			}
			if _, ok := dist[ed.to]; !ok {
				dist[ed.to] = dist[u] + 1
				q = append(q, ed.to)
			}
		}
	}
	return dist
}

// shortestWalk returns a shortest path of internal edges from src to dst,
// or nil if there is none.
func shortestWalk(nodes []lnode, in map[int32]bool, src, dst int32) []ledge {
	if src == dst {
		return nil
	}
	prev := map[int32]ledge{}
	from := map[int32]int32{}
	seen := map[int32]bool{src: true}
	q := []int32{src}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, ed := range nodes[u].edges {
			if !in[ed.to] || seen[ed.to] {
				continue
			}
			seen[ed.to] = true
			prev[ed.to], from[ed.to] = ed, u
			if ed.to == dst {
				var path []ledge
				for v := dst; v != src; v = from[v] {
					path = append(path, prev[v])
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			q = append(q, ed.to)
		}
	}
	// Unreachable inside a strongly connected component; a lasso built
	// without the walk fails CheckLasso, which the CLI runs on every lasso.
	return nil
}

// validateLiveness checks the fields of Search Liveness.
func (c Config) validateLiveness() error {
	n := len(c.Machines)
	switch {
	case c.LivenessStates < 0:
		return outOfRangeOr0("LivenessStates", c.LivenessStates, "need >= 1", "DefaultLivenessStates")
	case c.FairBound < 0 || c.FairBound > 250:
		return outOfRange("FairBound", c.FairBound, "need 0 <= bound <= 250 (0: exact weak fairness)")
	case c.Search != Liveness && c.LivenessStates > 0:
		return needs("LivenessStates", searchLiveness, "it bounds the starvation search")
	case c.Search != Liveness && c.FairBound > 0:
		return needs("FairBound", searchLiveness, "it bounds the starvation search")
	case c.Search != Liveness:
		return nil
	case c.Unordered:
		return excludes("Unordered", searchLiveness, "the starvation search needs FIFO channels: its fairness units are channel heads")
	case c.Crashes > 0:
		return excludes("Crashes", searchLiveness, "the starvation search is defined without crashes")
	case c.Detector != nil:
		return excludes("Detector", searchLiveness, "the starvation search is defined without failure detectors")
	}
	ideals := len(idealsOf(c.Machines[0]))
	if u := n*n + n + n*ideals; u > maxUnits {
		return fmt.Errorf("check: Liveness supports at most %d fairness units (n*n deliveries, n calls, n grants per ideal object): n = %d with %d ideal objects has %d", maxUnits, n, ideals, u)
	}
	return nil
}

// CheckLasso confirms a starvation lasso independently of the search that
// found it: it replays path on clones of cfg.Machines (calls beyond the
// budget allowed, as in Replay) and checks that no property fails, that the
// state after the whole path equals the state after path[:cycle] (budgets
// aside), that some process's request is pending in every state of the
// cycle, and that the cycle is weakly fair: every delivery, call or grant
// enabled in all of its states is taken on it. It returns the processes
// starved (a bit per process, bit 0 for P1) or an error saying what fails.
func CheckLasso(cfg Config, path []Action, cycle int) (uint64, error) {
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	if cycle < 1 || cycle >= len(path) {
		return 0, fmt.Errorf("check: lasso: cycle index %d is out of range 1..%d", cycle, len(path)-1)
	}
	e := newExplorer(cfg)
	l := &livenessRun{e: e, st: e.workers[0].st}
	rp := newReplayer(e.x, e.root)
	var start fingerprint
	pending := ^uint64(0)
	all := ^uint64(0)
	var taken uint64
	var acts []Action
	for i, a := range path {
		if i >= cycle {
			var en uint64
			acts, en = l.enabledUnits(refill(rp.cur), acts)
			all &= en
			pending &= rp.cur.pendingMask()
			u, ok := l.unit(a)
			if !ok {
				return 0, fmt.Errorf("check: CheckLasso: step %d, %s, is not a step of the starvation model (no crash or detector output)", i+1, a)
			}
			taken |= 1 << u
		}
		if i == cycle {
			start = fingerprintOf(refill(rp.cur))
		}
		if err := rp.enabled(a); err != nil {
			return 0, err
		}
		rp.step(a)
		if p := rp.st.prob; p != nil {
			return 0, fmt.Errorf("check: lasso: step %d (%s): %s: %s", i+1, a, p.kind, p.detail)
		}
	}
	switch {
	case fingerprintOf(refill(rp.cur)) != start:
		return 0, fmt.Errorf("check: lasso: the cycle (steps %d..%d) does not return to the state it starts from", cycle+1, len(path))
	case pending == 0:
		return 0, fmt.Errorf("check: lasso: no request stays pending all along the cycle")
	case all&^taken != 0:
		u := bits.TrailingZeros64(all &^ taken)
		return 0, fmt.Errorf("check: lasso: the cycle is not weakly fair: unit %d (%s) is enabled all along it and never taken", u, l.unitName(u))
	}
	return pending, nil
}

// unitName describes fairness unit u.
func (l *livenessRun) unitName(u int) string {
	x := l.e.x
	switch {
	case u < x.n*x.n:
		from, to := x.ends(uint16(u))
		return fmt.Sprintf("delivery P%d->P%d", from, to)
	case u < x.n*x.n+x.n:
		return fmt.Sprintf("P%d's next call", u-x.n*x.n+1)
	}
	u -= x.n*x.n + x.n
	return fmt.Sprintf("grant of ideal %d to P%d", u%max(len(x.ideals), 1), u/max(len(x.ideals), 1)+1)
}
