package presets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// HouseholderProduct returns W = H_n(u_n)·H_{n-1}(u_{n-1})·…·H_{n-m+1}(u_{n-m+1}) of the Householder RNN paper,
// eq. 8, where us[0] = u_n has length n, us[1] = u_{n-1} has length n-1, and so on
// (m = len(us) ≤ n). H_k(u) = diag(I_{n-k}, I_k - 2uuᵀ/‖u‖²) (eq. 6) reflects the last k
// coordinates; a length-1 vector is eq. 7's H_1(u) = diag(I_{n-1}, u) and must be ±1. W is
// orthogonal to rounding: each reflection is applied to the columns of the running product
// as x ← x - 2u(uᵀx)/‖u‖², which keeps ‖WᵀW - I‖ within a few n·ε.
//
// filters.NewRotationFromHouseholder builds the same product as a rotation form's basis P;
// this function returns it as a matrix.
func HouseholderProduct(n int, us [][]float64) (*mat.Dense, error) {
	if n < 1 {
		return nil, errors.New("presets: Householder product of order < 1")
	}
	if len(us) > n {
		return nil, fmt.Errorf("presets: %d Householder vectors for order %d, want at most %d", len(us), n, n)
	}
	w := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		w.Set(i, i, 1)
	}
	// W = H_n·…·H_{n-m+1}: multiply from the right, W ← W·H_k(u), one reflection at a time.
	for idx, u := range us {
		k := n - idx
		if len(u) != k {
			return nil, fmt.Errorf("presets: Householder vector %d has length %d, want %d", idx, len(u), k)
		}
		off := n - k
		if k == 1 {
			if u[0] != 1 && u[0] != -1 {
				return nil, fmt.Errorf("presets: the length-1 Householder vector must be ±1 (Householder RNN paper, eq. 7), got %v", u[0])
			}
			if u[0] < 0 {
				for i := 0; i < n; i++ {
					w.Set(i, n-1, -w.At(i, n-1))
				}
			}
			continue
		}
		nu := floats.Dot(u, u)
		if nu == 0 || math.IsInf(nu, 0) || math.IsNaN(nu) {
			return nil, fmt.Errorf("presets: Householder vector %d has norm² %v", idx, nu)
		}
		for i := 0; i < n; i++ {
			row := w.RawRowView(i)[off:]
			floats.AddScaled(row, -2*floats.Dot(row, u)/nu, u)
		}
	}
	return w, nil
}

// NewHouseholder draws the orthogonal preset: m Householder vectors with N(0, 1) entries (for
// m = n the last is a random sign, eq. 7), W of eq. 8, A = radius·W, and B, C ~ N(0, 1/n).
// W is the Householder RNN paper's RNN transition matrix; radius < 1 pulls its unit-circle eigenvalues inside
// so that the filter is stable.
func NewHouseholder(rng *rand.Rand, n, m int, radius float64) (*filters.Dense, *mat.Dense, error) {
	us := make([][]float64, m)
	for i := range us {
		k := n - i
		if k == 1 {
			us[i] = []float64{1}
			if rng.Float64() < 0.5 {
				us[i][0] = -1
			}
			continue
		}
		us[i] = normals(rng, k, 1)
	}
	w, err := HouseholderProduct(n, us)
	if err != nil {
		return nil, nil, err
	}
	s := 1 / math.Sqrt(float64(n))
	b, c := normals(rng, n, s), normals(rng, n, s)
	var a mat.Dense
	a.Scale(radius, w)
	f, err := filters.NewDense(rowsOf(&a), b, c, 0)
	return f, w, err
}

func buildHouseholder(a Args) (Result, error) {
	n := a.Int("order")
	a.fill("reflections", strconv.Itoa(n))
	m := a.Int("reflections")
	if m > n {
		return Result{}, paramErrorf(a.preset.Name, "reflections=%d is above order=%d: eq. 8 uses at most n reflections", m, n)
	}
	rng := a.rng()
	return channels(a, n*n+2*n, func(int) (filters.Filter, error) {
		f, _, err := NewHouseholder(rng, n, m, a.Float("radius"))
		return f, err
	})
}
