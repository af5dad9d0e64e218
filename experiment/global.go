package experiment

import (
	"fmt"

	"github.com/critsec/critsec/sim"
)

// The studies on the global (l,k)-CS family (Kamei and Kakugawa
// 2019): message complexity O(|Q|) (Lemma 3, Theorem 3) and waiting time
// (Lemma 4: 7 time units for MUTIN's exit; Theorem 4: 9 for (l,k)-GCS),
// both in the paper's timing model (section 3.3: one time unit per message,
// no local computation), against Raymond's k-mutual exclusion, 2(n-1)
// messages per CS.

// Load is a workload of the message study.
type Load string

const (
	// Light: each process is InCS half of the time (E = 1/lambda), with
	// lambda = 1/(1000 n), so the whole system makes one request per 1000
	// time units on average and requests almost never overlap: the
	// uncontended cost.
	Light Load = "light"
	// Heavy: lambda = 1, E = 1: every process asks again one time unit
	// after its last request completed; the (l,k)-GCS family is saturated
	// (its exits and entries are serialized by the mx objects).
	Heavy Load = "heavy"
)

// workload returns lambda and E of load for n processes.
func (l Load) workload(n int) (lambda, e float64) {
	if l == Heavy {
		return 1, 1
	}
	lambda = 1 / (1000 * float64(n))
	return lambda, 1 / lambda
}

// messageBounds returns the bounds of the message study for n processes:
// l = n/4 (at least 1), k = 3n/4 (at least l+1), so that the mean demand of
// n/2 processes lies strictly between them.
func messageBounds(n int) (l, k int) {
	l = max(1, n/4)
	k = max(l+1, 3*n/4)
	return l, k
}

// MessageRuns returns the runs of the message study at load for each n:
// Raymond (k), k-mutex = Co(MUTIN(n-k)) and (l,k)-GCS on the grid and the
// majority coteries, with Maekawa's algorithm as mx; each seeds times,
// with seeds c.Seed, c.Seed+1, ... (Replicate).
func MessageRuns(ns []int, load Load, c Common, seeds int) []Run {
	var runs []Run
	for _, n := range ns {
		l, k := messageBounds(n)
		lambda, e := load.workload(n)
		add := func(label, a, cot string) {
			runs = append(runs, Replicate(Run{Label: label, Alg: a, Coterie: cot, N: n, L: l, K: k,
				Lambda: lambda, E: e, Common: c}, seeds)...)
		}
		add("raymond", "raymond", "")
		add("kmutex grid", "kmutex", "grid")
		add("kmutex majority", "kmutex", "majority")
		add("gcs grid", "gcs", "grid")
		add("gcs majority", "gcs", "majority")
	}
	return runs
}

// UncontendedMessages is the number of messages of one Exit+Entry pair when
// no other request overlaps it, for quorums of mean size q containing their
// owner: Raymond 2(n-1); one MUTIN Exit costs mx (Maekawa: REQUEST, LOCKED,
// RELEASE to the q-1 other members, 3(q-1)) plus Query, Response1, Acquire
// and Ack to all q members (4q), one MUTIN Entry a Release to q members; a
// k-mutex pair is one of each, an (l,k)-GCS pair two of each.
func UncontendedMessages(alg string, n int, q float64) float64 {
	switch alg {
	case "raymond":
		return 2 * float64(n-1)
	case "kmutex", "mutin":
		return 5*q + 3*(q-1)
	case "gcs":
		return 10*q + 6*(q-1)
	}
	return 0
}

// MessageTable turns the outcomes of MessageRuns into a table: one row per
// algorithm (with its coterie) and n, the seeds' runs summarised (Points):
// messages per pair, waiting times (request to state change, time units),
// throughput (entries per time unit) and entries are means over the seeds
// of each run's value, followed by the seeds and the 95 % confidence
// half-widths (MeanCI; NaN with one seed).
func MessageTable(outs []Outcome) *Table {
	t := &Table{LabelName: "alg", Header: []string{
		"n", "lo", "hi", "mean_q", "messages_per_pair", "uncontended_formula",
		"entry_wait_mean_time_units", "exit_wait_mean_time_units", "throughput_entries_per_time_unit", "entries",
		"seeds", "messages_per_pair_ci95", "entry_wait_ci95_time_units", "exit_wait_ci95_time_units",
		"throughput_ci95_entries_per_time_unit"}}
	for _, reps := range Points(outs) {
		o := reps[0]
		r := o.Run
		msgs, msgsCI := meanOf(reps, func(res *sim.Result) float64 { return res.MessagesPerEntry() })
		entry, entryCI := meanOf(reps, func(res *sim.Result) float64 { return res.EntryWait.Mean })
		exit, exitCI := meanOf(reps, func(res *sim.Result) float64 { return res.ExitWait.Mean })
		tp, tpCI := meanOf(reps, (*sim.Result).Throughput)
		entries, _ := meanOf(reps, func(res *sim.Result) float64 { return float64(res.Entries) })
		t.Add(r.Label, float64(r.N), float64(o.Lo), float64(o.Hi), o.MeanQ, msgs,
			UncontendedMessages(r.Alg, r.N, o.MeanQ), entry, exit, tp, entries,
			float64(len(reps)), msgsCI, entryCI, exitCI, tpCI)
	}
	return t
}

