package main

import "fmt"

// count returns "1 request" or "3 requests": c and noun, in the plural
// (noun + "s") unless c is 1.
func count(c int64, noun string) string {
	if c == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", c, noun)
}
