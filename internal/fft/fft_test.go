package fft

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/ssmlab/ssmlab/internal/numtest"
)

// tol bounds the relative L2 difference between two FFT implementations of length n ≤ 2¹⁶:
// each has an error of about eps·log₂n relative to ‖X‖ (Higham, Accuracy and Stability §24.1).
const tol = 1e-14

func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		num = math.Hypot(num, got[i]-want[i])
		den = math.Hypot(den, want[i])
	}
	if den == 0 {
		return num
	}
	return num / den
}

func randComplex(rng *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
	}
	return x
}

func randReal(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

var sizes = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 8192, 1 << 16}

func TestTransformAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range sizes {
		x := randComplex(rng, n)
		want := fourier.NewCmplxFFT(n).Coefficients(nil, x)
		tw := NewTable(n)
		got := append([]complex128(nil), x...)
		work := make([]complex128, n)
		tw.Transform(got, work, false)
		if e := numtest.RelErrC(got, want); e > tol {
			t.Errorf("n=%d forward: rel error %.3g", n, e)
		}
		// Inverse: gonum's Sequence is also unnormalised.
		back := append([]complex128(nil), got...)
		tw.Transform(back, work, true)
		for i := range back {
			back[i] /= complex(float64(n), 0)
		}
		if e := numtest.RelErrC(back, x); e > tol {
			t.Errorf("n=%d round trip: rel error %.3g", n, e)
		}
		// A transform of a length dividing the table's.
		if n >= 4 {
			got2 := append([]complex128(nil), x...)
			NewTable(4*n).Transform(got2, work, false)
			if e := numtest.RelErrC(got2, want); e > tol {
				t.Errorf("n=%d with a table of %d: rel error %.3g", n, 4*n, e)
			}
		}
	}
}

func TestRealAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	// Powers of two take this package's path, the others (without a large prime factor)
	// gonum's; both must agree with gonum.
	for _, n := range append([]int{3, 5, 6, 12, 100, 1000}, sizes...) {
		x := randReal(rng, n)
		g := fourier.NewFFT(n)
		want := g.Coefficients(nil, x)
		r := NewReal(n)
		got := r.Coefficients(nil, x)
		if e := numtest.RelErrC(got, want); e > tol {
			t.Errorf("n=%d coefficients: rel error %.3g", n, e)
		}
		// A spectrum with junk in the imaginary parts of DC and Nyquist, which gonum ignores.
		c := randComplex(rng, n/2+1)
		wantSeq := g.Sequence(nil, c)
		if e := relErr(r.Sequence(nil, c), wantSeq); e > tol {
			t.Errorf("n=%d sequence: rel error %.3g", n, e)
		}
	}
}

// compensatedDFT is the DFT by its definition, X[k] = Σ x[j]·e^{∓2πijk/n} (the minus sign
// when inverse is false), with correctly rounded twiddles and Kahan-compensated sums: a
// reference accurate to a few ulps, where an FFT's error grows with log n and FFTPACK's
// generic radix for a prime factor p with p.
func compensatedDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range out {
		var sum, carry complex128
		for j, v := range x {
			w := unitRoot(int(uint64(j)*uint64(k)%uint64(n)), n)
			if inverse {
				w = Conj(w)
			}
			y := v*w - carry
			s := sum + y
			carry = (s - sum) - y
			sum = s
		}
		out[k] = sum
	}
	return out
}

func TestRealBluestein(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	// 131 and 1021 are prime, 122 = 2·61, 1022 = 2·7·73, 4094 = 2·23·89. FFTPACK's generic
	// radix is 3e-12 off on 1021 (compared with 4e-16 here), so the reference is the DFT itself.
	for _, n := range []int{122, 131, 1021, 1022, 4094} {
		r := NewReal(n)
		if r.blue == nil {
			t.Fatalf("n=%d does not take Bluestein's path", n)
		}
		x := randReal(rng, n)
		xc := make([]complex128, n)
		for j, v := range x {
			xc[j] = complex(v, 0)
		}
		if e := numtest.RelErrC(r.Coefficients(nil, x), compensatedDFT(xc, false)[:n/2+1]); e > 2e-15 {
			t.Errorf("n=%d coefficients: rel error %.3g", n, e)
		}
		// The inverse of a Hermitian spectrum whose half is c, with junk in the imaginary
		// parts of DC and Nyquist that must be ignored.
		c := randComplex(rng, n/2+1)
		full := make([]complex128, n)
		copy(full, c)
		full[0] = complex(real(c[0]), 0)
		if n%2 == 0 {
			full[n/2] = complex(real(c[n/2]), 0)
		}
		for k := n/2 + 1; k < n; k++ {
			full[k] = Conj(c[n-k])
		}
		ref := compensatedDFT(full, true)
		want := make([]float64, n)
		for j, v := range ref {
			want[j] = real(v)
		}
		if e := relErr(r.Sequence(nil, c), want); e > 2e-15 {
			t.Errorf("n=%d sequence: rel error %.3g", n, e)
		}
	}
}

