package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// maxTracked is the largest file the repository holds outside docs/img.
const maxTracked = 1 << 20

// tracked is a file of the git index: its path relative to the module root
// and whether its executable bit is set.
type tracked struct {
	path string
	exec bool
}

// trackedFiles lists the files git tracks in the module's work tree. It
// skips the test where there is no git or no work tree (a module zip).
func trackedFiles(t *testing.T) (root string, files []tracked) {
	t.Helper()
	root = filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-s", "-z").Output()
	if err != nil {
		t.Skipf("no git work tree to list (%v): the repository checks need a clone", err)
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		files = append(files, tracked{path: path, exec: strings.HasPrefix(meta, "100755 ")})
	}
	return root, files
}

// executableMagic are the first bytes of ELF, Mach-O (both byte orders, 32
// and 64 bits, and universal binaries) and PE files.
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf},
	{0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// TestNoExecutablesOrLargeFiles refuses tracked executables (a binary
// format's magic, or the executable bit on a file that is not a #! script)
// and tracked files over 1 MiB outside docs/img: build outputs belong in
// .gitignore, not in the repository.
func TestNoExecutablesOrLargeFiles(t *testing.T) {
	root, files := trackedFiles(t)
	for _, f := range files {
		full := filepath.Join(root, f.path)
		info, err := os.Lstat(full)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a symbolic link
		}
		head := make([]byte, 4)
		if r, err := os.Open(full); err == nil {
			n, _ := r.Read(head)
			head = head[:n]
			r.Close()
		}
		for _, m := range executableMagic {
			if bytes.HasPrefix(head, m) && (len(m) > 2 || !isText(full)) {
				t.Errorf("%s: an executable (starts with %q): remove it with git rm and ignore the build output", f.path, m)
				break
			}
		}
		if f.exec && !bytes.HasPrefix(head, []byte("#!")) {
			t.Errorf("%s: executable bit on a file that is not a #! script: git update-index --chmod=-x", f.path)
		}
		if info.Size() > maxTracked && !strings.HasPrefix(f.path, "docs/img/") {
			t.Errorf("%s: %d bytes, over the 1 MiB allowed outside docs/img", f.path, info.Size())
		}
	}
}

// maxFuzzInputs is the most files a tracked fuzz corpus directory
// (testdata/fuzz/FuzzX) holds: the inputs that once failed, kept as
// regression tests; what the fuzzer generates stays in its cache.
const maxFuzzInputs = 10

// generatedCorpora lists, one line each, the fuzz corpus directories among
// paths that hold more than maxFuzzInputs files.
func generatedCorpora(paths []string) []string {
	count := map[string]int{}
	for _, p := range paths {
		dir, _ := filepath.Split(filepath.ToSlash(p))
		dir = strings.TrimSuffix(dir, "/")
		if parent, fuzz := filepath.Split(dir); strings.HasPrefix(fuzz, "Fuzz") && strings.HasSuffix(parent, "testdata/fuzz/") {
			count[dir]++
		}
	}
	var bad []string
	for dir, n := range count {
		if n > maxFuzzInputs {
			bad = append(bad, fmt.Sprintf("%s: %d files, over the %d allowed in a fuzz corpus: keep only the inputs that once failed and move seeds into f.Add", dir, n, maxFuzzInputs))
		}
	}
	slices.Sort(bad)
	return bad
}

// TestNoGeneratedFuzzCorpora refuses a tracked fuzz corpus of more than
// maxFuzzInputs files, which is a generated one.
func TestNoGeneratedFuzzCorpora(t *testing.T) {
	_, files := trackedFiles(t)
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	for _, line := range generatedCorpora(paths) {
		t.Error(line)
	}
}

