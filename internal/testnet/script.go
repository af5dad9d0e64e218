package testnet

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/critsec/critsec/cs"
	"github.com/critsec/critsec/property"
	"github.com/critsec/critsec/trace"
)

// Setup is what a script's new command builds.
type Setup struct {
	// Machines are processes 1..n in their initial state.
	Machines []cs.Machine
	// Property is checked after every step.
	Property *property.Property
	// Header describes the run in its trace: Alg, L, K, and for quorum
	// algorithms Coterie and Quorums. WriteTrace fills in the rest.
	Header trace.Header
}

// Builder builds the processes of a script's new (or rerun) command from
// its arguments: key=value, a bare key or an empty value giving "".
type Builder func(args map[string]string) (Setup, error)

// Int returns the script argument key as an integer.
func Int(args map[string]string, key string) (int, error) {
	v, err := strconv.Atoi(args[key])
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want an integer", key, args[key])
	}
	return v, nil
}

// Choice returns the value of choices that the script argument key names,
// or the zero value of V when the script names none ("" or absent): a
// builder that passes it on builds what a caller who does not choose gets.
func Choice[V any](args map[string]string, key string, choices map[string]V) (V, error) {
	var zero V
	name := args[key]
	if name == "" {
		return zero, nil
	}
	v, ok := choices[name]
	if !ok {
		return zero, fmt.Errorf("%s=%s: want one of %s, or nothing", key, name, strings.Join(slices.Sorted(maps.Keys(choices)), ", "))
	}
	return v, nil
}

// RunScripts runs every file under dir as a script of
// github.com/cockroachdb/datadriven directives, with build making the
// machines, in the manner of etcd-raft's interaction tests. Each directive
// is followed by its output; the test fails where the output differs.
// To rewrite the outputs from what the code does now, run
//
//	go test ./alg/maekawa -run Scripts -rewrite
//
// and read the diff before committing it: a script's verdicts are in its
// input, so -rewrite never changes what a script asserts.
//
// Directives:
//
//	new key=value ...   build processes with build; starts a section.
//	                    Output: n, the property, who is InCS, the quorums.
//	run                 take the steps listed below it (Network.Do syntax,
//	                    one per line); output what each step did: the input
//	                    ("3: deliver P3->P1 REQUEST{Seq:1}"), then indented
//	                    the messages sent and the state reported. A
//	                    violation ends the block and is shown; any other
//	                    error (a step that cannot be taken, a failed
//	                    expect) fails the test.
//	status              each process's state and request; what is in
//	                    transit.
//	verdict V           assert that the state is V: deadlock, quiet,
//	                    waiting, transit (see Verdict) or violation. Every
//	                    section must assert one.
//	trace [summary]     the section's run as a critsec trace, and what
//	                    trace.Check (critsec trace check) says of it and
//	                    of what the trace claims to demonstrate (Claim);
//	                    the test fails when the trace check finds a
//	                    violation in a run the network found none in, none
//	                    where the network found a bound broken, or does
//	                    not confirm the claim. summary: the report only.
//	rerun key=value ... build again with the section's new arguments, these
//	                    overriding them ("variant=" gives the empty value),
//	                    and replay its schedule: the run blocks before its
//	                    first verdict; prefix=N replays only the first N
//	                    lines. Starts a section. Output: the steps whose
//	                    effects differ from the first run's.
func RunScripts(t *testing.T, dir string, build Builder) {
	if files, err := os.ReadDir(dir); err != nil || len(files) == 0 {
		t.Fatalf("no scripts in %s: %v", dir, err)
	}
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		s := &script{build: build}
		datadriven.RunTest(t, path, s.handle)
		s.endSection(t)
	})
}

type script struct {
	build Builder
	net   *Network
	args  map[string]string
	pos   string // where the section started
	// header is the trace header of the section's Setup.
	header trace.Header
	// sched and logs are the section's schedule (the run lines before its
	// first verdict) and what each line did in the first run (without
	// step numbers); inSched is cleared by the first verdict.
	sched   []string
	logs    []string
	inSched bool
	verdict bool
}

func (s *script) handle(t *testing.T, d *datadriven.TestData) string {
	if s.net == nil && d.Cmd != "new" {
		d.Fatalf(t, "%s before any new", d.Cmd)
	}
	switch d.Cmd {
	case "new":
		s.endSection(t)
		args := map[string]string{}
		for _, a := range d.CmdArgs {
			args[a.Key] = strings.Join(a.Vals, ",")
		}
		s.start(t, d, args)
		s.sched, s.logs, s.inSched = nil, nil, true
		return s.describe()
	case "rerun":
		s.endSection(t)
		return s.rerun(t, d)
	case "run":
		var out strings.Builder
		for _, line := range strings.Split(d.Input, "\n") {
			log, err := s.line(line)
			out.WriteString(log.numbered)
			if l := strings.TrimSpace(line); s.inSched && l != "" && !strings.HasPrefix(l, "#") {
				s.sched, s.logs = append(s.sched, l), append(s.logs, log.plain)
			}
			if err != nil {
				var v *Violation
				if !errors.As(err, &v) {
					d.Fatalf(t, "%v", err)
				}
				fmt.Fprintf(&out, "violation: %v\n", v)
				break
			}
		}
		return out.String()
	case "status":
		return s.status()
	case "verdict":
		if len(d.CmdArgs) != 1 {
			d.Fatalf(t, "verdict takes one of deadlock, quiet, waiting, transit, violation")
		}
		s.inSched, s.verdict = false, true
		got := s.verdictLine()
		want := d.CmdArgs[0].Key
		if !strings.HasPrefix(got, want+":") {
			t.Errorf("%s: verdict %s, want %s", d.Pos, got, want)
		}
		return got
	case "trace":
		return s.trace(t, d, d.HasArg("summary"))
	}
	d.Fatalf(t, "unknown directive %s", d.Cmd)
	return ""
}

