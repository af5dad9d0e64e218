package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

var local = paper{
	title: "Local (l_i,k_i)-CS: Kamei and Kakugawa 2017",
	intro: "S. Kamei, H. Kakugawa, *An asynchronous message-passing distributed algorithm for the " +
		"generalized local critical section problem* (Algorithms 10(38), 2017): l_i-LMUTIN (Algorithms " +
		"1–2), k_i-LMUTEX = Co(LMUTIN), LKCS (Algorithms 3–7) with its leader's sidetrack. critsec: " +
		"`lmutin`, `lmutex`, `lkcs` (corrected) and the `-paper` variants " +
		"([local-lk-cs.md](local-lk-cs.md)); figures from `experiments/local/` (the local study: rings, " +
		"tori, wheels, random graphs of 100 and 400, complete:16; four loads; seeds 1–3). The paper has no " +
		"simulations; its claims are its lemmas.",
	rows: localRows,
}

// perMember returns, for alg, the messages per pair and neighborhood
// member (|N_i|+1) of local-messages.csv: every (load, size) record's, and
// the sizes covered.
func perMember(d *data, alg string) (all, sizes []float64) {
	rs := d.sel(d.table("local/local-messages.csv"), "alg", alg)
	for _, r := range rs {
		all = append(all, d.num(r, "per_member"))
	}
	return all, d.nums(rs, "size")
}

// runs counts alg's runs of local-runs.csv, the whole ones (their entries
// made, no violation) with their topologies, and the others by violation,
// and sums column col over all of them.
func runs(d *data, alg, col string) (n, whole int, where []string, broken map[string]int, sum float64) {
	broken = map[string]int{}
	for _, r := range d.sel(d.table("local/local-runs.csv"), "alg", alg) {
		n++
		if v := d.str(r, "violation"); v != "" {
			broken[v]++
		} else if d.str(r, "stop") == "entries" {
			whole++
			if top := d.str(r, "topology"); !slices.Contains(where, top) {
				where = append(where, top)
			}
		}
		sum += d.num(r, col)
	}
	slices.Sort(where)
	return n, whole, where, broken, sum
}

// runsOn returns alg's runs of local-runs.csv on topologies whose name
// starts with one of the prefixes.
func runsOn(d *data, alg string, prefixes ...string) []rec {
	return slices.DeleteFunc(d.sel(d.table("local/local-runs.csv"), "alg", alg), func(r rec) bool {
		top := d.str(r, "topology")
		return !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(top, p) })
	})
}

// perRun returns the messages per pair and member of alg's whole runs on
// topologies whose name starts with one of the prefixes.
func perRun(d *data, alg string, prefixes ...string) []float64 {
	var xs []float64
	for _, r := range runsOn(d, alg, prefixes...) {
		if d.str(r, "violation") == "" {
			xs = append(xs, d.num(r, "messages_per_pair_member"))
		}
	}
	if len(xs) == 0 {
		d.fail("local/local-runs.csv: no whole %s run on %v", alg, prefixes)
		return []float64{math.NaN()}
	}
	return xs
}

// leftover summarises what alg's runs of local-runs.csv on topologies
// whose name starts with one of the prefixes left pending at their end:
// the runs, those with a verdict, the least and most requests the others
// left pending, undecided (sim.Result.Undecided), the longest wait of such
// a request as a share of its run's starvation bound, and the runs whose
// bound was longer than the whole run, where no starvation could show,
// with the longest such wait there as a share of the run.
func leftover(d *data, alg string, prefixes ...string) string {
	rs := runsOn(d, alg, prefixes...)
	n := len(rs)
	var judged, blind int
	lo, hi, worst, share := math.Inf(1), math.Inf(-1), 0.0, 0.0
	for _, r := range rs {
		if d.str(r, "violation") != "" {
			judged++
			continue
		}
		u, b := d.num(r, "undecided_requests"), d.num(r, "starve_bound_time_units")
		lo, hi = math.Min(lo, u), math.Max(hi, u)
		w := d.num(r, "pending_wait_max_time_units")
		worst = math.Max(worst, w/b)
		if end := d.num(r, "end_time_units"); b >= end {
			blind++
			share = math.Max(share, w/end)
		}
	}
	if n == judged {
		d.fail("local/local-runs.csv: no %s run without a verdict on %v", alg, prefixes)
		return "no runs"
	}
	head := fmt.Sprintf("%d runs, none with a verdict, each ending", n)
	if judged > 0 {
		head = fmt.Sprintf("%d runs, %d with a verdict, the others ending", n, judged)
	}
	s := fmt.Sprintf("%s with %s–%s requests pending after the drain, undecided (the longest had waited %s %% of its run's starvation bound)", head, f(lo, 0), f(hi, 0), f(100*worst, 0))
	if blind > 0 {
		s += fmt.Sprintf(", and in %d of them the bound was longer than the whole run, so that no starvation could show; there the oldest pending request had waited at most %s %% of the run", blind, f(100*share, 0))
	}
	return s
}

