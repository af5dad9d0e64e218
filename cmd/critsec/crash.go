package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/critsec/critsec/check"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/sim"
)

// Crash injection and failure detectors on the command line
// (docs/fault-tolerance.md): `critsec sim --crash ... --detector ...
// --detect-delay ...` and `critsec check --crashes N --detector ...`.

// crashFlags are the fault flags of `critsec sim`.
type crashFlags struct {
	crash       string
	detector    string
	detectDelay float64
}

// defaultDetectDelay is --detect-delay's default: one transit time of the
// default model (Tt = 1).
const defaultDetectDelay = 1

func addSimCrashFlags(fs *pflag.FlagSet, f *crashFlags) {
	fs.StringVar(&f.crash, "crash", "", "crash processes: NODE@TIME,... (e.g. 3@50,7@80), or random:COUNT:FROM:TO (COUNT distinct processes at times uniform in FROM..TO, drawn from --seed); a crashed process stops for good")
	fs.StringVar(&f.detector, "detector", "P", "failure-detector class of every process: P (perfect), T (trusting: suspects everyone until it trusts them within --detect-delay) or S (strong: false suspicions of all but one correct process); given to algorithms that take detector input (ftraymond, ftgcs)")
	fs.Float64Var(&f.detectDelay, "detect-delay", defaultDetectDelay, "time from a crash to its detection at every live process, time units, >= 0 (also T's time to trust and S's false-suspicion length)")
}

// apply parses the fault flags into cfg for n processes; seed draws a
// random crash schedule.
func (f *crashFlags) apply(cfg *sim.Config, n int, seed uint64) error {
	c, err := detector.Parse(f.detector)
	if err != nil {
		return badInput("--detector: %v", err)
	}
	if err := checkTime("detect-delay", f.detectDelay); err != nil {
		return err
	}
	if (c == detector.T || c == detector.S) && n > sim.MaxPlanN {
		return badInput("--detector %v with --n %d: its plan has about 2n² outputs; use n <= %d, or --detector P", c, n, sim.MaxPlanN)
	}
	crashes, err := parseCrashes(f.crash, n, seed)
	if err != nil {
		return badInput("--crash %s: %v", f.crash, err)
	}
	cfg.Crashes, cfg.Detector, cfg.DetectDelay = crashes, c, f.detectDelay
	return nil
}

// maxRandomCrashes bounds COUNT of random:COUNT:FROM:TO before n does.
const maxRandomCrashes = 1 << 20

// parseCrashes reads a crash schedule for processes 1..n: "" (none),
// "NODE@TIME,..." or "random:COUNT:FROM:TO". The crashes come sorted by
// time (then node).
func parseCrashes(s string, n int, seed uint64) ([]sim.Crash, error) {
	if s == "" {
		return nil, nil
	}
	if rest, ok := strings.CutPrefix(s, "random:"); ok {
		return randomCrashes(rest, n, seed)
	}
	var out []sim.Crash
	seen := map[cs.ID]bool{}
	for _, item := range strings.Split(s, ",") {
		node, at, ok := strings.Cut(item, "@")
		if !ok {
			return nil, fmt.Errorf("%q is not NODE@TIME (e.g. 3@50)", item)
		}
		id, err := strconv.Atoi(node)
		if err != nil || id < 1 || id > n {
			return nil, fmt.Errorf("process %q is out of range: ids run from 1 to n = %d", node, n)
		}
		t, err := parseTime(at)
		if err != nil {
			return nil, fmt.Errorf("time %q of P%d: %v", at, id, err)
		}
		if seen[cs.ID(id)] {
			return nil, fmt.Errorf("P%d crashes twice: a crash is for good, name each process at most once", id)
		}
		seen[cs.ID(id)] = true
		out = append(out, sim.Crash{At: t, Node: cs.ID(id)})
	}
	sim.SortCrashes(out)
	return out, nil
}

