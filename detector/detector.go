// Package detector defines the failure-detector classes critsec's
// fault-tolerant algorithms run on, once for every runtime: which outputs a
// class allows (Class.Allows, what the model checker explores) and a
// timeline of outputs with a detection delay (Plan, what the simulator
// delivers).
//
// A failure detector (Chandra and Toueg 1996) is a module at each process
// that outputs the processes it currently suspects of having crashed; a
// machine that implements cs.Detecting gets the changes of its module's
// output as inputs: Suspect(j) when j enters the list, Trust(j) when j
// leaves it. Crashes are crash-stop. The classes, as section 2 of
// Bouillaguet, Arantes and Sens, "Fault tolerant k-mutual exclusion
// algorithm using failure detector" (2007) states them:
//
//   - P, perfect: strong completeness (every crashed process is eventually
//     suspected for ever by every correct process) and strong accuracy (no
//     process is suspected before it crashes).
//   - T, trusting (Delporte-Gallet, Fauconnier, Guerraoui and Kouznetsov
//     2005): strong completeness, eventual strong accuracy (after some time
//     no correct process is suspected by a correct process) and trusting
//     accuracy (a process suspected by i after i trusted it, i.e. did not
//     suspect it, has crashed). A module may therefore suspect a process it
//     has not trusted yet: critsec's T modules start by suspecting every
//     other process (nobody is trusted before the first output), trust each
//     live one at some time, and suspect it again only after it crashed.
//   - S, strong: strong completeness and weak accuracy (some correct
//     process is never suspected by anyone). Every other process may be
//     suspected falsely and trusted again, any number of times.
//
// P is both T and S; T and S are incomparable.
package detector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/critsec/critsec/cs"
)

// Class is a failure-detector class.
type Class uint8

const (
	// P is the perfect detector.
	P Class = iota + 1
	// T is the trusting detector.
	T
	// S is the strong detector.
	S
)

// String returns "P", "T" or "S", the CLI's and the reports' names.
func (c Class) String() string {
	switch c {
	case P:
		return "P"
	case T:
		return "T"
	case S:
		return "S"
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// Parse reads a class name: P, T or S (lower case too).
func Parse(s string) (Class, error) {
	switch s {
	case "P", "p":
		return P, nil
	case "T", "t":
		return T, nil
	case "S", "s":
		return S, nil
	}
	return 0, fmt.Errorf("%q is not a failure-detector class: choose P (perfect), T (trusting) or S (strong)", s)
}

// InitiallySuspects reports whether a module of class c starts by
// suspecting every other process: true for T (nobody trusted yet), false
// for P and S (nobody suspected).
func (c Class) InitiallySuspects() bool { return c == T }

// Allows reports whether class c lets the module of a live process output
// a change about process j now: trust (j leaves the list) or not (j enters
// it), given whether the module suspects j now, whether j has crashed, and
// (for S) whether j is the witness of weak accuracy, the correct process
// nobody suspects.
//
//   - P: only suspect a crashed process, never trust again;
//   - T: trust a suspected live process (a suspected live process has never
//     been trusted: trusting accuracy), suspect only a crashed one;
//   - S: suspect anyone but the witness, trust a suspected live process.
//
// A suspicion withdrawn from a crashed process would break strong
// completeness (it must be suspected for ever), so no class trusts one.
func (c Class) Allows(trust, suspected, crashed, witness bool) bool {
	if trust {
		return c != P && suspected && !crashed
	}
	if suspected {
		return false
	}
	if c == S {
		return !witness
	}
	return crashed
}

// Output is one output of a module in a timeline: at time At, Node's
// module starts suspecting Who (Trust false) or stops (Trust true).
type Output struct {
	At        float64
	Node, Who cs.ID
	Trust     bool
}

// Plan returns every output of every process's module for a run in which
// process j crashes at crashAt[j] (+Inf: never; index 0 is unused), in
// time order (ties in the order of (Node, Who), suspicion first), with
// detection delay delay:
//
//   - P: i suspects a crashed j at crashAt[j] + delay.
//   - T: i suspects every j at time 0, trusts it at a time drawn uniformly
//     in [0, delay] if j is still live then (a module may suspect a process
//     it has not trusted yet), and suspects it again at crashAt[j] + delay
//     if it crashes after that.
//   - S: the witness is the smallest id that never crashes. For every other
//     j, i suspects j falsely once, from a time drawn uniformly in
//     [0, horizon) for delay time units, horizon = 10·max(delay, 1) + the
//     last crash time; and suspects a crashed j for ever from
//     crashAt[j] + delay (or from the false suspicion the crash falls in).
//
// Outputs for a process that has crashed by then are part of the plan: the
// runtime drops them. The plan takes O(n²) memory for T and S.
func Plan(c Class, crashAt []float64, delay float64, r *rand.Rand) []Output {
	n := len(crashAt) - 1
	var out []Output
	witness := cs.ID(0)
	last := 0.0
	for j := 1; j <= n; j++ {
		if math.IsInf(crashAt[j], 1) {
			if witness == 0 {
				witness = cs.ID(j)
			}
		} else {
			last = max(last, crashAt[j])
		}
	}
	horizon := 10*max(delay, 1) + last
	for i := cs.ID(1); int(i) <= n; i++ {
		for j := cs.ID(1); int(j) <= n; j++ {
			if i == j {
				continue
			}
			cr := crashAt[j]
			detect := Output{At: cr + delay, Node: i, Who: j}
			switch c {
			case P:
				if !math.IsInf(cr, 1) {
					out = append(out, detect)
				}
			case T:
				out = append(out, Output{Node: i, Who: j})
				if at := delay * r.Float64(); at < cr {
					out = append(out, Output{At: at, Node: i, Who: j, Trust: true})
					if !math.IsInf(cr, 1) {
						out = append(out, detect)
					}
				}
			case S:
				if j == witness {
					continue
				}
				from := horizon * r.Float64()
				switch {
				case from >= cr:
					out = append(out, detect)
				case from+delay >= cr: // j crashes while suspected
					out = append(out, Output{At: from, Node: i, Who: j})
				default:
					out = append(out, Output{At: from, Node: i, Who: j}, Output{At: from + delay, Node: i, Who: j, Trust: true})
					if !math.IsInf(cr, 1) {
						out = append(out, detect)
					}
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Output) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	return out
}
