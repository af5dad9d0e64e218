package alg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/critsec/critsec/coterie"
	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/topology"
)

// Spec is a problem as a user states it, on the command line or in a
// problem file (JSON, ReadSpec). Fields left out take the documented
// defaults; Resolve turns a Spec into a validated Problem. It is the one
// path from user input to machines: the CLI, the experiments and the tests
// all go through it.
type Spec struct {
	// Alg is the algorithm's registry name.
	Alg string `json:"alg"`
	// N is the number of processes.
	N int `json:"n"`
	// L and K are the bounds; nil means the default: l = n/3 (0 for
	// algorithms without a lower bound), k = n - n/3 and more than l (the
	// fixed k of algorithms that have one).
	L *int `json:"l,omitempty"`
	K *int `json:"k,omitempty"`
	// Coterie names the coterie of quorum-based algorithms: "majority",
	// "grid" or a coterie file; "" means DefaultCoterie. It must be "" for
	// the others.
	Coterie string `json:"coterie,omitempty"`
	// Quorums, when set, are Q_1..Q_n given directly instead of by
	// Coterie (which must then be ""); they are validated as a coterie.
	Quorums [][]cs.ID `json:"quorums,omitempty"`
	// Topology is the communication graph of the local algorithms: a spec
	// (ring:6, torus:6x6, random:60:0.1:7, ...) or an edge-list file
	// (package topology). Local algorithms need it and the others refuse
	// it; with it, N may be left out (0), and must otherwise equal the
	// graph's number of processes.
	Topology string `json:"topology,omitempty"`
	// Bounds is a bounds file giving each process its own l_i and k_i
	// (topology.ReadBounds), instead of the uniform L and K; local
	// algorithms only.
	Bounds string `json:"bounds,omitempty"`
	// Clamp, with uniform L and K on a topology, lowers k_i to |N_i|+1 (and
	// l_i to k_i-1) where a neighborhood is smaller than K, instead of
	// refusing the problem.
	Clamp bool `json:"clamp,omitempty"`
	// Initial lists the processes InCS at the start; nil means the
	// algorithm's documented safe configuration, and an empty non-nil list
	// means none.
	Initial []cs.ID `json:"initial,omitempty"`
	// Options are the algorithm's own options by name, as text
	// (Algorithm.Options declares them).
	Options map[string]string `json:"options,omitempty"`
}

// DefaultCoterie is the coterie of quorum-based algorithms when none is
// named: the grid, whose quorums have about 2√n members (coterie.Grid).
const DefaultCoterie = "grid"

// Problem is a resolved, validated problem instance: the algorithm, its
// parameters with every default filled in, and the safety property it
// guarantees, which the runtimes check.
type Problem struct {
	Alg    Algorithm
	Params cs.Params
	// Coterie is the display name of the coterie, "" when the algorithm
	// uses none.
	Coterie string
	// Topology is the communication graph of a local algorithm, nil for
	// the global ones.
	Topology *topology.Graph
	// Property is what the algorithm guarantees for Params.
	Property *property.Property
}

// Machines builds the machines of processes 1..n, in their initial state.
// Each call builds new ones.
func (p *Problem) Machines() ([]cs.Machine, error) {
	ms, err := p.Alg.New(p.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Alg.Name, err)
	}
	return ms, nil
}

// Abstract replaces the child object named tag by its specification, an
// ideal k-mutual exclusion object (package ideal), for compositional model
// checking (docs/design/compositional-checking.md): tag "mx" is the
// mutual-exclusion object inside each MUTIN (mutin, kmutex, gcs and their
// -paper variants), "kmex" is gcs's k-mutual exclusion object. Nothing but
// the model checker grants an ideal object, so the machines of an
// abstracted problem are for check only.
func (p *Problem) Abstract(tag string) error {
	var takers []string
	for _, a := range All() {
		if slices.ContainsFunc(a.Options, func(o Option) bool { return o.Name == tag }) && (tag == mxOption.Name || tag == kmexOption.Name) {
			takers = append(takers, a.Name)
		}
	}
	if !slices.Contains(takers, p.Alg.Name) {
		if len(takers) == 0 {
			return fmt.Errorf("abstract %s: no algorithm has a child object named %s; the children that can be abstracted are mx and kmex", tag, tag)
		}
		return fmt.Errorf("abstract %s: %s has no child object %s (%s do)", tag, p.Alg.Name, tag, strings.Join(takers, ", "))
	}
	if p.Params.Options == nil {
		p.Params.Options = cs.Options{}
	}
	p.Params.Options[tag] = ideal
	return nil
}