// parseTime reads a time in 0..sim.MaxTime.
func parseTime(s string) (float64, error) {
	t, err := strconv.ParseFloat(s, 64)
	if err != nil || !(t >= 0) || t > sim.MaxTime {
		return 0, fmt.Errorf("need a time in 0..%g", sim.MaxTime)
	}
	return t, nil
}

// randomCrashes reads COUNT:FROM:TO and draws COUNT distinct processes
// crashing at times uniform in FROM..TO, from seed.
func randomCrashes(s string, n int, seed uint64) ([]sim.Crash, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return nil, fmt.Errorf("want random:COUNT:FROM:TO (e.g. random:4:10:500)")
	}
	count, err := strconv.Atoi(f[0])
	if err != nil || count < 1 || count > min(n, maxRandomCrashes) {
		return nil, fmt.Errorf("COUNT %q is out of range: need 1..n = %d", f[0], n)
	}
	from, err := parseTime(f[1])
	if err != nil {
		return nil, fmt.Errorf("FROM %q: %v", f[1], err)
	}
	to, err := parseTime(f[2])
	if err != nil || to < from {
		return nil, fmt.Errorf("TO %q: need a time in FROM..%g", f[2], sim.MaxTime)
	}
	return sim.RandomCrashes(n, count, from, to, seed), nil
}

// simFaults is the fault part of the sim summary.
type simFaults struct {
	Detector    string       `json:"detector"`
	Planned     int          `json:"planned"`
	DetectDelay float64      `json:"detect_delay"`
	Crashes     []crashEntry `json:"crashes"`
	// EntriesAfterLast counts the CS entries after the last crash.
	EntriesAfterLast int64 `json:"entries_after_last_crash"`
	// Stalled says, plainly, that live processes wait for ever (a
	// deadlock or a livelock), or is empty.
	Stalled string `json:"stalled,omitempty"`
	// MaxDeficit is the largest deficit a crash left, under an exit guard
	// (docs/ft-global-lk-cs.md, R); nil without one.
	MaxDeficit *int `json:"max_deficit,omitempty"`
	// DeficitExits counts the exits that left a deficit (counting a crash
	// their exiter had not been told of), under an exit guard.
	DeficitExits *int64 `json:"deficit_exits,omitempty"`
}

type crashEntry struct {
	Node cs.ID   `json:"node"`
	At   float64 `json:"t"`
	// EntriesBefore counts the CS entries completed before this crash.
	EntriesBefore int64 `json:"entries_before"`
	// Under an exit guard: InCS, whether the process was InCS; Deficit,
	// the deficit just after the crash; for a crash InCS, Recovery, the
	// time until the first configuration without a deficit, or
	// Unrecovered when none came before the end of the run.
	InCS        *bool    `json:"incs,omitempty"`
	Deficit     *int     `json:"deficit,omitempty"`
	Recovery    *float64 `json:"recovery_time,omitempty"`
	Unrecovered bool     `json:"unrecovered,omitempty"`
}

// newSimFaults summarizes the crashes of run r of c, or nil without any.
func newSimFaults(c *sim.Config, r *sim.Result) *simFaults {
	if len(c.Crashes) == 0 {
		return nil
	}
	f := &simFaults{Detector: detectorName(c.Detector), DetectDelay: c.DetectDelay, Planned: len(c.Crashes)}
	for i, at := range r.EntriesAtCrash {
		e := crashEntry{Node: c.Crashes[i].Node, At: c.Crashes[i].At, EntriesBefore: at}
		if i < len(r.CrashStats) {
			st := r.CrashStats[i]
			e.InCS, e.Deficit = &st.InCS, &st.Deficit
			if f.MaxDeficit == nil || st.Deficit > *f.MaxDeficit {
				f.MaxDeficit = &st.Deficit
			}
			switch {
			case st.InCS && st.Recovered:
				e.Recovery = &st.Recovery
			case st.InCS:
				e.Unrecovered = true
			}
		}
		f.Crashes = append(f.Crashes, e)
	}
	if f.MaxDeficit != nil {
		f.DeficitExits = &r.DeficitExits
	}
	if len(f.Crashes) > 0 {
		f.EntriesAfterLast = r.Entries - r.EntriesAtCrash[len(r.EntriesAtCrash)-1]
	}
	if v := r.Violation; v != nil && (v.Kind == sim.KindDeadlock || v.Kind == sim.KindLivelock) {
		f.Stalled = fmt.Sprintf("%d live processes wait forever", r.Pending)
		if r.Pending == 1 {
			f.Stalled = "1 live process waits forever"
		}
		if v.Kind == sim.KindLivelock {
			f.Stalled = strings.Replace(f.Stalled, "forever", "while messages circulate with no state change", 1)
		}
		for i, cr := range f.Crashes {
			if cr.EntriesBefore == r.Entries {
				f.Stalled += fmt.Sprintf(" after the %s crash (P%d at t=%g): no CS entry since", ordinal(i+1), cr.Node, cr.At)
				break
			}
		}
	}
	return f
}

