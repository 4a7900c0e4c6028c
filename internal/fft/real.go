package fft

import (
	"math/bits"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/dsp/fourier"
)

var tables sync.Map // int → *Table

// Shared returns the process-wide table for size n (a power of two), built on first use.
func Shared(n int) *Table { return cached(&tables, n, NewTable) }

// cached returns the read-only value for size n held in m, built by build on first use.
func cached[T any](m *sync.Map, n int, build func(int) T) T {
	if v, ok := m.Load(n); ok {
		return v.(T)
	}
	v, _ := m.LoadOrStore(n, build(n))
	return v.(T)
}

// IsPow2 reports whether n is a power of two (n ≥ 1).
func IsPow2(n int) bool { return n > 0 && bits.OnesCount(uint(n)) == 1 }

// RealForward writes the half spectrum X[k] = Σ x[j]·e^{-2πijk/N}, k = 0…N/2, of the real
// sequence x of length N (the table's size, at least 4) to dst (length N/2+1). work must hold
// N values; its contents are destroyed. The N/2-point complex transform of
// z[m] = x[2m] + i·x[2m+1] gives both halves: X[k] = E_k - i·W_N^k·O_k with
// E_k = (Z_k + conj Z_{N/2-k})/2 and O_k = (Z_k - conj Z_{N/2-k})/2.
func (tw *Table) RealForward(dst []complex128, x []float64, work []complex128) {
	n := tw.n
	h := n / 2
	if len(x) != n || len(dst) != h+1 || len(work) < n || n < 4 {
		panic("fft: real transform length mismatch")
	}
	// The stages read x in place (complex128 is two float64s, real part first).
	z := tw.stages(asComplex(x), work[:h], work[h:n], h, 1, false)
	w := tw.w
	for _, k := range [...]int{0, h - 1, h} {
		realForwardPost(dst, z, w, k)
	}
	realForwardPosts(dst, z, w)
}

// realForwardPost writes entry k of RealForward's half spectrum from the half-length
// transform z.
func realForwardPost(dst, z, w []complex128, k int) {
	h := len(z)
	zk := z[k&(h-1)]
	zc := Conj(z[(h-k)&(h-1)])
	e, o := (zk+zc)*0.5, (zk-zc)*0.5
	p := w[k] * o
	dst[k] = e + complex(imag(p), -real(p))
}

// realForwardPostsGo is realForwardPost for k = 1 … h−2, the kernels' reference.
func realForwardPostsGo(dst, z, w []complex128) {
	for k := 1; k < len(z)-1; k++ {
		realForwardPost(dst, z, w, k)
	}
}

// RealInverse writes the real sequence x[t] = Σ_{k<N} X[k]·e^{+2πitk/N} (unnormalised, like
// gonum's Sequence) of the Hermitian spectrum whose half X[0…N/2] is c to dst (length N, the
// table's size, at least 4); the imaginary parts of c[0] and c[N/2] are taken as zero. work
// must hold N values; c is left as it was. With E_k = X_k + X_{k+N/2} and
// O_k = (X_k - X_{k+N/2})·e^{+2πik/N}, the N/2-point inverse of E + i·O interleaves
// x[2m] + i·x[2m+1]; X_{k+N/2} = conj X_{N/2-k}.
func (tw *Table) RealInverse(dst []float64, c []complex128, work []complex128) {
	n := tw.n
	h := n / 2
	if len(dst) != n || len(c) != h+1 || len(work) < n || n < 4 {
		panic("fft: real transform length mismatch")
	}
	y := work[:h]
	w := tw.w
	for _, k := range [...]int{0, h - 1} {
		realInversePre(y, c, w, k)
	}
	realInversePres(y, c, w)
	// The last stage writes dst in place (complex128 is two float64s, real part first).
	out, alt := asComplex(dst), work[h:n]
	if stageCount(h, 1)%2 == 0 {
		out, alt = alt, out
	}
	tw.stages(y, out, alt, h, 1, true)
}

// realInversePre writes entry k of RealInverse's half-length spectrum from the half spectrum c.
func realInversePre(y, c, w []complex128, k int) {
	h := len(y)
	xk, xc := c[k], Conj(c[h-k])
	if k == 0 {
		xk, xc = complex(real(c[0]), 0), complex(real(c[h]), 0)
	}
	e := xk + xc
	o := (xk - xc) * Conj(w[k])
	y[k] = e + complex(-imag(o), real(o))
}

// realInversePresGo is realInversePre for k = 1 … h−2, the kernels' reference.
func realInversePresGo(y, c, w []complex128) {
	for k := 1; k < len(y)-1; k++ {
		realInversePre(y, c, w, k)
	}
}

// asComplex views x (of even length) as the complex values x[2m] + i·x[2m+1].
func asComplex(x []float64) []complex128 {
	return unsafe.Slice((*complex128)(unsafe.Pointer(unsafe.SliceData(x))), len(x)/2)
}

// fold returns the sub-transform length P of a pruned transform of size n whose input (or
// wanted output) has m entries: the largest power of two ≤ m, at least 4 and at most n.
// About one fold term per element, and log₂P radix stages instead of log₂n.
func fold(m, n int) int {
	return min(max(1<<(bits.Len(uint(max(m, 1)))-1), 4), n)
}