func (s *script) start(t *testing.T, d *datadriven.TestData, args map[string]string) {
	su, err := s.build(args)
	if err == nil {
		s.net, err = New(su.Machines, su.Property, Options{Record: true})
	}
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	s.args, s.pos, s.verdict, s.header = args, d.Pos, false, su.Header
}

func (s *script) endSection(t *testing.T) {
	if s.net != nil && !s.verdict {
		t.Errorf("%s: the section has no verdict directive", s.pos)
	}
	s.verdict = true
}

// lineLog is what one line did: numbered for the output, plain (without
// step numbers) for comparing runs.
type lineLog struct{ numbered, plain string }

func (s *script) line(line string) (lineLog, error) {
	mark := len(s.net.Events())
	err := s.net.Do(line)
	var num, plain strings.Builder
	for _, ev := range s.net.Events()[mark:] {
		head, text := format(ev)
		if head {
			fmt.Fprintf(&num, "%d: %s\n", int(ev.T), text)
			fmt.Fprintf(&plain, "%s\n", text)
		} else {
			fmt.Fprintf(&num, "   %s\n", text)
			fmt.Fprintf(&plain, "   %s\n", text)
		}
	}
	return lineLog{num.String(), plain.String()}, err
}

// format describes ev; head is set for the input of a step.
func format(ev Event) (head bool, text string) {
	switch ev.Ev {
	case trace.EvRequest:
		return true, fmt.Sprintf("P%d %s", ev.Node, ev.Op)
	case trace.EvRecv:
		return true, fmt.Sprintf("deliver P%d->P%d %s", ev.From, ev.Node, describeMsg(ev.Message))
	case trace.EvCrash:
		return true, fmt.Sprintf("crash P%d", ev.Node)
	case trace.EvSuspect:
		return true, fmt.Sprintf("P%d suspects P%d", ev.Node, ev.Who)
	case EvTrust:
		return true, fmt.Sprintf("P%d trusts P%d", ev.Node, ev.Who)
	case trace.EvSend:
		text = fmt.Sprintf("P%d->P%d %s", ev.Node, ev.To, describeMsg(ev.Message))
		if ev.Reason != "" {
			text += ", lost: " + ev.Reason
		}
		return false, text
	case trace.EvState:
		return false, fmt.Sprintf("P%d %s", ev.Node, ev.State)
	case EvLost:
		return false, fmt.Sprintf("lost P%d->P%d %s: %s", ev.Node, ev.To, describeMsg(ev.Message), ev.Reason)
	}
	return false, ev.Ev
}

// describeMsg is a message's kind followed by its fields, if it has any:
// "REQUEST{Seq:1}", "lmin.Response2{ProcsInCS:[1 2] ReqCnt:1}", "ACK".
func describeMsg(m cs.Message) string {
	if m == nil {
		return "<nil>"
	}
	inner := m
	for {
		t, ok := inner.(cs.Tagged)
		if !ok {
			break
		}
		inner = t.Msg
	}
	if f := fmt.Sprintf("%+v", inner); f != "{}" && strings.HasPrefix(f, "{") {
		return m.Kind() + f
	}
	return m.Kind()
}

func (s *script) describe() string {
	var b strings.Builder
	var in []string
	for id := cs.ID(1); int(id) <= s.net.N(); id++ {
		if s.net.InCS(id) {
			in = append(in, fmt.Sprintf("P%d", id))
		}
	}
	if len(in) == 0 {
		in = []string{"none"}
	}
	fmt.Fprintf(&b, "n = %d, %v, InCS: %s\n", s.net.N(), s.net.Property(), strings.Join(in, " "))
	for i, q := range s.header.Quorums {
		fmt.Fprintf(&b, "Q_%d = %v\n", i+1, q)
	}
	return b.String()
}

func (s *script) status() string {
	var b strings.Builder
	for id := cs.ID(1); int(id) <= s.net.N(); id++ {
		fmt.Fprintf(&b, "P%d %s\n", id, s.net.describe(id))
	}
	tr := s.net.InTransit()
	if len(tr) == 0 {
		tr = []string{"none"}
	}
	fmt.Fprintf(&b, "in transit: %s\n", strings.Join(tr, ", "))
	return b.String()
}

