package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// Dist is a probability distribution of a duration with a given mean.
type Dist uint8

const (
	// Exp is the exponential distribution (memoryless; Singhal's and the
	// token K-mutex paper's model of request arrivals).
	Exp Dist = iota + 1
	// Const is the constant duration equal to the mean.
	Const
)

// String returns "exp" or "const" (the CLI's names).
func (d Dist) String() string {
	switch d {
	case Exp:
		return "exp"
	case Const:
		return "const"
	}
	return "default"
}

// ParseDist reads "exp" or "const".
func ParseDist(s string) (Dist, error) {
	switch s {
	case "exp":
		return Exp, nil
	case "const":
		return Const, nil
	}
	return 0, fmt.Errorf("%q is not a distribution: choose exp or const", s)
}

// Config describes one simulation run. Times are in the same (arbitrary)
// unit; the token K-mutex paper's section 4 uses Tt = 0.8 or 1 and
// Ts = Tr = 0.1 or 0.
//
// The zero value of every optional field is the paper's model: exponential
// time InCS, constant transit time, per-link FIFO delivery.
type Config struct {
	// Machines are processes 1..n in order (Machines[i].Self() == i+1), in
	// their initial state (built with the alg registry). Run drives them
	// in place.
	Machines []cs.Machine
	// MaxHeap, when not 0, stops the run (Result.Stop = StopMemory) once
	// the heap holds more than this many bytes, checked every 2^12 messages
	// sent:
	// messages in flight can outgrow the machines (Raymond under heavy load
	// keeps O(n²) of them), and a run that stops with a reason beats one the
	// operating system kills.
	MaxHeap uint64
	// Progress, when set, is called every 2^16 events with the run so
	// far. It only observes: results do not depend on it.
	Progress func(Progress)
	// Property is the safety property checked after every event (crashed
	// processes do not count); its N must be the number of machines.
	Property *property.Property
	// Fencing also checks the fencing properties after every event
	// (property.Fences; docs/fencing.md), with k the property's upper
	// bound, and writes each entry's token in the trace. Every machine
	// must implement cs.Fencing and the property must be global.
	Fencing bool

	// Lambda is the request rate: a process OutCS with nothing pending
	// calls Entry after a time drawn from Exp(mean 1/Lambda). Must be > 0.
	Lambda float64
	// E is the mean time a process stays InCS before it calls Exit
	// (the paper's E), drawn from CSDist.
	E float64
	// CSDist is the distribution of the time InCS; zero means Exp.
	CSDist Dist

	// Ts is the processor time a node spends per message copy it sends,
	// Tr per message it receives; Tt is the mean transit time of a message
	// between two nodes (the paper's T_s, T_r, T_t).
	Ts, Tr, Tt float64
	// TransitDist is the distribution of the transit time; zero means
	// Const (the paper's model).
	TransitDist Dist
	// Unordered drops per-link FIFO order: each copy's transit time is
	// drawn on its own and a later message may overtake an earlier one on
	// the same link (the fault-tolerant k-mutex paper's channels). Useful
	// with TransitDist = Exp; with constant transit, links stay FIFO.
	// When false (the default), a copy never arrives before an earlier copy
	// on the same link: its arrival is delayed to that copy's if needed.
	Unordered bool

	// Entries stops the run at the Entries-th completed CS entry; MaxTime
	// at that simulated time (before handling a later event). Zero means no
	// limit; at least one must be set.
	Entries int64
	MaxTime float64
	// Drain changes what stopping means: instead of ending at once, the
	// workload stops calling Entry and the run continues until no event is
	// left, so every message sent is delivered and every request that can
	// complete does (an Exit is still called after each CS). Every message
	// counted then belongs to a completed request, which makes messages per
	// CS entry exact rather than biased by requests cut off at the end.
	Drain bool
	// DrainTime and DrainEvents bound the drain: it is cut (Result.DrainCut)
	// when no state change has happened for DrainTime time units since the
	// later of the stop and the last state change, or after DrainEvents
	// events. Zero means the defaults: the starvation bound
	// (Result.StarveBound), and the events of the run before the stop, at
	// least MinDrainEvents.
	DrainTime   float64
	DrainEvents int64
	// StarveAfter is the starvation bound: at the end of the run, a request
	// pending for longer than this many time units while other processes
	// completed requests after it passed the bound is a starvation
	// violation, and requests pending while messages circulate with no
	// state change for as long are a livelock. Zero means StarveFactor
	// times the longest waiting time completed when the workload stops, at
	// least StarveFloor times Tt + Ts + Tr + E.
	StarveAfter float64

	// Seed fixes every random draw (one PCG generator): equal
	// configurations and seeds give identical runs and traces.
	Seed uint64
	// Trace, when not nil, receives every send, recv, request, state,
	// crash and suspect event (the caller writes the header with
	// TraceHeader and flushes the writer).
	Trace *trace.Writer

	// Crashes crash processes at given times (crash-stop): a crashed
	// process takes no further step, messages arriving at it are dropped,
	// messages it sent before are still delivered, and it no longer counts
	// in #InCS (the model checker's semantics, docs/checker.md).
	Crashes []Crash
	// Detector is the class of every process's failure detector
	// (package detector); zero means detector.P. Its outputs follow
	// detector.Plan with detection delay DetectDelay: with P, DetectDelay
	// after a crash every live process suspects the crashed one; T also
	// suspects everybody at time 0 and trusts each live process within
	// DetectDelay; S also suspects live processes falsely for DetectDelay.
	// Each output reaches a live process whose machine implements
	// cs.Detecting as a Suspect or Trust input on its processor (no
	// overhead); machines that do not implement it are not told.
	Detector    detector.Class
	DetectDelay float64
}

