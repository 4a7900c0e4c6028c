package analysis

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/fft"
)

// KernelPlan generates length-L convolution kernels of rational transfer functions of order n
// by the state-free Algorithm 1 of seed 004:
//
//	h = iFFT_L( FFT_L(b̃) / FFT_L(a) ),  h[0] = h0,
//
// with a = (1, a₁, …, aₙ) and b̃ = (0, b̃₁, …, b̃ₙ) zero-padded to L. The L-point transforms
// sample the transfer function at the L-th roots of unity, where z^{-L} = 1, so the inverse
// transform returns the L-periodic sum Σₖ h[t + kL] (eq. 8–12). With the truncation-corrected
// numerator b̃ = C(I - A^L) of eq. 13 (TruncateNumerator) the periodic sum is exactly the
// first L samples of the filter (a, b, h0): the tail cancels for every A, stable or not, as
// long as no pole lies on an L-th root of unity. Only t = 0 still receives h[L]; the plan
// writes h0 there, which is what the causal kernel of eq. 7 holds.
//
// For a power-of-two L the plan uses internal/fft's radix-4 FFT: a and b̃ travel as one
// complex sequence a + i·b̃ (separated afterwards by conjugate symmetry), the forward
// transform skips the zero padding (it folds the n + 1 coefficients into L/P interleaved
// transforms of length P ≈ n), and the inverse is a real transform of half length. Other
// lengths use fft.Real (Bluestein's algorithm or FFTPACK). A plan is safe for concurrent use;
// its workspaces are pooled.
type KernelPlan struct {
	order, length int
	pow2          bool
	tw            *fft.Table
	pool          sync.Pool // *kernelWork
}

type kernelWork struct {
	buf, work, x, g []complex128
	// gonum path
	rfft   *fft.Real
	ra, rb []float64
	ca, cb []complex128
}

// NewKernelPlan returns a plan for kernels of the given length of filters of the given order.
// It panics if order < 0, length < 1 or order > filters.MaxOrder.
func NewKernelPlan(order, length int) *KernelPlan {
	if order < 0 || order > filters.MaxOrder {
		panic(fmt.Sprintf("analysis: kernel order %d out of range", order))
	}
	if length < 1 {
		panic("analysis: kernel length must be positive")
	}
	p := &KernelPlan{order: order, length: length}
	p.pow2 = length >= 8 && fft.IsPow2(length)
	if p.pow2 {
		p.tw = fft.Shared(length)
	}
	p.pool.New = func() any { return p.newWork() }
	return p
}

// Order returns n.
func (p *KernelPlan) Order() int { return p.order }

// Len returns L.
func (p *KernelPlan) Len() int { return p.length }

func (p *KernelPlan) newWork() *kernelWork {
	w := &kernelWork{}
	if p.pow2 {
		w.buf, w.work = make([]complex128, p.length), make([]complex128, p.length)
		w.x, w.g = make([]complex128, p.order+1), make([]complex128, p.length/2+1)
		return w
	}
	w.rfft = fft.NewReal(p.length)
	w.ra, w.rb = make([]float64, p.length), make([]float64, p.length)
	w.ca, w.cb = make([]complex128, p.length/2+1), make([]complex128, p.length/2+1)
	return w
}

// Kernel writes the kernel of (a, b̃, h0) to dst and returns it; a nil dst allocates. a and
// bt hold a₁…aₙ and b̃₁…b̃ₙ. It panics if their lengths differ from the plan's order or
// dst's from its length. A pole on an L-th root of unity (a(z) = 0 there) or an overflow
// gives a *NonFiniteError.
func (p *KernelPlan) Kernel(dst, a, bt []float64, h0 float64) ([]float64, error) {
	dst = p.check(dst, a, bt)
	w := p.pool.Get().(*kernelWork)
	p.kernel(w, dst, a, bt, h0)
	p.pool.Put(w)
	return dst, checkFinite("kernel", dst)
}

