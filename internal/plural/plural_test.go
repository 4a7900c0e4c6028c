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