// detectorName is the class's name, P for the zero value.
func detectorName(c detector.Class) string {
	if c == 0 {
		c = detector.P
	}
	return c.String()
}

func ordinal(i int) string {
	suffix := "th"
	switch {
	case i%100 >= 11 && i%100 <= 13:
	case i%10 == 1:
		suffix = "st"
	case i%10 == 2:
		suffix = "nd"
	case i%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(i) + suffix
}

// printSimFaults writes the fault lines of the sim summary.
func printSimFaults(w io.Writer, f *simFaults) {
	if f == nil {
		return
	}
	if f.Stalled != "" {
		fmt.Fprintf(w, "stalled: %s\n", f.Stalled)
	}
	var b strings.Builder
	for i, c := range f.Crashes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "P%d@%.6g", c.Node, c.At)
	}
	fmt.Fprintf(w, "%-22s %d of %d happened (%s); detector %s, delay %g\n", "crashes", len(f.Crashes), f.Planned, b.String(), f.Detector, f.DetectDelay)
	if len(f.Crashes) > 0 {
		fmt.Fprintf(w, "%-22s %d\n", "entries after the last", f.EntriesAfterLast)
	}
	if f.MaxDeficit == nil {
		return
	}
	var rec []string
	for _, c := range f.Crashes {
		switch {
		case c.Recovery != nil:
			rec = append(rec, fmt.Sprintf("P%d %.4g", c.Node, *c.Recovery))
		case c.Unrecovered:
			rec = append(rec, fmt.Sprintf("P%d never", c.Node))
		}
	}
	if len(rec) == 0 {
		rec = []string{"no crash InCS"}
	}
	fmt.Fprintf(w, "%-22s max deficit %d; recovery time of the crashes InCS: %s; %s left a deficit\n", "lower bound", *f.MaxDeficit, strings.Join(rec, ", "), count(*f.DeficitExits, "exit"))
}

// checkFaultFlags are the fault flags of `critsec check`.
type checkFaultFlags struct {
	crashes  int
	detector string
}

func addCheckCrashFlags(fs *pflag.FlagSet, f *checkFaultFlags) {
	fs.IntVar(&f.crashes, "crashes", 0, "how many processes may crash, 0..n (each crash is explored at every step once every process has initialized)")
	fs.StringVar(&f.detector, "detector", "P", "failure-detector class whose every allowed output is explored: P (perfect), T (trusting) or S (strong, P1 never suspected and never crashing)")
}

// config returns the checker's crash budget and detector: no detector
// without crashes unless --detector was given. check.Config.Validate
// refuses a crash budget out of range.
func (f *checkFaultFlags) config(given bool) (int, check.Detector, error) {
	c, err := detector.Parse(f.detector)
	if err != nil {
		return 0, nil, badInput("--detector: %v", err)
	}
	if f.crashes == 0 && !given {
		return 0, nil, nil
	}
	return f.crashes, check.For(c), nil
}
