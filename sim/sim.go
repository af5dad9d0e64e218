// Package sim is critsec's deterministic discrete-event simulator. It runs
// the machines of one CS object (one per process, built with the alg
// registry) under the timing model of Bulgannawar and Vaidya, "A distributed
// K-mutual exclusion algorithm" (ICDCS 1995), section 4, refined from
// Singhal's model:
//
//   - each process OutCS with nothing pending calls Entry after a time
//     drawn from Exp(mean 1/lambda), and Exit after a time InCS with mean E
//     (exponential by default, or constant);
//   - each node's processor does one thing at a time: receiving a message
//     costs Tr, then the machine handles it; every message copy the machine
//     sends costs Ts, copies leaving one after another (no hardware
//     multicast); Entry and Exit calls also run on the processor (their
//     sends cost Ts each, the call itself nothing); work that finds the
//     processor busy waits in a FIFO input queue;
//   - a copy spends Tt in transit (constant by default, or exponential);
//     links are FIFO unless Config.Unordered.
//
// A machine call is atomic at the moment it runs: its state change happens
// then, and its sends leave at now+Ts, now+2Ts, ... Events are kept in a
// binary heap ordered by (time, sequence number), so ties break the same
// way every run, and every random draw comes from one PCG generator seeded
// by Config.Seed: a configuration and a seed fix the run, its Result and
// its trace byte for byte.
//
// The safety property (Config.Property: the global bounds lo <= #InCS <= hi,
// or every neighborhood's) is checked after every event (at every reported
// state change and crash) with an incremental property.Tracker; a property
// with an exit guard (property.FaultTolerantGlobal) is also checked after
// every completed exit (S2 of docs/ft-global-lk-cs.md, with the detector
// plan's outputs as the reports and the crashes as they happen), and the
// run measures the deficit each crash leaves and how long it lasts
// (Result.CrashStats). Together with this, the run checks the invocation
// convention seen from the caller: a machine may not refuse a call the
// workload makes under the convention, return an error for a message, or
// report a state change that does not match its State(). The first
// violation stops the run (Result.Violation). If no event is left while a
// request is pending and the run was not stopping, the run is deadlocked.
// At the end of the run, a request pending for longer than a bound while
// others completed requests is a starvation, and requests pending while
// messages circulate with no state change for as long are a livelock
// (verdict.go); the drain is bounded in simulated time and in events, and
// a drain cut short says so (Result.DrainCut). A drain that ends with no
// event left while a request that no bound holds is pending is a deadlock,
// unless a starvation was seen up to the stop: verdict.go gives the order.
//
// Memory does not grow with simulated time: waiting times go to fixed-size
// log-linear histograms (quantiles within HistRelErr), and the queues hold
// only the messages in transit and the work not yet done. docs/performance.md
// has the measured speed.
//
// Use:
//
//	ms, _ := raymond.New(cs.Params{N: 10, K: 3})
//	prop, _ := property.Global(10, 0, 3)
//	res, err := sim.Run(sim.Config{Machines: ms, Property: prop, Lambda: 0.1, E: 1, Tt: 1, Entries: 3000, Seed: 1})
//	if err != nil { ... }              // bad configuration
//	if res.Violation != nil { ... }    // safety, convention or deadlock
//	fmt.Println(res.MessagesPerEntry())
package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/metrics"
	"slices"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/detector"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// Kinds of violations: the trace format's, as the model checker's are.
const (
	// KindBounds: a bound of the property broke; the detail names it.
	KindBounds = trace.KindBounds
	// KindConvention: a machine refused an Entry or Exit made under the
	// invocation convention, or reported a state change that does not match
	// its request or its State().
	KindConvention = trace.KindConvention
	// KindError: a machine returned an error from Receive or Suspect, or
	// sent to a process that does not exist.
	KindError = trace.KindError
	// KindDeadlock: no event is left while some request is pending.
	KindDeadlock = trace.KindDeadlock
	// KindFencing: a fencing property broke (Config.Fencing).
	KindFencing = trace.KindFencing
	// KindStarvation: at the end of the run, a request has been pending
	// for longer than the starvation bound (Result.StarveBound), and other
	// processes completed requests after it passed the bound.
	KindStarvation = trace.KindStarvation
	// KindLivelock: at the end of the run, requests are pending and no
	// process has changed state for longer than the starvation bound, yet
	// messages were delivered all that time.
	KindLivelock = trace.KindLivelock
)

// Why a run stopped (Result.Stop).
const (
	StopEntries   = "entries"   // Config.Entries entries completed
	StopMaxTime   = "max-time"  // Config.MaxTime reached
	StopViolation = "violation" // Result.Violation is set
	StopIdle      = "idle"      // no event left and nothing pending (every process crashed), or only exits an exit guard requires to wait
	StopMemory    = "memory"    // the heap reached Config.MaxHeap: the run is incomplete
)

