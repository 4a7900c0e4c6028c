package filters

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// circleEval returns, at a point z of the unit circle, the strictly proper part g(z) of the
// transfer function and the monic denominator den(z) = Π(z - pᵢ) = det(zI - A).
type circleEval func(z complex128) (g complex128, den scaledComplex)

// tfFromCircle recovers a (a₁…aₙ) and b (b₁…bₙ) of g(z) = b(z⁻¹)/a(z⁻¹) by sampling
// a(z⁻¹) = z⁻ⁿ·den(z) and b(z⁻¹) = a(z⁻¹)·g(z) at N > n points of the unit circle and applying
// an inverse FFT, which interpolates a polynomial of degree n < N exactly. The samples are
// taken at e^{i(2πm/N + π/N)}, half a step off the roots of unity, so poles at z = ±1 (integrators,
// real poles of DSP designs) never fall on a sample. The rounding of the samples is the only
// error, about eps·max|a(e^{jω})|; cond returns max|a|/min|a| over the samples, which bounds how
// much that error can grow where the response is evaluated near a pole.
func tfFromCircle(n int, eval circleEval) (a, b []float64, cond float64) {
	if n == 0 {
		return nil, nil, 1
	}
	size := 1
	for size < n+1 {
		size <<= 1
	}
	phase := math.Pi / float64(size)
	dens := make([]scaledComplex, size)
	gs := make([]complex128, size)
	top := math.MinInt
	for m := 0; m < size; m++ {
		z := unitCircle(2*math.Pi*float64(m)/float64(size) + phase)
		gs[m], dens[m] = eval(z)
		// z⁻ⁿ has modulus one: fold it into the mantissa.
		dens[m].m *= cmplx.Pow(z, complex(-float64(n), 0))
		if dens[m].m != 0 {
			_, e := math.Frexp(cmplx.Abs(dens[m].m))
			top = max(top, dens[m].e+e)
		}
	}
	as := make([]complex128, size)
	bs := make([]complex128, size)
	lo, hi := math.Inf(1), 0.0
	for m := range dens {
		v := complex(math.Ldexp(real(dens[m].m), dens[m].e-top), math.Ldexp(imag(dens[m].m), dens[m].e-top))
		as[m] = v
		bs[m] = v * gs[m]
		lo, hi = math.Min(lo, cmplx.Abs(v)), math.Max(hi, cmplx.Abs(v))
	}
	fft := fourier.NewCmplxFFT(size)
	fft.Sequence(as, as)
	fft.Sequence(bs, bs)
	// Undo the half-step rotation (the k-th coefficient picked up e^{-ikφ}), the 1/N the
	// unnormalised inverse leaves out and the power-of-two scaling, all exactly known. (The
	// computed leading coefficient is 1 only to within eps·max|a(e^{jω})|: dividing by it
	// instead would spread that error over every coefficient, times the coefficient's size,
	// about 10⁴× worse for sixteen poles clustered near z = 1.)
	scale := math.Ldexp(1/float64(size), top)
	a, b = make([]float64, n), make([]float64, n)
	for k := 1; k <= n; k++ {
		rot := unitCircle(float64(k) * phase)
		a[k-1] = real(as[k]*rot) * scale
		b[k-1] = real(bs[k]*rot) * scale
	}
	if lo == 0 {
		return a, b, math.Inf(1)
	}
	return a, b, hi / lo
}

// denFromRoots returns Π(z - rᵢ) as a scaled product.
func denFromRoots(z complex128, roots []complex128) scaledComplex {
	d := scaledComplex{m: 1}
	for _, r := range roots {
		d.mul(z - r)
	}
	return d
}

// PolyFromRoots returns a₁…aₙ of a(z⁻¹) = Π(1 - rᵢz⁻¹) for a conjugate-closed set of roots,
// by the unit-circle interpolation of the tf conversions (tfFromCircle), without their
// report: accurate to about eps·max|a(e^{jω})| in each coefficient.
func PolyFromRoots(roots []complex128) []float64 {
	a, _, _ := tfFromCircle(len(roots), func(z complex128) (complex128, scaledComplex) {
		return 0, denFromRoots(z, roots)
	})
	return a
}
