package check

import "fmt"

// FieldError is a Config field that Validate refuses, told in parts so
// that a caller that sets the field from input of its own (critsec check,
// from a flag) can name that input instead of the field: the rule is
// stated once, here, and the caller only maps names. Field is the field;
// with Needs, it is set but needs the field Needs set too, or the search
// Needs (DepthFirst) chosen, and Why says why (or is empty); otherwise Value is its value as given and Why says
// what is wrong with it and what is allowed ("is out of range: need >= 0
// (0: no limit)"). Zero, for a field whose 0 stands for a default, says
// which ("DefaultDeadlockStates"): a caller whose own 0 is no default
// leaves it out.
type FieldError struct {
	Field, Value, Needs, Why, Zero string
}

// Error states the refusal with the Config field names.
func (e *FieldError) Error() string {
	switch {
	case e.Needs != "" && e.Why != "":
		return fmt.Sprintf("check: %s needs %s (%s)", e.Field, e.Needs, e.Why)
	case e.Needs != "":
		return fmt.Sprintf("check: %s needs %s", e.Field, e.Needs)
	}
	if e.Zero != "" {
		return fmt.Sprintf("check: %s = %s %s (0: %s)", e.Field, e.Value, e.Why, e.Zero)
	}
	return fmt.Sprintf("check: %s = %s %s", e.Field, e.Value, e.Why)
}

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

// needs is the FieldError of field set without the field other, why.
func needs(field, other, why string) error {
	return &FieldError{Field: field, Needs: other, Why: why}
}