// Result is what a run measured. Counts cover the whole run, the drain
// included.
type Result struct {
	// Stop says why the run ended: StopEntries, StopMaxTime,
	// StopViolation or StopIdle. Drained reports that the run then went on
	// without new Entry calls until no event was left (Config.Drain).
	Stop    string
	Drained bool
	// DrainCut, when not empty, says why the drain stopped before no event
	// was left: it reached its limit in simulated time (Config.DrainTime)
	// or in events (Config.DrainEvents). A cut drain with no violation is
	// an incomplete run: its counts are not those of whole requests.
	DrainCut string
	// StarveBound is the starvation bound the run was judged with
	// (Config.StarveAfter, or the bound derived from its waiting times).
	StarveBound float64
	// Starved counts the requests that waited longer than StarveBound
	// while the others progressed, when the verdict is a starvation (the
	// named one included); 0 otherwise.
	Starved int
	// Violation is the first violation, or nil.
	Violation *Violation
	// Entries and Exits count completed state changes to InCS and OutCS.
	Entries, Exits int64
	// Messages and Words count message copies sent and their sizes
	// (cs.Message.Words); Delivered counts copies handled by their
	// receivers, Dropped those that arrived at a crashed process, InFlight
	// those still in transit or queued at the end.
	Messages, Words, Delivered, Dropped, InFlight int64
	// Pending is the number of live processes with a request not completed
	// at the end; PendingExits of them wait to exit. After a drain that ran
	// out of events (with or without a verdict), or at a deadlock violation
	// with no event left, Unheld counts the pending
	// requests that no bound holds, taken together: how many of them
	// could complete one after another, oldest request first, each
	// keeping every neighborhood within its bounds, with no other process
	// changing state (property.Tracker.Completable). Requests that compete
	// for the same slack count once: two exits with room for one count 1.
	// For a global problem a drain with Unheld > 0 ends in a deadlock
	// violation, or in a starvation seen up to the stop (verdicts); for a
	// local one they are reported here.
	Pending, PendingExits, Unheld int
	// PendingWaitMax is the longest time a pending request of a live
	// process had waited at the end (EndTime minus its request's time; 0
	// when none is pending).
	PendingWaitMax float64
	// EntryWait and ExitWait are the waiting times of completed Entry and
	// Exit requests.
	EntryWait, ExitWait Waits
	// InCSTime[c] is the fraction of simulated time during which exactly c
	// processes were InCS (c = 0..n); MinInCS and MaxInCS are the extremes
	// observed, the initial configuration included.
	InCSTime         []float64
	MinInCS, MaxInCS int
	// EntriesAtCrash[c] is the number of CS entries completed when the
	// (c+1)-th crash happened, in the order of the crashes: Entries minus
	// its last element is the number of entries after the last crash.
	EntriesAtCrash []int64
	// CrashStats describes every crash, in order, when the property has an
	// exit guard (property.CrashBounds); nil otherwise.
	CrashStats []CrashStat
	// DeficitExits counts the exits after which the configuration had a
	// deficit (under an exit guard): S2 lets an exit count a crash its
	// exiter has not been told of, so a crash that left no deficit can
	// still lead to one, which CrashStats, measured from the crash, does
	// not see.
	DeficitExits int64
	// Events is the number of events taken from the queue; EndTime the
	// simulated time at the end.
	Events  int64
	EndTime float64
}

// Undecided counts the requests pending at the end of a run that ended
// with no verdict: none of them had waited longer than StarveBound at the
// stop of the workload, and none completed. Without a drain they may yet
// complete; after one, they wait for a call the drain does not make (a
// bound holds them, or, in a local problem, they are Unheld:
// docs/experiments.md, "Which verdict"). A run with a violation, a cut
// drain or a memory stop (incomplete), or one that stopped idle (what
// pends then is an exit an exit guard holds) has none.
func (r *Result) Undecided() int {
	if r.Violation != nil || r.DrainCut != "" || r.Stop == StopMemory || r.Stop == StopIdle {
		return 0
	}
	return r.Pending
}

// MessagesPerEntry is Messages / Entries (0 without entries).
func (r *Result) MessagesPerEntry() float64 { return ratio(float64(r.Messages), float64(r.Entries)) }

// WordsPerEntry is Words / Entries (0 without entries).
func (r *Result) WordsPerEntry() float64 { return ratio(float64(r.Words), float64(r.Entries)) }

// Throughput is CS entries per unit of simulated time.
func (r *Result) Throughput() float64 { return ratio(float64(r.Entries), r.EndTime) }

