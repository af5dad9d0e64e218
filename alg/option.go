package alg

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/critsec/critsec/cs"
)

// OptionKind is the type of an algorithm option's value.
type OptionKind uint8

const (
	// Choice is a string from Option.Choices.
	Choice OptionKind = iota + 1
	// Int is an integer within Option.Min..Option.Max.
	Int
)

// Option declares one option an algorithm takes: the CLI's flag, its help
// and its validation all come from here, so they cannot disagree.
type Option struct {
	// Name is the flag's name (--name) and the key in cs.Params.Options
	// and in problem files.
	Name string
	// Help is one line for --help, without the default or the range, which
	// are added from the fields below.
	Help string
	Kind OptionKind
	// Default is the value when the option is not given, of the Go type of
	// Kind: string or int.
	Default any
	// Choices are the allowed values of a Choice option.
	Choices []string
	// Min and Max bound an Int option (inclusive).
	Min, Max float64
}

// Usage is the option's help with its allowed values and default, as
// --help shows it.
func (o Option) Usage() string {
	switch o.Kind {
	case Choice:
		return fmt.Sprintf("%s: %s", o.Help, strings.Join(o.Choices, " or "))
	case Int:
		return fmt.Sprintf("%s, %g..%g", o.Help, o.Min, o.Max)
	}
	return o.Help
}

// DefaultString is the default in the form Parse reads.
func (o Option) DefaultString() string { return fmt.Sprint(o.Default) }

// Parse reads s as a value of o, or says what is wrong and what is allowed.
func (o Option) Parse(s string) (any, error) {
	switch o.Kind {
	case Choice:
		if slices.Contains(o.Choices, s) {
			return s, nil
		}
		return nil, fmt.Errorf("%s = %q: choose %s", o.Name, s, strings.Join(o.Choices, " or "))
	case Int:
		v, err := strconv.Atoi(s)
		if err != nil || float64(v) < o.Min || float64(v) > o.Max {
			return nil, fmt.Errorf("%s = %q: need an integer in %g..%g", o.Name, s, o.Min, o.Max)
		}
		return v, nil
	}
	return nil, fmt.Errorf("%s: option of unknown kind %d", o.Name, o.Kind)
}

// resolveOptions validates the options given (by name, as text) against
// a's declarations and returns every declared option with its value, the
// defaults filled in. An option a does not declare is refused, naming the
// algorithms that take it.
func resolveOptions(a Algorithm, given map[string]string) (cs.Options, error) {
	names := make([]string, 0, len(given))
	for name := range given {
		names = append(names, name)
	}
	slices.Sort(names) // the first error does not depend on map order
	for _, name := range names {
		if !slices.ContainsFunc(a.Options, func(o Option) bool { return o.Name == name }) {
			return nil, fmt.Errorf("option %s does not apply to %s%s", name, a.Name, takers(name))
		}
	}
	out := make(cs.Options, len(a.Options))
	for _, o := range a.Options {
		s, ok := given[o.Name]
		if !ok {
			out[o.Name] = o.Default
			continue
		}
		v, err := o.Parse(s)
		if err != nil {
			return nil, err
		}
		out[o.Name] = v
	}
	return out, nil
}

// takers returns ", only to a, b" listing the algorithms that declare
// option name, or "" if none does.
func takers(name string) string {
	var who []string
	for _, a := range All() {
		if slices.ContainsFunc(a.Options, func(o Option) bool { return o.Name == name }) {
			who = append(who, a.Name)
		}
	}
	if len(who) == 0 {
		return " (no algorithm takes it)"
	}
	return " (only to " + strings.Join(who, ", ") + ")"
}

// AllOptions returns every option some algorithm declares, once per name,
// sorted by name, with the algorithms that take it. Options of one name
// are declared alike by every algorithm that takes them (TestOptionsAgree).
func AllOptions() []DeclaredOption {
	var out []DeclaredOption
	for _, a := range All() {
		for _, o := range a.Options {
			i := slices.IndexFunc(out, func(d DeclaredOption) bool { return d.Name == o.Name })
			if i < 0 {
				out = append(out, DeclaredOption{Option: o})
				i = len(out) - 1
			}
			out[i].Algorithms = append(out[i].Algorithms, a.Name)
		}
	}
	slices.SortFunc(out, func(a, b DeclaredOption) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// DeclaredOption is an option with the algorithms that declare it.
type DeclaredOption struct {
	Option
	Algorithms []string
}
