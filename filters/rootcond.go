package filters

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The condition of finding a transfer function's poles and zeros as roots of its polynomials.
//
// The model is the one float64 coefficients call for: each coefficient off by at most ε of
// itself, a zero one exactly zero (N. J. Higham, "Accuracy and Stability of Numerical
// Algorithms", 2nd ed., ch. 5, componentwise perturbations of polynomials). The roots are
// found backward stably: they are the exact roots of coefficients perturbed that way (by a few
// ε; the companion matrix's QR iteration, Aberth's stopping rule). The classical condition of
// each root, Wilkinson's Σ|cₖ||r|ᵏ/|p′(r)| (J. H. Wilkinson, "Rounding Errors in Algebraic
// Processes", ch. 2), is infinite for a multiple root, whose members move by ε^(1/m); the
// mean of a cluster is finite (the first-order change of the sum of the roots inside a
// circle Γ is −(1/2πi)∮_Γ δp/p dz), but a cluster's mean alone does not decide the response.
// What the conversion's result depends on is the product of each cluster's factors seen from
// the unit circle; the same contour argument with Γ the unit circle bounds it directly: a
// relative perturbation ε of every coefficient changes a(z) by at most ε·‖a‖₁ and the
// numerator by at most ε·‖b‖₁ on |z| = 1, so H = h0 + b/a changes by at most
// ε·(‖a‖₁|H(z)| + ‖b‖₁)/|a(z)| there, and (Parseval) the impulse response by
//
//	κ = ‖(‖a‖₁|H| + ‖b‖₁)/|a|‖₂ / ‖H‖₂   (norms over the unit circle)
//
// relative, to first order. κ is large exactly where the roots are: a cluster of poles near
// the circle (a Butterworth filter of order 12 with a low cut-off) makes |a| tiny beside ‖a‖₁
// there. It is finite for multiple roots, and near 1 where rounding cannot move them: the
// denominator zⁿ of an FIR filter (‖a‖₁ = |a| = 1 on the circle), well separated roots.

// rootsCondition returns κ above for H(z) = off + num(z)/a(z), a(z) = zⁿ + a₁zⁿ⁻¹ + … + aₙ
// and num (leading coefficient first, degree below n, or n with off = 0) whose roots are the
// zeros; at least 1, +Inf where a vanishes on the circle or H is zero.
func rootsCondition(a, num []float64, off float64) float64 {
	n := len(a)
	if n == 0 {
		return 1
	}
	an, bn := 1.0, 0.0
	for _, v := range a {
		an += math.Abs(v)
	}
	for _, v := range num {
		bn += math.Abs(v)
	}
	// Half a step off the roots of unity (as tfFromCircle), so that poles or zeros at ±1
	// fall on no sample; eight samples per degree resolve |a| between its roots. A polynomial
	// c₀zᵈ + … + c_d at z_k = e^{i(2πk/m + φ)} is z_kᵈ times the k-th term of the DFT of
	// cⱼe^{−ijφ}: one FFT each, O(m log m) where evaluating at every sample cost O(m·n)
	// (0.75 s at n = 4096).
	m := 256
	for m < 8*n {
		m <<= 1
	}
	phase := math.Pi / float64(m)
	fft := fourier.NewCmplxFFT(m)
	onCircle := func(c []float64, lead float64) []complex128 {
		v := make([]complex128, m)
		j := 0
		if lead != 0 {
			v[0], j = complex(lead, 0), 1
		}
		for _, x := range c {
			v[j] = complex(x, 0) * unitCircle(-float64(j)*phase)
			j++
		}
		return fft.Coefficients(v, v)
	}
	as := onCircle(a, 1)   // z_k⁻ⁿ a(z_k)
	ns := onCircle(num, 0) // z_k⁻ᵈ num(z_k), d = len(num) − 1
	shift := len(num) - 1 - n
	var errs, resp float64
	for k := range m {
		abs := cmplx.Abs(as[k])
		g := ns[k] / as[k]
		if off != 0 && shift != 0 {
			// num/a = z_k^(d−n)·g; the power's angle π·shift·(2k+1)/m, reduced exactly.
			e := (shift * (2*k + 1)) % (2 * m)
			g *= unitCircle(math.Pi * float64(e) / float64(m))
		}
		h := cmplx.Abs(complex(off, 0) + g)
		// Running hypotenuses: an ill-conditioned κ squared would overflow.
		errs = math.Hypot(errs, (an*h+bn)/abs)
		resp = math.Hypot(resp, h)
	}
	k := errs / resp
	if math.IsNaN(k) {
		return math.Inf(1)
	}
	return math.Max(k, 1)
}
