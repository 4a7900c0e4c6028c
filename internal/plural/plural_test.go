package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 modes"}, {1, "1 mode"}, {2, "2 modes"}, {-1, "-1 modes"}} {
		if got := Count(tc.n, "mode"); got != tc.want {
			t.Errorf("Count(%d, mode) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestFirst(t *testing.T) {
	for _, tc := range []struct {
		items []string
		shown int
		sep   string
		want  string
	}{
		{nil, 3, " ", ""},
		{[]string{"a", "b"}, 3, " ", "a, b"},
		{[]string{"a", "b", "c"}, 3, " ", "a, b, c"},
		{[]string{"a", "b", "c", "d"}, 2, " ", "a, b and 2 more"},
		{[]string{"a", "b", "c"}, 2, ", ", "a, b, and 1 more"},
	} {
		if got := First(tc.items, tc.shown, tc.sep); got != tc.want {
			t.Errorf("First(%q, %d, %q) = %q, want %q", tc.items, tc.shown, tc.sep, got, tc.want)
		}
	}
}
