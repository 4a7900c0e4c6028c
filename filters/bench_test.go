package filters

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvert times each conversion, report included (the report computes both impulse
// responses over ReportLength samples), at the orders the issue names.
func BenchmarkConvert(b *testing.B) {
	type route struct{ from, to Form }
	routes := []route{
		{FormDense, FormDiagonal}, {FormDense, FormTF}, {FormDense, FormZPK}, {FormDense, FormRotation},
		{FormDiagonal, FormDense}, {FormDiagonal, FormTF}, {FormTF, FormDiagonal}, {FormTF, FormZPK},
		{FormRotation, FormTF}, {FormZPK, FormTF},
	}
	for _, n := range []int{16, 64, 256} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		orig := randomStable(rng, n, 0.9)
		for _, r := range routes {
			src, _, err := Convert(orig, r.from)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s-%s/n=%d", r.from, r.to, n), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := Convert(src, r.to); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPolesTF computes the poles of tf filters of high order (random Σ|aᵢ| < 1
// denominators): the Aberth–Ehrlich iteration, and at 512 the QR iteration on the companion
// matrix it replaced (O(n³): about 5 s at 512, 53 s at 1024, an hour at 4096). NumPy's
// np.roots (LAPACK's QR on the companion matrix) on the same polynomials is timed by
// testdata/bench/roots_bench.py (from the repository root).
func BenchmarkPolesTF(b *testing.B) {
	for _, tc := range []struct {
		n  int
		qr bool
	}{{512, true}, {512, false}, {1024, false}, {4096, false}} {
		name := fmt.Sprintf("n=%d/aberth", tc.n)
		if tc.qr {
			name = fmt.Sprintf("n=%d/qr", tc.n)
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), 7))
			a := make([]float64, tc.n)
			for i := range a {
				a[i] = (2*rng.Float64() - 1) / float64(tc.n)
			}
			if tc.qr {
				defer forceQR()()
			}
			for b.Loop() {
				if _, err := rootsMonic(a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
