// Package numtest holds the numerical comparisons that tests of several packages share. It
// imports nothing of ssmlab, so that the tests of filters and internal/fft can use it too
// (internal/filtertest builds filters, and a filters test importing it would be a cycle).
// The relative error of real vectors is filters.RelDiff.
package numtest

import (
	"math"
	"math/cmplx"
)

// RelErrC returns ‖got − want‖₂/‖want‖₂ (absolute when want is zero), by running
// hypotenuses, so that neither sum overflows.
func RelErrC(got, want []complex128) float64 {
	var num, den float64
	for i := range want {
		num = math.Hypot(num, cmplx.Abs(got[i]-want[i]))
		den = math.Hypot(den, cmplx.Abs(want[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}
