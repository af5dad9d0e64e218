package check

import (
	"strings"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/ideal"
)

// Compositional checking (docs/checker.md, "Compositional checking"). A
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

// walkIdeal calls f with the index, path and object of every ideal child of
// m, depth first in the order of Children; indices count from 0.
func walkIdeal(m cs.Machine, f func(i int, path []string, o *ideal.Object)) {
	i := 0
	var walk func(m cs.Machine, path []string)
	walk = func(m cs.Machine, path []string) {
		c, ok := m.(cs.Composite)
		if !ok {
			return
		}
		for tag, child := range c.Children() {
			p := append(path[:len(path):len(path)], tag)
			if o, ok := child.(*ideal.Object); ok {
				f(i, p, o)
				i++
				continue
			}
			walk(child, p)
		}
	}
	walk(m, nil)
}

// idealMasks returns, for machine m, the ideal children that are InCS and
// those with a pending Entry, as bit sets over their indices.
func idealMasks(m cs.Machine) (in, want uint32) {
	walkIdeal(m, func(i int, _ []string, o *ideal.Object) {
		if i >= maxIdeals {
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

// findIdeals lists the ideal children of m (process 1's machine) and
// interns their Grant messages.
func (x *model) findIdeals(m cs.Machine) {
	walkIdeal(m, func(_ int, path []string, o *ideal.Object) {
		var msg cs.Message = ideal.Grant{}
		for i := len(path) - 1; i >= 0; i-- {
			msg = cs.Tagged{Tag: path[i], Msg: msg}
		}
		key := msgKey(nil, msg)
		x.ideals = append(x.ideals, idealChild{
			name:     strings.Join(path, "."),
			capacity: o.Capacity(),
			grant:    x.tab.internMsg(key, msg),
		})
	})
}

// grants appends the Grant actions enabled in s: for each ideal object
// held by fewer processes than its capacity, one per live requester, in
// process order. A crashed holder keeps the object.
func (x *model) grants(s *gstate, dst []Action) []Action {
	for c := range x.ideals {
		if !x.grantable(s, c) {
			continue
		}
		for i, p := range s.procs {
			id := cs.ID(i + 1)
			if !s.isCrashed(id) && x.tab.machine(p.m).idealWant&(1<<c) != 0 {
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

// wantsIdeal reports whether a live process of set p waits for a grant:
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
