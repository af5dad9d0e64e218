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
// A reference in prose to a section, `docs/x.md, "Heading"`, must name a
// file that exists and the start of one of its headings.
func TestMarkdownLinks(t *testing.T) {
	root, files := trackedFiles(t)
	type headings struct {
		slugs map[string]bool
		texts []string
	}
	cache := map[string]headings{} // per slash path
	headingsOf := func(p string) headings {
		if h, ok := cache[p]; ok {
			return h
		}
		slugs, texts := readHeadings(t, filepath.Join(root, filepath.FromSlash(p)))
		cache[p] = headings{slugs, texts}
		return cache[p]
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil
	}
	for _, f := range files {
		if !strings.HasSuffix(f.path, ".md") {
			continue
		}
		links, refs := markdownLinks(t, filepath.Join(root, filepath.FromSlash(f.path)))
		for _, l := range links {
			target, anchor, _ := strings.Cut(l.target, "#")
			p := f.path
			if target != "" {
				p = path.Join(path.Dir(f.path), target)
				if !exists(p) {
					t.Errorf("%s:%d: link to %s: no such file", f.path, l.line, l.target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(p, ".md") {
				continue
			}
			if !headingsOf(p).slugs[anchor] {
				t.Errorf("%s:%d: link to %s: %s has no heading with the anchor #%s", f.path, l.line, l.target, p, anchor)
			}
		}
		for _, r := range refs {
			p := path.Join(path.Dir(f.path), r.target)
			if strings.HasPrefix(r.target, "docs/") || r.target == "README.md" {
				p = r.target
			}
			if !exists(p) {
				t.Errorf("%s:%d: reference to %s, %q: no such file", f.path, r.line, r.target, r.section)
				continue
			}
			found := false
			for _, h := range headingsOf(p).texts {
				found = found || strings.HasPrefix(h, r.section)
			}
			if !found {
				t.Errorf("%s:%d: reference to %s, %q: no heading of %s starts with it (name a heading, or link to its #anchor)", f.path, r.line, r.target, r.section, p)
			}
		}
	}
}

// A link is the target of one Markdown link, or of one reference in prose
// to a section, and the line it starts on.
type link struct {
	line    int
	target  string
	section string // the quoted heading of a reference in prose
}

var (
	// inlineLink matches [text](target) and ![alt](target), with an
	// optional title; the text may run over lines.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefinition matches a reference definition, [name]: target.
	refDefinition = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	// sectionRef matches a reference in prose to a section of a Markdown
	// file, docs/network.md, "Failure detection", over lines too.
	sectionRef = regexp.MustCompile(`([\w./-]+\.md),?\s+"([^"]{1,100})"`)
	// codeSpan matches an inline code span, whose text is no link.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// scheme matches the start of an absolute URL.
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// markdownLinks lists the relative links of a Markdown file and its
// references in prose to sections, outside code blocks and code spans.
func markdownLinks(t *testing.T, file string) (links, refs []link) {
	t.Helper()
	var lines []string
	eachLine(t, file, func(n int, text string) {
		for len(lines) < n-1 {
			lines = append(lines, "") // the lines of a code block
		}
		lines = append(lines, codeSpan.ReplaceAllString(text, ""))
	})
	text := strings.Join(lines, "\n")
	lineAt := func(i int) int { return 1 + strings.Count(text[:i], "\n") }
	for _, re := range []*regexp.Regexp{inlineLink, refDefinition} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			tg := text[m[2]:m[3]]
			if !scheme.MatchString(tg) && !strings.HasPrefix(tg, "//") {
				links = append(links, link{line: lineAt(m[0]), target: tg})
			}
		}
	}
	for _, m := range sectionRef.FindAllStringSubmatchIndex(text, -1) {
		refs = append(refs, link{line: lineAt(m[0]), target: text[m[2]:m[3]], section: strings.Join(strings.Fields(text[m[4]:m[5]]), " ")})
	}
	return links, refs
}

// heading matches an ATX heading and captures its text.
var heading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)

// readHeadings returns the anchors GitHub gives the headings of a
// Markdown file (the heading's text, lower case, without punctuation,
// spaces as hyphens, and -1, -2, ... after a repeated slug) and the
// headings' texts without their markup.
func readHeadings(t *testing.T, file string) (slugs map[string]bool, texts []string) {
	t.Helper()
	slugs = map[string]bool{}
	seen := map[string]int{}
	eachLine(t, file, func(_ int, text string) {
		m := heading.FindStringSubmatch(text)
		if m == nil {
			return
		}
		texts = append(texts, strings.NewReplacer("`", "", "*", "", "[", "").Replace(headingMarkup.ReplaceAllString(m[1], "")))
		s := slug(m[1])
		if k := seen[s]; k > 0 {
			seen[s]++
			s += "-" + strconv.Itoa(k)
		} else {
			seen[s] = 1
		}
		slugs[s] = true
	})
	return slugs, texts
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

// TestMarkdownLinksParse checks what markdownLinks reads and what it
// leaves: code blocks, code spans and absolute URLs are no links; a link
// may run over lines; a prose reference names a file and a heading.
func TestMarkdownLinksParse(t *testing.T) {
	file := filepath.Join(t.TempDir(), "page.md")
	text := "# Page\n" +
		"See [the guide](guide.md#start) and [a link that runs\n" +
		"over lines](other.md), not `[code](code.md)` nor [the web](https://example.com).\n" +
		"```\n[in a block](block.md)\n```\n" +
		"As docs/network.md, \"Failure\n detection\" says.\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	links, refs := markdownLinks(t, file)
	want := []link{{line: 2, target: "guide.md#start"}, {line: 2, target: "other.md"}}
	if len(links) != len(want) || links[0] != want[0] || links[1] != want[1] {
		t.Errorf("links %v, want %v", links, want)
	}
	wantRef := link{line: 7, target: "docs/network.md", section: "Failure detection"}
	if len(refs) != 1 || refs[0] != wantRef {
		t.Errorf("references %v, want [%v]", refs, wantRef)
	}
}
