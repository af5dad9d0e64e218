package viz

import (
	_ "embed"
	"encoding/json"
	"html"
	"io"
	"strings"
)

// The page's assets, hand-written (no library, no network): the HTML
// skeleton, its style sheet and its script.
var (
	//go:embed assets/page.html
	pageHTML string
	//go:embed assets/viz.css
	pageCSS string
	//go:embed assets/viz.js
	pageJS string
)

// Write writes d as one self-contained HTML page to w.
func Write(w io.Writer, d *Data) error {
	// encoding/json escapes <, > and & (as \u003c ...), so the data cannot
	// end the script element that holds it.
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	r := strings.NewReplacer(
		"{{TITLE}}", html.EscapeString(d.Title),
		"{{CSS}}", pageCSS,
		"{{DATA}}", string(data),
		"{{JS}}", pageJS,
	)
	_, err = r.WriteString(w, pageHTML)
	return err
}

// Page reads the trace r and writes its page to w: Build, then Write.
func Page(w io.Writer, r io.Reader, title string, opt Options) error {
	d, err := Build(r, title, opt)
	if err != nil {
		return err
	}
	return Write(w, d)
}
