package plan

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

// FuzzParsePattern reads a fuzzed --layers pattern and matches it against a fuzzed prefix:
// a refusal wraps ErrInvalid, and an accepted pattern is well formed for every prefix (a
// malformed item would match nothing, silently), and reads back the same from its own writing.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"", "layers.*", "blocks.[0-3].mixer.filter", "layers.1?.,layers.2", "[", "a,,b", "\\", "*/*", "[^a-]x", "a\\"} {
		f.Add(s, "layers.12.")
	}
	f.Fuzz(func(t *testing.T, s, prefix string) {
		p, err := ParsePattern(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: error %v is not ErrInvalid", s, err)
			}
			return
		}
		for _, g := range p {
			if _, err := path.Match(g, prefix); err != nil {
				t.Fatalf("%q accepted, but its item %q fails on %q: %v", s, g, prefix, err)
			}
		}
		back, err := ParsePattern(strings.Join(p, ","))
		if err != nil || !slices.Equal(back, p) {
			t.Fatalf("%q reads as %q, which reads back as %q, %v", s, p, back, err)
		}
	})
}
