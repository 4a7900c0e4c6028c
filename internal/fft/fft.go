// Package fft holds power-of-two FFTs: a radix-4 Stockham autosort transform (natural order
// in and out, no bit reversal) with a final radix-2 stage for odd powers of two; real
// transforms through a complex transform of half the length; and pruned transforms for short
// coefficient vectors (a forward transform of an input that is zero beyond its first few
// entries, an inverse transform of which only the first few outputs are wanted). Twiddle
// factors are computed once per size by direct sincos (not by recurrence), so each factor is
// correctly rounded to within an ulp. Real is the one real-FFT type of the module: it uses
// these transforms for powers of two, Bluestein's algorithm on top of them for lengths with
// large prime factors (checked against the DFT by its definition), and gonum's dsp/fourier
// (FFTPACK), against which everything else here is tested, for other lengths.
//
// On amd64 with AVX2 the stages and the real transforms' twiddling run in assembly kernels
// (fft_amd64.s), two complex values per register; the last radix-4 stage of an odd power of
// two runs with the radix-2 stage after it in one pass, and from 2048 points, where each pass
// is a trip through L2, pairs of radix-4 stages run in one: 3–4× faster than the Go loops at
// 1024–4096 points (BenchmarkPaths). They do the Go loops' operations in the same order without fused
// multiply-adds, so every transform gives the Go loops' result bit for bit
// (TestKernelsMatchGo, TestStagesMatchGo): the fits that start from Lanczos runs on these
// transforms do not move. The Go loops run elsewhere, with the noasm build tag, and for
// GOAMD64=v3, where the compiler fuses the Go code's complex products.
package fft

import (
	"math"
	"math/bits"
)

// Table is the table of twiddle factors e^{-2πik/n}, k < n, shared by every transform of a
// size dividing n: W_l^p = W_n^{p·n/l}. It is read-only, so one table serves any number of
// goroutines.
type Table struct {
	n int
	w []complex128
}

// NewTable returns the table for transforms of size n, a power of two; it panics otherwise.
func NewTable(n int) *Table {
	if n <= 0 || bits.OnesCount(uint(n)) != 1 {
		panic("fft: size must be a power of two")
	}
	t := &Table{n: n, w: make([]complex128, n)}
	for k := range t.w {
		// Reduce by symmetry so the argument stays in [0, π/4], where sincos is exact to
		// within an ulp and the table is exactly conjugate-symmetric.
		t.w[k] = unitRoot(k, n)
	}
	return t
}

// unitRoot returns e^{-2πik/n} computed from an argument reduced to [0, π/4].
func unitRoot(k, n int) complex128 {
	k %= n
	if k < 0 {
		k += n
	}
	// e^{-2πik/n} = Conj(e^{2πik/n}); work with the octant of 8k/n.
	oct := 8 * k / n
	r := 8*k - oct*n // in [0, n)
	var c, s float64
	if oct%2 == 0 {
		s, c = math.Sincos(math.Pi / 4 * float64(r) / float64(n))
	} else {
		s, c = math.Sincos(math.Pi / 4 * float64(n-r) / float64(n))
		c, s = s, c
	}
	// (c, s) = (cos, sin) of the angle within the first quadrant's octant pair; map the
	// quadrant.
	switch oct / 2 {
	case 0:
	case 1:
		c, s = -s, c
	case 2:
		c, s = -c, -s
	case 3:
		c, s = s, -c
	}
	return complex(c, -s)
}

// Len returns the table's size.
func (t *Table) Len() int { return t.n }

// Transform computes the unnormalised DFT of length len(x) (a power of two dividing the
// table's size) in place: X[k] = Σ x[j]·e^{∓2πijk/N}, with the minus sign when inverse is
// false. work must be at least as long as x; its contents are destroyed.
func (tw *Table) Transform(x, work []complex128, inverse bool) {
	n := len(x)
	if n <= 1 {
		return
	}
	if n&(n-1) != 0 || tw.n%n != 0 || len(work) < n {
		panic("fft: length mismatch")
	}
	out := tw.stages(x, work[:n], x, n, 1, inverse)
	if &out[0] != &x[0] {
		copy(x, out)
	}
}

// stages runs the radix-4 Stockham stages of a transform of length l·s, starting with s
// interleaved sub-transforms of length l held in src (element j of sub-transform q at
// src[q + s·j]), and returns the buffer that holds the result in natural order. The first
// stage writes dst, the next alt, then dst again, and so on: alt may be src (src is then
// overwritten) or a third buffer (src is then only read).
func (tw *Table) stages(src, dst, alt []complex128, l, s int, inverse bool) []complex128 {
	for l >= 4 {
		switch {
		case l == 8 && fuse8(s):
			tw.radix8Last(src, dst, s, inverse)
			return dst
		case l >= 16 && fuse16(l, s):
			tw.radix16(src, dst, l, s, inverse)
			l, s = l/16, s*16
		default:
			tw.radix4(src, dst, l, s, inverse)
			l, s = l/4, s*4
		}
		src, dst, alt = dst, alt, dst
	}
	if l == 2 {
		radix2(src, dst, s)
		src = dst
	}
	return src
}

