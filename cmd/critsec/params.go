package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"critsec/alg"
	"critsec/coterie"
	"critsec/cs"
)

// problemFlags are the flags every runtime command (sim, check, ...) shares:
// which algorithm, on how many processes, with which bounds, coterie and
// initial configuration.
type problemFlags struct {
	alg     string
	n, l, k int
	coterie string
	initial string
}

// addProblemFlags registers the shared flags on cmd with the given defaults.
// l and k have none of their own: unless given, they follow n (resolve).
func addProblemFlags(cmd *cobra.Command, f *problemFlags, defaultAlg string, n int, defaultCoterie string) {
	fs := cmd.Flags()
	fs.StringVar(&f.alg, "alg", defaultAlg, "algorithm: "+strings.Join(alg.Names(), ", "))
	fs.IntVar(&f.n, "n", n, "number of processes (ids 1..n), >= 1")
	fs.IntVar(&f.l, "l", 0, "lower bound: at least l processes InCS, 0 <= l < k (default: n/3 rounded down); taken as 0 by algorithms without one (raymond, kmutex, maekawa)")
	fs.IntVar(&f.k, "k", 0, "upper bound: at most k processes InCS, 1 <= k <= n (default: n - n/3, and more than l); taken as n by mutin and 1 by maekawa")
	fs.StringVar(&f.coterie, "coterie", defaultCoterie, "coterie for quorum-based algorithms: majority, grid, or a file (one quorum per line)")
	fs.StringVar(&f.initial, "initial", "", "comma-separated ids InCS at start, e.g. 1,2,5 (default: the algorithm's documented safe configuration)")
}

// problem is a resolved, validated problem instance.
type problem struct {
	alg     alg.Algorithm
	params  cs.Params
	coterie string // name of the coterie, "" when the algorithm uses none
	lo, hi  int    // the bounds the algorithm guarantees
}

// resolve validates the flags and builds the problem; every error is a
// usageError naming the flag, the value and the allowed range. fs tells
// which flags were given: an algorithm without a lower bound takes l = 0
// and one with a fixed upper bound (alg.Algorithm.FixedK) takes that k
// unless the user asked for something else, which is refused.
func (f *problemFlags) resolve(fs *pflag.FlagSet) (problem, error) {
	a, err := alg.Lookup(f.alg)
	if err != nil {
		return problem{}, badInput("--alg: %v", err)
	}
	if f.n < 1 {
		return problem{}, badInput("--n %d is out of range: need n >= 1", f.n)
	}
	l, k := f.l, f.k
	if !fs.Changed("l") {
		l = f.n / 3
	}
	if !fs.Changed("k") {
		k = min(f.n, max(f.n-f.n/3, l+1))
	}
	if !a.UsesL {
		if fs.Changed("l") && l != 0 {
			return problem{}, badInput("--l %d: %s guarantees no lower bound, so l must be 0; for at least l processes InCS use --alg gcs or mutin", l, a.Name)
		}
		l = 0
	}
	if a.FixedK != nil {
		fixed := a.FixedK(f.n)
		if fs.Changed("k") && k != fixed {
			return problem{}, badInput("--k %d: %s always allows at most %d processes InCS (n = %d); omit --k", k, a.Name, fixed, f.n)
		}
		k = fixed
		if l >= k {
			return problem{}, badInput("--l %d is out of range: need l < %d for %s (at l = n no process could ever exit)", l, k, a.Name)
		}
	}
	switch {
	case k < 1 || k > f.n:
		return problem{}, badInput("--k %d is out of range: need 1 <= k <= n (n = %d)", k, f.n)
	case l < 0:
		return problem{}, badInput("--l %d is out of range: need l >= 0", l)
	case l >= k:
		return problem{}, badInput("--l %d is out of range: need l < k (k = %d); with l = k no process could ever exit", l, k)
	}
	p := cs.Params{N: f.n, L: l, K: k}
	pr := problem{alg: a}
	if a.Quorums {
		q, name, err := quorumsFor(f.coterie, f.n)
		if err != nil {
			return problem{}, badInput("--coterie %s: %v", f.coterie, err)
		}
		p.Quorums, pr.coterie = q, name
	}
	if f.initial == "" {
		p.Initial = a.DefaultInitial(p)
	} else {
		p.Initial, err = parseIDs(f.initial)
		if err != nil {
			return problem{}, badInput("--initial %q: %v", f.initial, err)
		}
	}
	pr.lo, pr.hi = a.Bounds(p)
	if err := p.CheckInitial(pr.lo, pr.hi); err != nil {
		return problem{}, badInput("--initial %q: %v", f.initial, err)
	}
	pr.params = p
	return pr, nil
}

// machines builds the machines of processes 1..n; construction errors are
// bad input (the algorithm refused the parameters).
func (pr problem) machines() ([]cs.Machine, error) {
	ms, err := pr.alg.New(pr.params)
	if err != nil {
		return nil, badInput("--alg %s: %v", pr.alg.Name, err)
	}
	return ms, nil
}

// quorumsFor resolves the --coterie flag to Q_1..Q_n and a display name:
// majority, grid or a coterie file, validated as a coterie (package coterie).
var quorumsFor = coterie.ByName

func parseIDs(s string) ([]cs.ID, error) {
	var ids []cs.ID
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a process id: want comma-separated integers like 1,2,5", f)
		}
		ids = append(ids, cs.ID(v))
	}
	return ids, nil
}
