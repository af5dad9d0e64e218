package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// budgetFlag is check's --budget: one number of Entry/Exit calls for every
// process ("2"), or one per process in id order ("2,1,1,1,1": P1 may make
// two cycles' calls, the others one).
type budgetFlag struct{ each []int }

func (b *budgetFlag) String() string {
	s := make([]string, len(b.each))
	for i, v := range b.each {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (b *budgetFlag) Set(v string) error {
	var each []int
	for f := range strings.SplitSeq(v, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("%q is not a number of calls", f)
		}
		each = append(each, x)
	}
	b.each = each
	return nil
}

func (b *budgetFlag) Type() string { return "calls" }

// max is the largest budget given.
func (b *budgetFlag) max() int { return slices.Max(b.each) }

// perProcess reports whether a budget was given per process.
func (b *budgetFlag) perProcess() bool { return len(b.each) > 1 }

// perBudgets is check.Config.Budgets: the list, or nil for one budget.
func (b *budgetFlag) perBudgets() []int {
	if b.perProcess() {
		return b.each
	}
	return nil
}

// header is the trace header's "budget": a number, or the list.
func (b *budgetFlag) header() any {
	if b.perProcess() {
		return b.each
	}
	return b.each[0]
}
