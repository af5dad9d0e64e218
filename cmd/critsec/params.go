package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/critsec/critsec/alg"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/topology"
	"github.com/critsec/critsec/trace"
)

// problemFlags are the flags every runtime command (sim, check, ...) shares:
// the problem (which algorithm, on how many processes, with which bounds,
// coterie, initial configuration and algorithm options, or a problem file)
// and the bounds to assert instead of the algorithm's. They only gather
// text: alg.Resolve validates the problem, the one path from user input to
// machines.
type problemFlags struct {
	file                 string
	alg                  string
	n, l, k              int
	coterie              string
	topology, bounds     string
	clamp                bool
	initial              string
	options              map[string]*string
	assertMin, assertMax int
}

// addProblemFlags registers the shared flags on cmd with the given
// defaults, and one flag per algorithm option (alg.AllOptions), with the
// algorithms that take it. l and k have none of their own: unless given,
// they follow n (alg.Spec).
func addProblemFlags(cmd *cobra.Command, f *problemFlags, defaultAlg string, n int) {
	fs := cmd.Flags()
	fs.StringVar(&f.file, "problem", "", "a problem file: one JSON object with the fields alg, n, l, k, coterie, quorums, topology, bounds, clamp, initial, options; flags given as well override it")
	fs.StringVar(&f.alg, "alg", defaultAlg, "algorithm: "+strings.Join(alg.Names(), ", "))
	fs.IntVar(&f.n, "n", n, "number of processes (ids 1..n), >= 1")
	fs.IntVar(&f.l, "l", 0, "lower bound: at least l processes InCS, 0 <= l < k (default: n/3 rounded down); only for gcs and mutin (and their -paper variants); with --topology, at least l of each N_i+P_i (default 1 for lmutin)")
	fs.IntVar(&f.k, "k", 0, "upper bound: at most k processes InCS, 1 <= k <= n (default: n - n/3, and more than l); mutin's is n and maekawa's 1; with --topology, at most k of each N_i+P_i (default l+1; lmutin's is |N_i|+1)")
	fs.StringVar(&f.coterie, "coterie", alg.DefaultCoterie, "coterie of the quorum-based algorithms (maekawa, mutin, kmutex, gcs and their -paper variants): majority, grid, or a coterie file (lines \"i: a b c\", docs/coterie.md)")
	fs.StringVar(&f.topology, "topology", "", "communication graph of the local algorithms (lmutin, lmutex): "+topology.Forms()+", or an edge-list file (one link \"a b\" per line); n is its number of processes")
	fs.StringVar(&f.bounds, "bounds", "", "with --topology: a file of per-process bounds, one line \"i: l k\" per process (k may be max = |N_i|+1), instead of --l and --k")
	fs.BoolVar(&f.clamp, "clamp", false, "with --topology and uniform --l/--k: lower k to |N_i|+1 (and l to k-1) where a neighborhood is smaller, instead of refusing")
	fs.StringVar(&f.initial, "initial", "", "comma-separated ids InCS at start, e.g. 1,2,5, or none (default: the algorithm's documented safe configuration)")
	fs.IntVar(&f.assertMin, "assert-min", -1, "check #InCS >= this instead of the algorithm's lower bound (-1: the algorithm's)")
	fs.IntVar(&f.assertMax, "assert-max", -1, "check #InCS <= this instead of the algorithm's upper bound (-1: the algorithm's)")
	f.options = map[string]*string{}
	for _, o := range alg.AllOptions() {
		f.options[o.Name] = fs.String(o.Name, o.DefaultString(), fmt.Sprintf("%s; only for %s", o.Usage(), strings.Join(o.Algorithms, ", ")))
	}
}

// problem is a resolved, validated problem with the property a runtime
// checks: the algorithm's, or the bounds asserted instead.
type problem struct {
	*alg.Problem
	check *property.Property
}

// bounds returns the global bounds checked (0..n for a local property).
func (pr problem) bounds() (lo, hi int) { return pr.check.GlobalBounds() }

