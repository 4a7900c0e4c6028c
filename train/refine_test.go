package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// fdStep is the step of the central differences that check the Jacobians: near the cube root
// of the machine epsilon times a parameter's scale, where truncation and rounding balance.
const fdStep = 1e-6

// centralDiff fills kp and km with kernel at p ± fdStep along parameter j, for the central
// difference (kp − km)/(2·fdStep).
func centralDiff(kernel func(q, out []float64), p []float64, j int, kp, km []float64) {
	q := append([]float64(nil), p...)
	q[j] = p[j] + fdStep
	kernel(q, kp)
	q[j] = p[j] - fdStep
	kernel(q, km)
}

// TestRefineNormalEquations checks the FFT-built Gauss–Newton system against JᵀJ and Jᵀe from
// a central-difference Jacobian of the circular kernel.
func TestRefineNormalEquations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, l := 5, 64
	m := &rtfModel{n: n, length: l}
	p := make([]float64, m.numParams())
	// A stable denominator: a product of (1 - 0.6 z⁻¹)-like factors via random small a.
	for i := range p {
		p[i] = 0.15 * rng.NormFloat64()
	}
	if !m.within(p, 0.95) {
		t.Fatal("test denominator not stable")
	}
	y := make([]float64, l)
	for i := range y {
		y[i] = rng.NormFloat64() * math.Exp(-0.1*float64(i))
	}
	w := newRefineWork(m)
	w.sse(p, y)
	e := append([]float64(nil), w.e...)
	h := mat.NewSymDense(len(p), nil)
	g := make([]float64, len(p))
	w.normal(h, g)

	jac := mat.NewDense(l, len(p), nil)
	kp, km := make([]float64, l), make([]float64, l)
	ws := m.newWorkspace()
	for j := range p {
		centralDiff(func(q, out []float64) { m.kernel(ws, q, out) }, p, j, kp, km)
		for i := range kp {
			jac.Set(i, j, (kp[i]-km[i])/(2*fdStep))
		}
	}
	var jtj mat.Dense
	jtj.Mul(jac.T(), jac)
	var jte mat.VecDense
	jte.MulVec(jac.T(), mat.NewVecDense(l, e))
	scale := mat.Norm(&jtj, math.Inf(1))
	for i := range p {
		for j := range p {
			if d := math.Abs(h.At(i, j) - jtj.At(i, j)); d > 1e-7*scale {
				t.Errorf("JᵀJ[%d][%d] = %.10g, finite differences %.10g", i, j, h.At(i, j), jtj.At(i, j))
			}
		}
		if d := math.Abs(g[i] - jte.AtVec(i)); d > 1e-7*math.Max(1, mat.Norm(&jte, math.Inf(1))) {
			t.Errorf("Jᵀe[%d] = %.10g, finite differences %.10g", i, g[i], jte.AtVec(i))
		}
	}
}

