package filters_test

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/filtertest"
)

// simDiff is MIMODiff by simulation.
func simDiff(ref, approx *filters.MIMO, length int) ([]float64, float64) {
	h, g := filtertest.MIMOImpulse(ref, length), filtertest.MIMOImpulse(approx, length)
	per := make([]float64, ref.Outputs)
	var nt, dt float64
	for o := range per {
		var num, den float64
		for i := range h[o] {
			for t := range h[o][i] {
				e := h[o][i][t] - g[o][i][t]
				num += e * e
				den += h[o][i][t] * h[o][i][t]
			}
		}
		nt, dt = nt+num, dt+den
		per[o] = math.Sqrt(num) / math.Sqrt(den)
		if den == 0 {
			per[o] = math.Sqrt(num)
		}
	}
	return per, math.Sqrt(nt) / math.Sqrt(dt)
}

// perturbMIMO returns a copy of m with every number moved by a relative δ.
func perturbMIMO(rng *rand.Rand, m *filters.MIMO, delta float64) *filters.MIMO {
	jitter := func(z complex128) complex128 {
		return z * complex(1+delta*rng.NormFloat64(), delta*rng.NormFloat64())
	}
	out := &filters.MIMO{Inputs: m.Inputs, Outputs: m.Outputs}
	for _, p := range m.Poles {
		q := jitter(p)
		if cmplx.Abs(q) >= 1 {
			q = p
		}
		if imag(p) == 0 {
			q = complex(real(q), 0)
		}
		out.Poles = append(out.Poles, q)
	}
	for _, z := range m.B {
		out.B = append(out.B, jitter(z))
	}
	for _, z := range m.C {
		out.C = append(out.C, jitter(z))
	}
	for _, x := range m.D {
		out.D = append(out.D, x*(1+delta*rng.NormFloat64()))
	}
	return out
}

// MIMODiff's tolerances. mimoDiffRelTol: both sides sum the same L·inputs squares, one as
// Gramian entries and one sample by sample (t·ε drift in the simulated powers): they agree to
// ~1e-13 relative where the error is large. mimoDiffFloor is the documented rounding floor of
// the closed form, √ε·(a few): the cancellation in ‖h‖² + ‖g‖² − 2⟨h, g⟩, which the cases
// perturbed by 1e-9 and 1e-12 measure (up to 5e-8; a layer against itself cancels exactly).
const (
	mimoDiffRelTol = 1e-10
	mimoDiffFloor  = 1e-7
)

func TestMIMODiffMatchesSimulation(t *testing.T) {
	const length = 1024
	rng := rand.New(rand.NewPCG(7, 11))
	worstFloor := 0.0
	for trial := 0; trial < 60; trial++ {
		n, in, out := 1+rng.IntN(12), 1+rng.IntN(4), 1+rng.IntN(4)
		rmax := []float64{0.9, 0.99, 0.9999}[trial%3]
		ref := filtertest.RandomMIMO(rng, n, in, out, rmax)
		cases := map[string]*filters.MIMO{
			"unrelated": filtertest.RandomMIMO(rng, 1+rng.IntN(7), in, out, rmax),
			"1e-3":      perturbMIMO(rng, ref, 1e-3),
			"1e-6":      perturbMIMO(rng, ref, 1e-6),
			"1e-9":      perturbMIMO(rng, ref, 1e-9),
			"1e-12":     perturbMIMO(rng, ref, 1e-12),
			"itself":    ref,
		}
		noD := *ref
		noD.D = make([]float64, in*out)
		cases["D only"] = &noD
		for name, approx := range cases {
			per, tot, err := filters.MIMODiffClosedForm(ref, approx, length)
			if err != nil {
				t.Fatalf("trial %d %s: %v", trial, name, err)
			}
			wantPer, wantTot := simDiff(ref, approx, length)
			// Layers this small take the sums over the samples, exact to rounding (1e-14 of the
			// response: each difference is of responses rounded apart).
			if dper, dtot, err := filters.MIMODiff(ref, approx, length); err != nil || math.Abs(dtot-wantTot) > 1e-12*wantTot+1e-14 {
				t.Errorf("trial %d %s: sums over the samples %.12g (%v), simulation %.12g", trial, name, dtot, err, wantTot)
			} else {
				for o := range dper {
					if math.Abs(dper[o]-wantPer[o]) > 1e-12*wantPer[o]+1e-14 {
						t.Errorf("trial %d %s output %d: sums over the samples %.12g, simulation %.12g", trial, name, o, dper[o], wantPer[o])
					}
				}
			}
			check := func(what string, got, want float64) {
				if math.IsNaN(got) || got < 0 {
					t.Fatalf("trial %d %s %s: %g", trial, name, what, got)
				}
				if d := math.Abs(got - want); d > mimoDiffRelTol*want+mimoDiffFloor {
					t.Errorf("trial %d (n %d, ρ %g) %s %s: closed form %.12g, simulation %.12g", trial, n, rmax, name, what, got, want)
				}
				if want < 1e-6 {
					worstFloor = math.Max(worstFloor, math.Abs(got-want))
				}
			}
			for o := range per {
				check("output", per[o], wantPer[o])
			}
			check("total", tot, wantTot)
		}
	}
	t.Logf("largest closed-form error where the true error is below 1e-6: %.3g (floor %g)", worstFloor, mimoDiffFloor)
}

