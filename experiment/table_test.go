package experiment

import (
	"bytes"
	"os"
	"path/filepath"
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