func TestRealPath(t *testing.T) {
	// Bluestein where the cost model says so; the neighbours of each case fall the other way.
	for n, want := range map[int]bool{1021: true, 1022: true, 122: true, 131: true, 146: false, 976: false, 1000: false, 1024: false, 1: false, 3: false} {
		if got := NewReal(n).blue != nil; got != want {
			t.Errorf("n=%d: Bluestein %v, want %v", n, got, want)
		}
	}
}

func TestForwardShortAndInverseHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{4, 8, 64, 1024, 4096} {
		tw := NewTable(n)
		buf, work := make([]complex128, n), make([]complex128, n)
		for _, m := range []int{0, 1, 2, 3, 5, 17, 64, 65, n / 2, n - 1, n, n + 3, 2*n + 1} {
			x := randComplex(rng, m)
			// Reference: fold x onto length n (z^n = 1 on the n-th roots of unity), full transform.
			padded := make([]complex128, n)
			for j, v := range x {
				padded[j%n] += v
			}
			want := fourier.NewCmplxFFT(n).Coefficients(nil, padded)
			if e := numtest.RelErrC(tw.ForwardShort(x, buf, work), want); e > tol {
				t.Errorf("n=%d m=%d ForwardShort: rel error %.3g", n, m, e)
			}

			spec := randComplex(rng, n)
			full := fourier.NewCmplxFFT(n).Sequence(nil, spec)
			head := make([]complex128, min(m, 3*n))
			tw.InverseHead(head, append([]complex128(nil), spec...), work)
			wantHead := make([]complex128, len(head))
			for i := range wantHead {
				wantHead[i] = full[i%n]
			}
			if e := numtest.RelErrC(head, wantHead); e > tol {
				t.Errorf("n=%d m=%d InverseHead: rel error %.3g", n, m, e)
			}
		}
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"size":        func() { NewTable(12) },
		"match":       func() { NewTable(4).Transform(make([]complex128, 8), make([]complex128, 8), false) },
		"real length": func() { NewTable(8).RealForward(make([]complex128, 5), make([]float64, 4), make([]complex128, 8)) },
		"real zero":   func() { NewReal(0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
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

func BenchmarkTransform(b *testing.B) {
	for _, n := range []int{64, 2048, 4096} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(float64(i), 1)
		}
		tw := NewTable(n)
		work := make([]complex128, n)
		b.Run(fmt.Sprintf("stockham/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				tw.Transform(x, work, false)
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

func BenchmarkReal(b *testing.B) {
	const n = 4096
	x := randReal(rand.New(rand.NewPCG(1, 1)), n)
	c := make([]complex128, n/2+1)
	r := NewReal(n)
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			r.Coefficients(c, x)
		}
	})
	g := fourier.NewFFT(n)
	b.Run("gonum", func(b *testing.B) {
		for b.Loop() {
			g.Coefficients(c, x)
		}
	})
}

// BenchmarkRealLengths times a real transform by Bluestein's algorithm and by FFTPACK, whose
// generic radix costs O(n·p) for a prime factor p: bluesteinCheaper's cost model is fitted
// to these lengths.
func BenchmarkRealLengths(b *testing.B) {
	for _, n := range []int{122, 146, 488, 584, 976, 1000, 1022, 1021} {
		x := randReal(rand.New(rand.NewPCG(1, 1)), n)
		c := make([]complex128, n/2+1)
		r := &Real{n: n}
		r.useBluestein()
		b.Run(fmt.Sprintf("n=%d/bluestein", n), func(b *testing.B) {
			for b.Loop() {
				r.Coefficients(c, x)
			}
		})
		g := fourier.NewFFT(n)
		b.Run(fmt.Sprintf("n=%d/fftpack", n), func(b *testing.B) {
			for b.Loop() {
				g.Coefficients(c, x)
			}
		})
	}
}