// Bank computes the kernels of every channel, in parallel across GOMAXPROCS goroutines, into
// dst (nil allocates; otherwise dst[i] is used as Kernel uses its dst). On error it returns
// the first failing channel's error, prefixed with "channel i: ".
func (p *KernelPlan) Bank(dst [][]float64, a, bt [][]float64, h0 []float64) ([][]float64, error) {
	d := len(a)
	if len(bt) != d || len(h0) != d || (dst != nil && len(dst) != d) {
		panic("analysis: kernel bank size mismatch")
	}
	if dst == nil {
		dst = make([][]float64, d)
		flat := make([]float64, d*p.length)
		for i := range dst {
			dst[i] = flat[i*p.length : (i+1)*p.length : (i+1)*p.length]
		}
	}
	for i := range dst {
		dst[i] = p.check(dst[i], a[i], bt[i])
	}
	errs := make([]error, d)
	parallelWorkers(d, func() func(i int) {
		w := p.newWork()
		return func(i int) {
			p.kernel(w, dst[i], a[i], bt[i], h0[i])
			errs[i] = checkFinite("kernel", dst[i])
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("channel %d: %w", i, err)
		}
	}
	return dst, nil
}

func (p *KernelPlan) check(dst, a, bt []float64) []float64 {
	if len(a) != p.order || len(bt) != p.order {
		panic("analysis: coefficient length mismatch")
	}
	if dst == nil {
		return make([]float64, p.length)
	}
	if len(dst) != p.length {
		panic("analysis: kernel length mismatch")
	}
	return dst
}

func (p *KernelPlan) kernel(w *kernelWork, dst, a, bt []float64, h0 float64) {
	if p.pow2 {
		p.kernelPow2(w, dst, a, bt)
	} else {
		p.kernelGonum(w, dst, a, bt)
	}
	dst[0] = h0
}

// kernelPow2 is Algorithm 1 for L = N a power of two: H = B̃/A at the N-th roots of unity
// (fft.RTFSpectra), then a real inverse transform of half length.
func (p *KernelPlan) kernelPow2(w *kernelWork, dst, a, bt []float64) {
	p.tw.RTFSpectra(w.g, nil, a, bt, 1/float64(p.length), w.x, w.buf, w.work)
	p.tw.RealInverse(dst, w.g, w.work)
}

// kernelGonum is Algorithm 1 with gonum's real FFT, for lengths that are not powers of two.
// Coefficients beyond L fold onto index j mod L (z^L = 1 on the L-th roots of unity).
func (p *KernelPlan) kernelGonum(w *kernelWork, dst, a, bt []float64) {
	L := p.length
	clear(w.ra)
	clear(w.rb)
	w.ra[0] = 1
	for j := 1; j <= p.order; j++ {
		w.ra[j%L] += a[j-1]
		w.rb[j%L] += bt[j-1]
	}
	w.rfft.Coefficients(w.ca, w.ra)
	w.rfft.Coefficients(w.cb, w.rb)
	for k := range w.ca {
		w.ca[k] = fft.Div(w.cb[k], w.ca[k]) / complex(float64(L), 0)
	}
	w.rfft.Sequence(dst, w.ca)
}

// ---- the truncation correction of eq. 13 ----

// DeployCondLimit is the largest condition number of I - A^L that DeployNumerator accepts:
// beyond it the recovered numerator would carry fewer than about six correct digits.
const DeployCondLimit = 1e10

// TruncateNumerator returns the truncation-corrected numerator b̃ = C(I - A^L) of seed 004
// eq. 13 for the companion realisation (eq. 16: A's first row -a, B = e₁, C = b) of
// H(z) = h0 + b(z⁻¹)/a(z⁻¹). With b̃, Algorithm 1 of length L returns the first L samples of
// the impulse response exactly (KernelPlan). A^L is never formed: with r(z) = z^L mod det(zI - A)
// (square and multiply, O(n² log L)), C·A^L = Σₖ rₖ·C·Aᵏ by Cayley–Hamilton. The result is
// checked: an unstable filter's A^L can overflow (*NonFiniteError).
func TruncateNumerator(a, b []float64, length int) ([]float64, error) {
	if len(a) != len(b) {
		panic("analysis: coefficient length mismatch")
	}
	if length < 0 {
		panic("analysis: negative length")
	}
	n := len(a)
	out := append([]float64(nil), b...)
	if n == 0 {
		return out, nil
	}
	cal := rowTimesPower(a, b, length)
	for j := range out {
		out[j] -= cal[j]
	}
	return out, checkFinite("b̃", out)
}

// DeployNumerator inverts the truncation correction for deployment in a recurrence
// (seed 004 §3.2): b = b̃(I - A^L)⁻¹. It returns the numerator and the condition number of
// that step, ‖(I - A^L)⁻¹‖·(1 + ‖A^L‖) in the 1-norm (an estimate; at least the condition
// number of I - A^L, and 1/(1 - λ^L) for a single real pole λ): b carries about log₁₀ of it
// fewer digits than b̃. I - A^L is singular when a pole lies on an L-th root of unity and
// ill-conditioned when one lies near it (slow poles and short L); above DeployCondLimit the
// error is a *filters.ConditionError wrapping filters.ErrIllConditioned.
func DeployNumerator(a, bt []float64, length int) ([]float64, float64, error) {
	if len(a) != len(bt) {
		panic("analysis: coefficient length mismatch")
	}
	if length < 0 {
		panic("analysis: negative length")
	}
	n := len(a)
	if n == 0 {
		return []float64{}, 1, nil
	}
	// Row i of A^L is eᵢᵀA^L = e_{i-L}ᵀ when i ≥ L, else e₀ᵀA^{L-i} (eᵢᵀA = eᵢ₋₁ᵀ for i ≥ 1).
	m := mat.NewDense(n, n, nil)
	for i := length; i < n; i++ {
		m.Set(i, i-length, 1)
	}
	if top := min(n, length) - 1; top >= 0 {
		e0 := make([]float64, n)
		e0[0] = 1
		row := rowTimesPower(a, e0, length-top)
		for i := top; i >= 0; i-- {
			m.SetRow(i, row)
			if i > 0 {
				row = companionStep(a, row)
			}
		}
	}
	normAL := mat.Norm(m, 1)
	// M = I - A^L.
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := -m.At(i, j)
			if i == j {
				v++
			}
			m.Set(i, j, v)
		}
	}
	if err := checkFinite("A^L", m.RawMatrix().Data); err != nil {
		return nil, math.MaxFloat64, err
	}
	var lu mat.LU
	lu.Factorize(m)
	// Forming M rounds at eps·‖A^L‖ and solving amplifies by ‖M⁻¹‖: the condition of the
	// inverse correction is ‖M⁻¹‖·(1 + ‖A^L‖) ≥ κ(M) (1/(1 - λ^L) for one real pole λ).
	cond := lu.Cond() / mat.Norm(m, 1) * (1 + normAL)
	if math.IsInf(cond, 0) || math.IsNaN(cond) || cond > DeployCondLimit {
		if math.IsNaN(cond) {
			cond = math.Inf(1)
		}
		return nil, cond, &filters.ConditionError{
			What:      fmt.Sprintf("I - A^%d (a pole on or near an %d-th root of unity)", length, length),
			Condition: cond, Limit: DeployCondLimit, Kind: filters.ErrIllConditioned,
		}
	}
	// x·M = b̃  ⇔  Mᵀxᵀ = b̃ᵀ.
	x := mat.NewVecDense(n, nil)
	if err := lu.SolveVecTo(x, true, mat.NewVecDense(n, append([]float64(nil), bt...))); err != nil {
		return nil, cond, &filters.ConditionError{What: fmt.Sprintf("I - A^%d", length), Condition: cond, Limit: DeployCondLimit, Kind: filters.ErrIllConditioned}
	}
	out := x.RawVector().Data
	return out, cond, checkFinite("b", out)
}

