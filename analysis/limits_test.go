package analysis

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ssmlab/ssmlab/filters"
)

// TestCubicAnalysesRefusedAboveLimit: the O(n³) analyses of a filter above MaxCubicOrder fail
// at once, naming the limit (an order-4096 tf's Hankel singular values ran for about an hour).
func TestCubicAnalysesRefusedAboveLimit(t *testing.T) {
	n := MaxCubicOrder + 1
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
		a[i][i] = 0.5
	}
	b, c := make([]float64, n), make([]float64, n)
	b[0], c[n-1] = 1, 1
	dense, err := filters.NewDense(a, b, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	tf := randomStableTF(n)
	start := time.Now()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"poles of dense", second(Poles(dense))},
		{"spectral radius of dense", second(SpectralRadius(dense))},
		{"zeros of dense", second(Zeros(dense))},
		{"group delay of dense", second(GroupDelayOf(dense, []float64{0.1}))},
		{"auto length of dense", second(AutoLength(dense, 0))},
		{"properties of dense", second(Analyze(dense, 0))},
		{"H2 of tf", second(H2(tf))},
		{"HSV of tf", second(HankelSV(tf))},
		{"balanced truncation of tf", second(BalancedTruncation(tf, 4))},
		{"minimal of tf", func() error { _, _, err := Minimal(tf, 0); return err }()},
	} {
		var le *OrderLimitError
		if !errors.As(tc.err, &le) || le.Order != n || le.Limit != MaxCubicOrder {
			t.Errorf("%s: %v, want an *OrderLimitError", tc.name, tc.err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing took %v", d)
	}
	// The advice fits the form: a dense filter's poles come from converting it, a tf's H2 norm
	// from the diagonal form, and no form avoids the Hankel singular values (QA finding 11: it
	// advised "a tf, companion or modal form" for a tf).
	for _, tc := range []struct {
		err  error
		want string
	}{
		{second(Poles(dense)), "the tf, companion and modal forms (diagonal, rotation, zpk) hold their poles"},
		{second(H2(tf)), "the diagonal form's H2 norm has a closed form"},
		{second(HankelSV(tf)), "every form needs it: distill the filter to a lower order first"},
		{second(GroupDelayOf(dense, []float64{0.1})), "the tf and zpk (without h0) forms hold their poles and zeros"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) || !strings.Contains(tc.err.Error(), "half a minute at order 1024") {
			t.Errorf("%v, want %q", tc.err, tc.want)
		}
	}
	// The properties need no zeros: those of a diagonal filter above the limit come back.
	d, _, err := filters.ToDiagonal(randomStableTF(64))
	if err != nil {
		t.Fatal(err)
	}
	big := &filters.Diagonal{H0: d.H0}
	for len(big.Poles) <= MaxCubicOrder {
		big.Poles = append(big.Poles, d.Poles...)
		big.Residues = append(big.Residues, d.Residues...)
	}
	if p, err := Analyze(big, 0); err != nil || p.Stability != Stable {
		t.Errorf("properties of a diagonal filter of order %d: %v", big.Order(), err)
	}
}

func second[T any](_ T, err error) error { return err }

// randomStableTF is a tf of order n with Σ|aᵢ| < 1 (stable by the Montel bound).
func randomStableTF(n int) *filters.TransferFunction {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	den, num := make([]float64, n), make([]float64, n)
	for i := range den {
		den[i] = (2*rng.Float64() - 1) / float64(n)
		num[i] = rng.NormFloat64()
	}
	tf, err := filters.NewTransferFunction(den, num, 0.5)
	if err != nil {
		panic(err)
	}
	return tf
}

// TestPolesAndZerosAtMaxOrder: the poles and zeros of a tf of order filters.MaxOrder (they
// took about an hour, by the QR iteration on the companion matrix) come back, stable as the
// Montel bound promises, with the analyses that use them.
func TestPolesAndZerosAtMaxOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("order 4096")
	}
	tf := randomStableTF(filters.MaxOrder)
	start := time.Now()
	pr, err := Analyze(tf, 0)
	if err != nil {
		t.Fatal(err)
	}
	zeros, err := Zeros(tf)
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Poles) != filters.MaxOrder || len(zeros) != filters.MaxOrder || pr.Stability != Stable || pr.SpectralRadius >= 1 || math.IsNaN(pr.SpectralRadius) {
		t.Errorf("%d poles, %d zeros, %v, radius %v", len(pr.Poles), len(zeros), pr.Stability, pr.SpectralRadius)
	}
	if _, err := GroupDelayOf(tf, LinearGrid(64)); err != nil {
		t.Error(err)
	}
	t.Logf("order %d: properties, poles and zeros, group delay in %v", filters.MaxOrder, time.Since(start))
}
