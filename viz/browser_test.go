package viz

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// browser returns a chromedp context on a headless Chromium, or skips the
// test when none is installed and CRITSEC_REQUIRE_BROWSER is unset (CI
// sets it, and installs Debian's chromium).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CRITSEC_REQUIRE_BROWSER") == "" {
			t.Skip("no chromium on PATH (install Debian's chromium; CRITSEC_REQUIRE_BROWSER=1 makes this a failure)")
		}
		t.Fatal("CRITSEC_REQUIRE_BROWSER is set but no chromium is on PATH")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1200, 800),
		chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first run starts the browser, whose life is that run's context:
	// no timeout on it, only on what follows.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	return ctx
}

// writePage writes the page of the trace file name into dir.
func writePage(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := Page(&page, bytes.NewReader(b), filepath.Base(name), Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(name)+".html")
	if err := os.WriteFile(out, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + out
}

func count(ctx context.Context, t *testing.T, selector string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", selector)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBrowser opens the page of the published Maekawa deadlock (check
// --alg maekawa-paper --n 4 --coterie grid) and of a hand-written trace
// that breaks its bound in headless Chromium: the process lines, arrows
// and bound lines are in the DOM; stepping one event at a time shows the
// violation exactly at the step where it breaks (the deadlock: the last
// event; the bound: the event trace.Check names) and not before; a
// screenshot of each is saved as a test artifact (go test -artifacts).
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	dir := t.ArtifactDir()
	for _, tc := range []struct {
		file              string
		procs, violStep   int
		minArrows, events int
		hover             map[string]string // selector -> text its tooltip holds
	}{
		// 34 events; 15 messages, all received (docs/maekawa.md: 19 steps).
		{"../docs/traces/maekawa-paper-deadlock.jsonl", 4, 34, 15, 34, map[string]string{
			`.msg[data-kind="REQUEST"]`: "REQUEST  P2 → P1\nsent t=1, received t=5 (4 later)",
			"#bound-hi":                 "upper bound k = 1",
		}},
		// Line 10 of the file (event 9) puts P2 InCS beside P1: k = 1 broken.
		{"testdata/bounds.jsonl", 3, 9, 3, 10, map[string]string{
			".cs":                        "P1 InCS from t=3, still InCS",
			`.msg[data-kind="mx.REPLY"]`: "mx.REPLY  P2 → P1",
			"#chart-hit":                 "#InCS = ",
		}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			url := writePage(t, dir, tc.file)
			if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
				t.Fatal(err)
			}
			title, err := chromedp.Run(ctx, chromedp.Title())
			if err != nil {
				t.Fatal(err)
			}
			if title != filepath.Base(tc.file) {
				t.Errorf("title %q", title)
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#step-last"))); err != nil {
				t.Fatal(err)
			}
			if n := count(ctx, t, "line.proc"); n != tc.procs {
				t.Errorf("%d process lines, want %d", n, tc.procs)
			}
			if n := count(ctx, t, ".msg"); n < tc.minArrows {
				t.Errorf("%d arrows, want at least %d", n, tc.minArrows)
			}
			if count(ctx, t, "#bound-lo") != 1 || count(ctx, t, "#bound-hi") != 1 || count(ctx, t, "#count") != 1 {
				t.Error("the chart lacks its bound lines or its #InCS line")
			}
			for sel, want := range tc.hover {
				if got := hover(ctx, t, sel); !strings.Contains(got, want) {
					t.Errorf("hovering %s shows %q, want %q in it", sel, got, want)
				}
			}
			// Step from the start, one event at a time.
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#step-first"))); err != nil {
				t.Fatal(err)
			}
			for step := 1; step <= tc.events; step++ {
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#step-next"))); err != nil {
					t.Fatal(err)
				}
				hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("violation").hidden`))
				if err != nil {
					t.Fatal(err)
				}
				label, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("step-label").textContent`))
				if err != nil {
					t.Fatal(err)
				}
				if label != "step "+strconv.Itoa(step)+" / "+strconv.Itoa(tc.events) {
					t.Fatalf("after %d clicks the label reads %q", step, label)
				}
				if hidden != (step < tc.violStep) {
					t.Fatalf("step %d: violation shown = %v, want it from step %d on", step, !hidden, tc.violStep)
				}
				if step == tc.violStep {
					if count(ctx, t, "#violation-mark") != 1 || count(ctx, t, "#current") != 1 {
						t.Error("no violation mark or current event in the diagram")
					}
					buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
					if err != nil {
						t.Fatal(err)
					}
					png := filepath.Join(dir, filepath.Base(tc.file)+".png")
					if err := os.WriteFile(png, buf, 0o644); err != nil {
						t.Fatal(err)
					}
					t.Logf("screenshot: %s", png)
					break
				}
			}
		})
	}
}

