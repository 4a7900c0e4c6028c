package filters

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/internal/numtest"
)

// orthoTol: expm of a skew matrix and products of reflections are orthogonal to a few
// hundred eps at these sizes.
const orthoTol = 1e-12

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func TestRotRNNHeads(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var heads []RotRNNHead
	for h, k := range []int{4, 6} {
		m := make([][]float64, k)
		for i := range m {
			m[i] = randVec(rng, k)
		}
		th := make([]float64, k/2)
		for i := range th {
			th[i] = rng.Float64() * math.Pi
		}
		heads = append(heads, RotRNNHead{M: m, Gamma: 0.9 - 0.1*float64(h), Theta: th})
	}
	f, err := NewRotationFromRotRNN(heads, randVec(rng, 10), randVec(rng, 10), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if o := f.Orthogonality(); o > orthoTol {
		t.Errorf("P is orthogonal to %.3g, want ≤ %g", o, orthoTol)
	}
	// Eigenvalues of the assembled A are γ_h·e^{±iθ}.
	var want []complex128
	for _, h := range heads {
		for _, th := range h.Theta {
			want = append(want, cmplx.Rect(h.Gamma, th), cmplx.Rect(h.Gamma, -th))
		}
	}
	got, err := Poles(f.Dense())
	if err != nil {
		t.Fatal(err)
	}
	if e := numtest.RootsRelDist(got, want); e > 1e-12 {
		t.Errorf("eigenvalues of A differ from γe^{±iθ} by %.3g", e)
	}
	// Heads do not mix: A is block diagonal.
	a := f.Dense().A
	for i := 0; i < 4; i++ {
		for j := 4; j < 10; j++ {
			if a.At(i, j) != 0 || a.At(j, i) != 0 {
				t.Fatalf("A[%d][%d] couples heads", i, j)
			}
		}
	}
	checkHonest(t, "rotrnn", f)
}

func TestHouseholderProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := 6
	var us [][]float64
	for k := n; k >= 1; k-- {
		us = append(us, randVec(rng, k))
	}
	us[n-1] = []float64{-1} // eq. 7's sign
	blocks := []RotationBlock{{0.9, 0.3}, {0.7, 2}}
	f, err := NewRotationFromHouseholder(us, blocks, []float64{0.5, -0.2}, randVec(rng, n), randVec(rng, n), 0)
	if err != nil {
		t.Fatal(err)
	}
	if o := f.Orthogonality(); o > orthoTol {
		t.Errorf("Householder product orthogonal to %.3g", o)
	}
	// Compare with the explicit product H_n(u_n)·…·H_1(u_1) of eq. 6–8.
	want := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		want.Set(i, i, 1)
	}
	for idx, u := range us {
		k := n - idx
		h := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			h.Set(i, i, 1)
		}
		if k == 1 {
			h.Set(n-1, n-1, math.Copysign(1, u[0]))
		} else {
			nu := 0.0
			for _, x := range u {
				nu += x * x
			}
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					h.Set(n-k+i, n-k+j, h.At(n-k+i, n-k+j)-2*u[i]*u[j]/nu)
				}
			}
		}
		var next mat.Dense
		next.Mul(want, h)
		want = &next
	}
	if !mat.EqualApprox(f.P, want, 1e-13) {
		t.Errorf("P differs from the explicit product of reflections")
	}
	checkHonest(t, "householder", f)
}

func TestDenseToRotationBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	// Normal A (a rotation form behind an orthogonal basis, with a repeated pair): P must be
	// orthogonal.
	q, _ := NewRotationFromHouseholder([][]float64{randVec(rng, 5), randVec(rng, 4), randVec(rng, 3)},
		[]RotationBlock{{0.8, 1}, {0.8, 1}}, []float64{-0.3}, randVec(rng, 5), randVec(rng, 5), 0.1)
	r, rep, err := ToRotation(q.Dense())
	if err != nil {
		t.Fatal(err)
	}
	if o := r.Orthogonality(); o > orthoTol {
		t.Errorf("normal A gave P orthogonal only to %.3g", o)
	}
	if rep.RelError > 1e-13 || rep.Condition != 1 {
		t.Errorf("normal A: %+v", rep)
	}
	// Non-normal A: a general basis with its condition number reported.
	d := randomStable(rng, 8, 0.9)
	r, rep, err = ToRotation(d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Orthogonality() < 1e-6 || rep.Condition <= 1 || math.Abs(rep.Condition-r.Condition()) > 1e-9*rep.Condition {
		t.Errorf("non-normal A: orthogonality %.3g, report %+v", r.Orthogonality(), rep)
	}
	// Blocks follow the package's pole order and are ρR(θ) with θ ∈ (0, π).
	for i, b := range r.Blocks {
		if b.Angle <= 0 || b.Angle >= math.Pi || (i > 0 && b.Radius > r.Blocks[i-1].Radius) {
			t.Errorf("block %d: %+v", i, b)
		}
	}
}

// s4Kernel runs the S4 recurrence x[t] = A x[t-1] + B u[t], y[t] = C x[t] + D u[t] on an impulse.
func s4Kernel(d *Dense, length int) []float64 {
	n := d.Order()
	x := make([]float64, n)
	h := make([]float64, length)
	for t := 0; t < length; t++ {
		next := make([]float64, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				next[i] += d.A.At(i, j) * x[j]
			}
			if t == 0 {
				next[i] += d.B[i]
			}
		}
		x = next
		h[t] = dot(d.C, x)
		if t == 0 {
			h[t] += d.D
		}
	}
	return h
}

func TestFromS4(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	orig := randomStable(rng, 6, 0.8)
	want := s4Kernel(orig, 64)
	for _, form := range []Form{FormDense, FormDiagonal, FormRotation, FormCompanion} {
		f, _, err := Convert(orig, form)
		if err != nil {
			t.Fatal(err)
		}
		// Read f's parameters as an S4-convention system: its kernel must be the S4 kernel of
		// the same parameters, which for the dense form is want.
		d, _, _ := ToDense(f)
		s4, err := FromS4(f)
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		if e := relErr(s4.Impulse(64), s4Kernel(d, 64)); e > 1e-12 {
			t.Errorf("%s: FromS4 kernel differs by %.3g", form, e)
		}
	}
	s4, _ := FromS4(orig)
	if e := relErr(s4.Impulse(64), want); e > 1e-13 {
		t.Errorf("dense FromS4 differs from the S4 recurrence by %.3g", e)
	}
	// Both companion variants keep their form (a bank of them stays one form).
	for _, observable := range []bool{false, true} {
		c, _, _ := ToCompanion(orig)
		c.Observable = observable
		s4, err := FromS4(c)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := s4.(*Companion); !ok || got.Observable != observable {
			t.Fatalf("observable=%v: FromS4 gave %T", observable, s4)
		}
		if e := relErr(s4.Impulse(64), s4Kernel(c.Dense(), 64)); e > 1e-12 {
			t.Errorf("observable=%v: kernel differs by %.3g", observable, e)
		}
	}
}

// TestPrepareFreqResponse: a dense and a rotation form's prepared FreqResponse (A's
// Hessenberg reduction, or B and C in the block coordinates, done once) gives FreqResponse's
// values bit for bit, call after call, and keeps the numbers it was prepared with.
func TestPrepareFreqResponse(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 21))
	d := randomStable(rng, 12, 0.95)
	r, _, err := ToRotation(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []FreqPreparer{d, r, &Dense{D: 0.5}} {
		respond := f.PrepareFreqResponse()
		for range 3 {
			omega := []float64{rng.Float64() * math.Pi, 0, math.Pi, rng.Float64() * math.Pi}
			got, want := respond(omega), f.FreqResponse(omega)
			if !slices.Equal(got, want) {
				t.Errorf("%s: prepared %v, FreqResponse %v", f.Form(), got, want)
			}
		}
	}
	respond, before := d.PrepareFreqResponse(), d.FreqResponse([]float64{1})
	d.D += 1
	if got := respond([]float64{1}); !slices.Equal(got, before) {
		t.Errorf("after D changed: %v, want the prepared %v", got, before)
	}
}
