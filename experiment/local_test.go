package experiment

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/critsec/critsec/internal/causal"
	"github.com/critsec/critsec/sim"
)

// smallLocal is a local study small enough for -short: every algorithm
// of the default list on three graphs, light and heavy, two seeds.
func smallLocal(t *testing.T) ([]Run, []Outcome) {
	t.Helper()
	light, _ := ParseLocalLoad("light")
	heavy, _ := ParseLocalLoad("heavy")
	all, err := LocalRuns(LocalStudy{
		Algs:       []string{"lmutin", "lmutex", "lkcs-paper"},
		Topologies: []string{"ring:12", "torus:4x4", "complete:6"},
		Loads:      []LocalLoad{light, heavy}, Seeds: []uint64{1, 2}, EntriesPerProcess: 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	runs, skips := Applicable(all)
	// LKCS's leader needs 4 neighbors: the ring has none.
	if len(skips) != 1 || skips[0].Alg != "lkcs-paper" || skips[0].Topology != "ring:12" || !strings.Contains(skips[0].Reason, "leader") {
		t.Fatalf("skips: %+v", skips)
	}
	if want := 3*3*2*2 - 2*2; len(runs) != want {
		t.Fatalf("%d runs, want %d", len(runs), want)
	}
	outs, err := SimulateAll(runs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	return runs, outs
}

func csvOf(t *testing.T, tab *Table) string {
	t.Helper()
	var b bytes.Buffer
	if err := tab.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLocalStudyDeterministic: the study's tables are the same byte for
// byte on a second run with other workers, and lkcs-paper's breakdowns are
// rows with their stop reason, not errors; attributed messages add up to
// the simulator's count in every run, per process and per kind.
func TestLocalStudyDeterministic(t *testing.T) {
	runs, outs := smallLocal(t)
	again, err := SimulateAll(runs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []func([]Outcome) *Table{LocalRunTable, LocalSizeTable, LocalWaitTable} {
		if a, b := csvOf(t, f(outs)), csvOf(t, f(again)); a != b {
			t.Fatalf("two runs differ:\n%s\n%s", a, b)
		}
	}
	broken := 0
	for _, o := range outs {
		var sum, byKind int64
		for i, m := range o.Counts.Messages {
			sum += m
			for _, c := range o.Counts.ByKind[i] {
				byKind += c
			}
		}
		if sum != o.Result.Messages || byKind != o.Result.Messages {
			t.Errorf("%s: %d messages attributed (%d by kind) of %d", o.Run.describe(), sum, byKind, o.Result.Messages)
		}
		if !whole(o) {
			broken++
			if o.Run.Alg != "lkcs-paper" || o.Result.Stop != sim.StopViolation {
				t.Errorf("%s: stopped by %s (%v)", o.Run.describe(), o.Result.Stop, o.Result.Violation)
			}
		}
	}
	if broken == 0 {
		t.Error("lkcs-paper never broke: the study no longer shows the published algorithm's deadlock")
	}
	if rows := csvOf(t, LocalRunTable(outs)); !strings.Contains(rows, ",violation,") {
		t.Errorf("no run row gives its violation:\n%s", rows)
	}
}

// TestLocalMessagesWithinLemma3: over every whole run, the messages lie
// within Lemma 3's 3..6 per pair and member of N_i ∪ {P_i} for lmutin and
// lmutex, and Lemma 6's 6..12 for lkcs-paper, up to the run's two ends.
// With W = Σ_i pairs_i·(|N_i|+1) and S = Σ_i (|N_i|+1): every completed
// request gets |N_i|+1 Grants (attributed to someone), and pairs_i =
// max(entries, exits) counts a lone first Entry or last Exit as a pair, so
// LMUTIN's messages are at least 3W - 2S (a pair short of one half: its
// Releases, or its Requests and Grants) and LKCS's at least 6W - 3S; a
// request pending at the end adds at most one worst-case half pair, hi·S.
func TestLocalMessagesWithinLemma3(t *testing.T) {
	_, outs := smallLocal(t)
	for _, o := range outs {
		if !whole(o) {
			continue
		}
		lo, hi, ends := 3.0, 6.0, 2.0
		if o.Run.Alg == "lkcs-paper" {
			lo, hi, ends = 6, 12, 3
		}
		var w, s float64
		for i, size := range o.Sizes {
			w += float64(o.Counts.Pairs(id(i)) * int64(size))
			s += float64(size)
		}
		r, _, _ := memberRatio(o)
		if r < lo-ends*s/w || r > hi+hi*s/w {
			t.Errorf("%s: %.3f messages per pair and member, outside %v..%v (ends: %.3f)", o.Run.describe(), r, lo, hi, s/w)
		}
	}
}

// TestLocalPseudoCodeCount: on ring:12 with l_i = 0 (lmutin) and
// k_i = |N_i|+1 = 3 (lmutex = Co(LMUTIN) with inner l_i = 0), every
// process's pairs cost exactly 3(|N_i|+1) = 9 messages, at light and at
// heavy load. Derivation from Algorithms 1-2: P_j hands out at most
// |N_j| - l_j + 1 = |N_j|+1 grants, one per member of N_j ∪ {P_j}, and a
// member's grant comes back (Release, FIFO) before its next Request, so
// every Request finds a free grant: no Preempt, no Relinquish, no Grant
// sent on a Release. An Exit sends a Request to each of the 3 members and
// gets their 3 Grants (attributed to it); an Entry sends 3 Releases. With
// nobody InCS at the start and the drain ending every process OutCS,
// entries = exits = pairs, so the count is 3·3 per pair, for each process.
func TestLocalPseudoCodeCount(t *testing.T) {
	for _, r := range []Run{
		{Label: "lmutin", Alg: "lmutin", L: 0},
		{Label: "lmutex", Alg: "lmutex", K: 3},
	} {
		for _, lambda := range []float64{1 / 12000.0, 1} {
			r.Topology, r.N, r.Links = "ring:12", 12, 12
			r.Lambda, r.E = lambda, 1/lambda
			r.Common = Common{Entries: 240, Seed: 3}
			o, err := r.Simulate()
			if err != nil {
				t.Fatal(err)
			}
			if o.Result.Pending != 0 || o.Result.Entries < 240 {
				t.Fatalf("%s: %d pending, %d entries", r.describe(), o.Result.Pending, o.Result.Entries)
			}
			for i, m := range o.Counts.Messages {
				p := o.Counts.Pairs(id(i))
				if o.Counts.Entries[i] != o.Counts.Exits[i] || m != 9*p || p == 0 {
					t.Errorf("%s: P%d: %d messages for %d pairs (%d entries, %d exits), want 9 a pair", r.describe(), i+1, m, p, o.Counts.Entries[i], o.Counts.Exits[i])
				}
			}
		}
	}
}

// TestLocalSizeTable: the per-size table sums the whole runs' processes
// of each size, and the bounds are Lemma 3's and Lemma 6's.
func TestLocalSizeTable(t *testing.T) {
	_, outs := smallLocal(t)
	tab := LocalSizeTable(outs)
	col := func(name string) int {
		c, err := tab.Column(name)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	size, procs, lo, hi := col("size"), col("processes"), col("paper_lo"), col("paper_hi")
	seen := 0
	for i, r := range tab.Rows {
		alg, load := tab.Labels[i], tab.Tags[i][0]
		want := map[string]float64{"lmutin": 3, "lmutex": 3, "lkcs-paper": 6}[alg]
		if r[lo] != want*r[size] || r[hi] != 2*want*r[size] {
			t.Errorf("%s size %v: bounds %v..%v", alg, r[size], r[lo], r[hi])
		}
		// ring:12 has 12 processes of size 3, two seeds: 24.
		if alg == "lmutin" && r[size] == 3 {
			seen++
			if r[procs] != 24 {
				t.Errorf("lmutin %s size 3: %v processes, want 24", load, r[procs])
			}
		}
	}
	if seen != 2 {
		t.Errorf("lmutin size 3 in %d rows, want 2 (light, heavy)", seen)
	}
}

// TestLocalRunTableCountsTriggers: the sidetrack columns count the
// Trigger and RequestByTrigger messages of every process, per 1000
// entries.
func TestLocalRunTableCountsTriggers(t *testing.T) {
	c := &causal.Counts{
		Messages: []int64{5, 4}, Entries: []int64{1000, 1000}, Exits: []int64{1000, 1000},
		ByKind: []map[string]int64{{"Trigger": 3, "Request": 2}, {"Trigger": 1, "RequestByTrigger": 3}},
	}
	o := Outcome{Run: Run{Label: "lkcs", Topology: "path:2", N: 2}, Counts: c, Sizes: []int{2, 2},
		Result: &sim.Result{Stop: sim.StopEntries, Entries: 2000, Messages: 9}}
	tab := LocalRunTable([]Outcome{o})
	for name, want := range map[string]float64{"triggers": 4, "requests_by_trigger": 3, "triggers_per_1000_entries": 2, "pairs": 2000} {
		c, err := tab.Column(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.Rows[0][c]; got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// TestLocalRunTableUndecided: a run that ends with requests pending and
// no verdict counts them undecided, with their longest wait and the bound
// beside it; a starved run counts the requests its verdict counted as
// starved, none undecided.
func TestLocalRunTableUndecided(t *testing.T) {
	c := &causal.Counts{Messages: []int64{0}, Entries: []int64{1}, Exits: []int64{1}, ByKind: []map[string]int64{{}}}
	run := func(res *sim.Result) map[string]float64 {
		tab := LocalRunTable([]Outcome{{Run: Run{Label: "lmutin", Topology: "path:1", N: 1}, Counts: c, Sizes: []int{1}, Result: res}})
		got := map[string]float64{}
		for _, name := range []string{"pending_wait_max_time_units", "starve_bound_time_units", "undecided_requests", "starved_requests"} {
			col, err := tab.Column(name)
			if err != nil {
				t.Fatal(err)
			}
			got[name] = tab.Rows[0][col]
		}
		return got
	}
	ok := &sim.Result{Stop: sim.StopEntries, Entries: 10, Pending: 3, PendingWaitMax: 40, StarveBound: 200}
	if got, want := run(ok), map[string]float64{"pending_wait_max_time_units": 40, "starve_bound_time_units": 200, "undecided_requests": 3, "starved_requests": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("undecided run: %v, want %v", got, want)
	}
	starved := &sim.Result{Stop: sim.StopEntries, Entries: 10, Pending: 3, PendingWaitMax: 250, StarveBound: 200, Starved: 2,
		Violation: &sim.Violation{Kind: sim.KindStarvation}}
	if got, want := run(starved), map[string]float64{"pending_wait_max_time_units": 250, "starve_bound_time_units": 200, "undecided_requests": 0, "starved_requests": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("starved run: %v, want %v", got, want)
	}
}

// TestLocalStarveAfter: the study's bound reaches every run. lkcs on
// random:100:0.0808:1 at heavy load leaves an exit pending 23 288 time
// units while the others make 3612 entries: undecided under the derived
// bound (69 024, longer than the run), starved under 5000.
func TestLocalStarveAfter(t *testing.T) {
	heavy, _ := ParseLocalLoad("heavy")
	for _, c := range []struct {
		bound   float64
		starved bool
	}{{0, false}, {5000, true}} {
		runs, err := LocalRuns(LocalStudy{Algs: []string{"lkcs"}, Topologies: []string{"random:100:0.0808:1"}, Loads: []LocalLoad{heavy},
			Seeds: []uint64{1}, EntriesPerProcess: 100, StarveAfter: c.bound})
		if err != nil {
			t.Fatal(err)
		}
		outs, err := SimulateAll(runs, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := outs[0].Result
		if got := res.Violation != nil && res.Violation.Kind == sim.KindStarvation; got != c.starved {
			t.Errorf("bound %v: starved %v (violation %v, bound used %v), want %v", c.bound, got, res.Violation, res.StarveBound, c.starved)
		}
		if c.bound > 0 && res.StarveBound != c.bound {
			t.Errorf("bound %v: the run was judged with %v", c.bound, res.StarveBound)
		}
	}
}

func TestLocalTopology(t *testing.T) {
	for _, c := range []struct {
		family string
		n      int
		want   string
	}{
		{"ring", 100, "ring:100"}, {"torus", 100, "torus:10x10"}, {"torus", 400, "torus:20x20"},
		{"torus", 60, "torus:6x10"}, {"grid", 14, "grid:2x7"}, {"wheel", 9, "wheel:9"},
		{"random", 400, "random:400:0.0201:1"}, {"random", 5, "random:5:1:1"}, {"complete", 16, "complete:16"},
	} {
		if got, err := LocalTopology(c.family, c.n); err != nil || got != c.want {
			t.Errorf("%s at %d: %q, %v; want %q", c.family, c.n, got, err, c.want)
		}
	}
	for _, c := range []struct {
		family string
		n      int
	}{{"torus", 7}, {"torus", 8}, {"grid", 13}, {"hypercube", 8}} {
		if got, err := LocalTopology(c.family, c.n); err == nil {
			t.Errorf("%s at %d: %q accepted", c.family, c.n, got)
		}
	}
}

func TestParseLocalLoad(t *testing.T) {
	for s, want := range map[string]LocalLoad{
		"light": {Name: "light"}, "heavy": {Name: "heavy", Lambda: 1}, "1": {Name: "heavy", Lambda: 1},
		"0.01": {Name: "0.01", Lambda: 0.01}, "1e-2": {Name: "0.01", Lambda: 0.01},
	} {
		if got, ok := ParseLocalLoad(s); !ok || got != want {
			t.Errorf("%q: %+v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "0", "-1", "NaN", "Inf", "1e13", "medium"} {
		if got, ok := ParseLocalLoad(s); ok {
			t.Errorf("%q accepted as %+v", s, got)
		}
	}
	l, _ := ParseLocalLoad("light")
	if lambda, e := l.workload(400); lambda != 1/400000.0 || math.Abs(e-400000) > 1e-6 {
		t.Errorf("light at n = 400: lambda %v, E %v", lambda, e)
	}
}

func TestMeanCI(t *testing.T) {
	// 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303: 4.303/√3.
	if m, h := MeanCI([]float64{1, 2, 3}); m != 2 || math.Abs(h-4.303/math.Sqrt(3)) > 1e-12 {
		t.Errorf("1,2,3: %v ± %v", m, h)
	}
	if m, h := MeanCI([]float64{5}); m != 5 || !math.IsNaN(h) {
		t.Errorf("5: %v ± %v", m, h)
	}
	if m, h := MeanCI(nil); !math.IsNaN(m) || !math.IsNaN(h) {
		t.Errorf("none: %v ± %v", m, h)
	}
	// 40 equal values: no spread, and the table's last quantile is used.
	xs := make([]float64, 40)
	if m, h := MeanCI(xs); m != 0 || h != 0 {
		t.Errorf("zeros: %v ± %v", m, h)
	}
}
