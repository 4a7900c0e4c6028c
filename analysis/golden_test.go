package analysis

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// The golden values come from SciPy; testdata/golden/analysis/gen_analysis_golden.py made them
// and says what each one is.

// Tolerances against SciPy. Both sides compute in float64 with backward-stable algorithms, so
// the differences are rounding of a few eps times the conditioning of each quantity.
const (
	// agreeTol is the bar for impulse (and step) responses, relative L2.
	agreeTol = 1e-10
	// goldenHTol: H by a Hessenberg solve against dense solves (or Horner against freqz), relative L2.
	goldenHTol = 1e-12
	// goldenPhaseTol (rad) and goldenDBTol (dB): |H| ≥ 1e-12·max|H| away from zeros, so
	// arg H and log|H| carry ~eps/(|H|/max|H|) ≤ 1e-4·… in the worst case; these systems stay
	// far from that and measure ~1e-13.
	goldenPhaseTol = 1e-9
	goldenDBTol    = 1e-9
	// goldenGDTol is relative to 1 + |τ|: SciPy's group_delay divides polynomial values on the
	// circle (coefficients from ss2tf for the state-space cases), ours sums pole and zero terms.
	goldenGDTol = 1e-8
	// goldenH2Tol, relative: SciPy solves the Stein equation through a bilinear map to a
	// continuous Lyapunov equation; we solve it directly in Schur coordinates.
	goldenH2Tol = 1e-10
	// goldenHSVTol is relative to σ₁. SciPy's reference is sqrt(eig(P·Q)): the eigenvalues σ²
	// carry an absolute error of eps·σ₁², so σᵢ near √eps·σ₁ ≈ 1.5e-8·σ₁ are noise (at n = 32
	// SciPy gives 2.2e-7 where our dense and modal paths agree on 1.8463e-8). The large ones
	// agree to ~1e-12.
	goldenHSVTol = 1e-7
)

type goldenFile struct {
	Omega   []float64      `json:"omega"`
	Systems []goldenSystem `json:"systems"`
	TF      []goldenSystem `json:"tf"`
}

type goldenSystem struct {
	Name       string       `json:"name"`
	A          [][]float64  `json:"A"`
	B, C       []float64    `json:"-"`
	RawB       []float64    `json:"B"`
	RawC       []float64    `json:"C"`
	D          float64      `json:"D"`
	Den        []float64    `json:"a"`
	Num        []float64    `json:"b"`
	H0         float64      `json:"h0"`
	Impulse    []float64    `json:"impulse"`
	Step       []float64    `json:"step"`
	H          [][2]float64 `json:"H"`
	MagDB      []*float64   `json:"mag_db"`
	Phase      []float64    `json:"phase"`
	GroupDelay []float64    `json:"group_delay"`
	Singular   []int        `json:"gd_singular"`
	H2         *float64     `json:"h2"`
	HSV        []float64    `json:"hsv"`
}

func readGolden(t *testing.T) goldenFile {
	t.Helper()
	var g goldenFile
	numtest.ReadJSON(t, filepath.Join("..", "testdata", "golden", "analysis", "analysis.json"), &g)
	return g
}

func (g goldenSystem) filter(t *testing.T) filters.Filter {
	t.Helper()
	if g.A != nil || g.RawB != nil {
		return mustDense(t, g.A, g.RawB, g.RawC, g.D)
	}
	f, err := filters.NewTransferFunction(g.Den, g.Num, g.H0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGolden(t *testing.T) {
	g := readGolden(t)
	for _, c := range append(append([]goldenSystem(nil), g.Systems...), g.TF...) {
		t.Run(c.Name, func(t *testing.T) {
			f := c.filter(t)
			forms := []filters.Filter{f}
			// The modal form too, where it exists (the uncontrollable case has distinct poles).
			if d, _, err := filters.ToDiagonal(f); err == nil {
				forms = append(forms, d)
			}
			for _, ff := range forms {
				for _, m := range Methods {
					h, err := Impulse(nil, ff, len(c.Impulse), m)
					if err != nil {
						t.Errorf("%s %s: %v", ff.Form(), m, err)
						continue
					}
					if e := relErr(h, c.Impulse); e > agreeTol {
						t.Errorf("%s %s: impulse differs from SciPy by %.3g", ff.Form(), m, e)
					}
				}
				s, err := Step(nil, ff, len(c.Step), Recurrence)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(s, c.Step); e > agreeTol {
					t.Errorf("%s: step differs from SciPy by %.3g", ff.Form(), e)
				}
				r := FreqResponse(ff, g.Omega)
				want := make([]complex128, len(c.H))
				for i, v := range c.H {
					want[i] = complex(v[0], v[1])
				}
				if e := numtest.RelErrC(r.H, want); e > goldenHTol {
					t.Errorf("%s: H differs from SciPy by %.3g", ff.Form(), e)
				}
				for i := range g.Omega {
					if slices.Contains(c.Singular, i) {
						if !r.Masked[i] && c.MagDB[i] == nil {
							t.Errorf("%s: ω[%d] (|H| = 0) is not masked", ff.Form(), i)
						}
						continue
					}
					if d := math.Abs(r.MagDB[i] - *c.MagDB[i]); d > goldenDBTol {
						t.Errorf("%s: magnitude at ω[%d] is %.15g dB, SciPy %.15g", ff.Form(), i, r.MagDB[i], *c.MagDB[i])
					}
					if len(c.Singular) == 0 {
						if d := math.Abs(r.Phase[i] - c.Phase[i]); d > goldenPhaseTol {
							t.Errorf("%s: phase at ω[%d] is %.15g, SciPy %.15g", ff.Form(), i, r.Phase[i], c.Phase[i])
						}
					}
				}
				if c.GroupDelay != nil {
					gd, err := GroupDelayOf(ff, g.Omega)
					if err != nil {
						t.Fatal(err)
					}
					for i, want := range c.GroupDelay {
						if slices.Contains(c.Singular, i) {
							if !gd.Masked[i] {
								t.Errorf("%s: group delay at ω[%d] (a zero on the circle) is not masked", ff.Form(), i)
							}
							continue
						}
						if d := math.Abs(gd.Tau[i] - want); d > goldenGDTol*(1+math.Abs(want)) || gd.Masked[i] {
							t.Errorf("%s: group delay at ω[%d] is %.15g (masked %v), SciPy %.15g", ff.Form(), i, gd.Tau[i], gd.Masked[i], want)
						}
					}
				}
				if c.H2 != nil {
					h2, err := H2(ff)
					if err != nil {
						t.Fatal(err)
					}
					if e := math.Abs(h2-*c.H2) / *c.H2; e > goldenH2Tol {
						t.Errorf("%s: H2 = %.15g, SciPy %.15g (rel %.3g)", ff.Form(), h2, *c.H2, e)
					}
				}
				if c.HSV != nil {
					hs, err := HankelSV(ff)
					if err != nil {
						t.Fatal(err)
					}
					if len(hs.Values) != len(c.HSV) || len(hs.Unstable) != 0 {
						t.Fatalf("%s: %d Hankel singular values and %d unstable poles, want %d and 0", ff.Form(), len(hs.Values), len(hs.Unstable), len(c.HSV))
					}
					for i, want := range c.HSV {
						if d := math.Abs(hs.Values[i] - want); d > goldenHSVTol*c.HSV[0] {
							t.Errorf("%s: σ%d = %.15g, SciPy %.15g", ff.Form(), i+1, hs.Values[i], want)
						}
					}
				}
			}
		})
	}
}
