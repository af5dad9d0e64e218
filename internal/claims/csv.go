package claims

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// data reads the studies' CSV files on demand and keeps the first error, so
// that the rows read like the claims they compute.
type data struct {
	root   string
	tables map[string]*table
	err    error
}

// table is one CSV file: its columns by name and its records.
type table struct {
	file string
	col  map[string]int
	recs [][]string
}

// rec is one record of a table.
type rec struct {
	t *table
	f []string
}

func (d *data) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

// table returns the file docs/experiments/name, read once.
func (d *data) table(name string) *table {
	if t, ok := d.tables[name]; ok {
		return t
	}
	file := filepath.ToSlash(filepath.Join("docs", "experiments", name))
	t := &table{file: file, col: map[string]int{}}
	d.tables[name] = t
	f, err := os.Open(filepath.Join(d.root, file))
	if err != nil {
		d.fail("%s: %v (regenerate it with critsec experiment, docs/experiments.md)", file, err)
		return t
	}
	defer f.Close()
	r := csv.NewReader(f)
	all, err := r.ReadAll()
	if err != nil || len(all) == 0 {
		d.fail("%s: not a CSV file with a header line: %v", file, err)
		return t
	}
	for i, name := range all[0] {
		t.col[name] = i
	}
	t.recs = all[1:]
	return t
}

// sel returns the records of t whose columns have the given values: pairs
// of a column name and a string or a float64 (compared as numbers).
func (d *data) sel(t *table, match ...any) []rec {
	var out []rec
	for _, f := range t.recs {
		r := rec{t, f}
		ok := true
		for i := 0; i+1 < len(match) && ok; i += 2 {
			col := match[i].(string)
			switch want := match[i+1].(type) {
			case string:
				ok = d.str(r, col) == want
			case float64:
				ok = d.num(r, col) == want
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		d.fail("%s: no record with %v", t.file, match)
	}
	return out
}

// one is the single record of t that matches, or a zero record after
// recording an error.
func (d *data) one(t *table, match ...any) rec {
	rs := d.sel(t, match...)
	if len(rs) != 1 {
		if len(rs) > 1 {
			d.fail("%s: %d records with %v, want one", t.file, len(rs), match)
		}
		return rec{t, nil}
	}
	return rs[0]
}

func (d *data) str(r rec, col string) string {
	i, ok := r.t.col[col]
	if !ok {
		d.fail("%s: no column %q", r.t.file, col)
		return ""
	}
	if i >= len(r.f) {
		return ""
	}
	return r.f[i]
}

func (d *data) num(r rec, col string) float64 {
	s := d.str(r, col)
	if r.f == nil || d.err != nil {
		return math.NaN()
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.fail("%s: column %q holds %q, not a number", r.t.file, col, s)
		return math.NaN()
	}
	return x
}

// nums returns the distinct values of a column over rs, in increasing order.
func (d *data) nums(rs []rec, col string) []float64 {
	var xs []float64
	for _, r := range rs {
		if x := d.num(r, col); !slices.Contains(xs, x) {
			xs = append(xs, x)
		}
	}
	slices.Sort(xs)
	return xs
}

// f formats x with prec decimals (∞ for +Inf).
func f(x float64, prec int) string {
	if math.IsInf(x, 1) {
		return "∞"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// pct formats a fraction as a percentage with one decimal.
func pct(x float64) string { return f(100*x, 1) + " %" }

// list joins formatted numbers with commas.
func list(xs []float64, prec int) string {
	var s []string
	for _, x := range xs {
		s = append(s, f(x, prec))
	}
	return strings.Join(s, ", ")
}

// span formats the smallest and largest of xs as "a–b" (one number when
// they are equal at that precision).
func span(xs []float64, prec int) string {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if f(lo, prec) == f(hi, prec) {
		return f(lo, prec)
	}
	return f(lo, prec) + "–" + f(hi, prec)
}

// verdict is Reproduced when ok, else v with its reason.
func verdict(ok bool, v Verdict) Verdict {
	if ok {
		return Reproduced
	}
	return v
}
