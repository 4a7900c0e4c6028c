package presets

import (
	"fmt"
	"math"
	"math/cmplx"
	"path/filepath"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// Tolerances of the SciPy comparison. Both sides run the same algorithm (analog prototype,
// frequency transform, bilinear map) in float64, so they differ only by rounding; the worst
// differences measured over the 48 cases are quoted (the test logs them).
const (
	// goldenRootTol bounds |root_go - root_scipy| for the zeros and poles (|root| ≤ 1): a few
	// roundings per step (measured 3.4e-16). Repeated roots (the zeros at ±1) are computed,
	// not found by rooting a polynomial, so they carry no ε^(1/m) loss.
	goldenRootTol = 1e-13
	// goldenGainTol bounds the relative gain difference: the gain is a product of up to 2N
	// factors, each rounded once (measured 1.9e-15 at N = 32).
	goldenGainTol = 1e-12
	// goldenRespTol bounds max|H_go - H_scipy| / max|H| over the 64 frequencies, and the same for
	// the impulse response, which SciPy computes with second-order sections and the Go ZPK with
	// a cascade of first-order sections (measured 8e-15 and 9.3e-15).
	goldenRespTol = 1e-12
	// goldenTFTol bounds max|coef_go - coef_scipy| / max|coef| of the transfer-function
	// coefficients (≤ 8 poles) after filters.ToTF, which evaluates the polynomials on the unit
	// circle while SciPy multiplies out np.poly; both are accurate to about cond·ε, and these
	// low orders are well conditioned (measured 3.3e-15).
	goldenTFTol = 1e-12
)

type goldenCase struct {
	Kind    string       `json:"kind"`
	Order   int          `json:"order"`
	Band    string       `json:"band"`
	Wn      []float64    `json:"wn"`
	Ripple  float64      `json:"ripple"`
	Zeros   [][2]float64 `json:"zeros"`
	Poles   [][2]float64 `json:"poles"`
	Gain    float64      `json:"gain"`
	H       [][2]float64 `json:"H"`
	Impulse []float64    `json:"impulse"`
	B       []float64    `json:"b"`
	A       []float64    `json:"a"`
}

func (c goldenCase) String() string {
	return fmt.Sprintf("%s N=%d %s Wn=%v rp=%g", c.Kind, c.Order, c.Band, c.Wn, c.Ripple)
}

func loadGolden(t *testing.T) (omega []float64, cases []goldenCase) {
	t.Helper()
	var doc struct {
		Omega []float64    `json:"omega"`
		Cases []goldenCase `json:"cases"`
	}
	numtest.ReadJSON(t, filepath.Join("..", "testdata", "golden", "presets", "presets.json"), &doc)
	if len(doc.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	return doc.Omega, doc.Cases
}

func relMaxDiff(got, want []float64) float64 {
	var d, s float64
	for i := range want {
		d = math.Max(d, math.Abs(got[i]-want[i]))
		s = math.Max(s, math.Abs(want[i]))
	}
	return d / s
}

func TestGoldenSciPy(t *testing.T) {
	omega, cases := loadGolden(t)
	var worstRoot, worstGain, worstH, worstImp, worstTF float64
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			w := make([]float64, len(c.Wn))
			for i, x := range c.Wn {
				w[i] = math.Pi * x
			}
			var f *filters.ZPK
			var err error
			if c.Kind == "butter" {
				f, err = Butter(c.Order, Band(c.Band), w...)
			} else {
				f, err = Cheby1(c.Order, c.Ripple, Band(c.Band), w...)
			}
			if err != nil {
				t.Fatal(err)
			}
			dz, dp := numtest.RootsDist(f.Zeros, numtest.Complexes(c.Zeros)), numtest.RootsDist(f.Poles, numtest.Complexes(c.Poles))
			worstRoot = math.Max(worstRoot, math.Max(dz, dp))
			if dz > goldenRootTol || dp > goldenRootTol {
				t.Errorf("zeros differ by %.3g, poles by %.3g (tolerance %g)\nzeros %v\npoles %v", dz, dp, goldenRootTol, f.Zeros, f.Poles)
			}
			dg := math.Abs(f.Gain-c.Gain) / math.Abs(c.Gain)
			worstGain = math.Max(worstGain, dg)
			if dg > goldenGainTol {
				t.Errorf("gain %v, SciPy %v: relative difference %.3g", f.Gain, c.Gain, dg)
			}
			h, want := f.FreqResponse(omega), numtest.Complexes(c.H)
			var dh, sh float64
			for i := range want {
				dh = math.Max(dh, cmplx.Abs(h[i]-want[i]))
				sh = math.Max(sh, cmplx.Abs(want[i]))
			}
			worstH = math.Max(worstH, dh/sh)
			if dh/sh > goldenRespTol {
				t.Errorf("H differs by %.3g relative", dh/sh)
			}
			di := relMaxDiff(f.Impulse(len(c.Impulse)), c.Impulse)
			worstImp = math.Max(worstImp, di)
			if di > goldenRespTol {
				t.Errorf("impulse responses differ by %.3g relative", di)
			}
			if c.A == nil {
				return
			}
			tf, _, err := filters.ToTF(f)
			if err != nil {
				t.Fatal(err)
			}
			// SciPy's b(z⁻¹)/a(z⁻¹) with a[0] = 1 is h0 + num/den: b = h0·a + (0, num).
			a := append([]float64{1}, tf.Den...)
			b := make([]float64, len(a))
			for i := range a {
				b[i] = tf.H0 * a[i]
				if i > 0 {
					b[i] += tf.Num[i-1]
				}
			}
			da, db := relMaxDiff(a, c.A), relMaxDiff(b, c.B)
			worstTF = math.Max(worstTF, math.Max(da, db))
			if da > goldenTFTol || db > goldenTFTol {
				t.Errorf("a differs by %.3g, b by %.3g relative\na = %v\nb = %v", da, db, a, b)
			}
		})
	}
	t.Logf("worst differences from SciPy: roots %.2g, gain %.2g, H %.2g, impulse %.2g, tf %.2g",
		worstRoot, worstGain, worstH, worstImp, worstTF)
}
