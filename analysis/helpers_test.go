package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// relErr returns ‖got - want‖₂/‖want‖₂ (absolute when want is zero).
func relErr(got, want []float64) float64 { return filters.RelDiff(want, got) }

// randomStable returns a dense filter with A = G/√n scaled to spectral radius rho and G, B, C,
// D standard normal: the filters package's "random stable system" recipe.
func randomStable(rng *rand.Rand, n int, rho float64) *filters.Dense {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, n)
		for j := range rows[i] {
			rows[i][j] = rng.NormFloat64() / math.Sqrt(float64(n))
		}
	}
	b, c := make([]float64, n), make([]float64, n)
	for i := range b {
		b[i], c[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	f, err := filters.NewDense(rows, b, c, rng.NormFloat64())
	if err != nil {
		panic(err)
	}
	if n > 0 {
		r, err := filters.SpectralRadius(f)
		if err != nil {
			panic(err)
		}
		f.A.Scale(rho/r, f.A)
	}
	return f
}

// montelTF returns a random transfer function whose denominator satisfies Montel's constraint
// Σ|aᵢ| = s < 1 (RTF paper, eq. 17), so that its poles lie inside the disc and its values on the
// unit circle stay between 1 - s and 1 + s: the RTF initialisation of the RTF paper, §3.4.
func montelTF(rng *rand.Rand, n int, s float64) *filters.TransferFunction {
	a, b := make([]float64, n), make([]float64, n)
	sum := 0.0
	for i := range a {
		a[i], b[i] = rng.NormFloat64(), rng.NormFloat64()
		sum += math.Abs(a[i])
	}
	for i := range a {
		a[i] *= s / sum
	}
	f, err := filters.NewTransferFunction(a, b, rng.NormFloat64())
	if err != nil {
		panic(err)
	}
	return f
}

func mustDense(t testing.TB, a [][]float64, b, c []float64, d float64) *filters.Dense {
	t.Helper()
	f, err := filters.NewDense(a, b, c, d)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
