package rtf

import (
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