// MeanInCS is the time-weighted mean number of processes InCS.
func (r *Result) MeanInCS() float64 {
	m := 0.0
	for c, f := range r.InCSTime {
		m += float64(c) * f
	}
	return m
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// CrashStat is what a run measured of one crash under an exit guard
// (docs/ft-global-lk-cs.md, R).
type CrashStat struct {
	// Node crashed at time At; InCS reports whether it was InCS then.
	Node cs.ID
	At   float64
	InCS bool
	// Deficit is property.CrashBounds.Deficit just after the crash:
	// how many live processes InCS the configuration lacks to reach
	// min(l, live).
	Deficit int
	// Recovered reports whether, for a crash of a process InCS, a
	// configuration without a deficit came after it (or the crash left
	// none), and Recovery is the time from the crash to the first such
	// configuration (0 when the crash left no deficit). A crash of a
	// process OutCS creates no deficit and has neither.
	Recovered bool
	Recovery  float64
}

// Violation is the first failed check of a run.
type Violation struct {
	// Kind is KindBounds, KindConvention, KindError, KindDeadlock,
	// KindStarvation or KindLivelock.
	Kind string
	// Time is the simulated time; Event says what was happening, e.g.
	// "P3 received REPLY from P5" or "P2 called entry".
	Time  float64
	Event string
	// Detail is one line saying what failed.
	Detail string
	// Who, Since and Bound state a starvation or a livelock in numbers,
	// as the trace's verdict carries them (trace.Claim): for a
	// starvation, the starved process, the time of its request and the
	// starvation bound; for a livelock, the time of the last state change
	// and the time without one that made it a livelock (Who is 0). They
	// are zero for the other kinds.
	Who          cs.ID
	Since, Bound float64
	// InCS lists the live processes InCS at that moment, in id order.
	InCS []cs.ID
}

// Error is the one-line report.
func (v *Violation) Error() string {
	return fmt.Sprintf("%s violation at t=%g (%s): %s; InCS: %v", v.Kind, v.Time, v.Event, v.Detail, v.InCS)
}

// job is work waiting for a node's processor: a message (msg != nil), or a
// local call: op Entry or Exit, or Suspect(who) or Trust(who) when op is
// None.
type job struct {
	msg   cs.Message
	from  int32
	who   int32
	op    cs.Op
	trust bool // the detector input is Trust(who), not Suspect(who)
}

// maxIdleJobs is the largest input-queue buffer an idle node keeps.
const maxIdleJobs = 64

// node is one process: its machine, what the runtime knows of it, and its
// processor.
type node struct {
	m   cs.Machine
	det cs.Detecting // m, when it takes detector input
	// state is the top-level state the machine last reported; pending the
	// request the workload made and the machine has not completed, since
	// reqTime, when reqEntries CS entries had been completed.
	state      cs.State
	pending    cs.Op
	reqTime    float64
	reqEntries int64
	// busy is when the processor finishes the sends of its last call;
	// running reports that an evHandle is scheduled for jobs[head].
	busy    float64
	running bool
	crashed bool
	jobs    []job
	head    int
}

// engine is one run. Each machine call records its effects in eff (the
// shared recording cs.Env), which the engine then acts on: cur is the node
// being run and clock its processor time, which each send advances by Ts.
type engine struct {
	cfg   *Config
	n     int
	nodes []node // index 1..n
	q     queue
	rng   *rand.Rand
	tw    *trace.Writer
	now   float64
	clock float64
	cur   int32
	// what is being handled, for violation reports
	curKind uint8
	curFrom int32
	curMsg  cs.Message
	curOp   cs.Op
	inCS    int // live processes InCS, for the statistics
	safety  *property.Tracker
	// guard is the property's exit guard (nil without one), reports what
	// the detector modules have reported, and open the indices of the
	// crashes in res.CrashStats whose deficit has not closed yet.
	guard      *property.CrashBounds
	reports    *detector.Reports
	open       []int
	fences     *property.Fences // Config.Fencing, else nil
	overMemory bool             // the heap passed Config.MaxHeap (checked every 2^12 messages sent)
	eff        cs.Effects
	lastChange float64
	inCSTime   []float64
	// lastArrival[link] is the arrival time of the last copy sent on link
	// (from-1)*n+(to-1), kept only when FIFO needs clamping (exponential
	// transit) and only for links whose last copy may still be in transit
	// (pruneArrivals): memory follows the messages in flight, not n².
	lastArrival map[int64]float64
	pruneAt     int
	stopping    bool
	done        bool
	// The drain and the verdicts at the end (verdict.go): stopAt is the
	// time the workload stopped, and stopEvents, stopEntries and stopState
	// the events, the CS entries and the time of the last state change by
	// then; lastState is the time of the last state change and delivered
	// the messages delivered by then (a livelock delivers more after it,
	// until lastDeliver);
	// starve is the starvation bound once known.
	stopAt      float64
	stopEvents  int64
	stopEntries int64
	stopState   float64
	lastState   float64
	delivered   int64
	lastDeliver float64 // the time of the last message delivered
	starve      float64
	cutQuiet    float64 // the drain's time limit, when it cut the drain
	stuck       string  // a drain's deadlock, for verdicts to judge
	entryW      hist
	exitW       hist
	res         Result
}

// Run simulates cfg and returns what it measured. The error reports an
// invalid configuration only; violations are in Result.Violation.
func Run(cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := newEngine(&cfg)
	e.loop()
	e.verdicts()
	if v := e.res.Violation; v != nil && e.tw != nil {
		// The header went out before the run: the trace ends with what it
		// demonstrates, for trace check to confirm.
		e.tw.Verdict(e.now, trace.Claim{Kind: v.Kind, Detail: v.Detail, Who: v.Who, Since: v.Since, Bound: v.Bound})
	}
	return e.finish(), nil
}

func newEngine(cfg *Config) *engine {
	n := len(cfg.Machines)
	e := &engine{
		cfg:      cfg,
		n:        n,
		nodes:    make([]node, n+1),
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0xc417_5ec5)),
		tw:       cfg.Trace,
		inCSTime: make([]float64, n+1),
		entryW:   newHist(),
		exitW:    newHist(),
	}
	if cfg.transitDist() == Exp && !cfg.Unordered {
		e.lastArrival = map[int64]float64{}
		e.pruneAt = minPrune
	}
	for i, m := range cfg.Machines {
		nd := &e.nodes[i+1]
		nd.m = m
		nd.det, _ = m.(cs.Detecting)
		nd.state = m.State()
		if nd.state == cs.InCS {
			e.inCS++
		}
	}
	e.res.MinInCS, e.res.MaxInCS = e.inCS, e.inCS
	var f *property.Failure
	if e.guard = cfg.Property.ExitGuard(); e.guard != nil {
		e.reports = detector.NewReports(cfg.detector())
	}
	if e.safety, f = property.NewTracker(cfg.Property, e); f != nil {
		e.fail(KindBounds, "the initial configuration breaks the property: "+f.Error())
		return e
	}
	if e.guard != nil {
		if f := e.guard.Initial(e); f != nil {
			e.fail(KindBounds, "the initial configuration breaks the property: "+f.Error())
			return e
		}
	}
	if cfg.Fencing {
		_, k := cfg.Property.GlobalBounds()
		e.fences = property.NewFences(k)
		for i, m := range cfg.Machines {
			if m.State() == cs.InCS {
				f := m.(cs.Fencing).Fence()
				e.fences.Enter(cs.ID(i+1), f.Seq, true, f.Crashed.Members())
			}
		}
	}
	for id := int32(1); int(id) <= n; id++ {
		e.scheduleWorkload(id)
	}
	for _, c := range cfg.Crashes {
		e.q.push(event{t: c.At, kind: evCrash, node: int32(c.Node)})
	}
	e.planDetector()
	return e
}

