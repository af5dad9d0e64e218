package experiment

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
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
}

// Add appends a row.
func (t *Table) Add(label string, vals ...float64) {
	t.Labels = append(t.Labels, label)
	t.Rows = append(t.Rows, vals)
}

// WriteCSV writes the table with a header line.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := t.Header
	if t.LabelName != "" {
		head = append([]string{t.LabelName}, head...)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i, r := range t.Rows {
		rec := make([]string, 0, len(r)+1)
		if t.LabelName != "" {
			rec = append(rec, t.Labels[i])
		}
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
	head := t.Header
	if t.LabelName != "" {
		head = append([]string{t.LabelName}, head...)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for i, r := range t.Rows {
		rec := make([]string, 0, len(r)+1)
		if t.LabelName != "" {
			rec = append(rec, t.Labels[i])
		}
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

// Chart describes a line chart of y against x, one line per label.
type Chart struct {
	Title, X, Y    string
	LogX, LogY     bool
	XLabel, YLabel string
}

// palette is a fixed list of distinguishable colours, so plots are stable.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
}

// Plot draws c from t into path; the file extension (.svg, .png, .pdf)
// chooses the format. Lines appear in the order their labels first occur.
func (t *Table) Plot(c Chart, path string) error {
	xi, err := t.Column(c.X)
	if err != nil {
		return err
	}
	yi, err := t.Column(c.Y)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = orDefault(c.XLabel, c.X)
	p.Y.Label.Text = orDefault(c.YLabel, c.Y)
	if c.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	if c.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	p.Add(plotter.NewGrid())
	var order []string
	pts := map[string]plotter.XYs{}
	for i, r := range t.Rows {
		l := ""
		if i < len(t.Labels) {
			l = t.Labels[i]
		}
		if _, ok := pts[l]; !ok {
			order = append(order, l)
		}
		pts[l] = append(pts[l], plotter.XY{X: r[xi], Y: r[yi]})
	}
	for i, l := range order {
		line, points, err := plotter.NewLinePoints(pts[l])
		if err != nil {
			return fmt.Errorf("plot %s: %w", l, err)
		}
		col := palette[i%len(palette)]
		line.Color, points.Color = col, col
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		if l != "" {
			p.Legend.Add(l, line, points)
		}
	}
	p.Legend.Top, p.Legend.Left = true, true
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func orDefault(s, d string) string {
	if s != "" {
		return s
	}
	return d
}