// companionStep returns x·A for the companion matrix of eq. 16: (xA)_j = -x₀aⱼ + x_{j+1}.
func companionStep(a, x []float64) []float64 {
	n := len(a)
	out := make([]float64, n)
	for j := 0; j < n; j++ {
		out[j] = -x[0] * a[j]
		if j+1 < n {
			out[j] += x[j+1]
		}
	}
	return out
}

// rowTimesPower returns x·A^k for the companion matrix of a, in O(n² log k) operations:
// r(z) = z^k mod p(z) with p(z) = zⁿ + a₁zⁿ⁻¹ + … + aₙ = det(zI - A), then Σⱼ rⱼ·x·Aʲ.
func rowTimesPower(a, x []float64, k int) []float64 {
	n := len(a)
	r := polyPowMod(a, k)
	out := make([]float64, n)
	row := append([]float64(nil), x...)
	for j := 0; j < n; j++ {
		if r[j] != 0 {
			for i, v := range row {
				out[i] += r[j] * v
			}
		}
		if j+1 < n {
			row = companionStep(a, row)
		}
	}
	return out
}

// polyPowMod returns the coefficients (ascending powers, length n) of z^k mod p(z), p monic
// with p(z) = zⁿ + a₁zⁿ⁻¹ + … + aₙ, by square and multiply.
func polyPowMod(a []float64, k int) []float64 {
	n := len(a)
	r := make([]float64, n)
	if k < n {
		r[k] = 1
		return r
	}
	// Start from z^{k>>s} for the smallest shift s that leaves an exponent below n.
	s := 0
	for k>>s >= n {
		s++
	}
	r[k>>s] = 1
	sq := make([]float64, 2*n)
	for s--; s >= 0; s-- {
		// r ← r²·z^bit mod p.
		clear(sq)
		sh := k >> s & 1
		for i, u := range r {
			if u == 0 {
				continue
			}
			row := sq[i+sh : i+sh+n]
			for j, v := range r {
				row[j] += u * v
			}
		}
		reduceMod(sq, a)
		copy(r, sq[:n])
	}
	return r
}

// reduceMod reduces q (ascending powers) modulo the monic p(z) = zⁿ + a₁zⁿ⁻¹ + … + aₙ in place,
// leaving the remainder in q[:n]: zⁿ ≡ -Σᵢ aᵢzⁿ⁻ⁱ.
func reduceMod(q, a []float64) {
	n := len(a)
	for d := len(q) - 1; d >= n; d-- {
		c := q[d]
		if c == 0 {
			continue
		}
		q[d] = 0
		for i := 1; i <= n; i++ {
			q[d-i] -= c * a[i-1]
		}
	}
}
