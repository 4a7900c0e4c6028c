package train

import (
	"fmt"
	"math"
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
	answers, failed := searchKernels(kernels, tol, maxOrder, 0)
	return suggestion(kernels, tol, answers, failed)
}

// kernelAnswer is suggestKernel's answer for one kernel: its order and its bound there (at
// the order below: below, 0 at order 1) and the top order of the run that computed them
// when ok; else the largest order examined (its limit) and its bound there, or, stopped,
// the orders examined before it stopped (1 … order, none at or below the margin).
type kernelAnswer struct {
	order, run   int
	bound, below float64
	ok, stopped  bool
}

// searchKernels runs suggestKernel on each kernel, in parallel. Once a kernel's bound stays
// above the margin up to its limit (failed: it settles a suggestion for all of them, not
// OK), the others stop before their next search that would go past the orders 1 … enough
// (0: at once): whether they need more than enough is then known.
func searchKernels(kernels [][]float64, tol float64, maxOrder, enough int) (answers []kernelAnswer, failed bool) {
	answers = make([]kernelAnswer, len(kernels))
	var fail atomic.Bool
	stop := func(examined int) bool { return fail.Load() && examined >= enough }
	filters.ForEachChannel(len(kernels), func(i int) {
		a := suggestKernel(kernels[i], tol, maxOrder, stop)
		if !a.ok && !a.stopped {
			fail.Store(true)
		}
		answers[i] = a
	})
	return answers, fail.Load()
}

// suggestion is SuggestOrder's answer from searchKernels'.
func suggestion(kernels [][]float64, tol float64, answers []kernelAnswer, failed bool) Suggestion {
	s := Suggestion{Tol: tol, OK: !failed}
	if len(kernels) == 0 {
		return s
	}
	for i, h := range kernels {
		if kernelGrowth(h) > 1 {
			s.Growing = append(s.Growing, i)
		}
	}
	for i, a := range answers {
		if !a.stopped && a.ok == s.OK && a.order > s.Order {
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

// suggestKernel is SuggestOrder for one kernel (kernelAnswer); stop, polled before each
// search with the orders examined so far (0 before the first), ends it there.
func suggestKernel(h []float64, tol float64, maxOrder int, stop func(examined int) bool) kernelAnswer {
	limit := min(maxOrder, suggestLimit(len(h)))
	examined := 0
	for top := min(16, limit); ; top = min(2*top, limit) {
		if stop(examined) {
			return kernelAnswer{order: examined, stopped: true}
		}
		orders := make([]int, top)
		for i := range orders {
			orders[i] = i + 1
		}
		bounds := lowerBounds(h, orders, suggestBounds)
		for i, b := range bounds {
			if b <= tol/SuggestMargin {
				a := kernelAnswer{order: orders[i], bound: b, run: top, ok: true}
				if i > 0 {
					a.below = bounds[i-1]
				}
				return a
			}
		}
		if top == limit {
			return kernelAnswer{order: top, bound: bounds[top-1], run: top}
		}
		examined = top
	}
}

// Auto is what --order auto chose for a set of kernels (AutoOrders, AutoOrder), and what it
// warns of once they are fitted (Warnings).
type Auto struct {
	Tol float64
	// Orders is each kernel's order, at most Limit.
	Orders []int
	// Capped are the kernels whose lower bound stays above Tol/SuggestMargin at every order
	// up to Searched, fitted at Limit nonetheless (the cap, or where the search ends).
	Capped          []int
	Searched, Limit int
}

// AutoOrders gives each kernel the order SuggestOrder suggests for it alone, at most limit
// (--order auto's orders for a checkpoint's units, channel by channel); the kernels whose
// bound stays above the margin up to limit, or where their search ends, get limit and are
// Capped.
func AutoOrders(kernels [][]float64, tol float64, limit int) Auto {
	answers, _ := searchKernels(kernels, tol, limit, math.MaxInt) // each its own: none stops
	a := Auto{Tol: tol, Orders: make([]int, len(kernels)), Limit: limit}
	for c, k := range answers {
		a.Orders[c] = max(1, min(k.order, limit))
		if !k.ok {
			a.Orders[c] = limit
			a.Capped = append(a.Capped, c)
			a.Searched = max(a.Searched, k.order)
		}
	}
	return a
}

// AutoOrder is --order auto for kernels fitted at one order (ssmlab distill of a filter or
// kernels), from one search: the suggestion (SuggestOrder's, up to MaxSuggestOrder) and its
// order at most maxOrder for every kernel, the kernels whose bound stays above the margin
// there Capped. A kernel stops once the suggestion is settled and it has been searched
// that far.
func AutoOrder(kernels [][]float64, tol float64, maxOrder int) (Suggestion, Auto) {
	answers, failed := searchKernels(kernels, tol, MaxSuggestOrder, maxOrder)
	s := suggestion(kernels, tol, answers, failed)
	n := max(1, min(s.Order, maxOrder))
	a := Auto{Tol: tol, Orders: make([]int, len(kernels)), Searched: n, Limit: n}
	for c, k := range answers {
		a.Orders[c] = n
		if !k.ok || k.order > n {
			a.Capped = append(a.Capped, c) // a stopped one was searched up to n at least
		}
	}
	return s, a
}

// Warnings are --order auto's warnings for the kernels fitted at their Orders (reports[k]:
// kernel k's fit), named as channels from first (a checkpoint unit's first channel): the
// Capped kernels, and those whose fit ends above Tol, with how far above its bound the
// worst one's is.
func (a Auto) Warnings(reports []ChannelReport, first int) []string {
	var out []string
	if len(a.Capped) > 0 {
		channels := make([]int, len(a.Capped))
		for i, k := range a.Capped {
			channels[i] = first + k
		}
		out = append(out, fmt.Sprintf("%d channel(s) have a lower bound above 1/%d of relative error %g at every order up to %d and were fitted at %d (channels %v)", len(channels), SuggestMargin, a.Tol, a.Searched, a.Limit, channels))
	}
	fits := make([]autoFit, len(reports))
	for k, r := range reports {
		fits[k] = autoFit{Channel: first + k, Order: a.Orders[k], RelError: r.RelError, LowerBound: r.LowerBound}
	}
	if w := missedWarning(fits, a.Tol); w != "" {
		out = append(out, w)
	}
	return out
}

// autoFit is a channel fitted at the order --order auto gave it, as missedWarning reads it.
type autoFit struct {
	Channel, Order       int
	RelError, LowerBound float64
}

// missedWarning is --order auto's warning for the channels their order (SuggestOrder's,
// which counts on a fit within SuggestMargin of the lower bound) left above tol: which, and
// how far above its bound the worst one's fit is; "" when none.
func missedWarning(fits []autoFit, tol float64) string {
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
