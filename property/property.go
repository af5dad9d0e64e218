// Package property is the safety property of the critical-section family as
// a value: a conjunction of bounds, each saying that at least Lo and at most
// Hi processes of a group are InCS. Every runtime checks the same value
// after every event (the simulator incrementally with a Tracker, the model
// checker and the trace checker with CheckAround), and a failure names the
// bound that broke.
//
// Instances:
//
//   - Global(n, l, k): one bound over all n processes, the global (l,k)-CS
//     problem (Kamei and Kakugawa 2019, Definition 2); mutual exclusion,
//     k-mutual exclusion and l-mutual inclusion are its special cases;
//   - Local(neighbors, l, k): one bound per process P_i over N_i ∪ {P_i},
//     the generalized local (l_i,k_i)-CS problem (Kamei and Kakugawa 2017,
//     Definition 1).
//
// Crashed processes never count: the fault-tolerant k-mutex (Bouillaguet,
// Arantes and Sens 2007, section 2) bounds the live processes InCS. A view
// says which processes are live and InCS. CrashBounds (crash.go) is the
// safety part of the fault-tolerant global (l,k)-CS problem, whose lower
// bound is a guard on exits rather than a bound on states
// (docs/ft-global-lk-cs.md); Fences (fence.go) are the fencing tokens'
// properties.
package property

import (
	"fmt"
	"slices"
	"strings"

	"github.com/critsec/critsec/cs"
)

// Bound is one conjunct: at least Lo and at most Hi of Members are InCS.
type Bound struct {
	// Name identifies the bound in reports: "all" for the global bound,
	// "N[3]" for the neighborhood of P3.
	Name string
	// Members are the processes counted, in increasing id order.
	Members []cs.ID
	// Lo and Hi are the bounds on how many members are InCS.
	Lo, Hi int
}

// String is the readable form "N[3]={P2,P3,P4} 1..2".
func (b Bound) String() string {
	return fmt.Sprintf("%s=%s %d..%d", b.Name, members(b.Members), b.Lo, b.Hi)
}

func members(ids []cs.ID) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "P%d", id)
	}
	sb.WriteByte('}')
	return sb.String()
}

// Property is a conjunction of bounds over processes 1..N. Build one with
// Global or Local; it is read-only after that and safe to share.
type Property struct {
	n      int
	bounds []Bound
	global bool
	// guard is the exit guard of FaultTolerantGlobal, nil for the others.
	guard *CrashBounds
	// of[id] lists the indices of the bounds whose members include id.
	of [][]int32
}

// Global returns the bound lo <= #InCS <= hi over all n processes. It
// refuses n < 1 and bounds outside 0 <= lo <= hi <= n.
func Global(n, lo, hi int) (*Property, error) {
	if n < 1 {
		return nil, fmt.Errorf("property: n = %d: need n >= 1", n)
	}
	all := make([]cs.ID, n)
	for i := range all {
		all[i] = cs.ID(i + 1)
	}
	p, err := build(n, []Bound{{Name: "all", Members: all, Lo: lo, Hi: hi}})
	if p != nil {
		p.global = true
	}
	return p, err
}

// FaultTolerantGlobal returns the property of the fault-tolerant global
// (l,k)-CS problem under crash-stop failures (docs/ft-global-lk-cs.md):
// the state bound 0 <= #InCS <= k over all n processes (S1: crashed
// processes do not count), and the exit guard l that ExitGuard returns
// (S2: every exit leaves at least l processes InCS, counting those that
// crashed InCS without the exiter's detector having reported it). The
// lower bound is a guard on exits and not a bound on states, because a
// crash of a process InCS lowers the count whatever the algorithm does.
// It refuses what NewCrashBounds refuses.
func FaultTolerantGlobal(n, l, k int) (*Property, error) {
	g, err := NewCrashBounds(n, l, k)
	if err != nil {
		return nil, err
	}
	p, err := Global(n, 0, k)
	if err != nil {
		return nil, err
	}
	p.guard = g
	return p, nil
}

// ExitGuard returns the exit guard of a FaultTolerantGlobal property, which
// a runtime evaluates after every completed exit (CrashBounds.AfterExit)
// on top of the state bounds, or nil for every other property.
func (p *Property) ExitGuard() *CrashBounds { return p.guard }