func (s *script) verdictLine() string {
	if err := s.net.Err(); err != nil {
		return fmt.Sprintf("violation: %v", err)
	}
	switch v := s.net.Verdict(); v {
	case Transit:
		return fmt.Sprintf("transit: %d messages in transit", len(s.net.InTransit()))
	case Quiet:
		return "quiet: nothing in transit, no request pending"
	default:
		return fmt.Sprintf("%s: nothing in transit; waiting: %s", v, s.net.Waits())
	}
}

func (s *script) trace(t *testing.T, d *datadriven.TestData, summary bool) string {
	var buf bytes.Buffer
	if err := s.net.WriteTrace(&buf, s.header); err != nil {
		d.Fatalf(t, "%v", err)
	}
	rep, err := trace.Check(bytes.NewReader(buf.Bytes()))
	if err != nil {
		d.Fatalf(t, "trace check: %v", err)
	}
	// The trace check must find what the network found of safety; it also
	// checks the invocation convention, so a convention violation may show
	// in both.
	var v *Violation
	errors.As(s.net.Err(), &v)
	if (v == nil && rep.Violation != nil) || (v != nil && v.Kind == KindBounds && rep.Violation == nil) {
		t.Errorf("%s: trace check says %v, the network %v", d.Pos, rep.Violation, s.net.Err())
	}
	var out string
	if rep.Violation != nil {
		out = fmt.Sprintf("violation: %v\n", rep.Violation)
	} else {
		out = fmt.Sprintf("ok: %d events, max #InCS %d, min #InCS %d (bounds %d..%d), %d messages unreceived, %d requests pending\n",
			rep.Events, rep.MaxInCS, rep.MinInCS, rep.Lo, rep.Hi, rep.Unreceived, rep.Pending)
	}
	// A claim the trace can show (a bound, a deadlock with no process left
	// to act) must be confirmed; one it cannot show is not refuted.
	if rep.Claim != nil {
		out += fmt.Sprintf("demonstrates %s: %s: %s\n", rep.Claim.Kind, rep.Confirmation, rep.ClaimNote)
		if rep.Confirmation == trace.NotConfirmed {
			t.Errorf("%s: trace check does not confirm the claim %s: %s", d.Pos, rep.Claim.Kind, rep.ClaimNote)
		}
	}
	if summary {
		return out
	}
	return buf.String() + out
}

func (s *script) rerun(t *testing.T, d *datadriven.TestData) string {
	args := maps.Clone(s.args)
	prefix := len(s.sched)
	var over []string
	for _, a := range d.CmdArgs {
		v := strings.Join(a.Vals, ",")
		if a.Key == "prefix" {
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 || p > len(s.sched) {
				d.Fatalf(t, "prefix=%s: need 0..%d", v, len(s.sched))
			}
			prefix = p
			continue
		}
		args[a.Key] = v
		if v == "" {
			v = `""`
		}
		over = append(over, a.Key+"="+v)
	}
	s.start(t, d, args)
	s.inSched = false
	var b strings.Builder
	fmt.Fprintf(&b, "replayed %d of %d lines with %s; the steps whose effects differ from the first run:\n",
		prefix, len(s.sched), strings.Join(over, " "))
	same := true
	for i, line := range s.sched[:prefix] {
		log, err := s.line(line)
		if log.plain != s.logs[i] {
			b.WriteString(log.numbered)
			same = false
		}
		if err != nil {
			var v *Violation
			if !errors.As(err, &v) {
				d.Fatalf(t, "%v", err)
			}
			fmt.Fprintf(&b, "violation: %v\n", v)
			return b.String()
		}
	}
	if same {
		b.WriteString("none\n")
	}
	return b.String()
}

// ScriptSchedule returns the schedule of the first section of the script
// at path: the step lines of its run blocks before its first verdict
// directive (comments and blank lines left out). Tests use it to compare a
// script with a model checker's path or to replay it.
func ScriptSchedule(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	const (
		directive = iota
		input     // below a directive, above its ----
		output    // below ----, up to a blank line
		double    // below ----\n----, up to ----\n----
	)
	var steps []string
	mode, run, first := directive, false, false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch mode {
		case directive:
			f := strings.Fields(line)
			switch {
			case len(f) == 0 || strings.HasPrefix(f[0], "#"):
			case f[0] == "verdict":
				return steps, nil
			default:
				run, mode = f[0] == "run", input
			}
		case input:
			switch {
			case line == "----":
				mode, first = output, true
			case run && line != "" && !strings.HasPrefix(line, "#"):
				steps = append(steps, line)
			}
		case output:
			switch {
			case first && line == "----":
				mode = double
			case line == "":
				mode = directive
			}
			first = false
		case double:
			if line == "----" && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "----" {
				i++
				mode = directive
			}
		}
	}
	return nil, fmt.Errorf("%s: no verdict directive", path)
}