// planDetector schedules every output of the processes' failure detectors
// (detector.Plan, drawn from a generator of its own so that the workload's
// draws do not depend on the detector). Every process has a detector; the
// trace records its outputs, and the machines that take detector input
// get them.
func (e *engine) planDetector() {
	if len(e.cfg.Crashes) == 0 && e.cfg.Detector == 0 {
		return // P outputs nothing without crashes
	}
	crashAt := make([]float64, e.n+1)
	for id := range crashAt {
		crashAt[id] = math.Inf(1)
	}
	for _, c := range e.cfg.Crashes {
		crashAt[c.Node] = c.At
	}
	r := rand.New(rand.NewPCG(e.cfg.Seed, 0xde7ec7))
	for _, o := range detector.Plan(e.cfg.detector(), crashAt, e.cfg.DetectDelay, r) {
		kind := evDetect
		if o.Trust {
			kind = evTrust
		}
		e.q.push(event{t: o.At, kind: kind, node: int32(o.Node), from: int32(o.Who)})
	}
}

// scheduleWorkload schedules node id's next call: Exit after its time InCS,
// or Entry after its time OutCS (none once the run is stopping).
func (e *engine) scheduleWorkload(id int32) {
	if e.nodes[id].state == cs.InCS {
		d := e.cfg.E
		if e.cfg.csDist() == Exp {
			d *= e.rng.ExpFloat64()
		}
		e.q.push(event{t: e.now + d, kind: evTimer, node: id, op: cs.Exit})
		return
	}
	if e.stopping {
		return
	}
	e.q.push(event{t: e.now + e.rng.ExpFloat64()/e.cfg.Lambda, kind: evTimer, node: id, op: cs.Entry})
}

