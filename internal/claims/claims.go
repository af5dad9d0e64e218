// Package claims renders docs/claims.md: every quantitative claim of the
// four papers critsec implements, one row each, with critsec's result, the
// command that produces it and a verdict.
//
// Where the verdict is a number, the row is computed here from the studies'
// CSV files committed under docs/experiments (the tables the other docs
// cite): the measured value and the verdict follow from a tolerance stated
// in the row, so the page cannot drift from those files. Columns are read by
// name and added columns are ignored. Rows whose verdict comes from the
// model checker, a test or a hand-made script are written here as they
// stand, with their command. TestPageInStep fails when the committed page
// differs from what Render gives; go test ./internal/claims -update
// rewrites it.
//
// TestStudiesKeepVerdicts keeps the tables in step with the code: it
// re-runs each study at short settings, fails when a claim's verdict on
// the fresh numbers is not the one the committed tables give, and compares
// the short tables with those committed under testdata/short (rewritten by
// -update too), so that a change to the code that moves a study's numbers
// fails until the study is re-run.
package claims

import (
	"bytes"
	"fmt"
	"strings"
)

// Verdict says how a claim fared.
type Verdict int

// The verdicts, in the order the page counts them.
const (
	// Reproduced: critsec measures or checks what the paper says, within
	// the row's tolerance.
	Reproduced Verdict = iota
	// Differs: critsec finds something else, for a reason the row gives.
	Differs
	// DiffersOpen: critsec finds something else and the reason is not known.
	DiffersOpen
	// NotReproducible: the claim cannot be checked as stated (the row says
	// why).
	NotReproducible
	// NotAttempted: critsec has nothing that measures the claim yet.
	NotAttempted
	nVerdicts
)

// String is the verdict as the page writes it.
func (v Verdict) String() string {
	return [...]string{"reproduced", "differs", "differs, unexplained", "not reproducible", "not attempted"}[v]
}

// row is one claim: where the paper makes it, what it says, critsec's
// result, the command behind the result, the verdict and why it is not
// Reproduced (shown only then, so that a computed row can carry the reason
// its verdict would need).
type row struct {
	where, claim, result, command string
	verdict                       Verdict
	why                           string
}

// paper is one paper's section of the page.
type paper struct {
	title, intro string
	rows         func(d *data) []row
}

var papers = []paper{global, local, token, faultTolerant}

// read computes p's rows. A table without the records or columns a row
// needs is reported as such, also when the row went on to index what was
// missing; any other failure of a row is an error naming the paper.
func (p paper) read(d *data) (rs []row, err error) {
	defer func() {
		if r := recover(); r != nil {
			rs, err = nil, d.err
			if err == nil {
				err = fmt.Errorf("claims: %s: %v", p.title, r)
			}
		}
	}()
	rs = p.rows(d)
	return rs, d.err
}

// Render reads the studies' CSV files under root/docs/experiments and
// returns the page docs/claims.md.
func Render(root string) ([]byte, error) {
	d := &data{root: root, tables: map[string]*table{}}
	var sections [][]row
	var count [nVerdicts]int
	for _, p := range papers {
		rs, err := p.read(d)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			count[r.verdict]++
		}
		sections = append(sections, rs)
	}
	var b bytes.Buffer
	b.WriteString(head)
	total := 0
	var parts []string
	for v, c := range count {
		total += c
		label := Verdict(v).String()
		if Verdict(v) == Differs && c != 1 {
			label = "differ"
		}
		parts = append(parts, fmt.Sprintf("%d %s", c, label))
	}
	fmt.Fprintf(&b, "**%d claims: %s.**\n", total, strings.Join(parts, " · "))
	for i, p := range papers {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", p.title, p.intro)
		b.WriteString("| # | where | the paper says | critsec | command | verdict |\n|---|---|---|---|---|---|\n")
		for j, r := range sections[i] {
			v := "**" + r.verdict.String() + "**"
			if r.why != "" && r.verdict != Reproduced {
				v += ": " + r.why
			}
			fmt.Fprintf(&b, "| %c%d | %s | %s | %s | %s | %s |\n", p.title[0], j+1, cell(r.where), cell(r.claim), cell(r.result), code(r.command), cell(v))
		}
	}
	b.WriteString(tail)
	return b.Bytes(), nil
}

// cell keeps a table cell on one line and its bars escaped.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

// code writes commands as code, several separated by semicolons.
func code(s string) string {
	if s == "" {
		return "—"
	}
	var out []string
	for c := range strings.SplitSeq(s, "; ") {
		out = append(out, "`"+strings.ReplaceAll(c, "|", `\|`)+"`")
	}
	return strings.Join(out, "; ")
}

const head = `# The papers' claims, and what critsec finds

Every quantitative claim of the four papers critsec implements — lemmas, theorems, complexity
bounds, the figures' orderings and shapes, and the published algorithms' correctness — one row
each: where the paper makes it, what critsec measured or checked, the command that produces it,
and the verdict.

This page is generated (` + "`go test ./internal/claims -update`" + ` rewrites it; CI fails when it differs).
Rows whose verdict is a number are computed from the studies' CSV files committed under
[experiments/](experiments/), the tables the other docs cite, each against the tolerance the row
states; the studies are deterministic (equal seeds give byte-identical tables). CI also keeps the
tables in step with the code: it re-runs every study this page reads at short settings (one seed,
fewer entries and processes, the same rates, loads and topology families; 7 s of CPU,
[experiments.md](experiments.md#keeping-the-tables-in-step-with-the-code)) and fails when a
claim's verdict on the fresh numbers is not the one below, naming the claim, both results and the
command, or when the short tables differ from those committed with the test: a change to the code
that moves a study's numbers fails until the study is re-run with the command its rows give and
this page regenerated. Rows checked by the model checker, a test or a script give their command;
their verdicts are those of the docs they link. A command's
` + "`critsec`" + ` is ` + "`go run ./cmd/critsec`" + `. Verdicts: **reproduced** (within the stated tolerance),
**differs** (with the reason), **differs, unexplained**, **not reproducible** (the claim cannot be
checked as stated, and why), **not attempted**.

`

const tail = `
## Open problems the papers leave

- The global paper leaves a fault-tolerant (l,k)-CS algorithm as future work (section 6): its
  specification under crash-stop failures, and what is impossible, are in
  [ft-global-lk-cs.md](ft-global-lk-cs.md).
- The local paper's conclusion asks for an algorithm that keeps exactly l_i ≤ |CS_i| ≤ k_i
  everywhere (LKCS tightens the bounds near its leader); rows L7–L11 above are where the
  published LKCS and critsec's correction stand.
`
