package train

import (
	"fmt"
	"sync/atomic"

	"github.com/ssmlab/ssmlab/filters"
)

// MaxSuggestOrder is the largest order the front ends let SuggestOrder search. The search
// stops before it on its own: at half the bound's Hankel size (suggestLimit), 255 for
// kernels of 1024 samples or more.
const MaxSuggestOrder = 1024

// SuggestMargin is how far below the tolerance a kernel's lower bound must fall for
// SuggestOrder to suggest its order. The default recipe's mean errors land 1.1–3.5× above the
// mean bound in 24 of the 25 cells of the README's quality table where the bound is above 0
// (8.5× in the other: trained drawn lags, n = 64), so a bound of a third of the tolerance
// leaves room for the usual gap (no fit can meet a tolerance its bound exceeds).
// Single channels can land further: on the trained layers at the order suggested for 1e-2,
// the hardest channel of each is 6–12× above its bound and misses the tolerance, while the
// mean error is 0.0036–0.0041 (TestSuggestOrderTrained).
const SuggestMargin = 3

// Suggestion is an order suggested from the lower bounds (SuggestOrder).
type Suggestion struct {
	Tol float64
	// Order is the smallest order at which every kernel's lower bound is at most
	// Tol/SuggestMargin when OK; else the largest order examined.
	Order int
	OK    bool
	// Bound is, when OK, the largest of the kernels' lower bounds at their own orders (at most
	// Tol/SuggestMargin); else the lower bound at Order of the kernel that settled it
	// (Kernel), still above Tol/SuggestMargin. Kernel is the kernel that settled Order.
	Bound  float64
	Kernel int
	// Below is, when OK and Order > 1, Kernel's lower bound at Order − 1 (above
	// Tol/SuggestMargin), and Run the top order of the run that computed both: the bounds are
	// the report's (the same Hankel matrices and weightings) computed for the orders 1 … Run
	// in one run, where a report computes them for its own order alone, so a report's figure
	// at an order can differ (either way: each is a lower bound).
	Below float64
	Run   int
	// Growing are the kernels that grow over their length (kernelGrowth above 1), where a
	// stable fit can land far above the bound, which does not assume stability.
	Growing []int
}

// String says what the suggestion is and what it rests on, after "suggested order for
// relative error TOL: " (the CLI's and the workbench's line).
func (s Suggestion) String() string {
	var out string
	switch {
	case s.OK && s.Bound == 0:
		out = fmt.Sprintf("%d (from the lower bound: at order %d it is zero to rounding on every channel)", s.Order, s.Order)
	case s.OK && s.Order > 1:
		out = fmt.Sprintf("%d (from the lower bound: at order %d it is at most %.3g on every channel, 1/%d of the tolerance, and at order %d still %.3g on channel %d, computed for orders 1 … %d in one run, where a report's is computed for its own order and can differ; fits land 1–3× above it on average, some channels further)", s.Order, s.Order, s.Bound, SuggestMargin, s.Order-1, s.Below, s.Kernel, s.Run)
	case s.OK:
		out = fmt.Sprintf("%d (from the lower bound: at order %d it is at most %.2g on every channel, 1/%d of the tolerance; fits land 1–3× above it on average, some channels further)", s.Order, s.Order, s.Bound, SuggestMargin)
	default:
		out = fmt.Sprintf("above %d (from the lower bound: at order %d it is still %.2g on channel %d, above 1/%d of the tolerance)", s.Order, s.Order, s.Bound, s.Kernel, SuggestMargin)
	}
	if note := s.GrowingNote(); note != "" {
		out += "; " + note
	}
	return out
}

// GrowingNote says which kernels grow from start to end (Growing), "" where none do.
func (s Suggestion) GrowingNote() string {
	if len(s.Growing) == 0 {
		return ""
	}
	return channelsGrow(s.Growing) + " from start to end, where a stable filter can end far above the bound, which does not assume stability"
}

// suggestBounds is the report's recipe (reportBounds: the same figures the report gives) with
// Lanczos runs up to half the Hankel size, where the suggestion's searches end.
var suggestBounds = boundRecipe{sizes: reportBounds.sizes, weightings: reportBounds.weightings, lanczosShare: 2}

// SuggestOrder returns, before a job starts, the smallest order n ≤ maxOrder at which the
// lower bound on the relative L2 error of any order-n filter (LowerBounds) is at most
// tol/SuggestMargin on every kernel: no order below n can reach tol on that kernel with the
// usual gap to the bound, and the default recipe usually reaches it at n. It rests on what
// no filter can do, not on a fit: ERA's truncations, which it used before, are often
// unstable on trained filters and their errors said nothing of what a stable fit reaches
// (on the trained Hyena layers, "above 511" where the fit reaches 1e-3 at n = 64).
//
// Each kernel's bounds come from one Lanczos run per Hankel size and weighting, for the
// orders 1 … top with top doubling from 16 until one meets the margin or the search ends at
// suggestLimit. Kernels run in parallel; the first kernel that reaches the limit settles the
// answer (not OK, Order the limit), so the others stop there.
func SuggestOrder(kernels [][]float64, tol float64, maxOrder int) Suggestion {
	type answer struct {
		order, run   int
		bound, below float64
		ok           bool
	}
	answers := make([]answer, len(kernels))
	var failed atomic.Bool
	filters.ForEachChannel(len(kernels), func(i int) {
		if failed.Load() {
			return
		}
		a := &answers[i]
		a.order, a.bound, a.below, a.run, a.ok = suggestKernel(kernels[i], tol, maxOrder, failed.Load)
		if !a.ok && a.order > 0 {
			failed.Store(true)
		}
	})
	s := Suggestion{Tol: tol, OK: !failed.Load()}
	if len(kernels) == 0 {
		return s
	}
	for i, h := range kernels {
		if kernelGrowth(h) > 1 {
			s.Growing = append(s.Growing, i)
		}
	}
	for i, a := range answers {
		if a.ok == s.OK && a.order > s.Order {
			s.Order, s.Kernel = a.order, i
		}
	}
	// OK: the largest of the kernels' bounds at their orders (each at most its bound at
	// s.Order, up to the recipe's rounding); else the bound of the kernel that failed.
	s.Bound = answers[s.Kernel].bound
	if s.OK {
		s.Below, s.Run = answers[s.Kernel].below, answers[s.Kernel].run
		for _, a := range answers {
			s.Bound = max(s.Bound, a.bound)
		}
	}
	return s
}