func (e *engine) loop() {
	maxT := e.cfg.MaxTime
	for e.q.len() > 0 && !e.done {
		if maxT > 0 && !e.stopping && e.q.peek().t > maxT {
			e.res.Stop = StopMaxTime
			e.stop(maxT)
			if !e.cfg.Drain {
				e.now = maxT
				return
			}
		}
		if e.stopping && e.drainCut() {
			return
		}
		ev := e.q.pop()
		e.now = ev.t
		e.res.Events++
		if e.res.Events&(1<<16-1) == 0 && e.cfg.Progress != nil {
			e.cfg.Progress(Progress{Events: e.res.Events, Entries: e.res.Entries, Time: e.now})
		}
		if e.overMemory {
			e.res.Stop = StopMemory
			return
		}
		switch ev.kind {
		case evArrive:
			nd := &e.nodes[ev.node]
			if nd.crashed {
				e.q.takeMsg(&ev)
				e.res.Dropped++
				continue
			}
			nd.jobs = append(nd.jobs, job{msg: e.q.takeMsg(&ev), from: ev.from})
			if !nd.running {
				e.drive(ev.node)
			}
		case evHandle:
			nd := &e.nodes[ev.node]
			nd.running = false
			if nd.crashed {
				continue
			}
			e.runHead(ev.node)
			e.drive(ev.node)
		case evTimer:
			e.timer(ev.node, ev.op)
		case evCrash:
			e.crash(ev.node)
		case evDetect, evTrust:
			nd := &e.nodes[ev.node]
			if nd.crashed {
				continue
			}
			trust := ev.kind == evTrust
			switch {
			case e.reports == nil:
			case trust:
				e.reports.Trust(cs.ID(ev.node), cs.ID(ev.from))
			default:
				e.reports.Suspect(cs.ID(ev.node), cs.ID(ev.from))
			}
			if e.tw != nil && trust {
				e.tw.Trust(e.now, cs.ID(ev.node), cs.ID(ev.from))
			} else if e.tw != nil {
				e.tw.Suspect(e.now, cs.ID(ev.node), cs.ID(ev.from))
			}
			if nd.det == nil {
				continue
			}
			nd.jobs = append(nd.jobs, job{who: ev.from, trust: trust})
			if !nd.running {
				e.drive(ev.node)
			}
		}
	}
	if e.done {
		return
	}
	// No event left. Without a drain the workload always schedules one for
	// a process with nothing pending, so every live process waits for
	// ever. After a drain (no new entries), a pending request of a global
	// problem is stuck unless the bounds hold it: an exit waiting for an
	// entry that will not come (the lower bound), an entry waiting for an
	// exit (the upper bound). For a local problem the drain's pending
	// requests are reported (Result.Pending, Result.Unheld), not judged:
	// the local paper's liveness (Kamei and Kakugawa 2017, Definition 1,
	// Lemma 2) assumes that every OutCS process eventually enters again,
	// and l_i-LMUTIN can leave an exit that no bound holds waiting for
	// such an entry (docs/design/lmutin-fix.md, "Exits that no bound holds
	// after a drain").
	// Under an exit guard, an exit pending while at most l processes are
	// live waits as the specification requires (docs/ft-global-lk-cs.md,
	// I3), with or without a drain.
	judge, blocked := e.judge(), e.exitsBlocked()
	for id := 1; id <= e.n; id++ {
		nd := &e.nodes[id]
		if nd.crashed || nd.pending == cs.None || blocked && nd.pending == cs.Exit {
			continue
		}
		if e.stopping && (!e.cfg.Property.IsGlobal() || judge.Blocks(cs.ID(id), nd.pending == cs.Entry)) {
			continue
		}
		if e.stopping {
			// Judged by verdicts, after a starvation seen up to the stop.
			e.stuck = fmt.Sprintf("the drain ended with no event left and no bound holding it while P%d's %s request (made at t=%g) is pending", id, nd.pending, nd.reqTime)
			return
		}
		e.curKind = 0
		e.fail(KindDeadlock, fmt.Sprintf("no event left while P%d's %s request (made at t=%g) is pending", id, nd.pending, nd.reqTime))
		return
	}
	if !e.stopping {
		e.res.Stop = StopIdle
	}
}

// stop stops the workload at time t: no new Entry calls from now on (the
// drain, when Config.Drain, which the trace marks).
func (e *engine) stop(t float64) {
	e.stopping, e.stopAt, e.stopEvents = true, t, e.res.Events
	e.stopEntries, e.stopState = e.res.Entries, e.lastState
	e.starve = e.starveBound()
	if e.tw != nil && e.cfg.Drain {
		e.tw.Drain(t)
	}
}

// timer is the workload's call: the request starts now; the call itself
// runs when the processor is free.
func (e *engine) timer(id int32, op cs.Op) {
	nd := &e.nodes[id]
	if nd.crashed || (op == cs.Entry && e.stopping) {
		return
	}
	nd.pending, nd.reqTime, nd.reqEntries = op, e.now, e.res.Entries
	if e.tw != nil {
		e.tw.Request(e.now, cs.ID(id), op)
	}
	nd.jobs = append(nd.jobs, job{op: op})
	if !nd.running {
		e.drive(id)
	}
}

// drive runs node id's queued jobs while its processor is free now, and
// schedules an evHandle for the first one that must wait (the processor is
// busy sending, or a message needs its receive overhead Tr).
func (e *engine) drive(id int32) {
	nd := &e.nodes[id]
	for nd.head < len(nd.jobs) && !e.done {
		t := max(e.now, nd.busy)
		if nd.jobs[nd.head].msg != nil {
			t += e.cfg.Tr
		}
		if t > e.now {
			nd.running = true
			e.q.push(event{t: t, kind: evHandle, node: id})
			return
		}
		e.runHead(id)
	}
}

