package underflow

import (
	"math"
	"testing"
)

// TestFlush: a value is zeroed exactly where it is below Below times its scale (both parts,
// for a complex one), and kept otherwise, NaN and infinities included.
func TestFlush(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		x, scale float64
		zero     bool
	}{
		{0x1p-801, 1, true}, {-0x1p-801, 1, true}, {0x1p-800, 1, false}, {0x1p-1074, 1, true},
		{0, 1, true}, {1e-300, 1e-60, false}, {1e-300, 1e60, true}, {nan, 1, false}, {-inf, 1, false},
		{1, 0, false}, {0x1p-900, 0x1p-100, false},
	} {
		got := Real(c.x, c.scale)
		if c.zero && got != 0 || !c.zero && math.Float64bits(got) != math.Float64bits(c.x) {
			t.Errorf("Real(%g, %g) = %g", c.x, c.scale, got)
		}
		// Complex: zeroed only when the other part is below the threshold too.
		if got := Complex(complex(c.x, 0x1p-900), c.scale); c.zero && got != 0 || !c.zero && got == 0 && c.x != 0 {
			t.Errorf("Complex(%g + 2^-900 i, %g) = %v", c.x, c.scale, got)
		}
		if got := Complex(complex(1e-3, c.x), c.scale*1e-300); got == 0 {
			t.Errorf("Complex(1e-3 + %g i, %g) = 0: its real part is above the threshold", c.x, c.scale*1e-300)
		}
	}
}
