package experiment

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Table is the result of a study: one row per run, columns named by Header.
// Numbers are formatted with strconv 'g' and shortest precision, so a table
// written twice from the same runs is byte-identical.
type Table struct {
	Header []string
	Rows   [][]float64
	// Labels holds one string column (e.g. the algorithm name) per row,
	// written first under LabelName; empty when the study has none.
	LabelName string
	Labels    []string
	// TagNames name further string columns, written after the label (e.g.
	// a topology, a run's outcome); Tags holds them per row, nil for a row
	// added with Add (written empty).
	TagNames []string
	Tags     [][]string
}

// Add appends a row.
func (t *Table) Add(label string, vals ...float64) {
	t.Labels = append(t.Labels, label)
	t.Rows = append(t.Rows, vals)
	t.Tags = append(t.Tags, nil)
}

// AddTagged appends a row with its tags (one per TagNames).
func (t *Table) AddTagged(label string, tags []string, vals ...float64) {
	t.Add(label, vals...)
	t.Tags[len(t.Tags)-1] = tags
}

// head is the header line: the label's name, the tags' names, the numbers'.
func (t *Table) head() []string {
	var h []string
	if t.LabelName != "" {
		h = append(h, t.LabelName)
	}
	h = append(h, t.TagNames...)
	return append(h, t.Header...)
}

// text returns the string columns of row i: its label and its tags.
func (t *Table) text(i int) []string {
	var rec []string
	if t.LabelName != "" {
		rec = append(rec, t.Labels[i])
	}
	for j := range t.TagNames {
		tag := ""
		if i < len(t.Tags) && j < len(t.Tags[i]) {
			tag = t.Tags[i][j]
		}
		rec = append(rec, tag)
	}
	return rec
}