func brokenText(b map[string]int) string {
	var ks []string
	for k := range b {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var s []string
	for _, k := range ks {
		what := k
		if k == "error" {
			what = "undefined step"
		}
		s = append(s, fmt.Sprintf("%d %s", b[k], what))
	}
	return strings.Join(s, ", ")
}

// localCmd regenerates the tables of the local rows.
const localCmd = "critsec experiment local --out docs/experiments/local"

func localRows(d *data) []row {
	const tol = 0.01 // a run's two ends blur a process's count by half a pair
	in := func(xs []float64, lo, hi float64) bool {
		return slices.Min(xs) >= lo*(1-tol) && slices.Max(xs) <= hi*(1+tol)
	}
	lmutin, sizes := perMember(d, "lmutin")
	lmutex, _ := perMember(d, "lmutex")
	lm := slices.Concat(lmutin, lmutex)
	mt := d.table("local/local-messages.csv")
	var mirror float64
	for _, load := range []string{"light", "0.01", "0.1", "heavy"} {
		a := d.num(d.one(mt, "alg", "lmutin", "load", load, "size", 3.0), "messages_per_pair")
		b := d.num(d.one(mt, "alg", "lmutex", "load", load, "size", 3.0), "messages_per_pair")
		mirror = math.Max(mirror, math.Abs(a/b-1))
	}
	paper, _ := perMember(d, "lkcs-paper")
	pn, pwhole, pwhere, pbroken, ptriggers := runs(d, "lkcs-paper", "triggers")
	fixed, fsizes := perMember(d, "lkcs")
	fn, fwhole, _, _, _ := runs(d, "lkcs", "triggers")
	regular := perRun(d, "lkcs", "torus", "complete")
	random := perRun(d, "lkcs", "random")
	worst := slices.Max(fixed)
	return []row{
		{
			where:   "Lemma 1 (LMUTIN safety)",
			claim:   "l_i ≤ |CS_i| ≤ |N_i|+1 for every P_i at any time",
			result:  "Algorithm 2 as published reaches an undefined step (row L2); read leniently (nothing deleted, the oldest request granted anyway) it hands out one grant too many and breaks the bound (`N[2]={P1,P2,P3}: 1 InCS, outside 2..3`). `lmutin` (Preempt names the grant it asks back) is ok on every connected graph of 3 and 4 processes",
			command: "go test ./alg/lmutin -run TestPaperLenientBreaksSafety; go test ./alg -run TestLocalSmallGraphs",
			verdict: Differs,
			why:     "the Preempt condition \"state_i = InCS\" cannot tell a process waiting to exit on the grant asked back from one InCS again whose Release is in flight (design/lmutin-fix.md)",
		},
		{
			where:   "Lemma 2 (LMUTIN liveness)",
			claim:   "every process changes into InCS and OutCS alternately infinitely often",
			result:  "`lmutin-paper` on two linked processes (l = 1) reaches a Relinquish for a grant a Release already returned: \"delete (*,P_i) from grantedTo_i\" finds nothing (14 steps); `lmutex-paper` inherits it (11 steps). `lmutin` passes every check; in the local study, " + leftover(d, "lmutin", "") + "; they wait for a neighbor's next Entry, which the drain does not make (design/lmutin-fix.md). Step through them: [viz/lmutin-paper-undefined.html](viz/lmutin-paper-undefined.html), [viz/lmutex-paper-undefined.html](viz/lmutex-paper-undefined.html)",
			command: "critsec check --alg lmutin-paper --topology path:2 --l 1",
			verdict: Differs,
			why:     "the same stale Preempt as row L1; corrected in `lmutin`",
		},
		{
			where:   "Lemma 3 (LMUTIN messages)",
			claim:   "3(|N_i|+1) messages per Exit+Entry pair at best, 6(|N_i|+1) at worst",
			result:  fmt.Sprintf("LMUTIN and LMUTEX, every load and |N_i|+1 = %s–%s: %s messages per pair and member (tolerance %s for the runs' ends)", f(sizes[0], 0), f(sizes[len(sizes)-1], 0), span(lm, 2), pct(tol)),
			command: localCmd,
			verdict: verdict(in(lm, 3, 6), DiffersOpen),
		},
		{
			where:   "Theorem 1",
			claim:   "l_i-LMUTIN solves the generalized local (l_i, |N_i|+1)-CS problem with O(Δ) messages",
			result:  fmt.Sprintf("`lmutin` (corrected; Algorithm 2 as published: rows L1–L2): safe and live on every check, no verdict in any run of the local study (requests left pending at the end: row L2); messages per pair grow as |N_i|+1 (per member %s for LMUTIN up to |N_i|+1 = %s)", span(lmutin, 2), f(sizes[len(sizes)-1], 0)),
			command: localCmd,
			verdict: verdict(in(lmutin, 3, 6), DiffersOpen),
		},
		{
			where:   "Theorem 2 (local complementary theorem)",
			claim:   "Co-A for the local (l_i,k_i)-CS problem solves (|N_i|+1−k_i, |N_i|+1−l_i); so Co(LMUTIN) is a k_i-LMUTEX",
			result:  fmt.Sprintf("`lmutex` = Co(LMUTIN) ok on every connected graph of 3 and 4 processes; on the rings LMUTIN (l = 1) and LMUTEX (k = 2) are mirror images and their messages per pair differ by at most %s %% over the four loads (tolerance 2 %%)", f(100*mirror, 2)),
			command: "go test ./alg -run TestLocalSmallGraphs; " + localCmd,
			verdict: verdict(mirror <= 0.02, DiffersOpen),
		},
		{
			where:   "Lemma 4 (LKCS safety)",
			claim:   "l_i ≤ |CS_i| ≤ k_i for every P_i at any time",
			result:  "no bound broken: `lkcs` on every check (bowtie, wheel:5 at budget 1 complete; larger ones explored to 10⁹ states) and every simulation; `lkcs-paper`'s failures are deadlocks, undefined steps and starvation, never a bound",
			command: "critsec check --alg lkcs --topology alg/testdata/bowtie.edges --l 0 --k 3 --budget 1 --search dfs --deadlock-states 5000000",
			verdict: Reproduced,
		},
		{
			where:   "Lemma 5 (LKCS liveness), as published",
			claim:   "every process changes state infinitely often: the leader's Trigger breaks any deadlock",
			result:  fmt.Sprintf("`lkcs-paper` deadlocks on the bowtie, the smallest graph its assumptions allow (32 steps): TriggerNomination tests |grantedTo| one below the limits its grants reach when all wait, so no Trigger is sent. In the local study its sidetrack fired %s times in %d runs. Step through the deadlock: [viz/lkcs-paper-deadlock.html](viz/lkcs-paper-deadlock.html)", f(ptriggers, 0), pn),
			command: "critsec check --alg lkcs-paper --topology alg/testdata/bowtie.edges --l 0 --k 3 --budget 1 --search dfs",
			verdict: verdict(false, Differs),
			why:     "the pseudo-code's conditions are one below the proof's (|grantedTo[MUTIN]| = |N_LDR| − l_LDR, |grantedTo[MUTEX]| = k_LDR − 1); with the proof's conditions three sidetracks at once break a bound (design/lkcs-fix.md, \"What the repairs that failed taught\")",
		},
		{
			where: "Lemma 5 (LKCS liveness), its proof",
			claim: "every process changes state infinitely often, on every graph with a leader of |N_LDR| ≥ 4 and k − l ≥ 3 near it",
			result: "the proof argues only about a deadlock of every process (\"V = D\"), not one process starving while others move. " +
				"On random:60:0.15:7 with (0,3) the corrected `lkcs` leaves 33 of the 60 processes unable to move (never enter, seeds 1–4, λ = 0.1 and 1). " +
				"An exhaustive search over every algorithm that keeps `lkcs`'s safety invariant with its one-sidetrack rule (one per type, both types only at one holder) freezes exactly those 33 (429 165 states). " +
				"Allowing a MUTEX and a MUTIN sidetrack at two different holders at once, still safe, the same search moves at least 12 of the 33 within 6·10⁵ states and 18 within 3·10⁷ (it does not finish). " +
				"What is shown: Lemma 5 fails for `lkcs` and for any algorithm bound by its one-sidetrack rule; whether some algorithm of the paper's design serves all 60 is not known",
			command: "go test ./alg/lkcs -run 'TestDesignFrozen|TestDesignApart|TestFixedSimulation'",
			verdict: Differs,
			why:     "the proof covers only a global deadlock (V = D), which `lkcs` never reaches; starvation of some processes under the tightened bounds L_i..K_i near a high-degree leader is outside it (design/lkcs-fix.md, \"Starvation on random graphs\")",
		},
		{
			where:   "Lemma 6 (LKCS messages), as published",
			claim:   "6(|N_i|+1) messages per Exit+Entry pair at best, 12(|N_i|+1) at worst",
			result:  fmt.Sprintf("`lkcs-paper` completes only %d of its %d runs of the local study, on %s (the others: %s); there it costs %s messages per pair and member (tolerance %s)", pwhole, pn, strings.Join(pwhere, ", "), brokenText(pbroken), span(paper, 2), pct(tol)),
			command: localCmd,
			verdict: verdict(in(paper, 6, 12), DiffersOpen),
		},
		{
			where:   "Lemma 6, for the correction",
			claim:   "6(|N_i|+1)..12(|N_i|+1) messages per Exit+Entry pair",
			result:  fmt.Sprintf("`lkcs` (ordered acquisition with rollback in place of preemption), %d of %d runs whole: %s per pair and member per run on the tori and complete:16, %s on the random graphs; by neighborhood size (|N_i|+1 = %s–%s) up to %s", fwhole, fn, span(regular, 1), span(random, 1), f(fsizes[0], 0), f(fsizes[len(fsizes)-1], 0), f(worst, 1)),
			command: localCmd,
			verdict: verdict(in(fixed, 6, 12), Differs),
			why:     "requests taken one member at a time are rolled back and retried, and the correction adds Full, Retry, Pass, Return, Done and Blocked; the price is highest where processes of small degree sit within two hops of a high-degree leader. Whether a correction within Lemma 6's bound exists is open: none is known",
		},
		{
			where:   "Theorem 3",
			claim:   "LKCS solves the generalized local (l_i,k_i)-CS problem with O(Δ) messages",
			result:  "published: deadlocks (row L7) and undefined steps; corrected: safe, no deadlock on any check or run; in the local study on the tori and complete:16, " + leftover(d, "lkcs", "torus", "complete") + "; on random:100:0.0808:1 and random:400:0.0201:1, " + leftover(d, "lkcs", "random") + "; but on random:60:0.15:7 with (l, k) = (0, 3), where the leader has 17 neighbors, 33 of the 60 processes starve (row L8), and 50 requests on random:60:0.136:1 with the same bounds",
			command: "go test ./alg/lkcs -run TestFixedSimulation; critsec sim --alg lkcs --topology random:60:0.136:1 --l 0 --k 3 --clamp --lambda 0.1 --entries 3000",
			verdict: Differs,
			why:     "rows L7, L8 and L10",
		},
		{
			where:   "section 5.1 (assumptions)",
			claim:   "a leader with |N_LDR| ≥ 4, and k_q − l_q ≥ 3 at the leader and its neighbors, suffice",
			result:  "the macros L_q = l_q+1, K_q = k_q−1 tighten every process within two hops of the leader, which needs k_q − l_q ≥ 3 there too; `lkcs` refuses a problem without it, naming the process",
			command: "go test ./alg/lkcs -run TestResolve",
			verdict: Differs,
			why:     "the paper states the condition for one hop; its own macros need two",
		},
	}
}
