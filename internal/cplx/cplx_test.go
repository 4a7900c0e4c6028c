package cplx

import (
	"math"
	"slices"
	"testing"
)

// TestPairsRoundTrip: pairs keep every value, signed zeros and infinities included, in order.
func TestPairsRoundTrip(t *testing.T) {
	z := []complex128{1 + 2i, complex(math.Copysign(0, -1), -3), complex(math.Inf(1), 0.5)}
	p := Pairs(z)
	if !slices.Equal(p, [][2]float64{{1, 2}, {math.Copysign(0, -1), -3}, {math.Inf(1), 0.5}}) || math.Signbit(p[1][0]) != true {
		t.Fatalf("pairs %v", p)
	}
	if back := FromPairs(p); !slices.Equal(back, z) {
		t.Errorf("back %v, want %v", back, z)
	}
	if p := Pairs(nil); p == nil || len(p) != 0 {
		t.Errorf("no values: %v, want an empty slice", p)
	}
}