// Crash crashes process Node at simulated time At.
type Crash struct {
	At   float64
	Node cs.ID
}

// RandomCrashes draws count distinct processes of 1..n (count in 0..n)
// crashing at times uniform in from..to, from seed alone (a generator of
// its own, so a schedule does not depend on the run's other draws), in
// the order of SortCrashes.
func RandomCrashes(n, count int, from, to float64, seed uint64) []Crash {
	r := rand.New(rand.NewPCG(seed, 0xc7a5))
	nodes := r.Perm(n)[:count]
	out := make([]Crash, count)
	for i, j := range nodes {
		out[i] = Crash{At: from + (to-from)*r.Float64(), Node: cs.ID(j + 1)}
	}
	SortCrashes(out)
	return out
}

// SortCrashes sorts crashes by time, then process id.
func SortCrashes(cr []Crash) {
	slices.SortFunc(cr, func(a, b Crash) int {
		if c := cmp.Compare(a.At, b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.Node, b.Node)
	})
}

// Progress is a snapshot of a run in progress.
type Progress struct {
	// Events taken from the queue, CS entries completed, simulated time.
	Events, Entries int64
	Time            float64
}

// MaxPlanN is the largest n for the detector classes T and S, whose plans
// (detector.Plan) hold about 2n² outputs, 8 million (some 500 MB) at 2000.
const MaxPlanN = 2000

// MaxTime bounds every time of a run (E, Ts, Tr, Tt, MaxTime, crash times)
// and the mean time between requests (1/Lambda): up to 10^12 the float64
// clock still resolves 1.2e-4 time units, 0.01 % of a transit time; far
// beyond, times are lost to rounding and a sum can overflow to +Inf.
const MaxTime = 1e12