// Replicate returns r once per seed: seeds runs with seeds r.Seed,
// r.Seed+1, ... (at least one).
func Replicate(r Run, seeds int) []Run {
	runs := make([]Run, max(seeds, 1))
	for i := range runs {
		runs[i] = r
		runs[i].Seed = r.Seed + uint64(i)
	}
	return runs
}

// Points groups outcomes that differ only in their seed, in the order
// their first run occurs: the replications of one point of a study.
func Points(outs []Outcome) [][]Outcome {
	var groups [][]Outcome
	index := map[string]int{}
	for _, o := range outs {
		r := o.Run
		r.Seed = 0
		key := fmt.Sprintf("%+v", r)
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], o)
	}
	return groups
}

// meanOf is MeanCI of f over the outcomes' results.
func meanOf(outs []Outcome, f func(*sim.Result) float64) (mean, half float64) {
	xs := make([]float64, len(outs))
	for i, o := range outs {
		xs[i] = f(o.Result)
	}
	return MeanCI(xs)
}

// WaitingRuns returns the runs of the waiting-time study: for each n,
// n processes on the grid coterie, (n/4, 3n/4)-GCS, MUTIN(n/4), k-mutex and
// Raymond with k = 3n/4, at each request rate lambda with E = 1/lambda
// (every process InCS half of the time): from uncontended (small lambda) to
// saturated. Lines are labelled by algorithm, and by n too when there are
// several. Each point runs seeds times (Replicate).
func WaitingRuns(ns []int, lambdas []float64, c Common, seeds int) []Run {
	var runs []Run
	for _, n := range ns {
		l, k := messageBounds(n)
		for _, a := range []string{"gcs", "mutin", "kmutex", "raymond"} {
			label := a
			if len(ns) > 1 {
				label = fmt.Sprintf("%s n=%d", a, n)
			}
			for _, lambda := range lambdas {
				runs = append(runs, Replicate(Run{Label: label, Alg: a, Coterie: "grid", N: n, L: l, K: k,
					Lambda: lambda, E: 1 / lambda, Common: c}, seeds)...)
			}
		}
	}
	return runs
}

// WaitingTable turns the outcomes of WaitingRuns into a table: one row per
// algorithm, n and lambda, every value the mean over the seeds of each
// run's (waiting times in time units, throughput in entries per time unit),
// followed by the seeds and the 95 % confidence half-widths of the mean
// waits, messages and throughput (MeanCI; NaN with one seed).
func WaitingTable(outs []Outcome) *Table {
	t := &Table{LabelName: "alg", Header: []string{
		"n", "lo", "hi", "lambda_requests_per_time_unit",
		"entry_wait_mean_time_units", "entry_wait_p50_time_units", "entry_wait_p99_time_units",
		"exit_wait_mean_time_units", "exit_wait_p50_time_units", "exit_wait_p99_time_units",
		"messages_per_pair", "mean_incs", "throughput_entries_per_time_unit",
		"seeds", "entry_wait_ci95_time_units", "exit_wait_ci95_time_units", "messages_per_pair_ci95",
		"throughput_ci95_entries_per_time_unit"}}
	for _, reps := range Points(outs) {
		o := reps[0]
		r := o.Run
		mean := func(f func(*sim.Result) float64) float64 { m, _ := meanOf(reps, f); return m }
		entry, entryCI := meanOf(reps, func(res *sim.Result) float64 { return res.EntryWait.Mean })
		exit, exitCI := meanOf(reps, func(res *sim.Result) float64 { return res.ExitWait.Mean })
		msgs, msgsCI := meanOf(reps, (*sim.Result).MessagesPerEntry)
		tp, tpCI := meanOf(reps, (*sim.Result).Throughput)
		t.Add(r.Label, float64(r.N), float64(o.Lo), float64(o.Hi), r.Lambda,
			entry, mean(func(res *sim.Result) float64 { return res.EntryWait.P50 }), mean(func(res *sim.Result) float64 { return res.EntryWait.P99 }),
			exit, mean(func(res *sim.Result) float64 { return res.ExitWait.P50 }), mean(func(res *sim.Result) float64 { return res.ExitWait.P99 }),
			msgs, mean((*sim.Result).MeanInCS), tp,
			float64(len(reps)), entryCI, exitCI, msgsCI, tpCI)
	}
	return t
}
