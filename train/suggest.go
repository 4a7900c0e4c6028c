package train

import (
	"math"
	"sort"
	"sync/atomic"

	"github.com/ssmlab/ssmlab/filters"
)

// MaxSuggestOrder is the largest order the front ends let SuggestOrder search, below
// filters.MaxOrder for its cost: the full realisation of a kernel that does not reduce (noise
// of 2050 samples) takes 18 s at order 1024, and grows with the cube of the order.
const MaxSuggestOrder = 1024

// SuggestOrder returns, before a job starts, the smallest order n ≤ maxOrder at which a
// stable reduced model reaches relative L2 error tol on every kernel: the ERA realisation of
// each kernel is balanced, so its truncation to order n is its leading n×n block (the states
// with the smallest Hankel singular values dropped); its poles, the unstable ones reflected
// inside the unit circle, with the least-squares residues for them (the variable
// projection's start, stableTruncationError) are measured on the kernel itself, by binary
// search over n (their error falls with n up to rounding). A truncation is often unstable
// (Hyena kernels, S4 kernels), and its error then says nothing about what a stable fit
// reaches; the fit itself only improves on this start. ok is false when no order up to n reaches tol;
// n is then the largest order tried, maxOrder or less where the kernels' length limits the
// realisation (511 for 1024 samples).
//
// The realisation grows from order 8, doubling until its full order meets tol: the leading
// eigenpairs of a few states cost milliseconds (Lanczos), all 511 of a 1024-sample kernel
// ~150 ms, and most kernels reduce well. Kernels run in parallel, and the first kernel that
// does not reduce settles the answer, so the others stop there: a bank of noise would
// otherwise cost the full realisation of every kernel (0.3 s each at 1024 samples).
func SuggestOrder(kernels [][]float64, tol float64, maxOrder int) (n int, ok bool) {
	orders := make([]int, len(kernels))
	oks := make([]bool, len(kernels))
	var failed atomic.Bool
	filters.ForEachChannel(len(kernels), func(i int) {
		if failed.Load() {
			return
		}
		orders[i], oks[i] = suggestKernel(kernels[i], tol, maxOrder, failed.Load)
		if !oks[i] {
			failed.Store(true)
		}
	})
	if failed.Load() {
		for i := range kernels {
			if !oks[i] && orders[i] > 0 {
				n = max(n, orders[i])
			}
		}
		return n, false
	}
	for i := range kernels {
		n = max(n, orders[i])
	}
	return n, true
}

// suggestKernel is SuggestOrder for one kernel; when not ok, the order is the largest it
// tried, or 0 when stop (polled between realisations) ended it first.
func suggestKernel(h []float64, tol float64, maxOrder int, stop func() bool) (int, bool) {
	if len(h) < 4 {
		return 0, true
	}
	limit := min(maxOrder, (len(h)-2)/2)
	errAt := func(era *filters.Dense, r int) float64 {
		if r == 0 {
			return math.Sqrt(sumSquares(h[1:]) / sumSquares(h)) // the direct term alone
		}
		return stableTruncationError(era, r, h)
	}
	for r := min(8, limit); ; r = min(2*r, limit) {
		if stop() {
			return 0, false
		}
		era, err := eraFilter(h, r)
		if err != nil {
			return limit, false
		}
		top := era.Order()
		if errAt(era, top) <= tol {
			return sort.Search(top+1, func(k int) bool { return errAt(era, k) <= tol }), true
		}
		// A realisation smaller than asked for has exhausted the kernel's Hankel rank.
		if top < r || r == limit {
			return limit, false
		}
	}
}