// Local returns one bound per process i = 1..n: at least l[i-1] and at most
// k[i-1] of P_i and its neighbors neighbors[i-1] are InCS. It refuses
// unknown ids, self-loops, repeated neighbors and bounds outside
// 0 <= l_i <= k_i <= |N_i|+1. It does not require the graph to be
// symmetric or connected; the topology that builds the graph does.
func Local(neighbors [][]cs.ID, l, k []int) (*Property, error) {
	n := len(neighbors)
	if n < 1 {
		return nil, fmt.Errorf("property: no processes: need n >= 1")
	}
	if len(l) != n || len(k) != n {
		return nil, fmt.Errorf("property: %d neighbor lists but %d lower and %d upper bounds: need one of each per process", n, len(l), len(k))
	}
	bounds := make([]Bound, n)
	for i, ns := range neighbors {
		self := cs.ID(i + 1)
		ms := append([]cs.ID{self}, ns...)
		slices.Sort(ms)
		for j, id := range ms {
			switch {
			case id < 1 || int(id) > n:
				return nil, fmt.Errorf("property: P%d has neighbor %d: ids run from 1 to n = %d", self, id, n)
			case j > 0 && ms[j-1] == id && id == self:
				return nil, fmt.Errorf("property: P%d lists itself as a neighbor (a self-loop)", self)
			case j > 0 && ms[j-1] == id:
				return nil, fmt.Errorf("property: P%d lists neighbor P%d twice", self, id)
			}
		}
		bounds[i] = Bound{Name: fmt.Sprintf("N[%d]", self), Members: ms, Lo: l[i], Hi: k[i]}
	}
	return build(n, bounds)
}

func build(n int, bounds []Bound) (*Property, error) {
	p := &Property{n: n, bounds: bounds, of: make([][]int32, n+1)}
	for bi, b := range bounds {
		if b.Lo < 0 || b.Lo > b.Hi || b.Hi > len(b.Members) {
			return nil, fmt.Errorf("property: bound %s: need 0 <= lo <= hi <= %d (its size)", b, len(b.Members))
		}
		for _, id := range b.Members {
			p.of[id] = append(p.of[id], int32(bi))
		}
	}
	return p, nil
}

// N is the number of processes.
func (p *Property) N() int { return p.n }

// Bounds returns the conjuncts, in order (for Local, bound i-1 is P_i's).
// The caller must not modify them.
func (p *Property) Bounds() []Bound { return p.bounds }

// IsGlobal reports whether p is one bound over all processes; GlobalBounds
// then returns it.
func (p *Property) IsGlobal() bool { return p.global }

// GlobalBounds returns lo and hi of a global property (IsGlobal), else 0
// and n. For a FaultTolerantGlobal property they are the state bounds 0
// and k; ExitGuard has l.
func (p *Property) GlobalBounds() (lo, hi int) {
	if !p.global {
		return 0, p.n
	}
	return p.bounds[0].Lo, p.bounds[0].Hi
}

// Of returns the indices of the bounds that count process id. The caller
// must not modify them.
func (p *Property) Of(id cs.ID) []int32 {
	if id < 1 || int(id) > p.n {
		return nil
	}
	return p.of[id]
}

// String describes p in one line: "0 <= #InCS <= 3 (global)" or
// "local bounds on 36 neighborhoods".
func (p *Property) String() string {
	if p.guard != nil {
		return p.guard.String()
	}
	if p.global {
		return fmt.Sprintf("%d <= #InCS <= %d (global)", p.bounds[0].Lo, p.bounds[0].Hi)
	}
	return fmt.Sprintf("l_i <= #InCS in N_i+P_i <= k_i for each of %d processes (local)", p.n)
}

// Failure is a broken bound: Count members of Bound are InCS.
type Failure struct {
	Bound Bound
	Count int
}

// Error is the readable form used in every report, e.g.
// "4 processes InCS, outside the bounds 0..3" for the global bound and
// "N[3]={P2,P3,P4}: 3 InCS, outside the bounds 1..2" for a local one.
func (f *Failure) Error() string {
	if f.Bound.Name == "all" {
		return fmt.Sprintf("%d %s InCS, outside the bounds %d..%d", f.Count, plural(f.Count), f.Bound.Lo, f.Bound.Hi)
	}
	return fmt.Sprintf("%s=%s: %d InCS, outside the bounds %d..%d", f.Bound.Name, members(f.Bound.Members), f.Count, f.Bound.Lo, f.Bound.Hi)
}

func plural(c int) string {
	if c == 1 {
		return "process"
	}
	return "processes"
}

// View says, for each process, whether it counts as InCS: it is live (not
// crashed) and InCS.
type View interface {
	InCS(id cs.ID) bool
}

// CheckAround evaluates the bounds that count process id, by counting
// their members in v, and returns the first that fails, or nil. Call it
// after id's state changed or id crashed: no other bound can have broken.
// It costs the sizes of those bounds.
func (p *Property) CheckAround(id cs.ID, v View) *Failure {
	for _, bi := range p.Of(id) {
		if f := p.eval(int(bi), v); f != nil {
			return f
		}
	}
	return nil
}

