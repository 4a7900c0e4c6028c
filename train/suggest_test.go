package train

import (
	"math"
	"math/rand/v2"
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
