package rtf

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/ssmlab/ssmlab/internal/fft"
)

// spectraTol bounds the relative error of B̃/A against gonum's FFTPACK for these
// Montel-constrained denominators (|A| ≥ 0.1 on the circle): a few eps·log₂N·10; measured
// below 1e-15.
const spectraTol = 1e-13

// TestSpectra checks Spectra against gonum's real FFT of the zero-padded coefficients, with
// b̃ far smaller than a (the shared transform scales it) and with more coefficients than
// points (they fold onto j mod N).
func TestSpectra(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct {
		n, size int
		bscale  float64
	}{{1, 4, 1}, {8, 64, 1}, {8, 64, 1e-9}, {30, 16, 1}, {64, 1024, 1e6}} {
		a, bt := Montel(rng, tc.n)
		for i := range a {
			a[i] *= 0.9
			bt[i] *= tc.bscale
		}
		half := tc.size/2 + 1
		g, den := make([]complex128, half), make([]complex128, half)
		Spectra(fft.Shared(tc.size), g, den, a, bt, 0.5, make([]complex128, tc.n+1), make([]complex128, tc.size), make([]complex128, tc.size))
		pa, pb := make([]float64, tc.size), make([]float64, tc.size)
		pa[0] = 1
		for j := 1; j <= tc.n; j++ {
			pa[j%tc.size] += a[j-1]
			pb[j%tc.size] += bt[j-1]
		}
		f := fourier.NewFFT(tc.size)
		wa, wb := f.Coefficients(nil, pa), f.Coefficients(nil, pb)
		for k := range half {
			want := 0.5 * wb[k] / wa[k]
			if e := cmplx.Abs(g[k]-want) / cmplx.Abs(want); e > spectraTol && cmplx.Abs(g[k]-want) > 1e-300 {
				t.Errorf("n=%d N=%d k=%d: B̃/A = %v, want %v (%.3g)", tc.n, tc.size, k, g[k], want, e)
			}
			if e := cmplx.Abs(den[k]-wa[k]) / cmplx.Abs(wa[k]); e > spectraTol {
				t.Errorf("n=%d N=%d k=%d: A = %v, want %v", tc.n, tc.size, k, den[k], wa[k])
			}
		}
	}
}

// TestSpectraAny checks SpectraAny against direct evaluation of B̃(z)/A(z) at the N-th roots
// of unity, for lengths that are not powers of two and orders up to beyond N (coefficients
// fold), and against Spectra where N is a power of two.
func TestSpectraAny(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ n, size int }{{3, 7}, {4, 10}, {8, 12}, {16, 100}, {9, 6}, {5, 16}, {12, 64}} {
		a, bt := make([]float64, c.n), make([]float64, c.n)
		for j := range a {
			a[j] = 0.3 * rng.NormFloat64() / float64(c.n)
			bt[j] = rng.NormFloat64()
		}
		h := c.size/2 + 1
		g, den, fb := make([]complex128, h), make([]complex128, h), make([]complex128, h)
		SpectraAny(fft.NewReal(c.size), g, den, a, bt, 0.5, make([]float64, c.size), make([]float64, c.size), fb)
		for k := range g {
			z := cmplx.Exp(complex(0, -2*math.Pi*float64(k)/float64(c.size)))
			A, B, p := complex(1, 0), complex(0, 0), complex(1, 0)
			for j := range a {
				p *= z
				A += complex(a[j], 0) * p
				B += complex(bt[j], 0) * p
			}
			if e := cmplx.Abs(g[k] - 0.5*B/A); e > 1e-12*(1+cmplx.Abs(B/A)) {
				t.Errorf("n=%d N=%d: g[%d] = %v, want %v", c.n, c.size, k, g[k], 0.5*B/A)
			}
			if e := cmplx.Abs(den[k] - A); e > 1e-12*(1+cmplx.Abs(A)) {
				t.Errorf("n=%d N=%d: den[%d] = %v, want %v", c.n, c.size, k, den[k], A)
			}
		}
		if fft.IsPow2(c.size) {
			want := make([]complex128, h)
			Spectra(fft.Shared(c.size), want, nil, a, bt, 0.5, make([]complex128, c.n+1), make([]complex128, c.size), make([]complex128, c.size))
			for k := range want {
				if e := cmplx.Abs(g[k] - want[k]); e > 1e-13*(1+cmplx.Abs(want[k])) {
					t.Errorf("n=%d N=%d: g[%d] = %v, Spectra %v", c.n, c.size, k, g[k], want[k])
				}
			}
		}
	}
}
