package alg

import (
	"fmt"

	"github.com/critsec/critsec/alg/gcs"
	"github.com/critsec/critsec/alg/kmutex"
	"github.com/critsec/critsec/alg/maekawa"
	"github.com/critsec/critsec/alg/mutin"
	"github.com/critsec/critsec/alg/raymond"
	"github.com/critsec/critsec/cs"
	idealmx "github.com/critsec/critsec/ideal"
)

// The global (l,k)-CS family of Kamei and Kakugawa (2019): MUTIN(l)
// (Algorithms 1-2), k-mutual exclusion as Co(MUTIN(n-k)) (Theorem 1) and
// (l,k)-GCS (Algorithm 3). The plain names run mutin.Fixed, which forwards
// every Release to an outstanding Query; the "-paper" names run Algorithms
// 1-2 as published, which can deadlock (docs/design/mutin-fix.md).
//
// mx, the mutual-exclusion object inside each MUTIN, is by default
// Maekawa's algorithm on the same coterie, as in the paper (section 3.4,
// Lemma 8), in its corrected variant (maekawa.Fixed) for the "-paper" names
// too: they isolate the published MUTIN's own gap, not Maekawa's
// (docs/maekawa.md). The option mx=ra puts Ricart-Agrawala there instead
// (Raymond's algorithm with k = 1: 2(n-1) messages, no coterie), and gcs's
// option kmex=raymond replaces Co(MUTIN(n-k)) by Raymond's k-mutex.
func init() {
	for _, v := range []mutin.Variant{mutin.Fixed, mutin.Paper} {
		suffix, note := variant(v == mutin.Paper, "may deadlock")
		registry = append(registry,
			Algorithm{
				Name:     mutin.Name + suffix,
				Summary:  "l-mutual inclusion MUTIN(l)" + note + ", at least l InCS, O(|Q|) messages (Kamei-Kakugawa 2019, Algorithms 1-2)",
				Quorums:  true,
				UsesL:    true,
				FixedK:   func(n int) int { return n },
				Property: globalBounds,
				// Processes 1..l InCS: the fewest MUTIN(l) allows.
				DefaultInitial: firstL,
				Options:        []Option{mxOption},
				New:            func(p cs.Params) ([]cs.Machine, error) { return mutin.New(p, mutinOptions(p, v)) },
				Decoder:        mutinDecoder,
				ProcessBytes:   mutinBytes,
			},
			Algorithm{
				Name:     kmutex.Name + suffix,
				Summary:  "k-mutual exclusion as Co(MUTIN(n-k))" + note + " (Kamei-Kakugawa 2019, Theorem 1)",
				Quorums:  true,
				Property: globalBounds,
				// No process InCS, as usual for mutual exclusion.
				DefaultInitial: none,
				Options:        []Option{mxOption},
				New:            func(p cs.Params) ([]cs.Machine, error) { return kmutex.New(p, mutinOptions(p, v)) },
				// Co(MUTIN(n-k)) sends MUTIN's messages.
				Decoder:      mutinDecoder,
				ProcessBytes: kmutexBytes,
			},
			Algorithm{
				Name:     gcs.Name + suffix,
				Summary:  "global (l,k)-CS, at least l and at most k InCS" + note + " (Kamei-Kakugawa 2019, Algorithm 3)",
				Quorums:  true,
				UsesL:    true,
				Property: globalBounds,
				// Processes 1..l InCS: the minimum, like l servers kept
				// running; the first exits wait for an entry.
				DefaultInitial: firstL,
				Options:        []Option{mxOption, kmexOption},
				New:            func(p cs.Params) ([]cs.Machine, error) { return gcs.New(p, gcsOptions(v)) },
				Decoder:        gcsDecoder,
				ProcessBytes:   gcsBytes,
			},
		)
	}
}

// The choices of the mx and kmex options.
const (
	mxMaekawa = "maekawa"  // Maekawa's algorithm, as in the paper
	mxRA      = "ra"       // Ricart-Agrawala: Raymond's algorithm with k = 1
	kmexCo    = "co-mutin" // Co(MUTIN(n-k)), as in the paper
	kmexRaym  = "raymond"  // Raymond's k-mutual exclusion
	// ideal is the child's specification (package ideal), for
	// compositional model checking only: Problem.Abstract sets it, the
	// options' choices do not offer it.
	ideal = "ideal"
)

