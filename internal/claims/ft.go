package claims

import (
	"fmt"
	"math"
	"slices"
)

var faultTolerant = paper{
	title: "Fault-tolerant k-mutex: Bouillaguet, Arantes and Sens 2007",
	intro: "M. Bouillaguet, L. Arantes, P. Sens, *Fault tolerant k-mutual exclusion algorithm using failure " +
		"detector* (INRIA report, 2007): Raymond's k-mutex and its extension with a failure detector of " +
		"class T (Algorithm 1), tolerating n−1 crashes; the study of section 6 (15 nodes, 5 resources). " +
		"critsec: `ftraymond`, `raymond` ([fault-tolerance.md](fault-tolerance.md)); figures from " +
		"`experiments/ft07/` (λ = E = 1, Tt = 1, detector T with delay 5, P2..P15 crash at t = 100, 200, …, " +
		"1400; seeds 1 to 10).",
	rows: ftRows,
}

// figure2 returns, for alg, the maximum resources in use (column, of
// ft07-figure2.csv: the mean over the seeds of a step's maximum, or the
// largest over the seeds) and the fewest live processes in each interval
// of width 100 (the crash of interval i comes at its start).
func figure2(d *data, alg, column string) (max, live []float64) {
	for _, r := range d.sel(d.table("ft07/ft07-figure2.csv"), "alg", alg) {
		t := d.num(r, "t_time_units")
		if !(t >= 0 && t < 1e6) {
			d.fail("ft07/ft07-figure2.csv: time %v out of range", t)
			return nil, nil
		}
		i := int(t / 100)
		for len(max) <= i {
			max = append(max, 0)
			live = append(live, math.Inf(1))
		}
		max[i] = math.Max(max[i], d.num(r, column))
		live[i] = math.Min(live[i], d.num(r, "live"))
	}
	return max, live
}

// ftCmd regenerates the tables of the ft07 rows.
const ftCmd = "critsec experiment ft07 --out docs/experiments/ft07"

// intervals lists a value per interval: the first eight and the last.
func intervals(xs []float64) string {
	if len(xs) > 8 {
		return list(xs[:8], 0) + ", …, " + f(xs[len(xs)-1], 0)
	}
	return list(xs, 0)
}

