package train

import (
	"math"
	"sync"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/fft"
)

// rtfModel is the state-free RTF of the RTF paper: parameters [a (n, or n+1 raw with Montel), b̃ (n), h0].
type rtfModel struct {
	n, length int
	montel    bool // a = rtf.L1Montel(w[:n], w[n]) over n+1 raw values (RTF paper, §B.2)
	// starts are further initial parameters the hankel init found (lower ERA orders), which
	// the refinement also tries.
	starts [][]float64
	// modalErr is the relative error of the hankel init's best stabilised ERA realisation in
	// modal form (0: not computed): what a model that keeps poles, not coefficients, starts
	// from, reported when the RTF ends far above it.
	modalErr float64
}

func (m *rtfModel) denLen() int {
	if m.montel {
		return m.n + 1
	}
	return m.n
}

func (m *rtfModel) numParams() int { return m.denLen() + m.n + 1 }

type rtfWork struct {
	a  []float64    // the effective denominator
	fa []complex128 // A = FFT_L(1, a), half spectrum
	g  []complex128 // B̃/A, half spectrum
	fe []complex128 // the loss gradient's spectrum
	// Power-of-two L: internal/fft's pruned transforms.
	tab          *fft.Table
	x, buf, work []complex128
	hs, head     []complex128
	// Other L: real transforms of full length.
	rfft      *fft.Real
	pa, pb, y []float64
	fb        []complex128
}

func (m *rtfModel) newWorkspace() workspace {
	l := m.length
	h := l/2 + 1
	w := &rtfWork{a: make([]float64, m.n), fa: make([]complex128, h), g: make([]complex128, h), fe: make([]complex128, h)}
	if l >= 4 && fft.IsPow2(l) {
		w.tab = fft.Shared(l)
		w.x, w.buf, w.work = make([]complex128, m.n+1), make([]complex128, l), make([]complex128, l)
		w.hs, w.head = make([]complex128, h), make([]complex128, m.n+1)
		return w
	}
	w.rfft = fft.NewReal(l)
	w.pa, w.pb, w.y = make([]float64, l), make([]float64, l), make([]float64, l)
	w.fb = make([]complex128, h)
	return w
}

// denominator returns the effective a from the parameters (applying the Montel map).
func (m *rtfModel) denominator(p, dst []float64) []float64 {
	if !m.montel {
		return append(dst[:0], p[:m.n]...)
	}
	return rtf.L1Montel(dst[:m.n], p[:m.n], p[m.n])
}

// kernel writes the circular kernel k = IFFT_L(B̃/A) + h0·δ (RTF paper, Alg. 1) and leaves A and
// B̃/A in the workspace for grad.
func (m *rtfModel) kernel(wsAny workspace, p, k []float64) {
	ws := wsAny.(*rtfWork)
	n := m.n
	a := m.denominator(p, ws.a)
	b := p[m.denLen() : m.denLen()+n]
	h0 := p[m.denLen()+n]
	inv := 1 / float64(m.length)
	if ws.tab != nil {
		rtf.Spectra(ws.tab, ws.g, ws.fa, a, b, 1, ws.x, ws.buf, ws.work)
		for i, v := range ws.g {
			ws.hs[i] = complex(real(v)*inv, imag(v)*inv)
		}
		ws.tab.RealInverse(k, ws.hs, ws.work)
	} else {
		rtf.SpectraAny(ws.rfft, ws.g, ws.fa, a, b, 1, ws.pa, ws.pb, ws.fb)
		ws.rfft.Sequence(k, ws.g)
		for i := range k {
			k[i] *= inv
		}
	}
	k[0] += h0
}

