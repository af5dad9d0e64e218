package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/ideal"
)

// Compositional checking (docs/design/compositional-checking.md). A
// machine may hold, among its children (cs.Composite), ideal objects
// (package ideal): the specification of a k-mutual exclusion child in place
// of an implementation. The checker then owns the object's decisions: a
// Grant action gives the object to one of its requesters, at any step at
// which fewer than its capacity hold it, in any order. Each ideal object is
// one child path (tags from the process's machine down to the object), the
// same in every process; a path's objects of processes 1..n form one
// object.

// maxIdeals bounds the ideal children of a machine (a bit each in
// machineEntry's masks).
const maxIdeals = 32

// idealChild is one abstracted child object: its path, its capacity, and
// the interned Grant message that reaches it through the parent.
type idealChild struct {
	name     string // the tags joined with '.', e.g. "kmex.mx"
	capacity int
	grant    uint32
}

// walkIdeal calls f with the path and object of every ideal child of m,
// depth first in the order of Children.
func walkIdeal(m cs.Machine, f func(path string, o *ideal.Object)) {
	var walk func(m cs.Machine, path []string)
	walk = func(m cs.Machine, path []string) {
		c, ok := m.(cs.Composite)
		if !ok {
			return
		}
		for tag, child := range c.Children() {
			p := append(path[:len(path):len(path)], tag)
			if o, ok := child.(*ideal.Object); ok {
				f(strings.Join(p, "."), o)
				continue
			}
			walk(child, p)
		}
	}
	walk(m, nil)
}

// idealsOf lists the ideal children of m, with their capacities, sorted by
// path.
func idealsOf(m cs.Machine) []idealChild {
	var out []idealChild
	walkIdeal(m, func(path string, o *ideal.Object) {
		out = append(out, idealChild{name: path, capacity: o.Capacity()})
	})
	slices.SortFunc(out, func(a, b idealChild) int { return strings.Compare(a.name, b.name) })
	return out
}

// validateIdeals refuses ideal children the checker cannot handle soundly:
// processes whose machines hold different ideal children (by path and
// capacity: one object is the same path in every process), more than
// maxIdeals of them, and crashes or failure detectors with them. The
// safety of a real child is checked over live processes, so with crashes
// the ideal object would have to free a crashed holder's place, and a
// crashed machine's state is not part of a state's fingerprint:
// docs/design/compositional-checking.md.
func (c Config) validateIdeals() error {
	first := idealsOf(c.Machines[0])
	if len(first) == 0 {
		for i, m := range c.Machines[1:] {
			if len(idealsOf(m)) > 0 {
				return fmt.Errorf("check: process %d has ideal children and process 1 has none: every process must hold the same ones", i+2)
			}
		}
		return nil
	}
	if len(first) > maxIdeals {
		return fmt.Errorf("check: %d ideal children: at most %d", len(first), maxIdeals)
	}
	if c.Crashes > 0 || c.Detector != nil {
		return fmt.Errorf("check: ideal children (compositional checking) with crashes or a failure detector: not supported; check the concrete algorithm, or leave the crashes and the detector out")
	}
	for i, m := range c.Machines[1:] {
		if !slices.EqualFunc(idealsOf(m), first, func(a, b idealChild) bool { return a.name == b.name && a.capacity == b.capacity }) {
			return fmt.Errorf("check: process %d's ideal children %v differ from process 1's %v: every process must hold the same ones (path and capacity)", i+2, idealsOf(m), first)
		}
	}
	return nil
}

// idealMasks returns, for machine m, its ideal children that are InCS and
// those with a pending Entry, as bit sets over the indices index gives
// their paths.
func idealMasks(m cs.Machine, index map[string]int) (in, want uint32) {
	walkIdeal(m, func(path string, o *ideal.Object) {
		i, ok := index[path]
		if !ok {
			return
		}
		if o.State() == cs.InCS {
			in |= 1 << i
		}
		if o.Pending() == cs.Entry {
			want |= 1 << i
		}
	})
	return in, want
}

// findIdeals lists the ideal children of m (process 1's machine, the same
// as every process's: validateIdeals), interns their Grant messages, and
// gives the interner their indices.
func (x *model) findIdeals(m cs.Machine) {
	for i, d := range idealsOf(m) {
		var msg cs.Message = ideal.Grant{}
		path := strings.Split(d.name, ".")
		for j := len(path) - 1; j >= 0; j-- {
			msg = cs.Tagged{Tag: path[j], Msg: msg}
		}
		d.grant = x.tab.internMsg(msgKey(nil, msg), msg)
		x.ideals = append(x.ideals, d)
		if x.tab.idealIndex == nil {
			x.tab.idealIndex = map[string]int{}
		}
		x.tab.idealIndex[d.name] = i
	}
}

// grants appends the Grant actions enabled in s: for each ideal object
// held by fewer processes than its capacity, one per requester, in
// process order. (No process crashes in a run with ideal children:
// validateIdeals.)
func (x *model) grants(s *gstate, dst []Action) []Action {
	for c := range x.ideals {
		if !x.grantable(s, c) {
			continue
		}
		for i, p := range s.procs {
			id := cs.ID(i + 1)
			if x.tab.machine(p.m).idealWant&(1<<c) != 0 {
				dst = append(dst, Action{Kind: Grant, Node: id, Index: c})
			}
		}
	}
	return dst
}

// grantable reports whether ideal object c has room for one more holder.
func (x *model) grantable(s *gstate, c int) bool {
	held := 0
	for _, p := range s.procs {
		if x.tab.machine(p.m).idealIn&(1<<c) != 0 {
			held++
		}
	}
	return held < x.ideals[c].capacity
}

// wantsIdeal reports whether a process of set p waits for a grant:
// the partial-order reduction does not reduce to such a set, since another
// process's release could enable the grant (por.go).
func (x *model) wantsIdeal(s *gstate, p uint64) bool {
	for i, pr := range s.procs {
		if p&bit(cs.ID(i+1)) != 0 && x.tab.machine(pr.m).idealWant != 0 {
			return true
		}
	}
	return false
}
