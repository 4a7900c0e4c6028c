package rtf

import (
	"math"

	"github.com/ssmlab/ssmlab/internal/fft"
)

// Spectra evaluates the rational transfer function b̃(z⁻¹)/a(z⁻¹) (RTF paper, eq. 4 and
// Algorithm 1; a = (1, a₁, …, aₙ), b̃ = (0, b̃₁, …, b̃ₙ)) at the N-th roots of unity
// z_k = e^{2πik/N}, k = 0…N/2 (N the table's size, at least 4): g[k] = scale·B̃_k/A_k and,
// when den is not nil, den[k] = A_k, with A = FFT_N(a) and B̃ = FFT_N(b̃) zero-padded
// (coefficients beyond N fold onto j mod N). a and b̃ travel as one complex sequence a + i·b̃
// through the pruned forward transform (fft.Table.ForwardShort) and are separated by
// conjugate symmetry. buf and work must hold N values each, x n+1; all three are scratch. It
// panics if the lengths do not fit.
func Spectra(tw *fft.Table, g, den []complex128, a, bt []float64, scale float64, x, buf, work []complex128) {
	n, size := len(a), tw.Len()
	if len(bt) != n || len(x) < n+1 || len(g) != size/2+1 || (den != nil && len(den) != size/2+1) {
		panic("rtf: spectra length mismatch")
	}
	// The shared transform's rounding is relative to the larger of a and b̃: scale b̃ by a power
	// of two (exact) to the size of a, and undo it after the division.
	amax, bmax := 1.0, 0.0
	for j := range a {
		amax, bmax = math.Max(amax, math.Abs(a[j])), math.Max(bmax, math.Abs(bt[j]))
	}
	shift := 0
	if bmax > 0 {
		_, eb := math.Frexp(bmax)
		_, ea := math.Frexp(amax)
		shift = eb - ea
	}
	x = x[:n+1]
	x[0] = 1
	for j := range a {
		x[j+1] = complex(a[j], math.Ldexp(bt[j], -shift))
	}
	z := tw.ForwardShort(x, buf, work)
	mask := size - 1
	up := math.Ldexp(scale, shift)
	for k := range g {
		zk, zm := z[k], z[(size-k)&mask]
		// A = (Z_k + conj Z_{N-k})/2, B = (Z_k - conj Z_{N-k})/(2i); the halves cancel in B/A.
		ar, ai := real(zk)+real(zm), imag(zk)-imag(zm)
		br, bi := imag(zk)+imag(zm), real(zm)-real(zk)
		d := up / (ar*ar + ai*ai)
		g[k] = complex((br*ar+bi*ai)*d, (bi*ar-br*ai)*d)
		if den != nil {
			den[k] = complex(ar/2, ai/2)
		}
	}
}

// SpectraAny is Spectra for a length N that need not be a power of two (r's length, which
// pa and pb must have; g, fb and a non-nil den hold N/2+1 values): A and B̃ by two real
// transforms, g[k] = scale·B̃_k/A_k and den[k] = A_k. pa, pb and fb are scratch.
func SpectraAny(r *fft.Real, g, den []complex128, a, bt []float64, scale float64, pa, pb []float64, fb []complex128) {
	size, h := len(pa), len(pa)/2+1
	if len(bt) != len(a) || len(pb) != size || len(g) != h || len(fb) != h || (den != nil && len(den) != h) {
		panic("rtf: spectra length mismatch")
	}
	clear(pa)
	clear(pb)
	pa[0] = 1
	for j := range a {
		pa[(j+1)%size] += a[j]
		pb[(j+1)%size] += bt[j]
	}
	fa := den
	if fa == nil {
		fa = g
	}
	r.Coefficients(fa, pa)
	r.Coefficients(fb, pb)
	for k := range g {
		q := fft.Div(fb[k], fa[k])
		g[k] = complex(real(q)*scale, imag(q)*scale)
	}
}