// ErrNoDecoder is wrapped by the errors of the decoder of an algorithm
// that has none yet (Algorithm.Decoder is nil).
var ErrNoDecoder = errors.New("no message decoder")

// Decoder returns the decoder of the messages of p's machines
// (cs.Decoder): the one entry point from the network's bytes to messages.
// Call it once and keep it. For an algorithm without a decoder, every call
// of the result fails with an error wrapping ErrNoDecoder.
func (p *Problem) Decoder() cs.Decoder {
	if p.Alg.Decoder == nil {
		name := p.Alg.Name
		return func(string, []byte) (cs.Message, error) {
			return nil, fmt.Errorf("%w for %s: it cannot run on the network yet", ErrNoDecoder, name)
		}
	}
	return p.Alg.Decoder(p.Params)
}

// Build resolves s and builds its machines: Resolve, then Machines.
func Build(s Spec) (*Problem, []cs.Machine, error) {
	p, err := Resolve(s)
	if err != nil {
		return nil, nil, err
	}
	ms, err := p.Machines()
	if err != nil {
		return nil, nil, err
	}
	return p, ms, nil
}

// MachineBytes estimates the memory of the machines of all n processes at
// the start of a run, from above (Algorithm.ProcessBytes).
func (p *Problem) MachineBytes() int64 {
	return int64(p.Params.N) * p.Alg.ProcessBytes(p.Params)
}

// Resolve validates s and fills in the defaults. Its errors are one line
// each, naming the field, its value and what is allowed.
func Resolve(s Spec) (*Problem, error) {
	a, err := Lookup(s.Alg)
	if err != nil {
		return nil, err
	}
	if a.Local {
		return resolveLocal(a, s)
	}
	if s.Topology != "" || s.Bounds != "" || s.Clamp {
		return nil, fmt.Errorf("topology: %s solves a global problem (one bound over all processes); a topology and per-process bounds are for %s", a.Name, strings.Join(localNames(), ", "))
	}
	if s.N < 1 {
		return nil, fmt.Errorf("n = %d is out of range: need n >= 1", s.N)
	}
	if s.N > MaxN {
		return nil, fmt.Errorf("n = %d is out of range: critsec runs at most n = %d processes", s.N, MaxN)
	}
	l, k := s.N/3, min(s.N, max(s.N-s.N/3, s.N/3+1))
	if s.L != nil {
		l = *s.L
	}
	if s.K != nil {
		k = *s.K
	}
	if !a.UsesL {
		if s.L != nil && l != 0 {
			return nil, fmt.Errorf("l = %d: %s guarantees no lower bound, so l must be 0; for at least l processes InCS use gcs or mutin", l, a.Name)
		}
		l = 0
	}
	if a.FixedK != nil {
		fixed := a.FixedK(s.N)
		if s.K != nil && k != fixed {
			return nil, fmt.Errorf("k = %d: %s always allows at most %s InCS (n = %d); leave k out", k, a.Name, processes(fixed), s.N)
		}
		k = fixed
	}
	switch {
	case k < 1 || k > s.N:
		return nil, fmt.Errorf("k = %d is out of range: need 1 <= k <= n (n = %d)", k, s.N)
	case l < 0:
		return nil, fmt.Errorf("l = %d is out of range: need l >= 0", l)
	case l >= k:
		return nil, fmt.Errorf("l = %d is out of range: need l < k (k = %d); with l = k no process could ever exit", l, k)
	}
	p := &Problem{Alg: a, Params: cs.Params{N: s.N, L: l, K: k}}
	switch {
	case a.Quorums && s.Quorums != nil:
		if s.Coterie != "" {
			return nil, fmt.Errorf("coterie %s and quorums both given: give one", s.Coterie)
		}
		if err := coterie.Validate(s.Quorums, s.N); err != nil {
			return nil, fmt.Errorf("quorums: %w", err)
		}
		p.Params.Quorums, p.Coterie = s.Quorums, "custom"
	case a.Quorums:
		name := s.Coterie
		if name == "" {
			name = DefaultCoterie
		}
		if p.Params.Quorums, p.Coterie, err = coterie.ByName(name, s.N); err != nil {
			return nil, fmt.Errorf("coterie %s: %w", name, err)
		}
	case s.Coterie != "" || s.Quorums != nil:
		return nil, fmt.Errorf("coterie: %s uses no coterie; leave it out", a.Name)
	}
	return finish(p, s)
}