// The closed form at the three edges of GeomSum: a zero pole (0⁰ = 1), z = 1 exactly (a pole
// on the unit circle, whose Gramian diagonal is L) and a real negative pole.
func TestMIMODiffEdges(t *testing.T) {
	const length = 64
	ref, err := filters.NewMIMO([]complex128{0, 1, -0.5, 1i},
		[]complex128{1, 2, 1, 3, -1, 0.5, 1 + 1i, 2},
		[]complex128{0.5, -0.25, 2, 1 - 1i}, []float64{0.3, 0}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	approx := perturbMIMO(rand.New(rand.NewPCG(1, 2)), ref, 1e-2)
	approx.Poles[1] = 1
	per, tot, err := filters.MIMODiffClosedForm(ref, approx, length)
	if err != nil {
		t.Fatal(err)
	}
	wantPer, wantTot := simDiff(ref, approx, length)
	if math.Abs(per[0]-wantPer[0]) > mimoDiffRelTol*wantPer[0]+mimoDiffFloor || math.Abs(tot-wantTot) > mimoDiffRelTol*wantTot+mimoDiffFloor {
		t.Errorf("closed form %v %g, simulation %v %g", per, tot, wantPer, wantTot)
	}
}

// Poles at and next to z = −1: pₖ·pₗ is near 1 while log pₖ + log pₗ is near 2πi, so the
// closed form must take the angle into (−π, π] before expm1.
func TestMIMODiffNearMinusOne(t *testing.T) {
	const length = 1024
	poles := []complex128{-1, -0.9999, cmplx.Rect(0.9999, math.Pi-1e-9), cmplx.Rect(0.99999, -math.Pi+1e-7)}
	rng := rand.New(rand.NewPCG(5, 6))
	ref := filtertest.RandomMIMO(rng, 4, 2, 2, 0.5)
	ref.Poles = poles
	for k := 0; k < 2; k++ {
		for i := 0; i < 2; i++ {
			ref.B[k*2+i] = complex(real(ref.B[k*2+i]), 0)
			ref.C[i*4+k] = complex(real(ref.C[i*4+k]), 0)
		}
	}
	for _, delta := range []float64{1e-2, 1e-5} {
		approx := perturbMIMO(rng, ref, delta)
		approx.Poles[0] = -1
		per, tot, err := filters.MIMODiffClosedForm(ref, approx, length)
		if err != nil {
			t.Fatal(err)
		}
		wantPer, wantTot := simDiff(ref, approx, length)
		for o := range per {
			if math.Abs(per[o]-wantPer[o]) > mimoDiffRelTol*wantPer[o]+mimoDiffFloor {
				t.Errorf("δ %g output %d: closed form %.12g, simulation %.12g", delta, o, per[o], wantPer[o])
			}
		}
		if math.Abs(tot-wantTot) > mimoDiffRelTol*wantTot+mimoDiffFloor {
			t.Errorf("δ %g: closed form %.12g, simulation %.12g", delta, tot, wantTot)
		}
	}
}

func TestMIMODiffRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := filtertest.RandomMIMO(rng, 3, 2, 2, 0.9)
	if _, _, err := filters.MIMODiff(a, filtertest.RandomMIMO(rng, 3, 2, 3, 0.9), 16); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("outputs 2 against 3: %v", err)
	}
	if _, _, err := filters.MIMODiff(a, a, 0); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("length 0: %v", err)
	}
	big := filtertest.RandomMIMO(rng, 3, 2, 2, 0.9)
	big.Poles[0] = 1.5
	if _, _, err := filters.MIMODiff(big, a, 4096); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("an energy that overflows: %v", err)
	}
}

