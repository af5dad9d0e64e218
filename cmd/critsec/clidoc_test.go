package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command tree")

// cliReferencePath is the committed command-line reference.
const cliReferencePath = "../../docs/cli.md"

// regenerate is the command that rewrites cliReferencePath.
const regenerate = "go test ./cmd/critsec -run TestCLIReference -update"

// TestCLIReference: docs/cli.md is the reference generated from the
// command tree as the binary builds it (every command that --help lists,
// hidden ones left out); a command or flag added or changed without
// regenerating it fails here. A flag whose default depends on the machine
// is marked with machineDefault, so that the reference does not.
func TestCLIReference(t *testing.T) {
	got := cliReference(rootCmd)
	if *update {
		if err := os.WriteFile(cliReferencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cliReferencePath)
	if err != nil {
		t.Fatalf("%v: generate it with %s", err, regenerate)
	}
	if line, was, is := firstDifference(string(want), got); line > 0 {
		t.Errorf("docs/cli.md differs from the commands at line %d:\n  docs/cli.md: %q\n  commands:    %q\nregenerate it with %s", line, was, is, regenerate)
	}
}

// TestCLIReferenceCommands: the reference has a section for every command
// --help lists, and none for a hidden one.
func TestCLIReferenceCommands(t *testing.T) {
	ref := cliReference(rootCmd)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		has := strings.Contains(ref, "\n## "+c.CommandPath()+"\n")
		if has != c.IsAvailableCommand() && c.HasParent() {
			t.Errorf("%s: a section %v, listed by --help %v", c.CommandPath(), has, c.IsAvailableCommand())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd)
}

// firstDifference returns the number of the first line where a and b
// differ (0 if they are equal) and that line of each ("" past the end).
func firstDifference(a, b string) (line int, inA, inB string) {
	if a == b {
		return 0, "", ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; ; i++ {
		x, y := "", ""
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return i + 1, x, y
		}
	}
}

// cliReference renders the command tree below root as Markdown: a list of
// the commands, then for each one its synopsis, usage line, description,
// flags with their defaults and examples, in the order --help lists them.
func cliReference(root *cobra.Command) string {
	prepareAsExecute(root)
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(root)

	var b strings.Builder
	fmt.Fprintf(&b, "# Command-line reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from critsec's commands (cmd/critsec); do not edit: regenerate with %s -->\n\n", regenerate)
	fmt.Fprintf(&b, "What `critsec COMMAND --help` prints, for every command. Every command also takes `-h`, `--help`.\n\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "%s- [%s](#%s): %s\n", strings.Repeat("  ", depth(c)), c.CommandPath(), anchor(c), escape(c.Short))
	}
	for _, c := range cmds {
		writeCommand(&b, c)
	}
	return b.String()
}

// prepareAsExecute adds what run and cobra's Execute add to the tree when
// the binary runs: the completion and help commands, the groups' refusal of
// unknown subcommands (which makes a group's usage line that of a runnable
// command), the help and version flags.
func prepareAsExecute(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	refuseUnknownSubcommands(root)
	root.InitDefaultHelpCmd()
	root.InitDefaultVersionFlag()
	var each func(c *cobra.Command)
	each = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		for _, sub := range c.Commands() {
			each(sub)
		}
	}
	each(root)
}

func writeCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n", c.CommandPath(), escape(c.Short))
	fmt.Fprintf(b, "```text\n")
	if c.Runnable() {
		fmt.Fprintf(b, "%s\n", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(b, "%s [command]\n", c.CommandPath())
	}
	fmt.Fprintf(b, "```\n")
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(b, "\n```text\n%s\n```\n", long)
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "\nAliases: %s\n", escape(strings.Join(c.Aliases, ", ")))
	}
	writeFlags(b, "Flags", c.LocalFlags())
	writeFlags(b, "Flags of "+c.Root().Name(), c.InheritedFlags())
	if ex := strings.TrimRight(c.Example, " \n"); ex != "" {
		fmt.Fprintf(b, "\nExamples:\n\n```text\n%s\n```\n", ex)
	}
	var subs []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			subs = append(subs, fmt.Sprintf("- [%s](#%s): %s\n", sub.CommandPath(), anchor(sub), escape(sub.Short)))
		}
	}
	if len(subs) > 0 && c.HasParent() { // the root's are listed at the top
		fmt.Fprintf(b, "\nCommands:\n\n%s", strings.Join(subs, ""))
	}
}

// writeFlags lists fs's flags but --help, each with its value's name, its
// usage and its default (left out when it is the type's zero value, as
// --help does).
func writeFlags(b *strings.Builder, title string, fs *pflag.FlagSet) {
	var lines []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		spec := "--" + f.Name
		if f.Shorthand != "" {
			spec = "-" + f.Shorthand + ", " + spec
		}
		if name != "" {
			spec += " " + name
		}
		line := fmt.Sprintf("- `%s`: %s", spec, escape(usage))
		if d := f.Annotations[machineDefaultKey]; len(d) > 0 {
			line += " (default: " + escape(d[0]) + ")"
		} else if def := shownDefault(f); def != "" {
			line += " (default `" + def + "`)"
		}
		lines = append(lines, line+"\n")
	})
	if len(lines) > 0 {
		fmt.Fprintf(b, "\n%s:\n\n%s", title, strings.Join(lines, ""))
	}
}

// shownDefault is f's default as --help shows it: quoted for a string,
// empty when it is the zero value of f's type.
func shownDefault(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "string":
		if f.DefValue == "" {
			return ""
		}
		return fmt.Sprintf("%q", f.DefValue)
	case "stringSlice", "stringArray", "intSlice":
		if f.DefValue == "[]" {
			return ""
		}
	}
	switch f.DefValue {
	case "", "0", "false", "0s", "<nil>", "[]":
		return ""
	}
	return f.DefValue
}

// depth is how many commands lie above c.
func depth(c *cobra.Command) int {
	d := 0
	for p := c.Parent(); p != nil; p = p.Parent() {
		d++
	}
	return d
}

// anchor is the link target GitHub gives c's heading.
func anchor(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

// escape keeps Markdown from reading a one-line text as markup: *, [, ],
// backslashes, backquotes and a < that could open a tag stand for
// themselves.
func escape(s string) string {
	s = strings.NewReplacer(`\`, `\\`, "*", `\*`, "[", `\[`, "]", `\]`, "`", "\\`").Replace(s)
	return tagStart.ReplaceAllString(s, `\$0`)
}

// tagStart is a < that HTML would read as the start of a tag or comment.
var tagStart = regexp.MustCompile(`<[A-Za-z/!?]`)
