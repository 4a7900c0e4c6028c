package rtf

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

// stableBank returns d transfer functions of order n with poles of modulus up to 0.9.
func stableBank(t *testing.T, seed uint64, d, n int) *filters.Bank {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	chans := make([]filters.Filter, d)
	for c := range chans {
		a, b := Montel(rng, n)
		for i := range a {
			a[i] *= 0.9
		}
		chans[c] = must(filters.NewTransferFunction(a, b, rng.NormFloat64()))
	}
	return must(filters.NewBank(chans))
}

// TestLayerRoundTrip lays a bank out and reads it back: exact without the correction, to
// rounding with it (the correction of these well-damped filters is well-conditioned).
func TestLayerRoundTrip(t *testing.T) {
	bank := stableBank(t, 1, 5, 7)
	for _, L := range []int{0, 64, 99} {
		l, reports := must2(FromBank(bank, L))
		if reports != nil || l.NumA != 5 || l.Order != 7 || len(l.AB) != 10*7 || l.Channels() != 5 {
			t.Fatalf("layer %+v, reports %v", l, reports)
		}
		back := must(l.Bank(L))
		for c, f := range bank.Channels {
			want, got := f.(*filters.TransferFunction), back.Channels[c].(*filters.TransferFunction)
			if !slices.Equal(got.Den, want.Den) || got.H0 != want.H0 {
				t.Errorf("L=%d channel %d: a or h0 changed", L, c)
			}
			if e := filters.RelDiff(want.Num, got.Num); L == 0 && e != 0 || e > 1e-14 {
				t.Errorf("L=%d channel %d: b differs by %.3g", L, c, e)
			}
		}
	}
}

func TestLayerErrors(t *testing.T) {
	good := Layer{AB: []float64{0.1, 0.2, 1, 2, 3}, H0: []float64{1, 2, 3, 4}, NumA: 1, Order: 1}
	for name, l := range map[string]Layer{
		"no channels":        {AB: []float64{}, NumA: 1, Order: 0},
		"num_a not dividing": {AB: []float64{1, 2, 3, 4, 5}, H0: []float64{1, 2, 3}, NumA: 2, Order: 1},
		"short ab":           {AB: []float64{1}, H0: []float64{1}, NumA: 1, Order: 1},
		"scalar":             {AB: good.AB, H0: good.H0, NumA: 1, Order: 1, Scalar: []float64{1, 2}},
		"order":              {AB: nil, H0: []float64{1}, NumA: 1, Order: filters.MaxOrder + 1},
	} {
		if _, err := l.Bank(0); !errors.Is(err, filters.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := good.Bank(-1); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("negative trunc_len: %v", err)
	}
	// A pole on the unit circle: the correction cannot be undone, and the error says how
	// ill-conditioned it is.
	marginal := Layer{AB: []float64{-1, 1}, H0: []float64{0}, NumA: 1, Order: 1}
	var ce *filters.ConditionError
	if _, err := marginal.Bank(16); !errors.As(err, &ce) || ce.Condition <= ce.Limit {
		t.Errorf("marginal pole: %v", err)
	}
}
