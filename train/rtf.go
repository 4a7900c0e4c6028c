package train

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/ssmlab/ssmlab/filters"
)

// rtfModel is the state-free RTF of seed 004: parameters [a (n, or n+1 raw with Montel), b̃ (n), h0].
type rtfModel struct {
	n, length int
	montel    bool // a = w[:n]/Σ|w| over n+1 raw values (seed 004 §B.2)
	// starts are further initial parameters the hankel init found (lower ERA orders), which
	// the refinement also tries.
	starts [][]float64
}

func (m *rtfModel) denLen() int {
	if m.montel {
		return m.n + 1
	}
	return m.n
}

func (m *rtfModel) numParams() int { return m.denLen() + m.n + 1 }

type rtfWork struct {
	fft       *fourier.FFT
	pa, pb, x []float64
	a         []float64 // the effective denominator
	fa, fb, g []complex128
	fe        []complex128
}

func (m *rtfModel) newWorkspace() workspace {
	l := m.length
	h := l/2 + 1
	return &rtfWork{
		fft: fourier.NewFFT(l), pa: make([]float64, l), pb: make([]float64, l), x: make([]float64, l),
		a: make([]float64, m.n), fa: make([]complex128, h), fb: make([]complex128, h), g: make([]complex128, h),
		fe: make([]complex128, h),
	}
}

// denominator returns the effective a from the parameters (applying the Montel map).
func (m *rtfModel) denominator(p, dst []float64) []float64 {
	if !m.montel {
		return append(dst[:0], p[:m.n]...)
	}
	s := 0.0
	for _, w := range p[:m.n+1] {
		s += math.Abs(w)
	}
	dst = dst[:m.n]
	for i := range dst {
		if s == 0 {
			dst[i] = 0
		} else {
			dst[i] = p[i] / s
		}
	}
	return dst
}

func (m *rtfModel) kernel(wsAny workspace, p, k []float64) {
	ws := wsAny.(*rtfWork)
	n := m.n
	a := m.denominator(p, ws.a)
	b := p[m.denLen() : m.denLen()+n]
	h0 := p[m.denLen()+n]
	clear(ws.pa)
	clear(ws.pb)
	ws.pa[0] = 1
	copy(ws.pa[1:], a)
	copy(ws.pb[1:], b)
	ws.fft.Coefficients(ws.fa, ws.pa)
	ws.fft.Coefficients(ws.fb, ws.pb)
	for i := range ws.g {
		ws.g[i] = ws.fb[i] / ws.fa[i]
	}
	ws.fft.Sequence(k, ws.g)
	inv := 1 / float64(m.length)
	for i := range k {
		k[i] *= inv
	}
	k[0] += h0
}

func (m *rtfModel) grad(wsAny workspace, p, e, g []float64) {
	ws := wsAny.(*rtfWork)
	n := m.n
	ws.fft.Coefficients(ws.fe, e)
	inv := 1 / float64(m.length)
	// ∂/∂b̃ⱼ = IFFT(E/Ā)ⱼ/L, ∂/∂aⱼ = -IFFT(E·Ḡ/Ā)ⱼ/L (derivation in doc.go).
	for i := range ws.fe {
		ws.fe[i] /= cmplx.Conj(ws.fa[i])
	}
	ws.fft.Sequence(ws.x, ws.fe)
	gb := g[m.denLen() : m.denLen()+n]
	for j := range gb {
		gb[j] = ws.x[j+1] * inv
	}
	for i := range ws.fe {
		ws.fe[i] *= cmplx.Conj(ws.g[i])
	}
	ws.fft.Sequence(ws.x, ws.fe)
	ga := g[:m.denLen()]
	for j := 0; j < n; j++ {
		ga[j] = -ws.x[j+1] * inv
	}
	if m.montel {
		// a_j = w_j/s, s = Σ|w|: ∂a_j/∂w_i = δ_ij/s - w_j·sign(w_i)/s².
		s, dot := 0.0, 0.0
		for i, w := range p[:n+1] {
			s += math.Abs(w)
			if i < n {
				dot += ga[i] * w
			}
		}
		if s == 0 {
			clear(ga)
		} else {
			ga[n] = 0
			for i := 0; i <= n; i++ {
				sign := math.Copysign(1, p[i])
				if p[i] == 0 {
					sign = 0
				}
				v := -dot * sign / (s * s)
				if i < n {
					v += ga[i] / s
				}
				ga[i] = v
			}
		}
	}
	g[m.denLen()+n] = e[0]
}

// filter deploys the trained parameters. The circular kernel k is the truncated response of
// the RTF with numerator b = b̃(I - A^L)⁻¹ (seed 004 eq. 13), and that b also follows from
// the kernel directly: b/a has impulse response k[1..], so bⱼ = Σᵢ aᵢ·k[j-i] for j = 1…n
// (a₀ = 1), an O(n²) convolution that needs no power of the (very non-normal) companion
// matrix. D = k[0]. The returned number is the relative difference between the deployed
// filter's true first L samples and the trained kernel, which is large only when I - A^L is
// nearly singular (a pole near the unit circle).
func (m *rtfModel) filter(p []float64) (filters.Filter, float64, error) {
	n := m.n
	a := m.denominator(p, make([]float64, n))
	k := make([]float64, m.length)
	m.kernel(m.newWorkspace(), p, k)
	b := make([]float64, n)
	for j := 1; j <= n; j++ {
		s := k[j]
		for i := 1; i < j; i++ {
			s += a[i-1] * k[j-i]
		}
		b[j-1] = s
	}
	tf, err := filters.NewTransferFunction(a, b, k[0])
	if err != nil {
		return nil, 0, err
	}
	return tf, relL2(tf.Impulse(m.length), k), nil
}

// within reports whether every pole of the denominator lies strictly inside radius r, by the
// Schur–Cohn step-down recursion on the coefficients of a(rz): the reflection coefficients
// kₘ = aₘ⁽ᵐ⁾ must all satisfy |kₘ| < 1. It costs O(n²), against O(n³) for the eigenvalues.
func (m *rtfModel) within(p []float64, r float64) bool {
	n := m.n
	a := m.denominator(p, make([]float64, n))
	scale := 1.0
	for i := range a {
		scale /= r
		a[i] *= scale
	}
	next := make([]float64, n)
	for order := n; order >= 1; order-- {
		k := a[order-1]
		if !(math.Abs(k) < 1) {
			return false
		}
		den := 1 - k*k
		for i := 1; i < order; i++ {
			next[i-1] = (a[i-1] - k*a[order-i-1]) / den
		}
		copy(a, next[:order-1])
	}
	return true
}

func (m *rtfModel) maxRadius(p []float64) float64 {
	if m.n == 0 {
		return 0
	}
	a := m.denominator(p, make([]float64, m.n))
	tf, err := filters.NewTransferFunction(a, make([]float64, m.n), 0)
	if err != nil {
		return math.Inf(1)
	}
	rho, err := filters.SpectralRadius(tf)
	if err != nil {
		return math.Inf(1)
	}
	return rho
}
