package analysis

import (
	"fmt"
	"sync"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/fft"
)

// KernelPlan generates length-L convolution kernels of rational transfer functions of order n
// by the state-free Algorithm 1 of the RTF paper:
//
//	h = iFFT_L( FFT_L(b̃) / FFT_L(a) ),  h[0] = h0,
//
// with a = (1, a₁, …, aₙ) and b̃ = (0, b̃₁, …, b̃ₙ) zero-padded to L. The L-point transforms
// sample the transfer function at the L-th roots of unity, where z^{-L} = 1, so the inverse
// transform returns the L-periodic sum Σₖ h[t + kL] (eq. 8–12). With the truncation-corrected
// numerator b̃ = C(I - A^L) of eq. 13 (rtf.Truncate) the periodic sum is exactly the
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
// (rtf.Spectra), then a real inverse transform of half length.
func (p *KernelPlan) kernelPow2(w *kernelWork, dst, a, bt []float64) {
	rtf.Spectra(p.tw, w.g, nil, a, bt, 1/float64(p.length), w.x, w.buf, w.work)
	p.tw.RealInverse(dst, w.g, w.work)
}

// kernelGonum is Algorithm 1 for lengths that are not powers of two (rtf.SpectraAny, then
// a real inverse transform). Coefficients beyond L fold onto index j mod L (z^L = 1 on the
// L-th roots of unity).
func (p *KernelPlan) kernelGonum(w *kernelWork, dst, a, bt []float64) {
	rtf.SpectraAny(w.rfft, w.ca, nil, a, bt, 1/float64(p.length), w.ra, w.rb, w.cb)
	w.rfft.Sequence(dst, w.ca)
}