// Energies gives each output's energy over every input's response, as the simulation does,
// by the sums over the samples and by the closed form (within its floor).
func TestMIMOEnergies(t *testing.T) {
	const length = 512
	rng := rand.New(rand.NewPCG(3, 9))
	for trial := 0; trial < 10; trial++ {
		m := filtertest.RandomMIMO(rng, 1+rng.IntN(10), 1+rng.IntN(3), 1+rng.IntN(3), []float64{0.9, 0.9999}[trial%2])
		got, err := m.Energies(length)
		if err != nil {
			t.Fatal(err)
		}
		closed := filters.MIMOEnergyClosedForm(m.Poles, m.B, m.C, m.D, m.Inputs, m.Outputs, length)
		for o, rows := range filtertest.MIMOImpulse(m, length) {
			want := 0.0
			for _, h := range rows {
				for _, v := range h {
					want += v * v
				}
			}
			if math.Abs(got[o]-want) > 1e-12*want || math.Abs(closed[o]-want) > 1e-9*want {
				t.Errorf("trial %d output %d: energy %.15g (closed form %.15g), simulation %.15g", trial, o, got[o], closed[o], want)
			}
		}
	}
	if _, err := (&filters.MIMO{Poles: []complex128{0.5}, B: []complex128{1}, C: []complex128{1}, D: []float64{0}, Inputs: 1, Outputs: 1}).Energies(0); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("length 0: %v", err)
	}
}

// Products is X·Yᴴ and X·Yᵀ as the sums over the columns give them, for two matrices and for
// one (where X·Xᴴ comes out Hermitian to the bit).
func TestProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	rnd := func(n int) []complex128 {
		z := make([]complex128, n)
		for i := range z {
			z[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		return z
	}
	const cols = 5
	x, y := rnd(3*cols), rnd(4*cols)
	for _, c := range []struct {
		y  []complex128
		ry int
	}{{y, 4}, {x, 3}} {
		h, tt := filters.Products(x, 3, c.y, c.ry, cols)
		for k := range 3 {
			for l := range c.ry {
				var wh, wt complex128
				for j := range cols {
					wh += x[k*cols+j] * cmplx.Conj(c.y[l*cols+j])
					wt += x[k*cols+j] * c.y[l*cols+j]
				}
				if cmplx.Abs(h[k*c.ry+l]-wh) > 1e-14*(1+cmplx.Abs(wh)) || cmplx.Abs(tt[k*c.ry+l]-wt) > 1e-14*(1+cmplx.Abs(wt)) {
					t.Errorf("(%d, %d): %v and %v, want %v and %v", k, l, h[k*c.ry+l], tt[k*c.ry+l], wh, wt)
				}
			}
		}
	}
	h, _ := filters.Products(x, 3, x, 3, cols)
	for k := range 3 {
		for l := range 3 {
			if h[k*3+l] != cmplx.Conj(h[l*3+k]) {
				t.Errorf("X·Xᴴ (%d, %d) = %v, (%d, %d) = %v: not Hermitian", k, l, h[k*3+l], l, k, h[l*3+k])
			}
		}
	}
}
