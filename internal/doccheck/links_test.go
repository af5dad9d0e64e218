package doccheck

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestMarkdownLinks reads every tracked Markdown file and checks each
// relative link: the file or directory it names exists, and its #anchor,
// in a Markdown target (or the same file), is the GitHub slug of one of the
// target's headings. Links with a scheme (https:, mailto:) are not followed.
func TestMarkdownLinks(t *testing.T) {
	root, files := trackedFiles(t)
	anchors := map[string]map[string]bool{} // per slash path, the heading slugs
	slugsOf := func(p string) map[string]bool {
		if a, ok := anchors[p]; ok {
			return a
		}
		a := headingSlugs(t, filepath.Join(root, filepath.FromSlash(p)))
		anchors[p] = a
		return a
	}
	for _, f := range files {
		if !strings.HasSuffix(f.path, ".md") {
			continue
		}
		for _, l := range markdownLinks(t, filepath.Join(root, filepath.FromSlash(f.path))) {
			target, anchor, _ := strings.Cut(l.target, "#")
			p := f.path
			if target != "" {
				p = path.Join(path.Dir(f.path), target)
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", f.path, l.line, l.target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(p, ".md") {
				continue
			}
			if !slugsOf(p)[anchor] {
				t.Errorf("%s:%d: link to %s: %s has no heading with the anchor #%s", f.path, l.line, l.target, p, anchor)
			}
		}
	}
}

// A link is the target of one Markdown link and the line it is on.
type link struct {
	line   int
	target string
}

var (
	// inlineLink matches [text](target) and ![alt](target), with an
	// optional title.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefinition matches a reference definition, [name]: target.
	refDefinition = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	// codeSpan matches an inline code span, whose text is no link.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// scheme matches the start of an absolute URL.
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// markdownLinks lists the relative links of a Markdown file, outside code
// blocks and code spans.
func markdownLinks(t *testing.T, file string) []link {
	t.Helper()
	var out []link
	eachLine(t, file, func(n int, text string) {
		text = codeSpan.ReplaceAllString(text, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		if m := refDefinition.FindStringSubmatch(text); m != nil {
			targets = append(targets, m[1])
		}
		for _, tg := range targets {
			if !scheme.MatchString(tg) && !strings.HasPrefix(tg, "//") {
				out = append(out, link{n, tg})
			}
		}
	})
	return out
}

// heading matches an ATX heading and captures its text.
var heading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)

// headingSlugs returns the anchors GitHub gives the headings of a Markdown
// file: the heading's text, lower case, without punctuation, spaces as
// hyphens, and -1, -2, ... after a repeated slug.
func headingSlugs(t *testing.T, file string) map[string]bool {
	t.Helper()
	slugs := map[string]bool{}
	seen := map[string]int{}
	eachLine(t, file, func(_ int, text string) {
		m := heading.FindStringSubmatch(text)
		if m == nil {
			return
		}
		s := slug(m[1])
		if k := seen[s]; k > 0 {
			seen[s]++
			s += "-" + strconv.Itoa(k)
		} else {
			seen[s] = 1
		}
		slugs[s] = true
	})
	return slugs
}

// headingMarkup matches what GitHub renders away before it makes a slug:
// a link's target (its text stays) and HTML tags.
var headingMarkup = regexp.MustCompile(`\]\([^)]*\)|<[^>]+>`)

// slug is GitHub's anchor for a heading's text.
func slug(text string) string {
	text = headingMarkup.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachLine calls f with every line of a Markdown file outside fenced code
// blocks, numbered from 1.
func eachLine(t *testing.T, file string, f func(n int, text string)) {
	t.Helper()
	r, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	fence := ""
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		trimmed := strings.TrimLeft(text, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		f(n, text)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// TestSlug checks the anchors of headings the docs link to.
func TestSlug(t *testing.T) {
	for text, want := range map[string]string{
		"Local (l_i,k_i)-CS":                                "local-l_ik_i-cs",
		"Why S is not enough":                               "why-s-is-not-enough",
		"The study of section 6: `critsec experiment ft07`": "the-study-of-section-6-critsec-experiment-ft07",
		"k_i-LMUTEX = Co(LMUTIN) (`alg/lmutex`)":            "k_i-lmutex--colmutin-alglmutex",
		"Fault tolerance: failure detectors, crashes, and the k-mutex that survives n−1 of them": "fault-tolerance-failure-detectors-crashes-and-the-k-mutex-that-survives-n1-of-them",
		"See [the guide](checker.md) first": "see-the-guide-first",
	} {
		if got := slug(text); got != want {
			t.Errorf("slug(%q) = %q, want %q", text, got, want)
		}
	}
}
