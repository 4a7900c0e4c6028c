package filters

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"
)

// reSum returns h[0] = h0, h[t] = Re Σ rₙ pₙ^(t-1), summed directly in complex arithmetic.
func reSum(poles, res []complex128, h0 float64, n int) []float64 {
	h := make([]float64, n)
	h[0] = h0
	for t := 1; t < n; t++ {
		var s complex128
		for i, p := range poles {
			s += res[i] * cmplx.Pow(p, complex(float64(t-1), 0))
		}
		h[t] = real(s)
	}
	return h
}

func TestNewDiagonalRealPart(t *testing.T) {
	// realPartTol: the direct sum's cmplx.Pow and the recurrence of Impulse differ by a few
	// ε per step over 64 steps.
	const realPartTol = 1e-13
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 1 + rng.IntN(8)
		poles := make([]complex128, n)
		res := make([]complex128, n)
		for i := range poles {
			poles[i] = cmplx.Rect(0.2+0.75*rng.Float64(), math.Pi*(2*rng.Float64()-1))
			res[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		// A pole real up to rounding, as e^{Δtλ} gives at Δt·Im λ = π, with a complex residue.
		poles[0] = complex(-0.9, 1.2e-16)
		if trial%2 == 1 {
			poles = append(poles, poles[1]) // repeated, as StripedHyena repeats poles
			res = append(res, complex(rng.NormFloat64(), 0))
		}
		f, err := NewDiagonalRealPart(poles, res, 0.5)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if f.Poles[0] != -0.9 || f.Residues[0] != complex(real(res[0]), 0) {
			t.Errorf("trial %d: pole 0 is %v with residue %v, want one real pole -0.9 with residue Re r = %v", trial, f.Poles[0], f.Residues[0], real(res[0]))
		}
		if e := relErr(f.Impulse(64), reSum(poles, res, 0.5, 64)); e > realPartTol {
			t.Errorf("trial %d: impulse response off Re Σ r·p^(t-1) by %.3g", trial, e)
		}
	}
	if _, err := NewDiagonalRealPart([]complex128{0.5}, nil, 0); err == nil {
		t.Error("a pole without a residue was accepted")
	}
}

// TestZOHRealPoleMerge: under the zero-order hold a continuous pair λ, λ̄ with Δt·Im λ = kπ
// lands on one real discrete pole; the result is a valid filter with the continuous kernel
// 2·Re(r·(e^{Δtλ}-1)/λ·e^{Δtλ(t-1)}).
func TestZOHRealPoleMerge(t *testing.T) {
	const mergeTol = 1e-13
	for _, c := range []struct {
		dt float64
		k  float64
	}{{0.1, 19}, {1, 1}, {0.25, 4}, {0.01, 100}} {
		l := complex(-0.5, math.Pi*c.k/c.dt)
		r := complex(0.3, -0.7)
		sys, err := NewDiagonal([]complex128{l, cmplx.Conj(l), -2}, []complex128{r, cmplx.Conj(r), 0.4}, 0)
		if err != nil {
			t.Fatal(err)
		}
		f, err := (&Continuous{System: sys, Dt: c.dt, Method: ZOH}).Discretize()
		if err != nil {
			t.Fatalf("dt %g, Im λ·Δt = %gπ: %v", c.dt, c.k, err)
		}
		d := f.(*Diagonal)
		if d.Order() != 2 {
			t.Errorf("dt %g: order %d, want 2 (the pair merged into one real pole, and the real mode)", c.dt, d.Order())
		}
		x := complex(c.dt, 0) * l
		want := reSum([]complex128{cmplx.Exp(x), cmplx.Exp(complex(-2*c.dt, 0))},
			[]complex128{2 * r * (cmplx.Exp(x) - 1) / l, complex(0.4*(math.Exp(-2*c.dt)-1)/-2, 0)}, 0, 50)
		if e := relErr(d.Impulse(50), want); e > mergeTol {
			t.Errorf("dt %g: impulse response off the continuous kernel by %.3g", c.dt, e)
		}
	}
}

// TestHalfModes: HalfModes inverts NewDiagonalRealPart.
func TestHalfModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10 {
		n := 1 + rng.IntN(6)
		poles := make([]complex128, n)
		res := make([]complex128, n)
		for i := range poles {
			poles[i] = cmplx.Rect(0.2+0.7*rng.Float64(), math.Pi*rng.Float64())
			res[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		poles[0], res[0] = -0.5, 0.25
		f, err := NewDiagonalRealPart(poles, res, 1)
		if err != nil {
			t.Fatal(err)
		}
		p, r := HalfModes(f)
		g, err := NewDiagonalRealPart(p, r, 1)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(g.Impulse(40), f.Impulse(40)); e > 1e-14 || len(p) != n {
			t.Errorf("%d half modes (want %d); round trip off by %.3g", len(p), n, e)
		}
	}
}

// TestValidHalfModes: ValidHalfModes gives Validate's error, or HalfModes's halves, from one
// pairing: on valid sets (real, complex, the pair 1e-13 ± 1e-13i, 512 real poles) the same
// numbers bit for bit, and on a set without a conjugate, a real pole with a complex residue
// or mismatched lengths the same error.
func TestValidHalfModes(t *testing.T) {
	real512 := &Diagonal{}
	for k := range 512 {
		real512.Poles = append(real512.Poles, complex(0.999-0.001*float64(k), 0))
		real512.Residues = append(real512.Residues, complex(float64(k%7)-3, 0))
	}
	q := complex(1e-13, 1e-13)
	for _, f := range []*Diagonal{
		real512,
		{Poles: []complex128{0.5, 0.3 + 0.4i, 0.3 - 0.4i}, Residues: []complex128{1, 2 - 1i, 2 + 1i}},
		{Poles: []complex128{q, cmplx.Conj(q)}, Residues: []complex128{1 + 2i, 1 - 2i}},
		{Poles: []complex128{0.3 + 0.4i}, Residues: []complex128{1}},
		{Poles: []complex128{0.5}, Residues: []complex128{1i}},
		{Poles: []complex128{0.5}, Residues: nil},
	} {
		p, r, err := ValidHalfModes(f)
		if want := f.Validate(); (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
			t.Errorf("%v: error %v, Validate's %v", f.Poles[:min(3, len(f.Poles))], err, want)
			continue
		}
		if err != nil {
			continue
		}
		wp, wr := HalfModes(f)
		if !slices.Equal(p, wp) || !slices.Equal(r, wr) {
			t.Errorf("%v: halves %v %v, HalfModes's %v %v", f.Poles[:min(3, len(f.Poles))], p, r, wp, wr)
		}
	}
}
