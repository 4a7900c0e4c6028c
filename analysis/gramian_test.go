package analysis

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// gramianCase is a case of testdata/golden/analysis/gramian.json (gen_gramian_golden.py):
// the exact (mpmath, 300 bits) H2 norm and Hankel singular values of a system given by float64
// numbers, with log₁₀ of each for the values beyond float64's range.
type gramianCase struct {
	Name     string      `json:"name"`
	A        [][]float64 `json:"A"`
	B        []float64   `json:"B"`
	C        []float64   `json:"C"`
	D        float64     `json:"D"`
	Den      []float64   `json:"a"`
	Num      []float64   `json:"b"`
	H0       float64     `json:"h0"`
	H2       float64     `json:"h2"`
	H2Log10  float64     `json:"h2_log10"`
	HSV      []float64   `json:"hsv"`
	HSVLog10 []float64   `json:"hsv_log10"`
	Refuse   bool        `json:"refuse"`
}

func (g gramianCase) filter(t *testing.T) filters.Filter {
	t.Helper()
	if g.A != nil {
		return mustDense(t, g.A, g.B, g.C, g.D)
	}
	f, err := filters.NewTransferFunction(g.Den, g.Num, g.H0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// gramianTol is the agreement with the exact values, relative to each value.
const gramianTol = 1e-10

// TestGramianGolden checks H2 and the Hankel singular values against mpmath where float64 can
// hold them, and the refusal where it cannot (beyond its range): gains of 1e±100 and 1e±150
// squared underflowed to 0 or overflowed (QA finding 3).
func TestGramianGolden(t *testing.T) {
	var g struct {
		Cases []gramianCase `json:"cases"`
	}
	numtest.ReadJSON(t, filepath.Join("..", "testdata", "golden", "analysis", "gramian.json"), &g)
	if len(g.Cases) < 14 {
		t.Fatalf("%d cases", len(g.Cases))
	}
	inRange := func(l float64) bool { return l < 308.25 && l > math.Log10(smallestAccurate) }
	for _, c := range g.Cases {
		f := c.filter(t)
		forms := []filters.Filter{f}
		if c.Den != nil {
			// A transfer function's gain reaches the zpk form's, the modal forms' residues.
			for _, to := range []filters.Form{filters.FormZPK, filters.FormRotation, filters.FormDiagonal} {
				g, _, err := filters.Convert(f, to)
				if err != nil {
					t.Fatalf("%s: to %s: %v", c.Name, to, err)
				}
				forms = append(forms, g)
			}
		}
		for _, ff := range forms {
			name := c.Name + "/" + string(ff.Form())
			h2, err := H2(ff)
			var nf *NonFiniteError
			switch {
			case !inRange(c.H2Log10):
				if !errors.As(err, &nf) || math.Abs(nf.Log10-c.H2Log10) > 1e-6 {
					t.Errorf("%s: H2 = %v, %v; want a NonFiniteError with log10 %.6f", name, h2, err, c.H2Log10)
				}
			case err != nil:
				t.Errorf("%s: H2: %v", name, err)
			default:
				if e := math.Abs(h2-c.H2) / c.H2; e > gramianTol {
					t.Errorf("%s: H2 = %.15g, exact %.15g (rel %.2g)", name, h2, c.H2, e)
				}
			}
			hs, err := HankelSV(ff)
			out := -1 // the first σ beyond float64's range
			for i := len(c.HSVLog10) - 1; i >= 0; i-- {
				if !inRange(c.HSVLog10[i]) {
					out = i
				}
			}
			switch {
			case out >= 0:
				if !errors.As(err, &nf) || math.Abs(nf.Log10-c.HSVLog10[out]) > 1e-6 {
					t.Errorf("%s: HSV = %v, %v; want a NonFiniteError with log10 %.6f", name, hs, err, c.HSVLog10[out])
				}
			case err != nil:
				t.Errorf("%s: HSV: %v", name, err)
			case len(hs.Values) != len(c.HSV):
				t.Errorf("%s: %d values, want %d", name, len(hs.Values), len(c.HSV))
			default:
				for i, want := range c.HSV {
					if e := math.Abs(hs.Values[i]-want) / want; e > gramianTol {
						t.Errorf("%s: σ%d = %.15g, exact %.15g (%.2g)", name, i+1, hs.Values[i], want, e)
					}
				}
			}
		}
	}
}