// Validate returns an error naming the first bad field, its value and the
// allowed range.
func (c *Config) Validate() error {
	n := len(c.Machines)
	if n == 0 {
		return fmt.Errorf("sim: Machines is empty: need at least one process")
	}
	for i, m := range c.Machines {
		if m == nil || m.Self() != cs.ID(i+1) {
			return fmt.Errorf("sim: Machines[%d] must be process %d", i, i+1)
		}
	}
	if c.Property == nil {
		return fmt.Errorf("sim: Property is nil: give the safety property to check (property.Global, property.Local)")
	}
	if c.Property.N() != n {
		return fmt.Errorf("sim: Property is over %d processes but Machines has %d", c.Property.N(), n)
	}
	if c.Fencing && !c.Property.IsGlobal() {
		return fmt.Errorf("sim: Fencing needs a global property (k-mutual exclusion), not %s", c.Property)
	}
	for i, m := range c.Machines {
		if _, ok := m.(cs.Fencing); c.Fencing && !ok {
			return fmt.Errorf("sim: Fencing: process %d's machine (%T) gives no fencing tokens (cs.Fencing)", i+1, m)
		}
	}
	if !(c.Lambda >= 1/MaxTime) || c.Lambda > MaxTime {
		return fmt.Errorf("sim: Lambda = %v is out of range: need a request rate in %g..%g (a mean time between requests of at most %g)", c.Lambda, 1/MaxTime, MaxTime, MaxTime)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"E", c.E}, {"Ts", c.Ts}, {"Tr", c.Tr}, {"Tt", c.Tt}, {"MaxTime", c.MaxTime}, {"DetectDelay", c.DetectDelay}, {"DrainTime", c.DrainTime}, {"StarveAfter", c.StarveAfter}} {
		if !(f.v >= 0) || f.v > MaxTime {
			return fmt.Errorf("sim: %s = %v is out of range: need a time in 0..%g", f.name, f.v, MaxTime)
		}
	}
	if c.Detector > detector.S {
		return fmt.Errorf("sim: Detector = %d: need detector.P, T or S", c.Detector)
	}
	if (c.Detector == detector.T || c.Detector == detector.S) && n > MaxPlanN {
		return fmt.Errorf("sim: Detector = %v with n = %d: its plan has about 2n² outputs (detector.Plan); use n <= %d, or detector P", c.Detector, n, MaxPlanN)
	}
	if c.CSDist > Const {
		return fmt.Errorf("sim: CSDist = %d: need Exp or Const", c.CSDist)
	}
	if c.TransitDist > Const {
		return fmt.Errorf("sim: TransitDist = %d: need Exp or Const", c.TransitDist)
	}
	if c.DrainEvents < 0 {
		return fmt.Errorf("sim: DrainEvents = %d is out of range: need >= 0 (0: the default)", c.DrainEvents)
	}
	if c.Entries < 0 {
		return fmt.Errorf("sim: Entries = %d is out of range: need >= 0 (0: no limit)", c.Entries)
	}
	if c.Entries == 0 && c.MaxTime == 0 {
		return fmt.Errorf("sim: neither Entries nor MaxTime is set: the run would never stop")
	}
	crashes := make(map[cs.ID]bool, len(c.Crashes))
	for _, cr := range c.Crashes {
		if cr.Node < 1 || int(cr.Node) > n {
			return fmt.Errorf("sim: Crashes: process %d is out of range: ids run from 1 to n = %d", cr.Node, n)
		}
		if crashes[cr.Node] {
			return fmt.Errorf("sim: Crashes: process %d crashes twice: a crash is for good, give each process at most once", cr.Node)
		}
		crashes[cr.Node] = true
		if !(cr.At >= 0) || cr.At > MaxTime {
			return fmt.Errorf("sim: Crashes: time %v for process %d is out of range: need a time in 0..%g", cr.At, cr.Node, MaxTime)
		}
	}
	return nil
}

// TraceHeader completes h (which names the algorithm, n, l, k, the initial
// configuration and any coterie) with what the simulator knows: runtime
// "sim", the bounds, FIFO, the seed, and lambda, E, cs_dist, Ts, Tr, Tt,
// tt_dist, entries, max_time and drain as parameters.
func TraceHeader(c Config, h trace.Header) trace.Header {
	h.Runtime = "sim"
	h.SetProperty(c.Property)
	h.FIFO = !c.Unordered
	h.Seed = c.Seed
	p := map[string]any{
		"lambda": c.Lambda, "E": c.E, "cs_dist": c.csDist().String(),
		"Ts": c.Ts, "Tr": c.Tr, "Tt": c.Tt, "tt_dist": c.transitDist().String(),
		"entries": c.Entries, "max_time": c.MaxTime, "drain": c.Drain,
	}
	if c.Fencing {
		p["fencing"] = true
	}
	if len(c.Crashes) > 0 || c.Detector != 0 {
		p["detect_delay"] = c.DetectDelay
		p["detector"] = c.detector().String()
	}
	for k, v := range h.Params {
		p[k] = v
	}
	h.Params = p
	return h
}

func (c *Config) detector() detector.Class {
	if c.Detector == 0 {
		return detector.P
	}
	return c.Detector
}

func (c *Config) csDist() Dist {
	if c.CSDist == 0 {
		return Exp
	}
	return c.CSDist
}

func (c *Config) transitDist() Dist {
	if c.TransitDist == 0 {
		return Const
	}
	return c.TransitDist
}