// stageCount is the number of passes stages makes over s sub-transforms of length l.
func stageCount(l, s int) (k int) {
	for ; l >= 4; k++ {
		switch {
		case l == 8 && fuse8(s):
			return k + 1
		case l >= 16 && fuse16(l, s):
			l, s = l/16, s*16
		default:
			l, s = l/4, s*4
		}
	}
	if l == 2 {
		k++
	}
	return k
}

// radix4Go is one radix-4 stage in Go, the kernels' reference.
func (tw *Table) radix4Go(src, dst []complex128, l, s int, inverse bool) {
	if inverse {
		radix4Inverse(src, dst, l, s, tw)
	} else {
		radix4Forward(src, dst, l, s, tw)
	}
}

// radix2Go is the final radix-2 stage of an odd power of two in Go: s transforms of length 2.
func radix2Go(src, dst []complex128, s int) {
	a, b := src[:s], src[s:2*s]
	d0, d1 := dst[:s], dst[s:2*s]
	for q := range a {
		x, y := a[q], b[q]
		d0[q], d1[q] = x+y, x-y
	}
}

// radix4Forward is one decimation-in-frequency stage (OTFFT's Stockham formulation):
// sub-transforms of length l become 4s sub-transforms of length l/4.
func radix4Forward(src, dst []complex128, l, s int, tw *Table) {
	m := l / 4
	step := tw.n / l
	w := tw.w
	for p := 0; p < m; p++ {
		w1 := w[p*step]
		w2 := w[2*p*step]
		w3 := w[3*p*step]
		a := src[s*p : s*p+s]
		b := src[s*(p+m) : s*(p+m)+s]
		c := src[s*(p+2*m) : s*(p+2*m)+s]
		d := src[s*(p+3*m) : s*(p+3*m)+s]
		y := dst[4*s*p : 4*s*p+4*s]
		y0, y1, y2, y3 := y[:s], y[s:2*s], y[2*s:3*s], y[3*s:4*s]
		b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
		y0, y1, y2, y3 = y0[:len(a)], y1[:len(a)], y2[:len(a)], y3[:len(a)]
		if p == 0 {
			for q := range a {
				apc, amc := a[q]+c[q], a[q]-c[q]
				bpd, bmd := b[q]+d[q], b[q]-d[q]
				jbmd := complex(-imag(bmd), real(bmd))
				y0[q] = apc + bpd
				y1[q] = amc - jbmd
				y2[q] = apc - bpd
				y3[q] = amc + jbmd
			}
			continue
		}
		for q := range a {
			apc, amc := a[q]+c[q], a[q]-c[q]
			bpd, bmd := b[q]+d[q], b[q]-d[q]
			jbmd := complex(-imag(bmd), real(bmd))
			y0[q] = apc + bpd
			y1[q] = w1 * (amc - jbmd)
			y2[q] = w2 * (apc - bpd)
			y3[q] = w3 * (amc + jbmd)
		}
	}
}

// radix4Inverse is radix4Forward with e^{+2πi/l}.
func radix4Inverse(src, dst []complex128, l, s int, tw *Table) {
	m := l / 4
	step := tw.n / l
	w := tw.w
	for p := 0; p < m; p++ {
		w1 := Conj(w[p*step])
		w2 := Conj(w[2*p*step])
		w3 := Conj(w[3*p*step])
		a := src[s*p : s*p+s]
		b := src[s*(p+m) : s*(p+m)+s]
		c := src[s*(p+2*m) : s*(p+2*m)+s]
		d := src[s*(p+3*m) : s*(p+3*m)+s]
		y := dst[4*s*p : 4*s*p+4*s]
		y0, y1, y2, y3 := y[:s], y[s:2*s], y[2*s:3*s], y[3*s:4*s]
		b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
		y0, y1, y2, y3 = y0[:len(a)], y1[:len(a)], y2[:len(a)], y3[:len(a)]
		if p == 0 {
			for q := range a {
				apc, amc := a[q]+c[q], a[q]-c[q]
				bpd, bmd := b[q]+d[q], b[q]-d[q]
				jbmd := complex(-imag(bmd), real(bmd))
				y0[q] = apc + bpd
				y1[q] = amc + jbmd
				y2[q] = apc - bpd
				y3[q] = amc - jbmd
			}
			continue
		}
		for q := range a {
			apc, amc := a[q]+c[q], a[q]-c[q]
			bpd, bmd := b[q]+d[q], b[q]-d[q]
			jbmd := complex(-imag(bmd), real(bmd))
			y0[q] = apc + bpd
			y1[q] = w1 * (amc + jbmd)
			y2[q] = w2 * (apc - bpd)
			y3[q] = w3 * (amc - jbmd)
		}
	}
}

// Conj returns the complex conjugate.
func Conj(z complex128) complex128 { return complex(real(z), -imag(z)) }

// Div returns x/y without the runtime's overflow scaling, for |y| far from the limits of
// float64 (spectra of normalised coefficients); y = 0 gives a non-finite result for the
// caller to detect.
func Div(x, y complex128) complex128 {
	d := 1 / (real(y)*real(y) + imag(y)*imag(y))
	return complex((real(x)*real(y)+imag(x)*imag(y))*d, (imag(x)*real(y)-real(x)*imag(y))*d)
}