// WriteCSV writes the table with a header line.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.head()); err != nil {
		return err
	}
	for i, r := range t.Rows {
		rec := t.text(i)
		for _, v := range r {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteText writes the table as aligned columns for a terminal, numbers with
// at most 4 significant digits.
func (t *Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(t.head(), "\t")+"\t")
	for i, r := range t.Rows {
		rec := t.text(i)
		for _, v := range r {
			rec = append(rec, strconv.FormatFloat(v, 'g', 4, 64))
		}
		fmt.Fprintln(tw, strings.Join(rec, "\t")+"\t")
	}
	return tw.Flush()
}

// Column returns the index of the named column, or an error listing them.
func (t *Table) Column(name string) (int, error) {
	for i, h := range t.Header {
		if h == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no column %q (have %s)", name, strings.Join(t.Header, ", "))
}

// Chart describes a line chart of y against x, one line per label. CI,
// when set, names the column of the half-widths of y's 95 % confidence
// intervals, drawn as error bars (a NaN half-width draws none).
//
// Every y is taken to be a quantity that cannot be negative (a count, a
// time, a rate), as every study's is: an interval around a y >= 0 that
// reaches below 0 is drawn from 0, and the axis does not extend below 0
// for it. Signed turns that off, for a y that may be negative. Fraction
// says y is a fraction (a share, a distribution function): an interval is
// drawn within 0..1 too. Dense draws the lines without glyphs, for series
// of many points (a timeline).
type Chart struct {
	Title, X, Y             string
	CI                      string
	LogX, LogY              bool
	XLabel, YLabel          string
	Signed, Fraction, Dense bool
}

// palette is a fixed list of distinguishable colours, so plots are stable.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
	color.RGBA{0xbc, 0xbd, 0x22, 0xff}, color.RGBA{0x17, 0xbe, 0xcf, 0xff},
	color.RGBA{0x00, 0x00, 0x00, 0xff}, color.RGBA{0x1a, 0x1a, 0x80, 0xff},
}

// Plot draws c from t into path; the file extension (.svg, .png, .pdf)
// chooses the format. Lines appear in the order their labels first occur;
// the points of a line are joined in increasing x. Line i has its own
// colour, dash pattern and glyph (lineStyle), so that lines drawn on top
// of each other stay readable; the legend shows all three.
//
// The legend stands to the right of the axes, off the data. Any table is
// either drawn or refused with one error line: a table with no rows, a
// value that is NaN, infinite or beyond ±1e300, or a value <= 0 or below
// 1e-300 on a log axis is refused, naming the row (a half-width may be
// NaN: no interval; an interval that reaches 0 on a log axis is drawn to
// the axis's bottom). A log axis spans
// the powers of ten around its values (logAxis), so one point or equal
// points draw too; a linear one with equal values is widened by gonum (±1). The file is written whole or not at all
// (WriteFileAtomic): a refused or failed plot leaves no file behind and does
// not touch an earlier one.
func (t *Table) Plot(c Chart, path string) error {
	p, err := t.chart(c)
	if err != nil {
		return err
	}
	return savePlot(p, path)
}

// savePlot renders p into path (WriteFileAtomic) in the format its
// extension names.
func savePlot(p *plot.Plot, path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	return WriteFileAtomic(path, func(w io.Writer) error {
		wt, err := render(p, format)
		if err != nil {
			return err
		}
		_, err = wt.WriteTo(w)
		return err
	})
}

// chart builds the plot of c, after checking every value it draws.
func (t *Table) chart(c Chart) (*plot.Plot, error) {
	xi, err := t.Column(c.X)
	if err != nil {
		return nil, err
	}
	yi, err := t.Column(c.Y)
	if err != nil {
		return nil, err
	}
	ci := -1
	if c.CI != "" {
		if ci, err = t.Column(c.CI); err != nil {
			return nil, err
		}
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("plot %q: the table has no rows to draw", c.Title)
	}
	var order []string
	pts := map[string]plotter.XYs{}
	bars := map[string]*interval{}
	xs := make([]float64, len(t.Rows))
	ys := make([]float64, 0, len(t.Rows))
	for i, r := range t.Rows {
		l := t.label(i)
		for _, v := range []struct {
			col string
			log bool
			val float64
		}{{c.X, c.LogX, r[xi]}, {c.Y, c.LogY, r[yi]}} {
			if why := undrawable(v.val, v.log); why != "" {
				return nil, fmt.Errorf("plot %q: row %d (%s) has %s = %v: %s", c.Title, i+1, orDefault(l, "no label"), v.col, v.val, why)
			}
		}
		if _, ok := pts[l]; !ok {
			order = append(order, l)
		}
		pts[l] = append(pts[l], plotter.XY{X: r[xi], Y: r[yi]})
		xs[i] = r[xi]
		ys = append(ys, r[yi])
		if ci < 0 || math.IsNaN(r[ci]) {
			continue
		}
		h := math.Abs(r[ci])
		if why := undrawable(h, false); why != "" || r[yi]+h > maxPlotted || r[yi]-h < -maxPlotted {
			return nil, fmt.Errorf("plot %q: row %d (%s) has %s = %v: its interval is %s", c.Title, i+1, orDefault(l, "no label"), c.CI, r[ci], orDefault(why, "too large to draw (beyond ±1e300)"))
		}
		low, high := h, h
		if !c.Signed && r[yi] >= 0 {
			low = min(h, r[yi]) // a quantity that cannot be negative
		}
		if c.Fraction && r[yi] <= 1 {
			high = min(h, 1-r[yi])
		}
		if bars[l] == nil {
			bars[l] = &interval{}
		}
		bars[l].XYs = append(bars[l].XYs, plotter.XY{X: r[xi], Y: r[yi]})
		bars[l].YErrors = append(bars[l].YErrors, struct{ Low, High float64 }{low, high})
		ys = append(ys, r[yi]+high)
		if !c.LogY || r[yi]-low > 0 {
			ys = append(ys, r[yi]-low)
		}
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = orDefault(c.XLabel, c.X)
	p.Y.Label.Text = orDefault(c.YLabel, c.Y)
	p.Add(plotter.NewGrid())
	for i, l := range order {
		sort.SliceStable(pts[l], func(a, b int) bool { return pts[l][a].X < pts[l][b].X })
		line, points, err := plotter.NewLinePoints(pts[l])
		if err != nil {
			return nil, fmt.Errorf("plot %q, line %s: %w", c.Title, l, err)
		}
		line.LineStyle, points.GlyphStyle = lineStyle(i)
		p.Add(line)
		if !c.Dense {
			p.Add(points)
		}
		if b := bars[l]; b != nil {
			if c.LogY {
				b.floor(decadeBelow(slices.Min(ys)))
			}
			eb, err := plotter.NewYErrorBars(b)
			if err != nil {
				return nil, fmt.Errorf("plot %q, line %s: %w", c.Title, l, err)
			}
			eb.Color = line.Color
			p.Add(eb)
		}
		switch {
		case l == "":
		case c.Dense:
			p.Legend.Add(l, line)
		default:
			p.Legend.Add(l, line, points)
		}
	}
	if c.LogX {
		logAxis(&p.X, xs)
	}
	if c.LogY {
		logAxis(&p.Y, ys)
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// dashPatterns and glyphShapes give line i of a chart its look with
// palette (lineStyle). Later lines are drawn over earlier ones: their
// dashes leave gaps through which an equal earlier line shows, and their
// glyphs, smaller and of another shape, sit inside an earlier line's.
var (
	dashPatterns = [][]vg.Length{nil, {6, 3}, {2, 2}, {8, 3, 2, 3}, {12, 4}, {4, 2, 1, 2, 1, 2}, {1, 3}, {8, 2, 2, 2, 2, 2}, {3, 5}, {10, 2, 4, 2}}
	glyphShapes  = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
		draw.RingGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}, diamondGlyph{fill: true}, diamondGlyph{}}
)

// lineStyle is the look of line i of a chart: a fixed assignment by index,
// so that a plot drawn twice is byte-identical. The first 10 lines differ
// in colour, dash pattern and glyph, each from every other; later ones
// repeat a pattern and a glyph with another colour or size. Glyphs shrink
// from 4 points (line 0) by a quarter point a line to 2.
func lineStyle(i int) (draw.LineStyle, draw.GlyphStyle) {
	col := palette[i%len(palette)]
	return draw.LineStyle{Color: col, Width: vg.Points(1), Dashes: dashPatterns[i%len(dashPatterns)]},
		draw.GlyphStyle{Color: col, Shape: glyphShapes[i%len(glyphShapes)], Radius: vg.Points(max(4-0.25*float64(i), 2))}
}

// diamondGlyph is a square standing on a corner, filled or outlined: the
// glyphs beyond gonum's eight.
type diamondGlyph struct{ fill bool }

// DrawGlyph implements draw.GlyphDrawer.
func (d diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	p.Close()
	if d.fill {
		c.SetColor(sty.Color)
		c.Fill(p)
		return
	}
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.5)})
	c.Stroke(p)
}

