package experiment

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestTableCSVAndPlot(t *testing.T) {
	tb := Table{LabelName: "alg", Header: []string{"n", "msgs"}}
	tb.Add("grid", 4, 9.5)
	tb.Add("grid", 16, 21)
	tb.Add("raymond", 4, 6)
	tb.Add("raymond", 16, 30)
	var b bytes.Buffer
	if err := tb.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "alg,n,msgs\ngrid,4,9.5\ngrid,16,21\nraymond,4,6\nraymond,16,30\n"
	if b.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b.String(), want)
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "m.svg")
	if err := tb.Plot(Chart{Title: "messages", X: "n", Y: "msgs"}, svg); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "raymond") {
		t.Fatal("svg lacks the plot or its legend")
	}
	if err := tb.Plot(Chart{X: "n", Y: "nope"}, svg); err == nil {
		t.Fatal("unknown column accepted")
	}
}

// TestPlotDegenerateData: every table is drawn or refused with one line,
// and no plot leaves a partial file (the one-lambda waiting study used to
// panic in gonum's log scale after leaving a 0-byte SVG).
func TestPlotDegenerateData(t *testing.T) {
	tiny, huge := 1e-300, 1e300
	for _, tc := range []struct {
		name       string
		xs, ys     []float64
		logX, logY bool
		refused    string // "" when it must render
	}{
		{name: "one point, log-log", xs: []float64{0.1}, ys: []float64{72.6}, logX: true, logY: true},
		{name: "one point on a power of ten", xs: []float64{1}, ys: []float64{100}, logX: true, logY: true},
		{name: "equal points, log x", xs: []float64{0.1, 0.1}, ys: []float64{3, 3}, logX: true},
		{name: "equal points, linear", xs: []float64{5, 5}, ys: []float64{0, 0}},
		{name: "narrow log range", xs: []float64{0.3, 0.31}, ys: []float64{2, 2.01}, logX: true, logY: true},
		{name: "unsorted x", xs: []float64{1, 0.001, 0.1}, ys: []float64{3, 1, 2}, logX: true},
		{name: "extreme log range", xs: []float64{tiny, huge}, ys: []float64{tiny, huge}, logX: true, logY: true},
		{name: "extreme linear range", xs: []float64{-huge, huge}, ys: []float64{-huge, huge}},
		{name: "tiny linear range", xs: []float64{1, 1 + 1e-15}, ys: []float64{1, 1 + 1e-15}},
		{name: "zeros and negatives, linear", xs: []float64{-3, 0}, ys: []float64{0, -1}},
		{name: "no rows", refused: "no rows"},
		{name: "NaN", xs: []float64{1, math.NaN()}, ys: []float64{1, 2}, refused: "row 2 (line) has x = NaN: not a finite number"},
		{name: "+Inf", xs: []float64{1, 2}, ys: []float64{math.Inf(1), 2}, refused: "row 1 (line) has y = +Inf: not a finite number"},
		{name: "-Inf", xs: []float64{math.Inf(-1)}, ys: []float64{1}, refused: "not a finite number"},
		{name: "zero on a log axis", xs: []float64{0, 1}, ys: []float64{1, 2}, logX: true, refused: "row 1 (line) has x = 0: a log axis shows only values > 0"},
		{name: "negative on a log axis", xs: []float64{1, 2}, ys: []float64{1, -2}, logY: true, refused: "a log axis shows only values > 0"},
		{name: "beyond 1e300", xs: []float64{1, 2e300}, ys: []float64{1, 2}, refused: "too large to draw"},
		{name: "below 1e-300 on a log axis", xs: []float64{1e-310}, ys: []float64{1}, logX: true, refused: "too small for a log axis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := Table{LabelName: "alg", Header: []string{"x", "y"}}
			for i := range tc.xs {
				tb.Add("line", tc.xs[i], tc.ys[i])
			}
			dir := t.TempDir()
			for _, ext := range []string{"svg", "png"} {
				path := filepath.Join(dir, "p."+ext)
				err := tb.Plot(Chart{Title: "t", X: "x", Y: "y", LogX: tc.logX, LogY: tc.logY}, path)
				if tc.refused == "" {
					if err != nil {
						t.Fatalf("%s: %v", ext, err)
					}
					if fi, err := os.Stat(path); err != nil || fi.Size() < 100 {
						t.Fatalf("%s: %v, %v", ext, fi, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tc.refused) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s: got %v, want one line containing %q", ext, err, tc.refused)
				}
			}
			if tc.refused != "" {
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Fatalf("refused plot left %d files, e.g. %s", len(ents), ents[0].Name())
				}
			}
		})
	}
}

