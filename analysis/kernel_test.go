package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
)

// kernelTol bounds the relative L2 error of an FFT kernel of a Montel-constrained filter
// against its difference equation: both are backward stable, |a(e^{jω})| ≥ 1 - Σ|aᵢ| = 0.1
// on the circle, so the error is a few eps·log₂L·10; measured ≤ 1e-14.
const kernelTol = 1e-12

// deployTol bounds the relative error of the numerator recovered from b̃ for these
// Montel-constrained filters, whose I - A^L is well-conditioned.
const deployTol = 1e-12

// TestKernelPlan checks Algorithm 1 with the eq. 13 correction against the difference
// equation, on every FFT path (powers of two, ≥ 8: our radix-4 FFT; 1021, prime: Bluestein's
// algorithm; others: FFTPACK), for lengths below the order too (the coefficients fold onto
// the L-th roots of unity).
func TestKernelPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{0, 1, 2, 5, 16, 64, 100, 300} {
		for _, L := range []int{1, 2, 3, 4, 8, 16, 64, 100, 1000, 1021, 1024, 4096} {
			f := montelTF(rng, n, 0.9)
			want := f.Impulse(L)
			bt, err := rtf.Truncate(f.Den, f.Num, L)
			if err != nil {
				t.Fatal(err)
			}
			p := NewKernelPlan(n, L)
			if p.Order() != n || p.Len() != L {
				t.Fatalf("plan reports order %d, length %d", p.Order(), p.Len())
			}
			got, err := p.Kernel(nil, f.Den, bt, f.H0)
			if err != nil {
				t.Fatal(err)
			}
			if e := relErr(got, want); e > kernelTol {
				t.Errorf("n=%d L=%d: kernel differs by %.3g", n, L, e)
			}
			b, err := rtf.Untruncate(f.Den, bt, L)
			if err != nil {
				t.Fatalf("n=%d L=%d: deploy: %v", n, L, err)
			}
			if e := relErr(b, f.Num); e > deployTol {
				t.Errorf("n=%d L=%d: deployed numerator differs by %.3g", n, L, e)
			}
		}
	}
}

// TestKernelAliasing shows what the correction is for: with the plain numerator b, the
// kernel is the L-periodic sum Σₖ h[t + kL] (RTF paper, eq. 8–12), h[0] aside.
func TestKernelAliasing(t *testing.T) {
	// Poles 0.999·e^{±0.3i}: the response decays by only 0.999^256 ≈ 0.77 within L.
	f, err := filters.NewTransferFunction([]float64{-2 * 0.999 * math.Cos(0.3), 0.999 * 0.999}, []float64{1, 0.5}, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	const L = 256
	long := f.Impulse(200 * L)
	want := make([]float64, L)
	for t := 1; t < len(long); t++ {
		want[t%L] += long[t]
	}
	want[0] = f.H0
	got, err := NewKernelPlan(2, L).Kernel(nil, f.Den, f.Num, f.H0)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got, want); e > kernelTol {
		t.Errorf("uncorrected kernel differs from the periodic sum by %.3g", e)
	}
	if e := relErr(got, f.Impulse(L)); e < 1e-6 {
		t.Errorf("uncorrected kernel equals the truncated response (%.3g): the test filter decays too fast", e)
	}
}

func TestKernelBank(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	const d, n = 37, 9
	for _, L := range []int{512, 500} {
		a, bt := make([][]float64, d), make([][]float64, d)
		h0 := make([]float64, d)
		want := make([][]float64, d)
		for i := range a {
			f := montelTF(rng, n, 0.8)
			a[i], h0[i] = f.Den, f.H0
			var err error
			if bt[i], err = rtf.Truncate(f.Den, f.Num, L); err != nil {
				t.Fatal(err)
			}
			want[i] = f.Impulse(L)
		}
		p := NewKernelPlan(n, L)
		got, err := p.Bank(nil, a, bt, h0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if e := relErr(got[i], want[i]); e > kernelTol {
				t.Errorf("L=%d channel %d differs by %.3g", L, i, e)
			}
		}
		// Reusing dst, and Kernel from many goroutines on one plan (go test -race).
		if _, err := p.Bank(got, a, bt, h0); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := 0; i < d; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k, err := p.Kernel(nil, a[i], bt[i], h0[i])
				if err != nil || relErr(k, want[i]) > kernelTol {
					t.Errorf("concurrent Kernel, channel %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		// A channel with a pole on a root of unity fails, named.
		a[5] = append([]float64{-1}, make([]float64, n-1)...)
		a[5][n-1] = 0
		a[5][0] = -1 // z^n - z^{n-1}: a pole at 1
		if _, err := p.Bank(nil, a, bt, h0); err == nil || !strings.HasPrefix(err.Error(), "channel 5: ") {
			t.Errorf("bad channel: err = %v", err)
		}
	}
}

func TestKernelPanics(t *testing.T) {
	p := NewKernelPlan(2, 16)
	for name, f := range map[string]func(){
		"order":  func() { NewKernelPlan(-1, 8) },
		"length": func() { NewKernelPlan(2, 0) },
		"coeffs": func() { _, _ = p.Kernel(nil, []float64{1}, []float64{1, 2}, 0) },
		"dst":    func() { _, _ = p.Kernel(make([]float64, 15), []float64{1, 2}, []float64{1, 2}, 0) },
		"bank":   func() { _, _ = p.Bank(nil, [][]float64{{1, 2}}, nil, nil) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
