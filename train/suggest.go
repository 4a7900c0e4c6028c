package train

import (
	"math"
	"sort"
)

// SuggestOrder returns, before a job starts, the smallest order n ≤ maxOrder at which a
// reduced model reaches relative L2 error tol on every kernel: the ERA realisation of each
// kernel is balanced, so its truncation to order n is its leading n×n block (the states
// with the smallest Hankel singular values dropped), and the error of each truncation is
// measured on the kernel itself, by binary search over n (the error of truncated balanced
// realisations falls with n up to rounding). ok is false when maxOrder does not reach tol.
func SuggestOrder(kernels [][]float64, tol float64, maxOrder int) (n int, ok bool) {
	for _, h := range kernels {
		if len(h) < 4 {
			continue
		}
		era, err := eraFilter(h, min(maxOrder, (len(h)-2)/2))
		if err != nil {
			return maxOrder, false
		}
		errAt := func(r int) float64 {
			k := leading(era, r).Impulse(len(h))
			e := relL2(k, h)
			if math.IsNaN(e) {
				return math.Inf(1)
			}
			return e
		}
		top := era.Order()
		if errAt(top) > tol {
			return maxOrder, false
		}
		r := sort.Search(top+1, func(r int) bool { return errAt(r) <= tol })
		n = max(n, r)
	}
	return n, true
}
