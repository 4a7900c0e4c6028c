package filters_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/cmplx"
	"os"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// sosDesign is a filter scipy.signal designed as zeros, poles and gain, and the sections its
// zpk2sos made of them (testdata/layouts/gen_sos.py).
type sosDesign struct {
	Zeros, Poles [][2]float64
	Gain         float64
	SOS          []filters.Section
}

func loadSOSDesigns(t *testing.T) map[string]sosDesign {
	t.Helper()
	data, err := os.ReadFile("../testdata/layouts/sos_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct{ Designs map[string]sosDesign }
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Designs) == 0 {
		t.Fatal("no designs")
	}
	return g.Designs
}

// TestSectionsMatchZPK2SOS: scipy's zeros, poles and gain (Butterworth, an elliptic filter
// of odd order, Chebyshev, Bessel) factor into the sections zpk2sos makes of them, in its
// order, to rounding.
func TestSectionsMatchZPK2SOS(t *testing.T) {
	for name, d := range loadSOSDesigns(t) {
		z, err := filters.NewZPK(numtest.Complexes(d.Zeros), numtest.Complexes(d.Poles), d.Gain, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := filters.Sections(z)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(d.SOS) {
			t.Fatalf("%s: %d sections, scipy %d", name, len(got), len(d.SOS))
		}
		for i := range got {
			for j := range 6 {
				// The coefficients are sums and products of two roots (times the gain).
				scale := math.Max(1, math.Abs(d.SOS[i][j]))
				if j < 3 && i == 0 {
					scale = math.Max(scale, math.Abs(d.Gain))
				}
				if math.Abs(got[i][j]-d.SOS[i][j]) > 1e-14*scale {
					t.Errorf("%s: section %d is %v, zpk2sos %v", name, i, got[i], d.SOS[i])
					break
				}
			}
		}
	}
}

// TestFromSections: scipy's sections read back as its poles, zeros and gain (the origin
// pair of an odd order cancelled), and their cascade's impulse response is the ZPK's.
func TestFromSections(t *testing.T) {
	for name, d := range loadSOSDesigns(t) {
		f, err := filters.FromSections(d.SOS)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := filters.NewZPK(numtest.Complexes(d.Zeros), numtest.Complexes(d.Poles), d.Gain, 0)
		if f.Order() != want.Order() || len(f.Zeros) != len(want.Zeros) {
			t.Fatalf("%s: %d poles and %d zeros, want %d and %d", name, f.Order(), len(f.Zeros), want.Order(), len(want.Zeros))
		}
		if math.Abs(f.Gain-d.Gain) > 1e-13*math.Abs(d.Gain) {
			t.Errorf("%s: gain %v, want %v", name, f.Gain, d.Gain)
		}
		// Repeated zeros (Butterworth's at −1) are found only to about √eps from the
		// quadratics; the responses agree far more closely.
		if e := filters.RelDiff(want.Impulse(512), f.Impulse(512)); e > 1e-12 {
			t.Errorf("%s: the cascade's impulse response is %.3g from scipy's zpk", name, e)
		}
	}
}

// TestSectionsRoundTrip: filters with fewer zeros than poles (a delay), real and complex
// roots, odd and even orders, order 0 and a zero gain factor into sections and back to
// the same impulse response.
func TestSectionsRoundTrip(t *testing.T) {
	cases := []struct {
		zeros, poles []complex128
		gain         float64
	}{
		{nil, nil, 2.5},
		{nil, []complex128{0.5}, 3},
		{[]complex128{-0.3}, []complex128{0.9i, -0.9i, 0.2}, 1.5},
		{[]complex128{0.1 + 0.8i, 0.1 - 0.8i, -0.5}, []complex128{0.95, 0.5 + 0.5i, 0.5 - 0.5i, -0.7}, -0.25},
		{[]complex128{0.4}, []complex128{0.99, 0.98, 0.3 + 0.1i, 0.3 - 0.1i, -0.2}, 1},
		{nil, []complex128{0.6 + 0.6i, 0.6 - 0.6i}, 0},
	}
	for i, c := range cases {
		z, err := filters.NewZPK(c.zeros, c.poles, c.gain, 0)
		if err != nil {
			t.Fatal(err)
		}
		sos, err := filters.Sections(z)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if want := max(1, (len(c.poles)+1)/2); len(sos) != want {
			t.Errorf("case %d: %d sections, want %d", i, len(sos), want)
		}
		back, err := filters.FromSections(sos)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		// The close real poles 0.99 and 0.98 share a quadratic, whose roots carry an error
		// of about eps/(0.99 − 0.98); measured 5e-14 over the response.
		want, got := z.Impulse(200), back.Impulse(200)
		if e := filters.RelDiff(want, got); e > 1e-12 || (c.gain == 0 && filters.RelDiff(got, make([]float64, 200)) != 0) {
			t.Errorf("case %d: %v read back %.3g away (%v)", i, sos, e, back)
		}
	}
}

// TestSectionsA0: a section whose a0 is not 1 is divided by it (MATLAB's sos allows it):
// [2 0 0 2 −1 0] is 1/(1 − 0.5z⁻¹).
func TestSectionsA0(t *testing.T) {
	f, err := filters.FromSections([]filters.Section{{2, 0, 0, 2, -1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 40)
	for i := range want {
		want[i] = math.Pow(0.5, float64(i))
	}
	if e := filters.RelDiff(want, f.Impulse(40)); e > 1e-15 || f.Order() != 1 {
		t.Errorf("%v: %.3g from 0.5ᵗ", f, e)
	}
}

// TestSectionsErrors: a0 = 0, non-finite coefficients and an offset are refused with
// one-line errors of kind filters.ErrInvalid.
func TestSectionsErrors(t *testing.T) {
	for _, c := range []struct {
		sos  []filters.Section
		want string
	}{
		{[]filters.Section{{1, 0, 0, 0, 1, 0}}, "a0 = 0"},
		{[]filters.Section{filters.Identity, {1, math.NaN(), 0, 1, 0, 0}}, "section 1: coefficient 1 is NaN"},
		{[]filters.Section{{1, 0, 0, 1, math.Inf(1), 0}}, "coefficient 4 is +Inf"},
	} {
		_, err := filters.FromSections(c.sos)
		if !errors.Is(err, filters.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.sos, err, c.want)
		}
	}
	z, _ := filters.NewZPK(nil, []complex128{0.5}, 1, 0.1)
	if _, err := filters.Sections(z); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("an offset: %v", err)
	}
}

// TestQuadraticSections: a section's roots are exact where the coefficients allow — a
// double root, roots of very different size without cancellation, huge coefficients.
func TestQuadraticSections(t *testing.T) {
	for _, c := range []struct {
		a1, a2 float64
		want   []complex128
	}{
		{-2, 1, []complex128{1, 1}},
		{-(1e8 + 1e-8), 1, []complex128{1e8, 1e-8}},
		{0, 0.25, []complex128{0.5i, -0.5i}},
		{-1e200, 1e199, []complex128{1e200, 0.1}},
	} {
		f, err := filters.FromSections([]filters.Section{{1, 0, 0, 1, c.a1, c.a2}})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			best := math.Inf(1)
			for _, p := range f.Poles {
				best = math.Min(best, cmplx.Abs(p-w)/cmplx.Abs(w))
			}
			if best > 4e-16 {
				t.Errorf("a = [1 %g %g]: poles %v, want %v", c.a1, c.a2, f.Poles, c.want)
			}
		}
	}
}
