package analysis

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// fftTol bounds the relative L2 difference between two FFT implementations of length n ≤ 2¹⁶:
// each has an error of about eps·log₂n relative to ‖X‖ (Higham, Accuracy and Stability §24.1).
const fftTol = 1e-14

func TestFFTAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 8192, 1 << 16} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		want := fourier.NewCmplxFFT(n).Coefficients(nil, x)
		tw := newTwiddles(max(n, 1))
		got := append([]complex128(nil), x...)
		work := make([]complex128, n)
		fft(got, work, tw, false)
		if e := relErrC(got, want); e > fftTol {
			t.Errorf("n=%d forward: rel error %.3g", n, e)
		}
		// Inverse: gonum's Sequence is also unnormalised.
		back := append([]complex128(nil), got...)
		fft(back, work, tw, true)
		for i := range back {
			back[i] /= complex(float64(n), 0)
		}
		if e := relErrC(back, x); e > fftTol {
			t.Errorf("n=%d round trip: rel error %.3g", n, e)
		}
		// A transform of a length dividing the table's.
		if n >= 4 {
			big := newTwiddles(4 * n)
			got2 := append([]complex128(nil), x...)
			fft(got2, work, big, false)
			if e := relErrC(got2, want); e > fftTol {
				t.Errorf("n=%d with a table of %d: rel error %.3g", n, 4*n, e)
			}
		}
	}
}

func TestUnitRoot(t *testing.T) {
	for _, n := range []int{1, 2, 8, 12, 1024, 1000} {
		for k := -n; k < 2*n; k++ {
			// The reference reduces k mod n first; its argument carries ~eps·2π of rounding.
			kr := ((k % n) + n) % n
			want := cmplx.Exp(complex(0, -2*math.Pi*float64(kr)/float64(n)))
			if d := cmplx.Abs(unitRoot(k, n) - want); d > 2e-15 {
				t.Fatalf("unitRoot(%d, %d) = %v, want %v", k, n, unitRoot(k, n), want)
			}
		}
	}
}

func BenchmarkFFT(b *testing.B) {
	for _, n := range []int{64, 2048, 4096} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(float64(i), 1)
		}
		tw := newTwiddles(n)
		work := make([]complex128, n)
		b.Run(fmt.Sprintf("stockham/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				fft(x, work, tw, false)
			}
		})
		g := fourier.NewCmplxFFT(n)
		b.Run(fmt.Sprintf("gonum/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				g.Coefficients(x, x)
			}
		})
	}
}