// interval holds the error bars of one line: the points and the
// half-widths below and above them.
type interval struct {
	plotter.XYs
	plotter.YErrors
}

// floor shortens the bars that reach below bottom (> 0) to end there: a
// log axis cannot show 0 or less.
func (b *interval) floor(bottom float64) {
	for i, p := range b.XYs {
		if p.Y-b.YErrors[i].Low < bottom {
			b.YErrors[i].Low = max(0, p.Y-bottom)
		}
	}
}

func (t *Table) label(i int) string {
	if i < len(t.Labels) {
		return t.Labels[i]
	}
	return ""
}

// maxPlotted bounds the magnitude of a drawn value, so that every axis
// range, its padding and its ticks stay finite.
const maxPlotted = 1e300

// undrawable says why v cannot be drawn on a linear or log axis, or "".
func undrawable(v float64, log bool) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "not a finite number"
	case math.Abs(v) > maxPlotted:
		return "too large to draw (beyond ±1e300)"
	case log && v <= 0:
		return "a log axis shows only values > 0"
	case log && v < 1/maxPlotted:
		return "too small for a log axis (below 1e-300)"
	}
	return ""
}

// logAxis sets a log scale on a and widens it to the powers of ten around
// its values (all > 0), one decade more each side when they are one power
// of ten: every log axis then has labelled ticks at both ends, and gonum's
// own padding of a single value (±1, below 0) never applies.
func logAxis(a *plot.Axis, vals []float64) {
	a.Scale, a.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	a.Min, a.Max = decadeBelow(slices.Min(vals)), decadeAbove(slices.Max(vals))
	if a.Min == a.Max {
		a.Min, a.Max = a.Min/10, a.Max*10
	}
}

// decadeBelow is the largest power of ten <= v (v > 0), decadeAbove the
// smallest >= v; both correct math.Log10's rounding (Log10(0.1) is not -1).
func decadeBelow(v float64) float64 {
	e := int(math.Floor(math.Log10(v)))
	if math.Pow10(e+1) <= v {
		e++
	}
	if math.Pow10(e) > v {
		e--
	}
	return math.Pow10(e)
}

func decadeAbove(v float64) float64 {
	e := int(math.Ceil(math.Log10(v)))
	if math.Pow10(e-1) >= v {
		e--
	}
	if math.Pow10(e) < v {
		e++
	}
	return math.Pow10(e)
}

// render draws p in format: the axes 7 by 4.5 inches, and the legend, if
// any, in a column to their right, so that it never covers a line. gonum
// panics on some inputs (chart checks for those it is known to); a panic
// is returned as an error, so a plot never takes the process down.
func render(p *plot.Plot, format string) (wt io.WriterTo, err error) {
	defer func() {
		if r := recover(); r != nil {
			wt, err = nil, fmt.Errorf("gonum/plot cannot draw it: %v", r)
		}
	}()
	const w, h = 7 * vg.Inch, 4.5 * vg.Inch
	legend := p.Legend
	legend.ThumbnailWidth = vg.Points(36) // room for two periods of every dash pattern
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = legend }()
	var lw vg.Length
	if r := legend.Rectangle(draw.Canvas{}); r.Max.X > r.Min.X {
		lw = (r.Max.X-r.Min.X)*1.1 + vg.Points(12) // text drawn in a PNG may run wider than measured
	}
	c, err := draw.NewFormattedCanvas(w+lw, h, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	if lw > 0 {
		legend.Draw(draw.Crop(dc, w, -vg.Points(6), 0, -vg.Points(12)))
	}
	return c, nil
}

// WriteFileAtomic creates path (and its directory) with what write writes,
// whole or not at all: it writes a temporary file in the same directory
// and renames it over path only when write and the close succeeded, so an
// error, a panic or a kill never leaves a partial or empty file at path.
// The file gets mode 0644.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	renamed = true
	return nil
}

// SaveCSV writes the table as CSV to path (WriteFileAtomic).
func (t *Table) SaveCSV(path string) error {
	return WriteFileAtomic(path, t.WriteCSV)
}

func orDefault(s, d string) string {
	if s != "" {
		return s
	}
	return d
}
