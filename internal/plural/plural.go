// Package plural words a count of things for messages: "1 mode", "4 modes".
package plural

import "strconv"

// Count returns n and noun, with an "s" unless n is 1 ("1 order", "3 orders"); noun is a
// singular whose plural adds "s", as the nouns of ssmlab's messages do.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
