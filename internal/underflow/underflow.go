// Package underflow keeps recurrences over the samples out of float64's subnormal numbers.
//
// A power λ^t, or a state or output that decays like one, passes 2^-1022 into the subnormal
// numbers and, for |λ| > 1/2, never reaches zero: the smallest subnormal times λ rounds back
// to itself. Many processors run each operation on a subnormal in a slow microcode assist:
// on the H200 machine's Xeon (README, Backends) variable projection's sums ran 75–110× slower
// on poles whose powers had gone subnormal, and the modal model's Adam step 25× slower, while
// the project's AMD EPYC barely slowed down. Go cannot set the processor's flush-to-zero
// mode, so the recurrences flush for themselves: every Every samples (or at every sample,
// where that costs nothing against the step), a value below Below times its scale is set to
// zero. The terms dropped are below 2^-800 of the recurrence's scale (its start: the power's
// 1, the residue, the input), far beyond what a float64 sum of them holds; from there a value
// needs Every steps of |λ| < 0.09 to pass 2^-1022, and such a one reaches zero a few steps
// later. Its users: train's sums over the samples (with AVX2 kernels that flush at the same
// samples by the same test), the modal model's chains, the QR fallback's columns and the
// initial residues' columns; the Impulse of every filters form; analysis's Recurrence and
// Vandermonde methods.
package underflow

import "math"

const (
	// Every is how many samples a recurrence runs between flushes.
	Every = 64
	// Below is the flush threshold relative to the recurrence's scale. The AVX2 kernels of
	// train's sums hold it as a constant (tiny<> in varpro_sums_amd64.s).
	Below = 0x1p-800
)

// Complex returns 0 where both parts of p are below Below·scale, else p (a NaN part is kept).
func Complex(p complex128, scale float64) complex128 {
	lim := Below * scale
	if math.Abs(real(p)) < lim && math.Abs(imag(p)) < lim {
		return 0
	}
	return p
}

// Scale is a complex recurrence's scale, |Re p| + |Im p| of its start (the form train's AVX2
// kernels compute: no max, whose NaN rules differ between Go and the processor).
func Scale(p complex128) float64 { return math.Abs(real(p)) + math.Abs(imag(p)) }

// Real returns 0 where |x| is below Below·scale, else x (a NaN is kept).
func Real(x, scale float64) float64 {
	if math.Abs(x) < Below*scale {
		return 0
	}
	return x
}
