// Package variant is the choice the algorithms whose published version
// fails offer (forest, maekawa, mutin): the corrected algorithm or the
// one as published, registered under the name with "-paper".
package variant

// Variant selects the published algorithm or the corrected one. The zero
// value is the corrected one, so a caller who does not choose gets the
// variant that cannot fail.
type Variant uint8

const (
	// Fixed is the corrected algorithm; each package says what it changes.
	Fixed Variant = iota
	// Paper is the algorithm as published.
	Paper
)

// String returns "fixed" or "paper".
func (v Variant) String() string {
	if v == Fixed {
		return "fixed"
	}
	return "paper"
}