// TestGeneratedCorporaRule: a corpus directory over the limit is named once,
// with its count; one at the limit, and files that are no corpus, are not.
func TestGeneratedCorporaRule(t *testing.T) {
	var paths []string
	for i := range maxFuzzInputs + 1 {
		paths = append(paths, fmt.Sprintf("coterie/testdata/fuzz/FuzzRead/%02d", i))
	}
	for i := range maxFuzzInputs {
		paths = append(paths, fmt.Sprintf("wal/testdata/fuzz/FuzzOpen/%02d", i), fmt.Sprintf("wal/testdata/golden/%02d", i), fmt.Sprintf("wal/testdata/fuzz/x%02d", i))
	}
	for i := range maxFuzzInputs + 1 {
		paths = append(paths, fmt.Sprintf("wal/testdata/other/FuzzOpen/%02d", i))
	}
	want := []string{fmt.Sprintf("coterie/testdata/fuzz/FuzzRead: %d files, over the %d allowed in a fuzz corpus: keep only the inputs that once failed and move seeds into f.Add", maxFuzzInputs+1, maxFuzzInputs)}
	if got := generatedCorpora(paths); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A rule names one way text can speak about how the work was organised
// instead of what the software does.
type rule struct {
	name string
	re   *regexp.Regexp
	only string   // a file suffix the rule applies to, or "" for every text file
	hint []string // the rule can match only a line whose lower case holds one of these
}

// processRules are the words the repository must not hold: the history of
// how a figure was reached belongs in git, not in the tree.
var processRules = []rule{
	{"work-item number", regexp.MustCompile(`(?i)\bissues?[\s#-]*\d+|\b(the|this|that)\s+issue('s)?\b|(?-i:(Issue|Session)\d)|\bitems?\s+\d+\b`), "",
		[]string{"issue", "session", "item"}},
	{"session number or session diary", regexp.MustCompile(`(?i)\bsessions?\s*#?\d+|\b(this|next|previous|same|earlier|later|each) sessions?\b|\bover sessions\b|\bsession to session\b`), "",
		[]string{"session"}},
	{"dated diary heading", regexp.MustCompile(`^(#{1,6}\s.*|\*\*[^*]*)\b\d{4}-\d{2}-\d{2}\b`), ".md",
		[]string{"#", "**"}},
	{"who ran what", regexp.MustCompile(`(?i)\bhelper\s+(agent|session)s?\b|\bhelpers'|\bhelper's\b|\bother helpers\b|\bsub-?agents?\b|\b(other|another|three|two) engineers?'?s?\b|\bthe lead\b|\breviewers?\b|\breviewer's\b|\breviewed by\b|\b(ran|run|built|measured|checked) by (the |a |an |another )?(lead|reviewer|helper|engineer|session|agent)s?\b`), "",
		[]string{"helper", "agent", "lead", "review", " by ", "engineer"}},
	{"machine path", regexp.MustCompile(`(^|[^\w.])/(work|root)/`), "",
		[]string{unmark("/wo·rk/"), unmark("/ro·ot/")}},
	{"test named after a work item", regexp.MustCompile(`^func (Test|Benchmark|Fuzz|Example)\w*(Issue|Session|Acceptance|Item)`), ".go",
		[]string{"func "}},
}

// unmark removes the middle dots that keep the refused examples below
// (and the machine paths the rule looks for) from being, in this file,
// the very words the repository must not hold.
func unmark(s string) string { return strings.ReplaceAll(s, "·", "") }

// thisFile holds the rules and the examples that test them.
const thisFile = "internal/doccheck/tree_test.go"

// TestNoProcessWords reads every tracked text file and lists each line
// that names a work item, a session, a dated diary entry, who ran what, or
// a path of the machine the work happened on, with the rule it breaks.
func TestNoProcessWords(t *testing.T) {
	root, files := trackedFiles(t)
	for _, f := range files {
		if f.path == thisFile {
			continue
		}
		full := filepath.Join(root, f.path)
		if !isText(full) {
			continue
		}
		for _, v := range violations(t, full) {
			t.Errorf("%s:%s", f.path, v)
		}
	}
}

// violations reads the file at path and lists "line: rule: text" for every
// line that breaks a rule.
func violations(t *testing.T, path string) []string {
	t.Helper()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		lower := strings.ToLower(sc.Text())
		for _, ru := range processRules {
			if ru.only != "" && !strings.HasSuffix(path, ru.only) || !containsAny(lower, ru.hint) {
				continue
			}
			if m := ru.re.FindString(sc.Text()); m != "" {
				out = append(out, fmt.Sprintf("%d: %s: %q", line, ru.name, strings.TrimSpace(m)))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// isText reports whether the file's first 8 KiB hold no NUL byte.
func isText(path string) bool {
	r, err := os.Open(path)
	if err != nil {
		return false
	}
	defer r.Close()
	b := make([]byte, 8<<10)
	n, _ := r.Read(b)
	return !bytes.Contains(b[:n], []byte{0})
}

// TestProcessRules checks the rules on lines they must refuse and on
// legitimate lines they must let through.
func TestProcessRules(t *testing.T) {
	refused := map[string]string{
		"Beyond this machine (is·sues 13 and 14, blocked)":                 "work-item number",
		"// TestCrashOfP64 (is·sue 9, it·em 6): at n = 64":                 "work-item number",
		"func TestIs·sue4Evidence(t *testing.T) {":                         "work-item number",
		"The is·sue-13 run again, merged":                                  "work-item number",
		"// with the is·sue's columns and every plot.":                     "work-item number",
		"a network of separate machines is it·em 7's measurement":          "work-item number",
		"the search before ses·sion 15.":                                   "session number or session diary",
		"The next ses·sions continue the run.":                             "session number or session diary",
		"**Ses·sion 13 (2026-11-26): continued to 1 312 481 280 states.**": "session number or session diary",
		"### With a token k-mutex (forest), 2026-11-2·4":                   "dated diary heading",
		"**Trust first (`cs.TrustGated`, 2026-11-2·6).** Much of":          "dated diary heading",
		"A review (hel·per agent, the same day) showed":                    "who ran what",
		"load average 1.9 (other hel·pers' builds)":                        "who ran what",
		"load average 10–12 from other engi·neers' jobs":                   "who ran what",
		"a re·viewer's instrumented count first showed it":                 "who ran what",
		"--disk-dir /wo·rk/tmp-lkcs \\":                                    "machine path",
		"(binary /wo·rk/runs/critsec-pb16)":                                "machine path",
		"func TestAccep·tance(t *testing.T) {":                             "test named after a work item",
	}
	for marked, want := range refused {
		line := unmark(marked)
		var got []string
		for _, ru := range processRules {
			if containsAny(strings.ToLower(line), ru.hint) && ru.re.MatchString(line) {
				got = append(got, ru.name)
			}
		}
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("%q: rules %v, want %q among them", line, got, want)
		}
	}
	for _, line := range []string{
		"see https://github.com/golang/go/issues/12345 for the bug",
		"// Package kmtest holds the test helpers of the k-mutex baselines",
		"t.Helper()",
		"crt, key, err := ca.Issue(cs.ID(i))",
		"// Issue makes node id's certificate and key (ECDSA P-256)",
		"a holder whose etcd session lease has a TTL; the session's TTL",
		"go build -o /tmp/demo/hello ./examples/hello",
		"its session notices and ends",
		"## Correctness evidence (`critsec check`)",
		"| 2026-11-26 | Intel Xeon, 2 vCPUs | 1.4·10⁹ states |",
		"staticcheck configuration (run by .ci/run)",
		"the leader of the ring passes the token",
		"func TestAcceptsOnlyCanonical(t *testing.T) {",
		"cd bench/etcd && go run . -duration 5s",
	} {
		for _, ru := range processRules {
			if containsAny(strings.ToLower(line), ru.hint) && ru.re.MatchString(line) {
				t.Errorf("%q: refused by %q, but it is legitimate", line, ru.name)
			}
		}
	}
}
