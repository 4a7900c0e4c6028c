package analysis

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// TestHInfGolden: HInf against the peak of |H(e^{jω})| found on 2^18 points and each pole's
// neighbourhood and refined at 60 digits (mpmath; testdata/golden/analysis/gen_hinf_golden.py):
// Butterworth and Chebyshev filters (flat tops and equal ripples), a resonator 0.001 inside
// the circle, two narrow peaks 0.003 apart, HiPPO-LegS (dense), a random filter, poles
// clustered near z = 1 (where SciPy's freqz of the polynomials finds 3e-9 for a peak of 1),
// S4D-Lin poles.
func TestHInfGolden(t *testing.T) {
	// hinfTol: a sample of |H| is off by about ε·Σ|q|/|e^{jω} − q| over the roots q (cos ω,
	// sin ω and each root's parts rounded): 9e-13 for twopeaks, whose poles lie 1e-4 and
	// 5e-4 from the circle, 2e-15 where none is that close; the search itself ends ulps from
	// the peak, where |H| differs from it by their square.
	const hinfTol = 1e-11
	// omegaTol: the peak's frequency carries half the digits of its value (|H| is flat to
	// second order there); for a peak 0.001 wide that is 1e-11.
	const omegaTol = 1e-7
	var g struct {
		Cases []struct {
			Name        string       `json:"name"`
			Form        string       `json:"form"`
			Zeros       [][2]float64 `json:"zeros"`
			Poles       [][2]float64 `json:"poles"`
			Gain        float64      `json:"gain"`
			A           [][]float64  `json:"A"`
			B, C        []float64
			D           float64
			HInf        float64 `json:"hinf"`
			Omega       float64 `json:"omega"`
			OmegaUnique bool    `json:"omega_unique"`
		} `json:"cases"`
	}
	numtest.ReadJSON(t, "../testdata/golden/analysis/hinf.json", &g)
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range g.Cases {
		var f filters.Filter
		var err error
		if c.Form == "dense" {
			f, err = filters.NewDense(c.A, c.B, c.C, c.D)
		} else {
			f, err = filters.NewZPK(numtest.Complexes(c.Zeros), numtest.Complexes(c.Poles), c.Gain, 0)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		norm, omega, err := HInf(f)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if math.Abs(norm-c.HInf) > hinfTol*c.HInf {
			t.Errorf("%s: ‖H‖∞ = %.17g, want %.17g (rel %.3g)", c.Name, norm, c.HInf, math.Abs(norm-c.HInf)/c.HInf)
		}
		if c.OmegaUnique && math.Abs(omega-c.Omega) > omegaTol*max(1, c.Omega) {
			t.Errorf("%s: at ω = %.12g, want %.12g", c.Name, omega, c.Omega)
		}
	}
}

// TestHInfEdges: a pure gain's norm is |D|; the zero filter's 0; an unstable or marginal
// filter has none (an *UnstableError naming its poles); a peak between the uniform grid's
// points, made by a pole 1e-9 inside the circle, is found from the pole's angle.
func TestHInfEdges(t *testing.T) {
	gain, _ := filters.NewZPK(nil, nil, -2.5, 0)
	if v, _, err := HInf(gain); err != nil || v != 2.5 {
		t.Errorf("a gain of -2.5: %v, %v", v, err)
	}
	zero, _ := filters.NewZPK(nil, []complex128{0.5}, 0, 0)
	if v, _, err := HInf(zero); err != nil || v != 0 {
		t.Errorf("the zero filter: %v, %v", v, err)
	}
	for _, p := range [][]complex128{{1.2}, {1i, -1i}} {
		f, _ := filters.NewZPK(nil, p, 1, 0)
		if _, _, err := HInf(f); !errors.Is(err, ErrUnstable) {
			t.Errorf("poles %v: %v, want ErrUnstable", p, err)
		}
	}
	// H = 1/((z − p)(z − p̄)) with |p| = 1 − 1e-9 at angle 0.123456789: the peak, about
	// 1/(1e-9·2 sin θ), is 1e-9 wide.
	const r, th = 1 - 1e-9, 0.123456789
	p := complex(r*math.Cos(th), r*math.Sin(th))
	f, _ := filters.NewZPK(nil, []complex128{p, complex(real(p), -imag(p))}, 1, 0)
	v, w, err := HInf(f)
	want := 1 / ((1 - r) * 2 * math.Sin(th))
	if err != nil || math.Abs(v-want) > 1e-6*want || math.Abs(w-th) > 1e-8 {
		t.Errorf("a peak 1e-9 wide: %v at %v (%v), want about %v at %v", v, w, err, want, th)
	}
}

// TestHInfPreparedDense: for dense filters (the golden HiPPO-LegS of order 16, a random one of
// order 24) and a rotation form, which HInf evaluates through filters.FreqPreparer with A's
// Hessenberg reduction (or the rotation's block coordinates) done once instead of at each
// refinement point, the norm is |FreqResponse| at the frequency returned, bit for bit: the
// same evaluation as before.
func TestHInfPreparedDense(t *testing.T) {
	var g struct {
		Cases []struct {
			Name string      `json:"name"`
			A    [][]float64 `json:"A"`
			B, C []float64
			D    float64
		} `json:"cases"`
	}
	numtest.ReadJSON(t, "../testdata/golden/analysis/hinf.json", &g)
	var d *filters.Dense
	for _, c := range g.Cases {
		if c.A != nil {
			var err error
			if d, err = filters.NewDense(c.A, c.B, c.C, c.D); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d == nil {
		t.Fatal("no dense case")
	}
	random := randomStable(rand.New(rand.NewPCG(4, 16)), 24, 0.97)
	r, _, err := filters.ToRotation(random)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []filters.Filter{d, random, r} {
		norm, omega, err := HInf(f)
		if err != nil {
			t.Fatal(err)
		}
		if at := cmplx.Abs(f.FreqResponse([]float64{omega})[0]); norm != at {
			t.Errorf("%s: ‖H‖∞ = %.17g at ω = %.17g, where |H| = %.17g", f.Form(), norm, omega, at)
		}
	}
}
