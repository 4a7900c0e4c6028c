package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSuggestionSaysItsBound: the suggestion's line gives the bound it rests on at the order
// suggested and at the order below, and the run that computed them, since a report of a
// lower order computes its bound for that order alone and can print a lower one: on
// decaying noise (6 kernels, 0.995ᵗ, 1024 samples) at a tolerance of 0.9 the suggestion was
// 69 while the order-66 report's bounds were all below 0.3, and its help called its bound
// "the report's". Below is the settling kernel's bound at Order − 1, above Tol/3, as
// lowerBounds computes it for the orders 1 … Run.
func TestSuggestionSaysItsBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	kernels := make([][]float64, 6)
	for c := range kernels {
		kernels[c] = make([]float64, 1024)
		for i := range kernels[c] {
			kernels[c][i] = rng.NormFloat64() * math.Pow(0.995, float64(i))
		}
	}
	const tol = 0.9
	s := SuggestOrder(kernels, tol, MaxSuggestOrder)
	if !s.OK || s.Order < 2 || !(s.Bound <= tol/SuggestMargin) || !(s.Below > tol/SuggestMargin) || s.Run < s.Order {
		t.Fatalf("%+v", s)
	}
	orders := make([]int, s.Run)
	for i := range orders {
		orders[i] = i + 1
	}
	if b := lowerBounds(kernels[s.Kernel], orders, suggestBounds); b[s.Order-2] != s.Below || b[s.Order-1] > s.Bound {
		t.Errorf("channel %d: bounds %.4g at %d and %.4g at %d, the suggestion says %.4g and at most %.4g", s.Kernel, b[s.Order-2], s.Order-1, b[s.Order-1], s.Order, s.Below, s.Bound)
	}
	text := s.String()
	for _, want := range []string{"at order " + strconv.Itoa(s.Order-1) + " still ", " on channel " + strconv.Itoa(s.Kernel), "computed for orders 1 … " + strconv.Itoa(s.Run) + " in one run, where a report's is computed for its own order and can differ"} {
		if !strings.Contains(text, want) {
			t.Errorf("the suggestion %q lacks %q", text, want)
		}
	}
	t.Log(text)
}

// TestAutoOrder: --order auto for kernels fitted at one order (AutoOrder, ssmlab distill's)
// gives from its one search the suggestion SuggestOrder gives and, at its order capped at
// maxOrder, the kernels AutoOrders' search of each kernel up to that order finds capped:
// distill ran both searches when it capped the order. Kernels 0–2 are exactly of order 6,
// kernel 3 does not reduce (its search ends at 24 for 100 samples).
func TestAutoOrder(t *testing.T) {
	iir := iirTargets(100, 3)
	bank := append(slices.Clone(iir), targetFamilies(100, 1, 1)["decaying-noise"]...)
	const tol = 1e-8
	for _, c := range []struct {
		name       string
		kernels    [][]float64
		maxOrder   int
		wantCapped []int
	}{
		{"met", iir, 64, nil},
		{"capped by --max-order", iir, 4, []int{0, 1, 2}},
		{"the search ends", bank, 64, []int{3}},
		{"both", bank, 4, []int{0, 1, 2, 3}},
	} {
		sug, a := AutoOrder(c.kernels, tol, c.maxOrder)
		want := SuggestOrder(c.kernels, tol, MaxSuggestOrder)
		if sug.Order != want.Order || sug.OK != want.OK || sug.Kernel != want.Kernel || sug.Bound != want.Bound {
			t.Errorf("%s: suggestion %+v, SuggestOrder's %+v", c.name, sug, want)
		}
		n := min(want.Order, c.maxOrder)
		each := AutoOrders(c.kernels, tol, n)
		if !slices.Equal(a.Capped, c.wantCapped) || !slices.Equal(a.Capped, each.Capped) || a.Limit != n || a.Searched != n {
			t.Errorf("%s: capped %v up to %d, fitted at %d; want %v up to and at %d (AutoOrders: %v)", c.name, a.Capped, a.Searched, a.Limit, c.wantCapped, n, each.Capped)
		}
		for k, o := range a.Orders {
			if o != n {
				t.Errorf("%s: kernel %d at order %d, want %d", c.name, k, o, n)
			}
		}
	}
}

// TestAutoWarnings: --order auto's warnings, the same for distill and a checkpoint's units
// (Auto.Warnings): the capped channels, numbered from the unit's first, and those whose fit
// ends above the tolerance, none when every channel is met and none is capped.
func TestAutoWarnings(t *testing.T) {
	a := Auto{Tol: 1e-2, Orders: []int{50, 50, 40}, Capped: []int{0, 2}, Searched: 50, Limit: 50}
	reports := []ChannelReport{{RelError: 0.0184, LowerBound: 0.0029}, {RelError: 0.004, LowerBound: 0.001}, {RelError: 0.012}}
	want := []string{
		"2 channel(s) have a lower bound above 1/3 of relative error 0.01 at every order up to 50 and were fitted at 50 (channels [4 6])",
		"2 channel(s) end above relative error 0.01 at their order (channels [4 6]; channel 4: 0.0184 at order 50, 6.3× its lower bound 0.0029, where the suggestion counts on 3×)",
	}
	if got := a.Warnings(reports, 4); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	a.Capped = nil
	if got := a.Warnings([]ChannelReport{{RelError: 1e-3}, {RelError: 9e-3}, {RelError: 0}}, 0); len(got) != 0 {
		t.Errorf("every channel met, none capped: %q", got)
	}
}
