package filters

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// randomStable returns a dense filter with A = G/√n scaled to spectral radius rho, G, B, C, D
// standard normal: the "random stable system" of the issue and of SciPy's ss2tf comparison.
func randomStable(rng *rand.Rand, n int, rho float64) *Dense {
	a := mat.NewDense(max(n, 1), max(n, 1), nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(n)))
		}
	}
	b, c := make([]float64, n), make([]float64, n)
	for i := range b {
		b[i], c[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	if n == 0 {
		return newDenseMat(nil, nil, nil, rng.NormFloat64())
	}
	vals, err := eigenvalues(a)
	if err != nil {
		panic(err)
	}
	a.Scale(rho/maxAbs(vals), a)
	return newDenseMat(a, b, c, rng.NormFloat64())
}

func relErr(got, want []float64) float64 { return RelDiff(want, got) }

func linspace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}