// suggestLimit is the largest order SuggestOrder examines for kernels of length l: half the
// side of the report's largest Hankel matrix (the bound falls to zero as the order nears it,
// whatever the kernel).
func suggestLimit(l int) int {
	m := min(reportBounds.sizes[len(reportBounds.sizes)-1], (l-1)/2)
	return max(1, m/2)
}

// suggestKernel is SuggestOrder for one kernel: its order, its bound there and at the order
// below (0 at order 1), and the top order of the run that computed them, or (when not ok)
// the largest order examined and its bound; order 0 when stop (polled between searches)
// ended it first.
func suggestKernel(h []float64, tol float64, maxOrder int, stop func() bool) (order int, bound, below float64, run int, ok bool) {
	limit := min(maxOrder, suggestLimit(len(h)))
	for top := min(16, limit); ; top = min(2*top, limit) {
		if stop() {
			return 0, 0, 0, 0, false
		}
		orders := make([]int, top)
		for i := range orders {
			orders[i] = i + 1
		}
		bounds := lowerBounds(h, orders, suggestBounds)
		for i, b := range bounds {
			if b <= tol/SuggestMargin {
				if i > 0 {
					below = bounds[i-1]
				}
				return orders[i], b, below, top, true
			}
		}
		if top == limit {
			return top, bounds[top-1], 0, top, false
		}
	}
}

// AutoOrders gives each kernel the order SuggestOrder suggests for it alone, at most limit
// (--order auto's orders, channel by channel). capped lists the kernels whose lower bound
// stays above tol/SuggestMargin at every order examined, up to searched (the largest such
// order): they get limit, and CappedWarning says so.
func AutoOrders(kernels [][]float64, tol float64, limit int) (orders, capped []int, searched int) {
	orders = make([]int, len(kernels))
	reached := make([]bool, len(kernels))
	tried := make([]int, len(kernels))
	filters.ForEachChannel(len(kernels), func(c int) {
		s := SuggestOrder(kernels[c:c+1], tol, limit)
		reached[c], tried[c] = s.OK, s.Order
		orders[c] = max(1, min(s.Order, limit))
		if !s.OK {
			orders[c] = limit
		}
	})
	for c, ok := range reached {
		if !ok {
			capped = append(capped, c)
			searched = max(searched, tried[c])
		}
	}
	return orders, capped, searched
}

// CappedWarning is --order auto's warning for the channels whose lower bound stays above
// tol/SuggestMargin at every order up to searched (AutoOrders' capped), fitted at order
// fitted nonetheless (--max-order's cap, or where the search ends).
func CappedWarning(channels []int, tol float64, searched, fitted int) string {
	return fmt.Sprintf("%d channel(s) have a lower bound above 1/%d of relative error %g at every order up to %d and were fitted at %d (channels %v)", len(channels), SuggestMargin, tol, searched, fitted, channels)
}

// AutoFit is a channel fitted at the order --order auto gave it, as MissedWarning reads it.
type AutoFit struct {
	Channel, Order       int
	RelError, LowerBound float64
}

// MissedWarning is --order auto's warning for the channels their order (SuggestOrder's,
// which counts on a fit within SuggestMargin of the lower bound) left above tol: which, and
// how far above its bound the worst one's fit is; "" when none.
func MissedWarning(fits []AutoFit, tol float64) string {
	var missed []int
	worst := -1
	for i, c := range fits {
		if c.RelError > tol {
			missed = append(missed, c.Channel)
			if worst < 0 || c.RelError > fits[worst].RelError {
				worst = i
			}
		}
	}
	if worst < 0 {
		return ""
	}
	w := fits[worst]
	return fmt.Sprintf("%d channel(s) end above relative error %g at their order (channels %v; channel %d: %.3g at order %d, %s its lower bound %.2g, where the suggestion counts on %d×)",
		len(missed), tol, missed, w.Channel, w.RelError, w.Order, ratioTo(w.RelError, w.LowerBound), w.LowerBound, SuggestMargin)
}

// ratioTo is "N×" for e/b, or "above" where the bound is 0.
func ratioTo(e, b float64) string {
	if b > 0 {
		return fmt.Sprintf("%.1f×", e/b)
	}
	return "above"
}