// grad writes the gradient of the loss with respect to p, given the loss's gradient e with
// respect to the kernel (after kernel(p)). ∂/∂b̃ⱼ = IFFT(E/Ā)ⱼ/L and ∂/∂aⱼ = -IFFT(E·Ḡ/Ā)ⱼ/L with
// E = FFT(e), G = B̃/A (derivation in doc.go); only entries 1…n of the two inverse transforms
// are needed.
func (m *rtfModel) grad(wsAny workspace, p, e, g []float64) {
	ws := wsAny.(*rtfWork)
	n := m.n
	inv := 1 / float64(m.length)
	gb := g[m.denLen() : m.denLen()+n]
	ga := g[:m.denLen()]
	if ws.tab != nil {
		// The two real inverse transforms travel as one complex one, IFFT(X₁ + i·X₂), of which
		// InverseHead computes only the first n+1 outputs.
		ws.tab.RealForward(ws.fe, e, ws.work)
		l, half := m.length, m.length/2
		y := ws.buf
		for i, ev := range ws.fe {
			x1 := fft.Div(ev, fft.Conj(ws.fa[i]))
			x2 := x1 * fft.Conj(ws.g[i])
			if i == 0 || i == half {
				x1, x2 = complex(real(x1), 0), complex(real(x2), 0)
			}
			y[i] = complex(real(x1)-imag(x2), imag(x1)+real(x2))
			if i != 0 && i != half {
				// Hermitian halves: X(L-i) = conj X(i).
				y[l-i] = complex(real(x1)+imag(x2), real(x2)-imag(x1))
			}
		}
		ws.tab.InverseHead(ws.head, y, ws.work)
		for j := range gb {
			gb[j] = real(ws.head[j+1]) * inv
			ga[j] = -imag(ws.head[j+1]) * inv
		}
	} else {
		ws.rfft.Coefficients(ws.fe, e)
		for i := range ws.fe {
			ws.fe[i] = fft.Div(ws.fe[i], fft.Conj(ws.fa[i]))
		}
		ws.rfft.Sequence(ws.y, ws.fe)
		for j := range gb {
			gb[j] = ws.y[j+1] * inv
		}
		for i := range ws.fe {
			ws.fe[i] *= fft.Conj(ws.g[i])
		}
		ws.rfft.Sequence(ws.y, ws.fe)
		for j := 0; j < n; j++ {
			ga[j] = -ws.y[j+1] * inv
		}
	}
	if m.montel {
		// a_j = w_j/s, s = Σ|w| + 10⁻⁶ (rtf.L1Montel): ∂a_j/∂w_i = δ_ij/s - w_j·sign(w_i)/s².
		s, dot := rtf.L1MontelNorm(p[:n], p[n]), 0.0
		for i, w := range p[:n] {
			dot += ga[i] * w
		}
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
	g[m.denLen()+n] = e[0]
}

// filter deploys the trained parameters: the circular kernel k is the truncated response of
// the RTF with numerator b = b̃(I - A^L)⁻¹ (RTF paper, eq. 13; rtf.Untruncate), and D = k[0]
// (h0 plus the sample h[L] that the circular kernel folds onto t = 0), so that the deployed
// filter's first L samples are the trained kernel. The returned number is the relative
// difference between them, which is large only when I - A^L is nearly singular (a pole near
// the unit circle).
func (m *rtfModel) filter(p []float64) (filters.Filter, float64, error) {
	n := m.n
	a := m.denominator(p, make([]float64, n))
	k := make([]float64, m.length)
	m.kernel(m.newWorkspace(), p, k)
	b, err := rtf.Untruncate(a, p[m.denLen():m.denLen()+n], m.length)
	if err != nil {
		return nil, 0, err
	}
	tf, err := filters.NewTransferFunction(a, b, k[0])
	if err != nil {
		return nil, 0, err
	}
	return tf, filters.RelDiff(k, tf.Impulse(m.length)), nil
}

// refitNumerator returns the numerator b that minimises ‖h - y‖₂ over t ≥ 1 for the fitted
// denominator a, with h the response of (a, b) as the deployed recurrence computes it. The
// response is linear in b: column j is the impulse response of z⁻ʲ/a(z⁻¹), the same float64
// recurrence delayed by j - 1 samples, so this is an (L-1)×n least-squares problem (QR). b
// recovered from the trained circular kernel carries that kernel's FFT rounding, which the
// recurrence amplifies by the filter's gain near clustered poles; refitted against the target
// in the deployed domain, the Hyena kernels' error drops severalfold (3e-7 → 9e-8 on one
// channel at n = 4).
func refitNumerator(a, y []float64) ([]float64, error) {
	n, length := len(a), len(y)
	if n == 0 || length-1 < n {
		return nil, invalidf("refit: %d samples for order %d", length, n)
	}
	unit := make([]float64, n)
	unit[0] = 1
	tf, err := filters.NewTransferFunction(a, unit, 0)
	if err != nil {
		return nil, err
	}
	g := tf.Impulse(length) // g[t] = response of z⁻¹/a(z⁻¹)
	// Column j−1 is g delayed by j − 1 (rows t = 1…L−1), each contiguous for householderSolve.
	rows := length - 1
	bp := refitBuffers.Get().(*[]float64)
	defer refitBuffers.Put(bp)
	if cap(*bp) < rows*n {
		*bp = make([]float64, rows*n)
	}
	buf := (*bp)[:rows*n]
	cols := make([][]float64, n)
	for j := range cols {
		cols[j] = buf[j*rows : (j+1)*rows]
		clear(cols[j][:j])
		copy(cols[j][j:], g[1:length-j])
	}
	b := make([]float64, n)
	if !householderSolve(cols, y[1:], b, make([]float64, n), nil) {
		return nil, invalidf("refit: the numerator's least-squares problem is rank-deficient or too ill-conditioned for the denominator's response")
	}
	return b, nil
}

// refitBuffers hold refitNumerator's columns between calls: at n = 64, L = 1024 they are half a
// megabyte, which fresh from the heap cost more in page faults than the QR that uses them
// (decaying noise, whose rungs all deploy as tf: 47% of the refit in a profile).
var refitBuffers = sync.Pool{New: func() any { return new([]float64) }}

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
	return denominatorRadius(m.denominator(p, make([]float64, m.n)))
}

// denominatorRadius is the largest |pole| of the denominator a (the coefficients after its
// leading 1), +Inf where it cannot be found.
func denominatorRadius(a []float64) float64 {
	tf, err := filters.NewTransferFunction(a, make([]float64, len(a)), 0)
	if err != nil {
		return math.Inf(1)
	}
	rho, err := filters.SpectralRadius(tf)
	if err != nil {
		return math.Inf(1)
	}
	return rho
}
