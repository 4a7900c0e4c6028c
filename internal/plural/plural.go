// Package plural words a count of things for messages: "1 mode", "4 modes".
package plural

import (
	"strconv"
	"strings"
)

// Count returns n and noun, with an "s" unless n is 1 ("1 order", "3 orders"); noun is a
// singular whose plural adds "s", as the nouns of ssmlab's messages do.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// First joins the first shown of items with ", " and, where there are more, says how many
// after sep: First([a b c], 2, " ") is "a, b and 1 more", with sep ", " "a, b, and 1 more".
// The lists of a message (a file's arrays, a session's items, a checkpoint's layers) are cut
// so.
func First(items []string, shown int, sep string) string {
	s := strings.Join(items[:min(len(items), shown)], ", ")
	if len(items) > shown {
		s += sep + "and " + strconv.Itoa(len(items)-shown) + " more"
	}
	return s
}