// Check evaluates every bound and returns the first that fails, or nil.
func (p *Property) Check(v View) *Failure {
	for bi := range p.bounds {
		if f := p.eval(bi, v); f != nil {
			return f
		}
	}
	return nil
}

func (p *Property) eval(bi int, v View) *Failure {
	b := &p.bounds[bi]
	c := 0
	for _, m := range b.Members {
		if v.InCS(m) {
			c++
		}
	}
	if c < b.Lo || c > b.Hi {
		return &Failure{Bound: *b, Count: c}
	}
	return nil
}

// Tracker keeps the count of every bound up to date as processes change
// state and crash, so that a check after an event costs the number of
// bounds that count the process, not their sizes. The simulator and the
// trace checker use it at large n.
type Tracker struct {
	p     *Property
	count []int32
	in    []bool // in[id]: id counts as InCS
}

// NewTracker returns a tracker of p starting from view v, and the first
// bound v already breaks (nil if none).
func NewTracker(p *Property, v View) (*Tracker, *Failure) {
	t := &Tracker{p: p, count: make([]int32, len(p.bounds)), in: make([]bool, p.n+1)}
	for id := cs.ID(1); int(id) <= p.n; id++ {
		if v.InCS(id) {
			t.in[id] = true
			for _, bi := range p.of[id] {
				t.count[bi]++
			}
		}
	}
	for bi := range p.bounds {
		if f := t.failure(bi); f != nil {
			return t, f
		}
	}
	return t, nil
}

// Set records that process id now counts as InCS (in) or not (it left the
// CS or crashed), and returns the first bound that breaks, or nil. Setting
// the value it already has changes nothing.
func (t *Tracker) Set(id cs.ID, in bool) *Failure {
	if id < 1 || int(id) > t.p.n || t.in[id] == in {
		return nil
	}
	t.in[id] = in
	d := int32(-1)
	if in {
		d = 1
	}
	var first *Failure
	for _, bi := range t.p.of[id] {
		t.count[bi] += d
		if first == nil {
			first = t.failure(int(bi))
		}
	}
	return first
}

// Blocks reports whether process id changing to InCS (in) or out of it
// would break a bound: an entry then waits for an upper bound, an exit for
// a lower one, as the problem allows. A request that nothing blocks, in a
// run where nothing is left to happen, is stuck.
func (t *Tracker) Blocks(id cs.ID, in bool) bool {
	if id < 1 || int(id) > t.p.n || t.in[id] == in {
		return false
	}
	for _, bi := range t.p.of[id] {
		b, c := &t.p.bounds[bi], int(t.count[bi])
		if in && c+1 > b.Hi || !in && c-1 < b.Lo {
			return true
		}
	}
	return false
}

// Change is a pending request of process ID: to enter the CS (In) or to
// leave it.
type Change struct {
	ID cs.ID
	In bool
}

// Completable returns the changes of reqs that could complete one after
// another from the tracked configuration, each keeping every bound, while
// no other process changes state: passes over reqs in their order, each
// taking every change that no bound blocks given the changes already
// taken (Blocks on the configuration they lead to), until a pass takes
// none. The result is in the order taken; t is not changed.
//
// Blocks judges one request alone, so counting the requests it does not
// block overcounts whenever they compete for the same slack: with l = 1
// on complete:8 and two processes InCS, each exit alone keeps the bound,
// but not both (docs/design/lmutin-fix.md). Completable counts them together:
// it returns one of the two. It returns a change iff Blocks passes some
// request alone (its first pass takes it); the set is maximal (no change
// left out could be added at the end), not necessarily the largest, so
// the order of reqs matters where requests compete.
func (t *Tracker) Completable(reqs []Change) []Change {
	u := &Tracker{p: t.p, count: slices.Clone(t.count), in: slices.Clone(t.in)}
	taken := make([]bool, len(reqs))
	var out []Change
	for more := true; more; {
		more = false
		for i, r := range reqs {
			if taken[i] || r.ID < 1 || int(r.ID) > u.p.n || u.in[r.ID] == r.In || u.Blocks(r.ID, r.In) {
				continue
			}
			u.Set(r.ID, r.In)
			taken[i], more = true, true
			out = append(out, r)
		}
	}
	return out
}

// InCS implements View: whether id counts as InCS now.
func (t *Tracker) InCS(id cs.ID) bool { return id >= 1 && int(id) <= t.p.n && t.in[id] }

// Count returns how many members of bound bi count as InCS now.
func (t *Tracker) Count(bi int) int { return int(t.count[bi]) }

func (t *Tracker) failure(bi int) *Failure {
	b := &t.p.bounds[bi]
	if c := int(t.count[bi]); c < b.Lo || c > b.Hi {
		return &Failure{Bound: *b, Count: c}
	}
	return nil
}
