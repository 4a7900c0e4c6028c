package rtf

import (
	"errors"
	"math"
	"math/cmplx"
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
			// h0 goes out as h0 − h[M] and comes back as h_0 + h[M] (of the b undone): exact
			// without the correction, to rounding with it.
			if !slices.Equal(got.Den, want.Den) || L == 0 && got.H0 != want.H0 || math.Abs(got.H0-want.H0) > 1e-14*math.Max(1, math.Abs(want.H0)) {
				t.Errorf("L=%d channel %d: a or h0 changed (h0 %v, want %v)", L, c, got.H0, want.H0)
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

// slowBank returns channels whose responses have not decayed within the trunc_lens below
// (poles of modulus 0.97 and 0.99), so that h[M] matters.
func slowBank(t *testing.T) *filters.Bank {
	t.Helper()
	var chans []filters.Filter
	for c, p := range []complex128{cmplx.Rect(0.97, 0.3), cmplx.Rect(0.99, 1.1)} {
		d := must(filters.NewDiagonal([]complex128{p, cmplx.Conj(p)}, []complex128{complex(1, 0.5), complex(1, -0.5)}, 0.25*float64(c)))
		tf, _, err := filters.ToTF(d)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, tf)
	}
	return must(filters.NewBank(chans))
}

// periodicSum is the M-periodic sum of the response of (a, b̃, h_0) over its first L samples,
// summed over 400 periods: what the module's M-point FFT computes, found without an FFT.
func periodicSum(t *testing.T, a, bt []float64, h0 float64, m, l int) []float64 {
	t.Helper()
	h := must(filters.NewTransferFunction(a, bt, h0)).Impulse(400 * m)
	out := make([]float64, l)
	for i, v := range h {
		if i%m < l {
			out[i%m] += v
		}
	}
	return out
}

// TestLayerFoldAccounted: with trunc_len the module's FFT kernel folds h[M] onto t = 0, so
// FromBank writes h_0 = h0 − h[M] and the kernel is the response at every t < L, t = 0
// included (it was h0 + h[M]: 0.14 and 0.22 relative at L = 32); Bank reads h0 = h_0 + h[M]
// back, so that its response is the module's kernel; ModuleKernels is the same periodic sum.
func TestLayerFoldAccounted(t *testing.T) {
	bank := slowBank(t)
	for _, L := range []int{32, 33, 100} {
		m := FFTLen(L)
		l, _ := must2(FromBank(bank, L))
		kernels := must(l.ModuleKernels(L, L))
		back := must(l.Bank(L))
		for c, f := range bank.Channels {
			n := l.Order
			sum := periodicSum(t, l.AB[c*n:(c+1)*n], l.AB[(2+c)*n:(3+c)*n], l.H0[c], m, L)
			want := f.Impulse(L)
			if e := filters.RelDiff(want, sum); !(e < 1e-12) {
				t.Errorf("L=%d channel %d: the module's kernel differs from the filter by %.3g (t = 0: %.6g, want %.6g)", L, c, e, sum[0], want[0])
			}
			if e := filters.RelDiff(sum, kernels[c]); !(e < 1e-13) {
				t.Errorf("L=%d channel %d: ModuleKernels differs from the periodic sum by %.3g", L, c, e)
			}
			if e := filters.RelDiff(kernels[c], back.Channels[c].Impulse(L)); !(e < 1e-12) {
				t.Errorf("L=%d channel %d: read back, the response differs from the module's kernel by %.3g", L, c, e)
			}
		}
	}
	if l, _ := must2(FromBank(bank, 32)); !errors.Is(second(l.ModuleKernels(32, 33)), filters.ErrInvalid) {
		t.Error("a kernel longer than trunc_len was computed")
	}
}

func second[T any](_ T, err error) error { return err }