func ftRows(d *data) []row {
	const n, k = 15.0, 5.0
	m := d.table("ft07/ft07-messages.csv")
	val := func(measure string) float64 { return d.num(d.one(m, "measure", measure), "value") }
	perCS := []float64{
		val("raymond messages per CS, light load"), val("ftraymond messages per CS, light load"),
		val("raymond messages per CS, heavy load"), val("ftraymond messages per CS, heavy load"),
	}
	initMsgs := val("ftraymond INIT+ACK per process")
	perDetection := val("ftraymond CRASH sends per detection")

	rmax, _ := figure2(d, "raymond", "in_use_max")
	// Algorithm 1: in every interval the runs' largest maximum is
	// min(k, live): no run exceeds it and one reaches it.
	fmax, flive := figure2(d, "ftraymond", "in_use_max_over_seeds")
	// Raymond: each crash takes one resource away (a request made before
	// a crash may still use the crashed process's permission, so one
	// more is allowed in the interval after it), none after the k-th.
	ray := len(rmax) > int(k)+1
	for i := 1; ray && i < len(rmax); i++ {
		ray = rmax[i] <= rmax[i-1] && rmax[i] <= math.Max(k-float64(i)+1, 0) && (i <= int(k) || rmax[i] == 0)
	}
	lastEntry := 0
	for i, x := range rmax {
		if x > 0 {
			lastEntry = i
		}
	}
	ft := len(fmax) > 0
	for i := range fmax {
		ft = ft && fmax[i] == math.Min(k, flive[i])
	}
	return []row{
		{
			where:   "section 1, section 3",
			claim:   "Raymond's algorithm tolerates k−1 crashes (not k)",
			result:  "checked on every interleaving with crashes at any step: n = 3, k = 2 ok with one crash, deadlock with two (P1 waits for an n−k-th permission no live process can give); n = 4, k = 2 the same. Step through it: [viz/raymond-crashes-deadlock-n3.html](viz/raymond-crashes-deadlock-n3.html)",
			command: "critsec check --alg raymond --n 3 --k 2 --crashes 1; critsec check --alg raymond --n 3 --k 2 --crashes 2",
			verdict: Reproduced,
		},
		{
			where:   "Lemma 1 (safety)",
			claim:   "no more than k processes in the CS at the same time, with a detector of class T",
			result:  "ok on every interleaving, crash and detector output: n = 3 (k = 1, 2; 2 crashes; T and P; FIFO and unordered links); n = 4 with 3 crashes explored to 1.37·10⁹ states without a violation, not completed",
			command: "critsec check --alg ftraymond --n 3 --k 2 --crashes 2 --detector T",
			verdict: Reproduced,
		},
		{
			where:   "Lemmas 2–3 (liveness)",
			claim:   "a correct process's request is eventually served",
			result:  "no request of a live process deadlocked in the checks above (every budget stop completes); simulation over 40 random crash schedules (n 3..12, up to n−1 crashes): every request served",
			command: "critsec check --alg ftraymond --n 3 --k 2 --crashes 2 --detector T; go test ./alg/ftraymond -run TestSimRandomCrashes",
			verdict: Reproduced,
		},
		{
			where:   "Theorem 1, abstract",
			claim:   "Algorithm 1 solves fault-tolerant k-mutual exclusion with T, tolerating up to n−1 crashes (Theorem 1's text says f < n−1), if none crashes before the initialization",
			result:  "n = 3 with 2 = n−1 crashes checked; 14 = n−1 crashes of 15 in the study and in `critsec sim`: the last process alone still enters",
			command: "critsec check --alg ftraymond --n 3 --k 2 --crashes 2 --detector T; " + ftCmd,
			verdict: Reproduced,
		},
		{
			where:   "section 4 (class T)",
			claim:   "trusting accuracy is what lets line 43 read a suspicion of a trusted process as a crash",
			result:  "with class S in its place (a false suspicion allowed) k+1 processes enter: 2 InCS for k = 1, 3 for k = 2",
			command: "critsec check --alg ftraymond --n 3 --k 1 --detector S",
			verdict: Reproduced,
		},
		{
			where:   "section 1 (model)",
			claim:   "channels are reliable but need not be FIFO",
			result:  "ok with unordered links: n = 3, k = 2, 2 crashes, T (676 850 states); simulation with 14 crashes and exponential transit",
			command: "critsec check --alg ftraymond --n 3 --k 2 --crashes 2 --detector T --unordered",
			verdict: Reproduced,
		},
		{
			where:   "Figure 1",
			claim:   "the example execution: 4 processes, 2 resources, a crash detected and the permission cancelled",
			result:  "replayed step by step, with the state the figure shows after each",
			command: "go test ./alg/ftraymond -run TestFigure1",
			verdict: Reproduced,
		},
		{
			where:   "Figure 2, section 6 (Raymond)",
			claim:   "each crash decreases Raymond's maximum concurrent accesses by one; after the k-th crash no new request is served",
			result:  fmt.Sprintf("maximum in use per 100-unit interval (crash i at the start of interval i): %s; nobody InCS from interval %d on (tolerance: one more than k−i in an interval, for requests made before its crash)", intervals(rmax), lastEntry+1),
			command: ftCmd,
			verdict: verdict(ray, DiffersOpen),
		},
		{
			where:   "Figure 2, section 6 (Algorithm 1)",
			claim:   "it progresses through n−1 crashes, its maximum bounded only by the live processes",
			result:  fmt.Sprintf("maximum in use per interval, the largest over the runs' seeds, equals min(k, live) in every interval: %s", intervals(fmax)),
			command: ftCmd,
			verdict: verdict(ft, DiffersOpen),
		},
		{
			where:   "section 6 (messages)",
			claim:   "messages per CS without crash as Raymond's: between 2n−k−1 = 24 and 2n−1 = 29",
			result:  fmt.Sprintf("Raymond and Algorithm 1 at light and heavy load: %s (critsec's most is 2(n−1) = 28; the paper's 2n−1 may count a message to oneself)", list(perCS, 2)),
			command: ftCmd,
			verdict: verdict(slices.Min(perCS) >= 2*n-k-1 && slices.Max(perCS) <= 2*n-1, DiffersOpen),
		},
		{
			where:   "section 6 (messages)",
			claim:   "the process that detects a crash sends n messages",
			result:  fmt.Sprintf("%s CRASH messages per detection: n−1 to the others, the n-th copy applied locally; every live process that trusted the crashed one detects it (%s detections per crash)", f(perDetection, 0), f(val("ftraymond detections per crash"), 1)),
			command: ftCmd,
			verdict: verdict(perDetection == n-1 || perDetection == n, DiffersOpen),
		},
		{
			where:   "section 6 (messages)",
			claim:   "each process sends between n−1 and 2(n−1) messages at the initialization",
			result:  fmt.Sprintf("%s INIT and ACK per process: n−1 INITs and n−1 ACKs", f(initMsgs, 0)),
			command: ftCmd,
			verdict: verdict(initMsgs >= n-1 && initMsgs <= 2*(n-1), DiffersOpen),
		},
	}
}