// mxOption chooses the mutual-exclusion object inside MUTIN.
var mxOption = Option{
	Name:    "mx",
	Help:    "the mutual-exclusion object inside MUTIN (Kamei-Kakugawa 2019, section 3.4)",
	Kind:    Choice,
	Default: mxMaekawa,
	Choices: []string{mxMaekawa, mxRA},
}

// kmexOption chooses the k-mutual exclusion object inside (l,k)-GCS.
var kmexOption = Option{
	Name:    "kmex",
	Help:    "the k-mutual exclusion object inside (l,k)-GCS (Kamei-Kakugawa 2019, Algorithm 3)",
	Kind:    Choice,
	Default: kmexCo,
	Choices: []string{kmexCo, kmexRaym},
}

// mutinOptions builds MUTIN's options for variant v from p's mx option.
func mutinOptions(p cs.Params, v mutin.Variant) mutin.Options {
	o := mutin.Options{Mx: maekawa.New, Variant: v}
	switch p.Options.String(mxOption.Name) {
	case mxRA:
		o.Mx = func(q cs.Params) ([]cs.Machine, error) {
			return raymond.New(cs.Params{N: q.N, K: 1})
		}
	case ideal:
		o.Mx = func(q cs.Params) ([]cs.Machine, error) {
			return idealmx.New(cs.Params{N: q.N, K: 1})
		}
	}
	return o
}

// gcsOptions builds the children of (l,k)-GCS for MUTIN variant v; each
// child reads its options from the parameters it is built with.
func gcsOptions(v mutin.Variant) gcs.Options {
	return gcs.Options{
		Lmin: func(p cs.Params) ([]cs.Machine, error) { return mutin.New(p, mutinOptions(p, v)) },
		Kmex: func(p cs.Params) ([]cs.Machine, error) {
			switch k := p.Options.String(kmexOption.Name); k {
			case kmexRaym:
				return raymond.New(cs.Params{N: p.N, K: p.K, Initial: p.Initial})
			case kmexCo:
				return kmutex.New(p, mutinOptions(p, v))
			case ideal:
				return idealmx.New(cs.Params{N: p.N, K: p.K, Initial: p.Initial})
			default:
				return nil, fmt.Errorf("kmex = %q: choose co-mutin or raymond", k)
			}
		},
	}
}

// mutinDecoder decodes the messages of MUTIN with the mx of p's options,
// as mutinOptions builds it.
func mutinDecoder(p cs.Params) cs.Decoder {
	mx := maekawa.Decode
	if p.Options.String(mxOption.Name) == mxRA {
		mx = raymond.Decode
	}
	return mutin.Decoder(p.N, mx)
}

// gcsDecoder decodes the messages of (l,k)-GCS with the children of p's
// options, as gcsOptions builds them.
func gcsDecoder(p cs.Params) cs.Decoder {
	kmex := mutinDecoder(p)
	if p.Options.String(kmexOption.Name) == kmexRaym {
		kmex = raymond.Decode
	}
	return gcs.Decoder(mutinDecoder(p), kmex)
}

// mutinBytes is the size of a MUTIN machine: a few sets of n bits and its
// mx child.
func mutinBytes(p cs.Params) int64 {
	mx := maekawaBytes(p)
	if p.Options.String(mxOption.Name) == mxRA {
		mx = raymondBytes(p)
	}
	return 384 + 3*int64(p.N)/4 + mx
}

// kmutexBytes is the size of a Co(MUTIN(n-k)) machine.
func kmutexBytes(p cs.Params) int64 { return mutinBytes(p) + 128 }

// gcsBytes is the size of a (l,k)-GCS machine: its two children.
func gcsBytes(p cs.Params) int64 {
	kmex := kmutexBytes(p)
	if p.Options.String(kmexOption.Name) == kmexRaym {
		kmex = raymondBytes(p)
	}
	return mutinBytes(p) + kmex + 128
}

// firstL returns processes 1..l.
func firstL(p cs.Params) ([]cs.ID, error) {
	ids := make([]cs.ID, p.L)
	for i := range ids {
		ids[i] = cs.ID(i + 1)
	}
	return ids, nil
}