// ForwardShort returns X = FFT_N(x) for an x that is zero beyond its len(x) entries (any
// number; entries beyond N fold onto j mod N). buf and work must each hold N values; the
// result is one of them. With the input short, the first log₂(N/P) decimation-in-frequency
// stages reduce to a fold: the sub-transform of residue r < M = N/P is
// u_r[j] = Σ_s x[j+sP]·W_N^{(j+sP)r}, and X[r + M·q] = FFT_P(u_r)[q]. u_r[j] is stored at
// buf[r + M·j], the layout the Stockham stages continue from.
func (tw *Table) ForwardShort(x, buf, work []complex128) []complex128 {
	n := tw.n
	if len(buf) < n || len(work) < n {
		panic("fft: buffer too short")
	}
	p := fold(len(x), n)
	m := n / p
	mask := n - 1
	w := tw.w
	z := buf[:n]
	clear(z)
	for jj, v := range x {
		j := jj % p
		row := z[m*j : m*j+m]
		if jj%n == 0 {
			for r := range row {
				row[r] += v
			}
			continue
		}
		for r := range row {
			row[r] += v * w[(jj*r)&mask]
		}
	}
	return tw.stages(z, work[:n], z, p, m, false)
}

// InverseHead writes the first len(dst) outputs x[t] = Σ_{k<N} X[k]·e^{+2πitk/N} of the
// unnormalised inverse transform of the spectrum spec (length N) to dst. spec and work (N
// values) are destroyed. It is ForwardShort's adjoint: with k = r + M·q, the P-point inverse
// of each residue's samples gives v_r[t mod P] at [r + M·(t mod P)], and
// x[t] = Σ_r e^{+2πitr/N}·v_r[t mod P], M terms per output.
func (tw *Table) InverseHead(dst, spec, work []complex128) {
	n := tw.n
	if len(spec) != n || len(work) < n {
		panic("fft: buffer too short")
	}
	p := fold(len(dst), n)
	m := n / p
	mask := n - 1
	w := tw.w
	v := tw.stages(spec, work[:n], spec, p, m, true)
	for t := range dst {
		row := v[m*(t%p) : m*(t%p)+m]
		var s complex128
		for r, x := range row {
			s += x * Conj(w[(t*r)&mask])
		}
		dst[t] = s
	}
}

// Real is a real FFT of one length: this package's transforms for powers of two (≥ 4),
// Bluestein's algorithm on top of them for lengths with large prime factors (where
// bluesteinCheaper), and gonum's FFTPACK for the other lengths. Its methods match gonum's
// fourier.FFT (unnormalised). A Real holds scratch space, so it serves one goroutine at a
// time.
type Real struct {
	n     int
	tab   *Table
	work  []complex128
	gonum *fourier.FFT
	blue  *bluestein
	z     []complex128 // Bluestein's length-n vector; work and buf then hold its m points
	buf   []complex128
}

// NewReal returns a real FFT of length n ≥ 1.
func NewReal(n int) *Real {
	if n < 1 {
		panic("fft: length must be positive")
	}
	r := &Real{n: n}
	switch {
	case n >= 4 && IsPow2(n):
		r.tab, r.work = Shared(n), make([]complex128, n)
	case bluesteinCheaper(n):
		r.useBluestein()
	default:
		r.gonum = fourier.NewFFT(n)
	}
	return r
}

func (r *Real) useBluestein() {
	r.blue = sharedBluestein(r.n)
	r.z, r.buf, r.work = make([]complex128, r.n), make([]complex128, r.blue.m), make([]complex128, r.blue.m)
}

// Len returns the transform length.
func (r *Real) Len() int { return r.n }

// Coefficients returns the half spectrum (n/2+1 values) of x, in dst when it is not nil.
func (r *Real) Coefficients(dst []complex128, x []float64) []complex128 {
	if r.gonum != nil {
		return r.gonum.Coefficients(dst, x)
	}
	if len(x) != r.n || dst != nil && len(dst) != r.n/2+1 {
		panic("fft: real transform length mismatch")
	}
	if dst == nil {
		dst = make([]complex128, r.n/2+1)
	}
	if r.blue != nil {
		for j, v := range x {
			r.z[j] = complex(v, 0)
		}
		r.blue.dft(r.z, r.buf, r.work)
		copy(dst, r.z)
		return dst
	}
	r.tab.RealForward(dst, x, r.work)
	return dst
}

// Sequence returns the unnormalised inverse of the half spectrum c, in dst when it is not nil.
// Like gonum's, it ignores the imaginary parts of c[0] and, for even n, c[n/2].
func (r *Real) Sequence(dst []float64, c []complex128) []float64 {
	if r.gonum != nil {
		return r.gonum.Sequence(dst, c)
	}
	if len(c) != r.n/2+1 || dst != nil && len(dst) != r.n {
		panic("fft: real transform length mismatch")
	}
	if dst == nil {
		dst = make([]float64, r.n)
	}
	if r.blue != nil {
		// x[j] = Re Σ X[k]·e^{2πijk/n} = Re DFT(conj X)[j], X Hermitian; the real part drops
		// the imaginary parts of X[0] and X[n/2].
		for k, v := range c {
			r.z[k] = Conj(v)
		}
		for k := len(c); k < r.n; k++ {
			r.z[k] = c[r.n-k]
		}
		r.blue.dft(r.z, r.buf, r.work)
		for j, v := range r.z {
			dst[j] = real(v)
		}
		return dst
	}
	r.tab.RealInverse(dst, c, r.work)
	return dst
}
