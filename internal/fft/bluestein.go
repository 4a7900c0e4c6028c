package fft

import "sync"

// bluesteinCheaper reports whether Bluestein's algorithm beats FFTPACK at length n.
// FFTPACK's generic radix costs O(n·p) for each prime factor p, so a prime length is
// quadratic (n = 1021: 26× the time of n = 1022, and 3e-12 off where Bluestein is 4e-16
// off); Bluestein costs three power-of-two transforms of m ≥ 2n − 1 points whatever n's
// factors. The costs fitted to BenchmarkRealLengths, about 0.45 ns·n·Σp for FFTPACK and
// 1.4 ns·m·log₂m for Bluestein, decide: 976 = 16·61 stays with FFTPACK (26 µs against 31),
// 1022 = 2·7·73 goes to Bluestein (30 µs against 35).
func bluesteinCheaper(n int) bool {
	if n < 4 || IsPow2(n) {
		return false
	}
	sum := 0
	for f, r := 2, n; r > 1; {
		if f*f > r {
			sum += r
			break
		}
		if r%f == 0 {
			sum, r = sum+f, r/f
		} else {
			f++
		}
	}
	m, logm := convolutionSize(n)
	return n*sum > 3*m*logm
}

// convolutionSize returns m, the power of two (≥ 4) Bluestein's algorithm transforms for
// length n (m ≥ 2n − 1, so the circular convolution does not wrap), and log₂m.
func convolutionSize(n int) (m, logm int) {
	m, logm = 4, 2
	for m < 2*n-1 {
		m, logm = 2*m, logm+1
	}
	return m, logm
}

// bluestein is the shared, read-only part of Bluestein's algorithm for length n: the DFT
// as a convolution with a chirp (jk = (j² + k² − (k − j)²)/2), computed by power-of-two
// transforms of length m ≥ 2n − 1.
//
//	X[k] = w[k] · Σⱼ (x[j]·w[j]) · conj(w[k − j]),  w[j] = e^{−iπj²/n}.
type bluestein struct {
	n, m  int
	tab   *Table
	chirp []complex128 // w[j], j < n
	// spec is the transform of the convolution kernel conj(w[j]) for |j| < n, wrapped to
	// length m, divided by m (the inverse transform's normalisation).
	spec []complex128
}

var bluesteins sync.Map // int → *bluestein

// sharedBluestein returns the process-wide plan for length n, built on first use.
func sharedBluestein(n int) *bluestein { return cached(&bluesteins, n, newBluestein) }

func newBluestein(n int) *bluestein {
	m, _ := convolutionSize(n)
	b := &bluestein{n: n, m: m, tab: Shared(m), chirp: make([]complex128, n), spec: make([]complex128, m)}
	for j := range b.chirp {
		// j² mod 2n keeps the argument exact for any j; unitRoot rounds it correctly.
		b.chirp[j] = unitRoot(int(uint64(j)*uint64(j)%uint64(2*n)), 2*n)
	}
	scale := complex(1/float64(m), 0)
	b.spec[0] = Conj(b.chirp[0]) * scale
	for j := 1; j < n; j++ {
		v := Conj(b.chirp[j]) * scale
		b.spec[j], b.spec[m-j] = v, v
	}
	b.tab.Transform(b.spec, make([]complex128, m), false)
	return b
}

// dft overwrites x (length n) with its DFT, X[k] = Σ x[j]·e^{−2πijk/n}. buf and work hold
// m values each; their contents are destroyed.
func (b *bluestein) dft(x, buf, work []complex128) {
	for j, v := range x {
		buf[j] = v * b.chirp[j]
	}
	clear(buf[b.n:b.m])
	b.tab.Transform(buf, work, false)
	for k, s := range b.spec {
		buf[k] *= s
	}
	b.tab.Transform(buf, work, true)
	for k := range x {
		x[k] = buf[k] * b.chirp[k]
	}
}