// TestBrowserLocal: the page of a local problem offers every drawn
// process's neighborhood, and draws the chosen one's l_i and k_i.
func TestBrowserLocal(t *testing.T) {
	ctx := browser(t)
	url := writePage(t, t.ArtifactDir(), "testdata/local.jsonl")
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		t.Fatal(err)
	}
	if n := count(ctx, t, "#hood option"); n != 5 {
		t.Errorf("%d choices of neighborhood, want all processes and N1..N4", n)
	}
	// testdata/local.jsonl: l_4 = 1, k_4 = 2; N4 ∪ {P4} = {P3, P4}.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById("hood"); s.value = "4"; s.dispatchEvent(new Event("change")); })()`)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{"#bound-lo": "l4 = 1", "#bound-hi": "k4 = 2"} {
		if got := hover(ctx, t, sel); got != want {
			t.Errorf("hovering %s shows %q, want %q", sel, got, want)
		}
	}
	label, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".ylabel").textContent`))
	if err != nil || label != "#InCS in N4 ∪ {P4}" {
		t.Errorf("the chart is labelled %q (%v)", label, err)
	}
}

// hover moves the mouse to the middle of the first element matching
// selector and returns the tooltip's text ("" when none shows).
func hover(ctx context.Context, t *testing.T, selector string) string {
	t.Helper()
	xy, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, selector)))
	if err != nil {
		t.Fatalf("%s: %v", selector, err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1])); err != nil {
		t.Fatal(err)
	}
	tip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("tip").hidden ? "" : document.getElementById("tip").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

// TestBrowserLoadTime reports how long the page CRITSEC_VIZ_PAGE takes to
// load and draw in headless Chromium (docs/viz.md records a run on a
// million-event trace). It is a measurement, not a check: it runs only
// when the variable is set.
// TestBrowserWallClock: a node trace's times are seconds since 1970; the
// page labels its axis with offsets from the first event (0, 0.001, ...),
// not with ten-digit times that all look alike.
func TestBrowserWallClock(t *testing.T) {
	ctx := browser(t)
	url := writePage(t, t.ArtifactDir(), "testdata/node.jsonl")
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		t.Fatal(err)
	}
	ticks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("text.tick")].map((e) => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ticks) < 2 || ticks[0] != "0" {
		t.Fatalf("axis ticks %q, want offsets from the first event starting at 0", ticks)
	}
	for _, tk := range ticks {
		if len(tk) > 8 {
			t.Errorf("tick label %q: want a short offset (seconds since the first event)", tk)
		}
	}
}

func TestBrowserLoadTime(t *testing.T) {
	page := os.Getenv("CRITSEC_VIZ_PAGE")
	if page == "" {
		t.Skip("set CRITSEC_VIZ_PAGE to a page written by critsec viz")
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	for i := range 3 {
		start := time.Now()
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
			t.Fatal(err)
		}
		wall := time.Since(start)
		ready, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.vizReady`))
		if err != nil {
			t.Fatal(err)
		}
		arrows := count(ctx, t, ".msg")
		t.Logf("run %d: drawn %.0f ms after navigation start (%d ms wall, %d arrows drawn)", i+1, ready, wall.Milliseconds(), arrows)
		// The worst redraw: the whole detail window at once.
		fit, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(() => { const a = performance.now(); document.getElementById("zoom-fit").click(); return performance.now() - a; })()`))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d: fit (whole window) redrawn in %.0f ms, %d arrows drawn", i+1, fit, count(ctx, t, ".msg"))
	}
}