// TestRefineReachesExactFit starts the refinement near an exactly representable target and
// expects it to recover the target to near machine precision, which Adam does not.
func TestRefineReachesExactFit(t *testing.T) {
	n, l := 6, 256
	m := &rtfModel{n: n, length: l}
	truth := []float64{-1.2, 0.9, -0.5, 0.3, -0.1, 0.02, 0.5, -0.3, 0.2, 0.1, -0.05, 0.01, 0.7}
	if !m.within(truth, 0.99) {
		t.Fatal("truth not stable")
	}
	y := make([]float64, l)
	m.kernel(m.newWorkspace(), truth, y)
	p := append([]float64(nil), truth...)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range p {
		p[i] += 0.02 * rng.NormFloat64()
	}
	w := newRefineWork(m)
	f0 := w.sse(p, y)
	f, err := refineRTF(context.Background(), w, p, y, 0.9999, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.kernel(w.ws, p, w.k)
	if rel := filters.RelDiff(y, w.k); rel > 1e-10 {
		t.Errorf("refined relative error %.3g (start ½‖e‖² %.3g, end %.3g), want ≤ 1e-10", rel, f0, f)
	}
	if !m.within(p, 0.9999) {
		t.Error("the refinement left the radius bound")
	}
}

func TestRefineCancels(t *testing.T) {
	m := &rtfModel{n: 4, length: 128}
	y := make([]float64, 128)
	for i := range y {
		y[i] = math.Exp(-0.05 * float64(i))
	}
	p := make([]float64, m.numParams())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := refineRTF(ctx, newRefineWork(m), p, y, 0.99, 50, nil); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestRunRefinement checks the refinement inside a job: it never does worse than the
// optimiser alone, an exactly representable order-6 IIR stays exact to near machine
// precision, every result keeps inside the radius bound, and the job stays deterministic.
func TestRunRefinement(t *testing.T) {
	fams := targetFamilies(512, 3, 5)
	for _, name := range []string{"iir", "decaying-noise", "windowed-sinc"} {
		spec := withOrder(DefaultSpec(), 6)
		plain := spec
		plain.Refine = 0
		job := Job{Spec: spec, Targets: fams[name]}
		refined, err := Run(context.Background(), job, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Run(context.Background(), job, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		base, err := Run(context.Background(), Job{Spec: plain, Targets: fams[name]}, CPU{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for ch, c := range refined.Report.Channels {
			// Below 1e-12 both are rounding: the refinement ranks kernels, the report measures
			// the deployed filters, and they differ in the last digits.
			if c.RelError > base.Report.Channels[ch].RelError*(1+1e-9)+1e-12 {
				t.Errorf("%s channel %d: refined %.3g, optimiser alone %.3g", name, ch, c.RelError, base.Report.Channels[ch].RelError)
			}
			if rmax := AutoRadius(512); !c.Stable || c.MaxPoleRadius >= rmax {
				t.Errorf("%s channel %d: pole radius %.6g outside the bound %.6g", name, ch, c.MaxPoleRadius, rmax)
			}
			if c.RelError != again.Report.Channels[ch].RelError {
				t.Errorf("%s channel %d: two runs gave %.17g and %.17g", name, ch, c.RelError, again.Report.Channels[ch].RelError)
			}
			if name == "iir" && c.RelError > 1e-9 {
				t.Errorf("iir channel %d: refined relative error %.3g, want ≤ 1e-9 for an exact order-6 target (optimiser alone %.3g)", ch, c.RelError, base.Report.Channels[ch].RelError)
			}
		}
	}
}

// BenchmarkRefineIteration times Levenberg–Marquardt iterations on one RTF channel
// (n = 64, L = 1024, decaying noise): per op, one refineRTF run of 20 iterations.
func BenchmarkRefineIteration(b *testing.B) {
	y := targetFamilies(1024, 1, 1)["decaying-noise"][0]
	m := &rtfModel{n: 64, length: 1024}
	w := newRefineWork(m)
	start := ringStart(m, y, channelRNG(1, 0))
	p := make([]float64, len(start))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(p, start)
		if _, err := refineRTF(context.Background(), w, p, y, 0.9999, 20, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCholeskySolve checks the hand-written factorisation against gonum's on random SPD
// matrices (only the upper triangle is passed, as mat.SymDense holds it) and its refusal of
// an indefinite one.
func TestCholeskySolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 2, 5, 33, 129} {
		a := randomSPD(rng, n)
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		var chol mat.Cholesky
		if !chol.Factorize(a) {
			t.Fatal("gonum: not positive definite")
		}
		var want mat.VecDense
		if err := chol.SolveVecTo(&want, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
			t.Fatal(err)
		}
		raw := append([]float64(nil), a.RawSymmetric().Data...)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				raw[i*n+j] = math.NaN() // the lower triangle must not be read
			}
		}
		x := append([]float64(nil), b...)
		if !choleskySolve(raw, n, x) {
			t.Fatalf("n=%d: refused a positive definite matrix", n)
		}
		if e := filters.RelDiff(want.RawVector().Data, x); e > 1e-12 {
			t.Errorf("n=%d: relative difference from gonum %.3g", n, e)
		}
	}
	indefinite := []float64{1, 2, 2, 1} // eigenvalues 3 and -1
	if choleskySolve(indefinite, 2, []float64{1, 1}) {
		t.Error("accepted an indefinite matrix")
	}
}

// randomSPD returns G·Gᵀ + n·I for G standard normal: symmetric positive definite, and well
// conditioned.
func randomSPD(rng *rand.Rand, n int) *mat.SymDense {
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	a := mat.NewSymDense(n, nil)
	a.SymOuterK(1, g)
	for i := 0; i < n; i++ {
		a.SetSym(i, i, a.At(i, i)+float64(n))
	}
	return a
}

// BenchmarkCholesky times one factorisation and solve at the size of an n = 64 refinement.
func BenchmarkCholesky(b *testing.B) {
	const n = 129
	a := randomSPD(rand.New(rand.NewPCG(1, 1)), n)
	work, x := make([]float64, n*n), make([]float64, n)
	for b.Loop() {
		copy(work, a.RawSymmetric().Data)
		for i := range x {
			x[i] = 1
		}
		if !choleskySolve(work, n, x) {
			b.Fatal("not positive definite")
		}
	}
}

// TestRefitNumerator: for the true denominator of a representable target, the refit recovers
// the numerator; with a perturbed denominator it still returns the least-squares optimum,
// which no perturbation of it beats.
func TestRefitNumerator(t *testing.T) {
	a, b := []float64{-1.2, 0.72, -0.1}, []float64{0.5, -0.3, 0.2}
	tf, err := filters.NewTransferFunction(a, b, 0.4)
	if err != nil {
		t.Fatal(err)
	}
	y := tf.Impulse(256)
	got, err := refitNumerator(a, y)
	if err != nil {
		t.Fatal(err)
	}
	if e := filters.RelDiff(b, got); e > 1e-12 {
		t.Errorf("exact denominator: b = %v, want %v (relative error %.3g)", got, b, e)
	}
	off := []float64{-1.19, 0.715, -0.1}
	ls, err := refitNumerator(off, y)
	if err != nil {
		t.Fatal(err)
	}
	sse := func(bb []float64) float64 {
		g, err := filters.NewTransferFunction(off, bb, y[0])
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i, v := range g.Impulse(len(y)) {
			s += (v - y[i]) * (v - y[i])
		}
		return s
	}
	best := sse(ls)
	for j := range ls {
		for _, d := range []float64{-1e-4, 1e-4} {
			q := append([]float64(nil), ls...)
			q[j] += d
			if s := sse(q); s < best {
				t.Errorf("perturbing b[%d] by %g lowers the error: %.6g < %.6g", j, d, s, best)
			}
		}
	}
	if _, err := refitNumerator(a, y[:3]); err == nil {
		t.Error("3 samples for order 3: no error")
	}
}

// BenchmarkRefitNumerator times the deployment refit at n = 64, L = 1024.
func BenchmarkRefitNumerator(b *testing.B) {
	y := targetFamilies(1024, 1, 1)["decaying-noise"][0]
	m := &rtfModel{n: 64, length: 1024}
	a := ringStart(m, y, channelRNG(1, 0))[:64]
	for b.Loop() {
		if _, err := refitNumerator(a, y); err != nil {
			b.Fatal(err)
		}
	}
}
