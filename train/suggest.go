package train

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// SuggestOrder returns the smallest order n ≤ maxOrder for which every kernel's Hankel
// singular values beyond n carry at most tol of their energy, √(Σ_{i>n} σᵢ²/Σ σᵢ²): an
// estimate, before a job starts, of the order a reduced model needs to reach a relative error
// of about tol (balanced truncation drops exactly those σᵢ). ok is false when even maxOrder
// does not reach tol.
func SuggestOrder(kernels [][]float64, tol float64, maxOrder int) (n int, ok bool) {
	for _, h := range kernels {
		m := min((len(h)-1)/2, 256)
		if m < 1 {
			continue
		}
		hk := mat.NewDense(m, m, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				hk.Set(i, j, h[1+i+j])
			}
		}
		var svd mat.SVD
		if !svd.Factorize(hk, mat.SVDNone) {
			return maxOrder, false
		}
		sv := svd.Values(nil)
		total := 0.0
		for _, s := range sv {
			total += s * s
		}
		if total == 0 {
			continue
		}
		tail := total
		k := 0
		for ; k < len(sv) && math.Sqrt(tail/total) > tol; k++ {
			tail -= sv[k] * sv[k]
		}
		if k > maxOrder {
			return maxOrder, false
		}
		n = max(n, k)
	}
	return n, true
}