// runHead takes the job at the head of node id's input queue and runs it.
func (e *engine) runHead(id int32) {
	nd := &e.nodes[id]
	j := nd.jobs[nd.head]
	nd.jobs[nd.head] = job{}
	nd.head++
	if nd.head == len(nd.jobs) {
		// Empty: reuse the buffer, unless a burst made it large; dropping
		// it keeps memory at the current backlog, not the largest ever.
		if cap(nd.jobs) > maxIdleJobs {
			nd.jobs = nil
		}
		nd.jobs, nd.head = nd.jobs[:0], 0
	} else if nd.head >= 64 && nd.head*2 >= len(nd.jobs) {
		k := copy(nd.jobs, nd.jobs[nd.head:])
		clear(nd.jobs[k:])
		nd.jobs, nd.head = nd.jobs[:k], 0
	}
	e.cur, e.clock = id, e.now
	e.curFrom, e.curMsg, e.curOp = j.from, j.msg, j.op
	var in cs.Input
	switch {
	case j.msg != nil:
		e.curKind = evArrive
		e.res.Delivered++
		e.lastDeliver = e.now
		if e.tw != nil {
			e.tw.Recv(e.now, cs.ID(id), cs.ID(j.from), j.msg.Kind())
		}
		in = cs.Deliver(cs.ID(j.from), j.msg)
	case j.op != cs.None:
		e.curKind = evTimer
		in = cs.Call(j.op)
	case j.trust:
		e.curKind, e.curFrom = evTrust, j.who
		in = cs.Input{Kind: cs.InTrust, Who: cs.ID(j.who)}
	default:
		e.curKind, e.curFrom = evDetect, j.who
		in = cs.Input{Kind: cs.InSuspect, Who: cs.ID(j.who)}
	}
	err := e.eff.Step(nd.m, in)
	for _, f := range e.eff.List {
		if f.IsSend() {
			e.send(f.To, f.Msg)
		} else {
			e.changed(f.State)
		}
	}
	e.eff.Reset()
	nd.busy = e.clock
	if e.res.Violation != nil {
		return
	}
	switch {
	case err != nil && j.msg == nil && j.op != cs.None:
		e.fail(KindConvention, fmt.Sprintf("P%d refused %s: %v", id, j.op, err))
	case err != nil:
		kind := KindError
		if errors.Is(err, cs.ErrConvention) {
			kind = KindConvention
		}
		e.fail(kind, err.Error())
	case nd.m.State() != nd.state:
		e.fail(KindConvention, fmt.Sprintf("P%d is %s but reported %s last", id, nd.m.State(), nd.state))
	}
}

// send acts on a send of the machine being run: the copy leaves after Ts
// more of the processor's time and arrives after its transit time.
func (e *engine) send(to cs.ID, m cs.Message) {
	if e.res.Violation != nil {
		return
	}
	if to < 1 || int(to) > e.n {
		e.fail(KindError, fmt.Sprintf("P%d sent %s to P%d, which is not a participant (ids 1..%d)", e.cur, m.Kind(), to, e.n))
		return
	}
	w := m.Words()
	e.res.Messages++
	if e.cfg.MaxHeap > 0 && e.res.Messages&(1<<12-1) == 0 && heapBytes() > e.cfg.MaxHeap {
		e.overMemory = true // the loop stops before the next event
	}
	e.res.Words += int64(w)
	if e.tw != nil {
		e.tw.Send(e.now, cs.ID(e.cur), to, m.Kind(), w)
	}
	e.clock += e.cfg.Ts
	t := e.clock + e.cfg.Tt
	if e.cfg.transitDist() == Exp {
		t = e.clock + e.cfg.Tt*e.rng.ExpFloat64()
		if e.lastArrival != nil {
			link := int64(e.cur-1)*int64(e.n) + int64(to-1)
			if l, ok := e.lastArrival[link]; ok {
				t = max(t, l)
			}
			e.lastArrival[link] = t
			if len(e.lastArrival) >= e.pruneAt {
				e.pruneArrivals()
			}
		}
	}
	e.q.pushMsg(event{t: t, kind: evArrive, node: int32(to), from: e.cur}, m)
}

// heapBytes is the memory of the heap's live and not yet collected objects
// (runtime/metrics, without stopping the world).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// minPrune is the smallest size of lastArrival at which it is pruned.
const minPrune = 1024

// pruneArrivals forgets the links whose last copy has arrived (an arrival
// time not after now): a later copy on such a link departs after now and
// needs no clamping. The next prune comes when the map has doubled, so the
// cost is amortized O(1) per send. Which entries go does not depend on the
// map's order, so runs stay deterministic.
func (e *engine) pruneArrivals() {
	for link, t := range e.lastArrival {
		if t <= e.now {
			delete(e.lastArrival, link)
		}
	}
	e.pruneAt = max(minPrune, 2*len(e.lastArrival))
}