// TestWriteFileAtomic: a failed or panicking write leaves neither a partial
// file nor a temporary one, and keeps an earlier file as it was.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "t.csv")
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("disk full")
	}); err == nil || err.Error() != "disk full" {
		t.Fatalf("error %v", err)
	}
	func() {
		defer func() { recover() }()
		WriteFileAtomic(path, func(w io.Writer) error { io.WriteString(w, "partial"); panic("boom") })
	}()
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Fatalf("%q, %v", b, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("%d files left in the directory", len(ents))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

func TestDecades(t *testing.T) {
	for _, c := range [][3]float64{{0.1, 0.1, 0.1}, {0.3, 0.1, 1}, {1, 1, 1}, {4, 1, 10}, {400, 100, 1000}, {1e-300, 1e-300, 1e-300}, {1e300, 1e300, 1e300}, {0.001, 0.001, 0.001}, {0.0011, 0.001, 0.01}} {
		if lo, hi := decadeBelow(c[0]), decadeAbove(c[0]); lo != c[1] || hi != c[2] {
			t.Errorf("%v: decades %v, %v; want %v, %v", c[0], lo, hi, c[1], c[2])
		}
	}
}

// TestTableTags: tag columns follow the label in CSV and text, and a row
// added without tags writes them empty.
func TestTableTags(t *testing.T) {
	tab := &Table{LabelName: "alg", TagNames: []string{"topology", "stop"}, Header: []string{"n"}}
	tab.AddTagged("lmutin", []string{"ring:4", "entries"}, 4)
	tab.Add("lkcs", 5)
	var b strings.Builder
	if err := tab.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if want := "alg,topology,stop,n\nlmutin,ring:4,entries,4\nlkcs,,,5\n"; b.String() != want {
		t.Errorf("CSV:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ring:4") || !strings.Contains(b.String(), "topology") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestPlotIntervals: a CI column draws error bars, which widen a linear
// axis to y ± half-width, from 0 at the lowest unless the chart is
// Signed; a NaN half-width draws none; an interval that
// reaches 0 on a log axis draws (to the axis's bottom); an infinite one is
// refused with one line. The legend stands right of the axes: the image
// is wider than the 7 inches of the axes.
func TestPlotIntervals(t *testing.T) {
	tb := Table{LabelName: "alg", Header: []string{"x", "y", "ci"}}
	tb.Add("a", 1, 10, 5)
	tb.Add("a", 2, 11, math.NaN())
	tb.Add("b", 1, 2, 3)
	p, err := tb.chart(Chart{X: "x", Y: "y", CI: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0 || p.Y.Max < 15 {
		t.Errorf("y axis %v..%v, want it to hold the intervals 0..15 (b's 2 ± 3 drawn from 0)", p.Y.Min, p.Y.Max)
	}
	if p, err = tb.chart(Chart{X: "x", Y: "y", CI: "ci", Signed: true}); err != nil || p.Y.Min > -1 {
		t.Errorf("signed y: axis from %v (%v), want it to hold b's interval down to -1", p.Y.Min, err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.svg")
	if err := tb.Plot(Chart{X: "x", Y: "y", CI: "ci", LogY: true}, path); err != nil {
		t.Fatalf("interval through 0 on a log axis: %v", err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<svg width="([0-9.]+)pt"`).FindSubmatch(svg)
	if m == nil {
		t.Fatalf("no width in %.100s", svg)
	}
	if w, err := strconv.ParseFloat(string(m[1]), 64); err != nil || w <= 504 {
		t.Errorf("the image is %s pt wide, want more than the axes' 504: the legend beside them", m[1])
	}
	tb.Add("b", 2, 2, math.Inf(1))
	if err := tb.Plot(Chart{Title: "t", X: "x", Y: "y", CI: "ci"}, path); err == nil || !strings.Contains(err.Error(), "row 4 (b) has ci = +Inf") {
		t.Errorf("infinite half-width: %v", err)
	}
}

// TestPlotLineStyles: two lines with equal points, drawn on top of each
// other, differ in dash pattern and glyph as well as colour, in the plot
// and in its legend, and the plot is byte-identical when drawn again.
func TestPlotLineStyles(t *testing.T) {
	tb := Table{LabelName: "alg", Header: []string{"x", "y"}}
	for _, l := range []string{"forest", "forest-paper"} {
		tb.Add(l, 1, 5)
		tb.Add(l, 2, 7)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.svg")
	if err := tb.Plot(Chart{Title: "t", X: "x", Y: "y"}, path); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The lines are the stroked paths with a dash pattern; the first has
	// none (solid), the second its own.
	dashed := regexp.MustCompile(`stroke-dasharray:([0-9.,]+)`).FindAllSubmatch(svg, -1)
	var patterns []string
	for _, m := range dashed {
		if p := string(m[1]); !slices.Contains(patterns, p) {
			patterns = append(patterns, p)
		}
	}
	if len(patterns) != 1 {
		t.Errorf("dash patterns %q, want exactly one (the second line's, in the plot and the legend)", patterns)
	}
	for i := range 2 {
		ls, gs := lineStyle(i)
		if ls.Color != palette[i] || gs.Color != palette[i] {
			t.Errorf("line %d: colours %v, %v", i, ls.Color, gs.Color)
		}
	}
	l0, g0 := lineStyle(0)
	l1, g1 := lineStyle(1)
	if len(l0.Dashes) != 0 || len(l1.Dashes) == 0 || g0.Shape == g1.Shape || g1.Radius >= g0.Radius {
		t.Errorf("line 0: dashes %v, %T r %v; line 1: %v, %T r %v", l0.Dashes, g0.Shape, g0.Radius, l1.Dashes, g1.Shape, g1.Radius)
	}
	for i := range 10 {
		for j := range i {
			li, gi := lineStyle(i)
			lj, gj := lineStyle(j)
			if slices.Equal(li.Dashes, lj.Dashes) || gi.Shape == gj.Shape {
				t.Errorf("lines %d and %d share a dash pattern or a glyph", j, i)
			}
		}
	}
	again := filepath.Join(dir, "q.svg")
	if err := tb.Plot(Chart{Title: "t", X: "x", Y: "y"}, again); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again); !bytes.Equal(b, svg) {
		t.Error("the same table drew two different SVGs")
	}
}

// TestPlotClampsAtZero: an interval that reaches below 0 is drawn from 0,
// so the axis starts at 0, not at its low end, unless the chart is Signed;
// the plot draws either way.
func TestPlotClampsAtZero(t *testing.T) {
	tb := Table{LabelName: "alg", Header: []string{"x", "y", "ci"}}
	tb.Add("lkcs", 1, 2, 5)
	tb.Add("lkcs", 2, 8, 5)
	for _, c := range []struct {
		signed bool
		min    float64
	}{{false, 0}, {true, -3}} {
		p, err := tb.chart(Chart{X: "x", Y: "y", CI: "ci", Signed: c.signed})
		if err != nil {
			t.Fatal(err)
		}
		if p.Y.Min != c.min || p.Y.Max != 13 {
			t.Errorf("signed %v: axis %v..%v, want %v..13", c.signed, p.Y.Min, p.Y.Max, c.min)
		}
		if err := tb.Plot(Chart{X: "x", Y: "y", CI: "ci", Signed: c.signed}, filepath.Join(t.TempDir(), "p.svg")); err != nil {
			t.Error(err)
		}
	}
}

// TestPlotFraction: a fraction's interval is drawn within 0..1, so the
// axis ends at 1 however wide the band.
func TestPlotFraction(t *testing.T) {
	tb := Table{LabelName: "ftgcs", Header: []string{"x", "y", "band"}}
	tb.Add("ftgcs", 1, 0.2, 0.5)
	tb.Add("ftgcs", 2, 0.9, 0.5)
	p, err := tb.chart(Chart{X: "x", Y: "y", CI: "band", Fraction: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0 || p.Y.Max != 1 {
		t.Errorf("axis %v..%v, want 0..1", p.Y.Min, p.Y.Max)
	}
}
