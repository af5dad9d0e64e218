package faults

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// record builds a record from "member pid seq ms" lines.
func record(t *testing.T, text string) []Line {
	t.Helper()
	lines, err := ReadRecord(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestCheckOverlap: P1's copy runs lines 1-5, P2's 3-8 and P3's 4-6: two
// copies run at lines 3 and 6, three at lines 4 and 5; with k = 1 one span
// over k, lines 3-6 (P1, P2, P3), 20 ms; with k = 2 one span, lines 4-5.
func TestCheckOverlap(t *testing.T) {
	lines := record(t, `1 100 0 1000
1 100 1 1020
2 200 0 1030
3 300 0 1035
1 100 2 1040
3 300 1 1050
2 200 1 1060
2 200 2 1080
`)
	rep := Check(lines, Bounds{K: 1})
	if rep.Lines != 8 || len(rep.Copies) != 3 || rep.Max != 3 {
		t.Fatalf("%d lines, copies %+v, max %d", rep.Lines, rep.Copies, rep.Max)
	}
	if len(rep.Over) != 1 {
		t.Fatalf("over k = 1: %+v", rep.Over)
	}
	s := rep.Over[0]
	if s.From != 2 || s.To != 5 || s.Count != 3 || s.Lines() != 4 || s.Ms != 20 || len(s.Copies) != 3 {
		t.Errorf("over k = 1: %+v", s)
	}
	want := "3 copies for 4 lines (20 ms, lines 3-6): P1 pid 100 (lines 1-5) P2 pid 200 (lines 3-8) P3 pid 300 (lines 4-6)"
	if got := rep.Describe(s); got != want {
		t.Errorf("Describe:\n got %s\nwant %s", got, want)
	}
	rep = Check(lines, Bounds{K: 2})
	if len(rep.Over) != 1 || rep.Over[0].From != 3 || rep.Over[0].To != 4 || rep.Over[0].Count != 3 {
		t.Errorf("over k = 2: %+v", rep.Over)
	}
	if rep = Check(lines, Bounds{K: 3}); len(rep.Over) != 0 {
		t.Errorf("over k = 3: %+v", rep.Over)
	}
}

// TestCheckHandover: copies that follow each other never overlap, however
// close in time; a pid that starts again from 0 is a new copy, and so is
// the same pid on another member.
func TestCheckHandover(t *testing.T) {
	lines := record(t, `1 100 0 1000
1 100 1 1000
2 200 0 1000
2 200 1 1000
1 100 0 1000
1 100 1 1000
3 100 0 1000
`)
	rep := Check(lines, Bounds{K: 1, L: 1})
	if len(rep.Copies) != 4 || rep.Max != 1 || rep.Min != 1 || len(rep.Over) != 0 || len(rep.Under) != 0 {
		t.Errorf("handover: %+v", rep)
	}
}

// underRecord has one copy running at lines 5-6, two at every other line
// from line 3.
const underRecord = `1 100 0 1000
1 100 1 1020
2 200 0 1030
1 100 2 1040
2 200 1 1060
2 200 2 1080
3 300 0 1100
2 200 3 1120
3 300 1 1140
`

// TestCheckUnder: with l = 2, the first line with two copies settles the
// run; P1's copy stops before P3's starts: lines 5-6 run one copy, 20 ms.
// The last line, after the run was stopped (Until), is not checked.
func TestCheckUnder(t *testing.T) {
	lines := record(t, underRecord)
	rep := Check(lines, Bounds{K: 2, L: 2, Until: 8})
	if rep.Max != 2 || rep.Min != 1 || len(rep.Over) != 0 {
		t.Fatalf("%+v", rep)
	}
	if len(rep.Under) != 1 || rep.Under[0].From != 4 || rep.Under[0].To != 5 || rep.Under[0].Count != 1 || rep.Under[0].Ms != 20 {
		t.Errorf("under l = 2: %+v", rep.Under)
	}
	if want := "1 copies for 2 lines (20 ms, lines 5-6): P2 pid 200 (lines 3-8)"; rep.Describe(rep.Under[0]) != want {
		t.Errorf("Describe:\n got %s\nwant %s", rep.Describe(rep.Under[0]), want)
	}
}

// TestExcused: the span under l of TestCheckUnder (lines 5-6, its last
// written at 1080 ms) is explained by a fault injected at line 4 or
// before and undone no earlier than 1080 ms minus the time allowed to
// recover; not by one injected after its first line, nor by one undone
// earlier, nor by one never undone.
func TestExcused(t *testing.T) {
	lines := record(t, underRecord)
	under := Check(lines, Bounds{K: 2, L: 2, Until: 8}).Under
	if len(under) != 1 {
		t.Fatalf("under: %+v", under)
	}
	ms := func(ms int64) time.Time { return time.UnixMilli(ms) }
	for _, c := range []struct {
		name string
		in   Injected
		ok   bool
	}{
		{"undone within the time to recover", Injected{From: 3, At: ms(1035), Undone: ms(1050)}, true},
		{"undone after the span", Injected{From: 0, At: ms(990), Undone: ms(1100)}, true},
		{"injected after the span began", Injected{From: 5, At: ms(1070), Undone: ms(1075)}, false},
		{"undone too early", Injected{From: 3, At: ms(1035), Undone: ms(1040)}, false},
		{"never undone", Injected{From: 3, At: ms(1035)}, false},
	} {
		ex, not := Excused(lines, under, []Injected{c.in}, 30*time.Millisecond)
		if c.ok && (len(ex) != 1 || len(not) != 0) || !c.ok && (len(ex) != 0 || len(not) != 1) {
			t.Errorf("%s: excused %v, not %v", c.name, ex, not)
		}
	}
}

// TestReadRecordRefuses: a line that is not four numbers is refused with
// its number; a last line without its newline is left out.
func TestReadRecordRefuses(t *testing.T) {
	for _, bad := range []string{"1 2 3\n", "1 2 3 x\n", "1 2 -3 4\n", "1 2 3 4 5\n"} {
		_, err := ReadRecord(strings.NewReader("1 100 0 5\n" + bad))
		if err == nil || !strings.Contains(err.Error(), "record line 2") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	lines, err := ReadRecord(strings.NewReader("1 100 0 5\n1 100 1"))
	if err != nil || len(lines) != 1 {
		t.Errorf("torn last line: %v %v", lines, err)
	}
}

// TestSilences: the pairs a log says voted against or declared crashed
// before a time, and among them those no fault was meant to cause: a long pause, cut or
// kill of the deaf member or of the silent one explains a silence, a short
// one not, nor a partial loss or a delay of any length.
func TestSilences(t *testing.T) {
	c := &Cluster{cfg: Config{Dir: t.TempDir(), N: 4}}
	logs := []string{
		`time=2026-11-27T16:48:12.716Z level=WARN msg="voted against a silent peer: it is declared crashed once a majority of the members vote so" node=1 votes=[2]
time=2026-11-27T16:48:12.716Z level=WARN msg="peer declared crashed: refusing it from now on" node=1 peer=3
time=2026-11-27T16:48:12.716Z level=WARN msg="voted against a silent peer: it is declared crashed once a majority of the members vote so" node=1 votes="[2 4]"
`,
		`time=2026-11-27T16:48:12.716Z level=WARN msg="voted against a silent peer: it is declared crashed once a majority of the members vote so" node=2 votes="[1 3]"
`,
		`time=2026-11-27T16:48:12.716Z level=WARN msg="peer declared crashed" node=3 peer=2 silent_for_more_than=1s
`,
		`time=2026-11-27T16:48:20.001Z level=WARN msg="peer declared crashed" node=4 peer=3 silent_for_more_than=1s
`,
	}
	for i, l := range logs {
		if err := os.WriteFile(c.Log(i+1), []byte(l), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := c.Silences(time.Date(2026, 11, 27, 16, 48, 20, 0, time.UTC)) // P4's declaration is after
	want := []Silence{{1, 2}, {1, 4}, {2, 1}, {2, 3}, {3, 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("Silences: %v, want %v", got, want)
	}
	faults := []Injected{
		{Fault: Fault{Kind: Pause, For: 2 * time.Second}, Members: []int{1}},
		{Fault: Fault{Kind: Isolate, For: 200 * time.Millisecond}, Members: []int{2}},
		{Fault: Fault{Kind: Kill, Down: true}, Members: []int{4}},
		{Fault: Fault{Kind: Loss, Pct: 30, For: 2 * time.Second}, Members: []int{3}},
		{Fault: Fault{Kind: Delay, Delay: time.Second, For: 2 * time.Second}, Members: []int{3}},
	}
	if u := unmeant(got, faults, time.Second); !slices.Equal(u, []Silence{{2, 3}, {3, 2}}) {
		t.Errorf("unmeant: %v, want [{2 3} {3 2}]", u)
	}
}

// TestLateKills: a watchdog's kill more than the slack after its
// deadline is found in a member's log, one on time is not; the kills of
// a member whose tree a pause-tree froze are late by design and dropped.
func TestLateKills(t *testing.T) {
	log := `time=2026-11-27T20:00:00.000Z level=INFO msg="command started" node=2
critsec watchdog: the lease ended 3ms ago: killing the command's process group
critsec watchdog: the lease ended 312ms ago: killing the command's process group
critsec watchdog: critsec run is gone (its pipe ended): killing the command's process group
`
	got := lateKills(2, log, 20*time.Millisecond)
	want := []LateKill{{Member: 2, Late: 312 * time.Millisecond}}
	if !slices.Equal(got, want) {
		t.Fatalf("lateKills: %+v, want %+v", got, want)
	}
	if d := describeLate(got); d != "P2's by 312ms" {
		t.Errorf("describeLate: %q", d)
	}
	frozen := []Injected{{Fault: Fault{Kind: PauseTree}, Members: []int{2}}}
	if l := lateUnmeant(got, frozen); len(l) != 0 {
		t.Errorf("a kill of a member frozen by a pause-tree counted: %+v", l)
	}
	paused := []Injected{{Fault: Fault{Kind: Pause}, Members: []int{2}}}
	if l := lateUnmeant(got, paused); !slices.Equal(l, want) {
		t.Errorf("a pause of critsec run alone excused its watchdog's late kill: %+v", l)
	}
}