// changed acts on a state change of the machine being run, its new
// top-level state. It checks the report against the pending request,
// records the waiting time, checks the bounds and schedules the workload's
// next call.
func (e *engine) changed(s cs.State) {
	if e.res.Violation != nil {
		return
	}
	id := e.cur
	nd := &e.nodes[id]
	want := cs.InCS
	if nd.pending == cs.Exit {
		want = cs.OutCS
	}
	if nd.pending == cs.None || s != want {
		e.fail(KindConvention, fmt.Sprintf("P%d reported %s while %s with request %s pending", id, s, nd.state, nd.pending))
		return
	}
	e.account()
	nd.state, nd.pending = s, cs.None
	e.lastState, e.delivered = e.now, e.res.Delivered
	if s == cs.InCS {
		e.inCS++
		e.res.Entries++
		e.entryW.add(e.now - nd.reqTime)
	} else {
		e.inCS--
		e.res.Exits++
		e.exitW.add(e.now - nd.reqTime)
	}
	var tok cs.Fence
	if e.fences != nil && s == cs.InCS {
		tok = nd.m.(cs.Fencing).Fence()
	}
	switch {
	case e.tw == nil:
	case e.fences != nil && s == cs.InCS:
		e.tw.Entered(e.now, cs.ID(id), trace.FenceOf(tok))
	default:
		e.tw.State(e.now, cs.ID(id), s)
	}
	if !e.checkBounds(id, s == cs.InCS) {
		return
	}
	if e.guard != nil && s == cs.OutCS {
		if f := e.guard.AfterExit(cs.ID(id), e); f != nil {
			e.fail(KindBounds, f.Error())
			return
		}
		if e.guard.Deficit(e) > 0 {
			e.res.DeficitExits++
		}
	}
	if s == cs.InCS {
		e.recovered()
	}
	if e.fences != nil {
		var f *property.FenceFailure
		if s == cs.InCS {
			f = e.fences.Enter(cs.ID(id), tok.Seq, true, tok.Crashed.Members())
		} else {
			f = e.fences.Exit(cs.ID(id))
		}
		if f != nil {
			e.fail(KindFencing, f.Error())
			return
		}
	}
	e.scheduleWorkload(id)
	if s == cs.InCS && e.res.Entries == e.cfg.Entries && !e.stopping {
		e.res.Stop = StopEntries
		e.stop(e.now)
		e.done = !e.cfg.Drain
	}
}

// crash stops node id for good.
func (e *engine) crash(id int32) {
	nd := &e.nodes[id]
	if nd.crashed {
		return
	}
	e.cur, e.curKind = id, evCrash
	nd.crashed = true
	e.res.EntriesAtCrash = append(e.res.EntriesAtCrash, e.res.Entries)
	e.res.Dropped += e.countQueuedMessages(nd)
	nd.jobs, nd.head = nil, 0
	if e.tw != nil {
		e.tw.Crash(e.now, cs.ID(id))
	}
	if e.fences != nil {
		e.fences.Crash(cs.ID(id))
	}
	if nd.state == cs.InCS {
		e.account()
		e.inCS--
		if !e.checkBounds(id, false) {
			return
		}
	}
	if e.guard != nil {
		st := CrashStat{Node: cs.ID(id), At: e.now, InCS: nd.state == cs.InCS, Deficit: e.guard.Deficit(e)}
		e.res.CrashStats = append(e.res.CrashStats, st)
		if st.InCS {
			e.open = append(e.open, len(e.res.CrashStats)-1)
		}
		// A crash can also close a deficit: min(l, live) falls with live.
		e.recovered()
	}
}

// recovered closes the recovery of every crash still open when the
// configuration has no deficit: entries and crashes can end one, exits
// cannot.
func (e *engine) recovered() {
	if len(e.open) == 0 || e.guard.Deficit(e) > 0 {
		return
	}
	for _, i := range e.open {
		st := &e.res.CrashStats[i]
		st.Recovered, st.Recovery = true, e.now-st.At
	}
	e.open = e.open[:0]
}

// exitsBlocked reports whether the property has an exit guard and at most
// l processes are live: every pending exit then waits as the
// specification requires (property.CrashBounds.ExitsBlocked), and is
// neither stuck nor starved.
func (e *engine) exitsBlocked() bool { return e.guard != nil && e.guard.ExitsBlocked(e) }

// judge returns the tracker that says which pending requests a bound holds
// at the end of a drain: the property's own, or under an exit guard the
// global bounds l..k (property.CrashBounds.DrainTracker).
func (e *engine) judge() *property.Tracker {
	if e.guard == nil {
		return e.safety
	}
	return e.guard.DrainTracker(e)
}

// Crashed implements property.CrashView: id has crashed.
func (e *engine) Crashed(id cs.ID) bool { return e.nodes[id].crashed }

// CrashedInCS implements property.CrashView: id crashed while InCS (its
// state is frozen at the crash).
func (e *engine) CrashedInCS(id cs.ID) bool {
	nd := &e.nodes[id]
	return nd.crashed && nd.state == cs.InCS
}