// localBounds describes the bounds of a local problem in one phrase:
// every process's l_i..k_i for small n, else their ranges; "" for a global
// problem.
func (pr problem) localBounds() string {
	p := pr.Params
	if pr.Topology == nil {
		return ""
	}
	if p.N <= 8 {
		parts := make([]string, p.N)
		for i := range parts {
			parts[i] = fmt.Sprintf("P%d %d..%d", i+1, p.Li[i], p.Ki[i])
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("l_i in %d..%d, k_i in %d..%d", slices.Min(p.Li), slices.Max(p.Li), slices.Min(p.Ki), slices.Max(p.Ki))
}

// topologyName is the topology's name, "" for a global problem.
func (pr problem) topologyName() string {
	if pr.Topology == nil {
		return ""
	}
	return pr.Topology.String()
}

// headline is the problem part of the first line of sim's and check's
// reports.
func headline(alg string, n, l, k, lo, hi int, topo, local string) string {
	if topo != "" {
		return fmt.Sprintf("%s: n=%d on %s, bounds l_i..k_i of N_i+P_i: %s", alg, n, topo, local)
	}
	return fmt.Sprintf("%s: n=%d l=%d k=%d, bounds %d..%d", alg, n, l, k, lo, hi)
}

// resolve gathers the flags that were given (over the problem file, if
// any) into an alg.Spec and resolves it. Every error is a usageError.
func (f *problemFlags) resolve(fs *pflag.FlagSet) (problem, error) {
	var spec alg.Spec
	if f.file != "" {
		var err error
		if spec, err = alg.ReadSpec(f.file); err != nil {
			return problem{}, badInput("--problem: %v", err)
		}
	}
	if fs.Changed("alg") || spec.Alg == "" {
		spec.Alg = f.alg
	}
	if fs.Changed("topology") {
		spec.Topology = f.topology
	}
	if fs.Changed("bounds") {
		spec.Bounds = f.bounds
	}
	if fs.Changed("clamp") {
		spec.Clamp = f.clamp
	}
	// A topology fixes n: --n's default does not apply then.
	if fs.Changed("n") || (spec.N == 0 && spec.Topology == "") {
		spec.N = f.n
	}
	if fs.Changed("l") {
		spec.L = &f.l
	}
	if fs.Changed("k") {
		spec.K = &f.k
	}
	if fs.Changed("coterie") {
		if strings.TrimSpace(f.coterie) == "" {
			return problem{}, badInput("--coterie \"\" names no coterie: give majority, grid or a coterie file, or leave it out")
		}
		spec.Coterie, spec.Quorums = f.coterie, nil
	}
	if fs.Changed("initial") {
		ids, err := parseIDs(f.initial)
		if err != nil {
			return problem{}, badInput("--initial %q: %v", f.initial, err)
		}
		spec.Initial = ids
	}
	for name, v := range f.options {
		if fs.Changed(name) {
			if spec.Options == nil {
				spec.Options = map[string]string{}
			}
			spec.Options[name] = *v
		}
	}
	p, err := alg.Resolve(spec)
	if err != nil {
		return problem{}, badInput("%v", err)
	}
	pr := problem{Problem: p, check: p.Property}
	if f.assertMin < 0 && f.assertMax < 0 {
		return pr, nil
	}
	n := p.Params.N
	switch {
	case !p.Property.IsGlobal():
		return problem{}, badInput("--assert-min and --assert-max replace a global bound; %s has a bound per neighborhood", p.Alg.Name)
	case f.assertMax < -1 || f.assertMax > n:
		return problem{}, badInput("--assert-max %d is out of range: need 0 <= assert-max <= n (n = %d), or -1 for the algorithm's bound", f.assertMax, n)
	case f.assertMin < -1 || f.assertMin > n:
		return problem{}, badInput("--assert-min %d is out of range: need 0 <= assert-min <= n (n = %d), or -1 for the algorithm's bound", f.assertMin, n)
	}
	glo, ghi := p.Property.GlobalBounds()
	lo, hi := glo, ghi
	if f.assertMax >= 0 {
		hi = f.assertMax
	}
	if f.assertMin >= 0 {
		lo = f.assertMin
	}
	if lo > hi {
		return problem{}, badInput("bounds %d..%d are empty: need --assert-min <= --assert-max (the algorithm guarantees %d..%d)", lo, hi, glo, ghi)
	}
	if pr.check, err = property.Global(n, lo, hi); err != nil {
		return problem{}, badInput("--assert-min/--assert-max: %v", err)
	}
	return pr, nil
}

// traceHeader is the header of a trace of pr: the problem and the property
// checked (the runtime adds its own fields).
func (pr problem) traceHeader() trace.Header {
	h := trace.Header{
		Alg: pr.Alg.Name, L: pr.Params.L, K: pr.Params.K,
		Initial: pr.Params.Initial, Coterie: pr.Coterie, Quorums: pr.Params.Quorums,
	}
	h.SetProperty(pr.check)
	return h
}

// machines builds the machines of processes 1..n; construction errors are
// bad input (the algorithm refused the parameters).
func (pr problem) machines() ([]cs.Machine, error) {
	ms, err := pr.Machines()
	if err != nil {
		return nil, badInput("--alg %v", err)
	}
	return ms, nil
}

// parseIDs reads --initial: comma-separated ids, or "none" for an empty
// configuration. Empty fields and anything but a process id are refused.
func parseIDs(s string) ([]cs.ID, error) {
	switch strings.TrimSpace(s) {
	case "none":
		return []cs.ID{}, nil
	case "":
		return nil, fmt.Errorf("no ids: give comma-separated ids like 1,2,5, or none for no process InCS")
	}
	var ids []cs.ID
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("item %d is empty: give comma-separated ids like 1,2,5", i+1)
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a process id: ids are integers from 1 to n, like 1,2,5", f)
		}
		ids = append(ids, cs.ID(v))
	}
	return ids, nil
}