// finish resolves what every problem has, once the algorithm's own
// parameters are in p: the options, the property and the initial
// configuration.
func finish(p *Problem, s Spec) (*Problem, error) {
	var err error
	if p.Params.Options, err = resolveOptions(p.Alg, s.Options); err != nil {
		return nil, err
	}
	if p.Property, err = p.Alg.Property(p.Params); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Alg.Name, err)
	}
	p.Params.Initial = s.Initial
	if s.Initial == nil {
		if p.Params.Initial, err = p.Alg.DefaultInitial(p.Params); err != nil {
			return nil, fmt.Errorf("initial: %w", err)
		}
	}
	if err := checkInitial(p.Params.Initial, p.Property); err != nil {
		return nil, err
	}
	return p, nil
}

// checkInitial refuses unknown or repeated ids and an initial
// configuration that breaks the property (the papers assume a safe C_0).
func checkInitial(ids []cs.ID, prop *property.Property) error {
	in := make(initialView, prop.N()+1)
	for _, id := range ids {
		if id < 1 || int(id) > prop.N() {
			return fmt.Errorf("initial: unknown process id %d: ids run from 1 to n = %d", id, prop.N())
		}
		if in[id] {
			return fmt.Errorf("initial: process %d is listed twice", id)
		}
		in[id] = true
	}
	if f := prop.Check(in); f != nil {
		return fmt.Errorf("initial: %v: the initial configuration must be safe", f)
	}
	return nil
}

type initialView []bool

func (v initialView) InCS(id cs.ID) bool { return v[id] }

// MaxN is the largest number of processes Resolve accepts. The model
// checker has its own, smaller limit (check.MaxN).
const MaxN = 100_000

// maxSpecBytes bounds a problem file.
const maxSpecBytes = 1 << 20

// ReadSpec reads a problem file: one JSON object with the fields of Spec
// ({"alg":"gcs","n":10,"l":3,"k":7,"coterie":"grid"}). Unknown fields,
// trailing data and files over 1 MiB are refused, with the file's name in
// the error.
func ReadSpec(path string) (Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return Spec{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxSpecBytes {
		return Spec{}, fmt.Errorf("%s: larger than %d bytes: a problem file is one small JSON object", path, maxSpecBytes)
	}
	return ParseSpec(path, b)
}

// ParseSpec reads the problem file contents b; name is used in errors.
func ParseSpec(name string, b []byte) (Spec, error) {
	var s Spec
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%s: %s", name, jsonError(b, err))
	}
	if d.More() {
		return Spec{}, fmt.Errorf("%s: more than one JSON value: a problem file is one object", name)
	}
	// A field given with its zero value is not a field left out: "n":0 or
	// "alg":"" must not quietly become the command's default.
	var given map[string]json.RawMessage
	if json.Unmarshal(b, &given) == nil {
		if _, ok := given["alg"]; ok && s.Alg == "" {
			return Spec{}, fmt.Errorf("%s: field \"alg\" is empty: name an algorithm, or leave the field out", name)
		}
		if _, ok := given["n"]; ok && s.N < 1 {
			return Spec{}, fmt.Errorf("%s: field \"n\" = %d is out of range: need n >= 1, or leave the field out", name, s.N)
		}
	}
	return s, nil
}

// jsonError says what is wrong in a problem file without Go's type names.
func jsonError(b []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("line %d: not valid JSON: %v", 1+bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n")), se)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q: a JSON %s is not allowed here (want %s)", te.Field, te.Value, jsonType(te.Type.Kind().String()))
	case errors.Is(err, io.EOF):
		return "empty: want a JSON object such as {\"alg\":\"gcs\",\"n\":10}"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ") + ": the fields are alg, n, l, k, coterie, quorums, topology, bounds, clamp, initial and options"
	}
	return err.Error()
}

func jsonType(goKind string) string {
	switch goKind {
	case "int", "int32", "int64", "uint64", "ptr":
		return "an integer"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "map":
		return "an object"
	}
	return "another type"
}

// SpecFor states the problem of a on n processes with bounds l and k as a
// Spec, keeping only what a takes: l when it has a lower bound (UsesL), k
// when its upper bound is not fixed (FixedK). A local algorithm runs on
// the complete graph complete:n, where its local problem is the global one
// (section 1 of the local paper). Studies and tests that sweep every
// algorithm with the same l and k use it.
func (a Algorithm) SpecFor(n, l, k int) Spec {
	s := Spec{Alg: a.Name, N: n}
	if a.Local {
		s.Topology = fmt.Sprintf("complete:%d", n)
	}
	if a.UsesL {
		s.L = &l
	}
	if a.FixedK == nil {
		s.K = &k
	}
	return s
}

// processes returns "1 process" or "c processes".
func processes(c int) string {
	if c == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", c)
}