// Reported implements property.CrashView: i's detector module has
// reported j's crash (detector.Reports on the plan's outputs so far).
func (e *engine) Reported(i, j cs.ID) bool { return e.reports.Reported(i, j) }

func (e *engine) countQueuedMessages(nd *node) int64 {
	var c int64
	for _, j := range nd.jobs[nd.head:] {
		if j.msg != nil {
			c++
		}
	}
	return c
}

// account adds the time since the last change of #InCS to its bucket.
func (e *engine) account() {
	e.inCSTime[e.inCS] += e.now - e.lastChange
	e.lastChange = e.now
}

// checkBounds records the extremes of #InCS, tells the property that
// process id now counts as InCS or not (in), and stops the run when a bound
// breaks.
func (e *engine) checkBounds(id int32, in bool) bool {
	e.res.MinInCS = min(e.res.MinInCS, e.inCS)
	e.res.MaxInCS = max(e.res.MaxInCS, e.inCS)
	if f := e.safety.Set(cs.ID(id), in); f != nil {
		e.fail(KindBounds, f.Error())
		return false
	}
	return true
}

// InCS implements property.View for the initial configuration: process id
// is live and InCS.
func (e *engine) InCS(id cs.ID) bool {
	nd := &e.nodes[id]
	return !nd.crashed && nd.state == cs.InCS
}

// fail records the first violation and stops the run.
func (e *engine) fail(kind, detail string) {
	if e.res.Violation != nil {
		return
	}
	v := &Violation{Kind: kind, Time: e.now, Event: e.describe(), Detail: detail}
	for id := 1; id <= e.n; id++ {
		if nd := &e.nodes[id]; !nd.crashed && nd.m.State() == cs.InCS {
			v.InCS = append(v.InCS, cs.ID(id))
		}
	}
	e.res.Violation = v
	e.res.Stop = StopViolation
	e.done = true
}

// describe names the event being handled.
func (e *engine) describe() string {
	switch e.curKind {
	case evArrive:
		return fmt.Sprintf("P%d received %s from P%d", e.cur, e.curMsg.Kind(), e.curFrom)
	case evTimer:
		return fmt.Sprintf("P%d called %s", e.cur, e.curOp)
	case evDetect:
		return fmt.Sprintf("P%d began to suspect P%d", e.cur, e.curFrom)
	case evTrust:
		return fmt.Sprintf("P%d began to trust P%d", e.cur, e.curFrom)
	case evCrash:
		return fmt.Sprintf("P%d crashed", e.cur)
	}
	if e.now == 0 && e.res.Events == 0 {
		return "start"
	}
	return "end of events"
}

// oldestFirst returns the pending requests of processes ids, oldest first
// (ties by id): the order in which Result.Unheld lets them complete.
func (e *engine) oldestFirst(ids []int32) []property.Change {
	slices.SortStableFunc(ids, func(a, b int32) int { return cmp.Compare(e.nodes[a].reqTime, e.nodes[b].reqTime) })
	reqs := make([]property.Change, len(ids))
	for i, id := range ids {
		reqs[i] = property.Change{ID: cs.ID(id), In: e.nodes[id].pending == cs.Entry}
	}
	return reqs
}

// finish completes and returns a copy of the result (a pointer into the
// engine would keep the whole run reachable).
func (e *engine) finish() *Result {
	res := e.res
	r := &res
	r.Drained = e.stopping && e.cfg.Drain && r.Violation == nil && r.DrainCut == ""
	e.account()
	r.EndTime = e.now
	if e.now > 0 {
		r.InCSTime = make([]float64, len(e.inCSTime))
		for c, t := range e.inCSTime {
			r.InCSTime[c] = t / e.now
		}
	} else {
		r.InCSTime = make([]float64, len(e.inCSTime))
		r.InCSTime[e.inCS] = 1
	}
	for _, ev := range e.q.ev {
		if ev.kind == evArrive {
			r.InFlight++
		}
	}
	// A deadlock found with no event left is as quiet as a drain's end, and
	// so is a drain that ran out of events before a starvation verdict.
	quiet := r.Violation != nil && e.q.len() == 0 && (r.Violation.Kind == KindDeadlock || e.cfg.Drain && e.stopping && r.DrainCut == "")
	var pending []int32
	for id := 1; id <= e.n; id++ {
		nd := &e.nodes[id]
		if nd.crashed {
			continue
		}
		r.InFlight += e.countQueuedMessages(nd)
		if nd.pending != cs.None {
			r.Pending++
			pending = append(pending, int32(id))
			r.PendingWaitMax = max(r.PendingWaitMax, e.now-nd.reqTime)
		}
		if nd.pending == cs.Exit {
			r.PendingExits++
		}
	}
	if r.Drained || quiet {
		r.Unheld = len(e.judge().Completable(e.oldestFirst(pending)))
	}
	r.EntryWait, r.ExitWait = e.entryW.waits(), e.exitW.waits()
	return r
}
