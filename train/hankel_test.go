package train

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestHankelTop checks the Lanczos eigenpairs against a full eigendecomposition on every
// target family: the leading eigenvalues agree to rounding relative to the largest, and each
// Ritz vector's residual ‖Hv - λv‖ is as small.
func TestHankelTop(t *testing.T) {
	fams := targetFamilies(512, 2, 5)
	for _, name := range []string{"hyena", "s4-hippo", "butterworth", "windowed-sinc", "decaying-noise", "iir"} {
		for ch, y := range fams[name] {
			m := (len(y) - 2) / 2
			for _, r := range []int{1, 4, 16, 64} {
				lambda, q, err := lanczosHankelTop(y[1:], m, r)
				if err != nil {
					t.Fatal(err)
				}
				want, _, err := denseHankelTop(y[1:], m, r)
				if err != nil {
					t.Fatal(err)
				}
				if len(lambda) != r {
					t.Fatalf("%s/%d r=%d: %d eigenvalues", name, ch, r, len(lambda))
				}
				top := math.Abs(want[0])
				op := newHankelOp(y[1:], m)
				hv := make([]float64, m)
				for i := range lambda {
					if d := math.Abs(lambda[i] - want[i]); d > 1e-11*top {
						t.Errorf("%s/%d r=%d: λ%d = %.15g, dense %.15g", name, ch, r, i, lambda[i], want[i])
					}
					op.apply(hv, q[i])
					floats.AddScaled(hv, -lambda[i], q[i])
					if res := floats.Norm(hv, 2); res > 1e-12*top {
						t.Errorf("%s/%d r=%d: pair %d residual %.3g (σ₁ %.3g)", name, ch, r, i, res, top)
					}
					if nq := floats.Norm(q[i], 2); math.Abs(nq-1) > 1e-12 {
						t.Errorf("%s/%d r=%d: vector %d has norm %.15g", name, ch, r, i, nq)
					}
				}
			}
		}
	}
}

// TestHankelOp checks the FFT product against the dense one for odd and even sizes.
func TestHankelOp(t *testing.T) {
	for _, m := range []int{1, 2, 3, 7, 64, 100} {
		c := make([]float64, 2*m-1)
		for i := range c {
			c[i] = math.Sin(float64(i)*1.7) + 1/float64(i+1)
		}
		x := make([]float64, m)
		for i := range x {
			x[i] = math.Cos(float64(i) * 0.3)
		}
		got := make([]float64, m)
		newHankelOp(c, m).apply(got, x)
		for i := 0; i < m; i++ {
			want := 0.0
			for j := 0; j < m; j++ {
				want += c[i+j] * x[j]
			}
			if math.Abs(got[i]-want) > 1e-12*float64(m) {
				t.Errorf("m=%d: (Hx)[%d] = %.15g, want %.15g", m, i, got[i], want)
			}
		}
	}
}

// BenchmarkERA is ERA on the full 511×511 Hankel matrix of a 1024-sample kernel at n = 64:
// a near-exact target (Hyena, whose spectrum falls fast) and decaying noise (whose spectrum
// does not, the Lanczos worst case); "dense-eigenpairs" is what the leading eigenpairs alone
// cost by a full eigendecomposition.
func BenchmarkERA(b *testing.B) {
	fams := targetFamilies(1024, 1, 1)
	for _, name := range []string{"hyena", "decaying-noise"} {
		y := fams[name][0]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := eraFilter(y, 64); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	y := fams["hyena"][0]
	b.Run("dense-eigenpairs", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := denseHankelTop(y[1:], 511, 64); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSuggestOrder is distill's suggested order (tolerance 1e-3, the CLI's default) for
// 16 Hyena kernels of 1024 samples.
func BenchmarkSuggestOrder(b *testing.B) {
	hy := targetFamilies(1024, 16, 1)["hyena"]
	for b.Loop() {
		if _, ok := SuggestOrder(hy, 1e-3, MaxSuggestOrder); !ok {
			b.Fatal("no order")
		}
	}
}

// BenchmarkSuggestOrderNoReduction is the same for 16 kernels of decaying noise, which no
// order up to 511 reduces to 1e-3: the case where every realisation size is tried.
func BenchmarkSuggestOrderNoReduction(b *testing.B) {
	noise := targetFamilies(1024, 16, 1)["decaying-noise"]
	for b.Loop() {
		if _, ok := SuggestOrder(noise, 1e-3, MaxSuggestOrder); ok {
			b.Fatal("decaying noise reduced")
		}
	}
}
