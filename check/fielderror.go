package check

import "fmt"

// FieldError is a Config field that Validate refuses, told in parts so
// that a caller that sets the field from input of its own (critsec check,
// from a flag) can name that input instead of the field: the rule is
// stated once, here, and the caller only maps names.
//
// Field is the field refused. Needs and Excludes name what the field
// depends on, either another field ("DiskDir") or a choice of search
// ("Search = DepthFirst"); at most one of Value, Needs and Excludes is
// set:
//   - with Needs, Field is set but needs Needs set (or chosen) too;
//   - with Excludes, Field is set but does not combine with Excludes;
//   - otherwise Value is Field's value as given and Why says what is
//     wrong with it and what is allowed ("is out of range: need >= 0 (0:
//     no limit)").
//
// With Needs or Excludes, Why says why (or is empty). Zero, for a field
// whose 0 stands for a default, says which ("DefaultDeadlockStates"): a
// caller whose own 0 is no default leaves it out.
type FieldError struct {
	Field, Value, Needs, Excludes, Why, Zero string
}

// Error states the refusal with the Config field names.
func (e *FieldError) Error() string {
	why := ""
	if e.Why != "" {
		why = " (" + e.Why + ")"
	}
	switch {
	case e.Needs != "":
		return fmt.Sprintf("check: %s needs %s%s", e.Field, e.Needs, why)
	case e.Excludes != "":
		return fmt.Sprintf("check: %s does not combine with %s%s", e.Field, e.Excludes, why)
	case e.Zero != "":
		return fmt.Sprintf("check: %s = %s %s (0: %s)", e.Field, e.Value, e.Why, e.Zero)
	}
	return fmt.Sprintf("check: %s = %s %s", e.Field, e.Value, e.Why)
}

// The searches as FieldError.Needs and FieldError.Excludes name them.
const (
	searchDFS      = "Search = DepthFirst"
	searchLiveness = "Search = Liveness"
)

// outOfRange is the FieldError of field's value v, which must be in rng
// ("need >= 0 (0: no limit)").
func outOfRange(field string, v any, rng string) error {
	return &FieldError{Field: field, Value: fmt.Sprint(v), Why: "is out of range: " + rng}
}

// outOfRangeOr0 is outOfRange for a field whose 0 stands for zero, a
// default.
func outOfRangeOr0(field string, v any, rng, zero string) error {
	return &FieldError{Field: field, Value: fmt.Sprint(v), Why: "is out of range: " + rng, Zero: zero}
}

// needs is the FieldError of field set without the field or search other,
// why.
func needs(field, other, why string) error {
	return &FieldError{Field: field, Needs: other, Why: why}
}

// excludes is the FieldError of field set beside the field or search
// other, which it does not combine with, why.
func excludes(field, other, why string) error {
	return &FieldError{Field: field, Excludes: other, Why: why}
}
