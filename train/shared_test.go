package train

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// sharedKernels returns the kernels of channels with poles exp(Δₕ·Aₙ) (modes shared by each
// group, channel h in group h mod groups) and random residues, as S4D's layer with n_ssm
// SSMs makes them: S4D-Lin modes (A = −1/2 + iπn), Δ log-uniform in [1e-3, 1e-1].
func sharedKernels(rng *rand.Rand, groups, modes, channels, length int) ([][]float64, SharedModes) {
	return sharedKernelsDisc(rng, groups, modes, channels, length, false)
}

// sharedKernelsDisc is sharedKernels with the bilinear transform's poles where bilinear.
func sharedKernelsDisc(rng *rand.Rand, groups, modes, channels, length int, bilinear bool) ([][]float64, SharedModes) {
	m := SharedModes{A: make([][]complex128, groups), Bilinear: bilinear}
	for g := range groups {
		for n := range modes {
			m.A[g] = append(m.A[g], complex(-0.5*(1+0.2*float64(g)), math.Pi*float64(n)))
		}
	}
	var out [][]float64
	for h := range channels {
		m.Group = append(m.Group, h%groups)
		m.Dt = append(m.Dt, math.Exp(math.Log(1e-3)+rng.Float64()*math.Log(100)))
		y := make([]float64, length)
		y[0] = rng.NormFloat64()
		for _, a := range m.A[h%groups] {
			l := sharedPoleOf(a, m.Dt[h], bilinear)
			r := complex(rng.NormFloat64(), rng.NormFloat64())
			p := complex(1, 0)
			for t := 1; t < length; t++ {
				y[t] += 2 * real(r*p)
				p *= l
			}
		}
		out = append(out, y)
	}
	return out, m
}

// sharedPoleOf is the pole of mode a at step dt: e^{dt·a}, or bilinear (1 + x/2)/(1 − x/2).
func sharedPoleOf(a complex128, dt float64, bilinear bool) complex128 {
	x := complex(dt, 0) * a
	if bilinear {
		return (1 + x/2) / (1 - x/2)
	}
	return cmplx.Exp(x)
}

// sharedImpulse is channel h's kernel from a SharedFit's modes and residues.
func sharedImpulse(f *SharedFit, h int, h0 float64, length int) []float64 {
	y := make([]float64, length)
	y[0] = h0
	for n, a := range f.Modes.A[f.Modes.Group[h]] {
		l := sharedPoleOf(a, f.Modes.Dt[h], f.Modes.Bilinear)
		p := complex(1, 0)
		for t := 1; t < length; t++ {
			y[t] += 2 * real(f.Residues[h][n]*p)
			p *= l
		}
	}
	return y
}

// TestFitSharedRecovers: kernels made by shared modes, under zero-order hold or the bilinear
// transform, are fitted to rounding from a start 5% off in A and 10% off in Δ, and the
// result's modes, steps and residues are its filters.
func TestFitSharedRecovers(t *testing.T) {
	for _, bilinear := range []bool{false, true} {
		t.Run(map[bool]string{false: "zoh", true: "bilinear"}[bilinear], func(t *testing.T) { testFitSharedRecovers(t, bilinear) })
	}
}

func testFitSharedRecovers(t *testing.T, bilinear bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	ys, truth := sharedKernelsDisc(rng, 2, 4, 6, 512, bilinear)
	start := SharedModes{Group: truth.Group, A: make([][]complex128, 2), Bilinear: bilinear}
	for g, a := range truth.A {
		for _, l := range a {
			start.A[g] = append(start.A[g], complex(real(l)*(1+0.05*rng.NormFloat64()), imag(l)*(1+0.05*rng.NormFloat64())+0.05))
		}
	}
	for _, dt := range truth.Dt {
		start.Dt = append(start.Dt, dt*(1+0.1*rng.NormFloat64()))
	}
	first, err := FitShared(t.Context(), ys, start, 4, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := FitShared(t.Context(), ys, start, 4, 200, nil)
	if err != nil {
		t.Fatal(err)
	}
	for h, e := range f.RelErrors {
		if !(e < 1e-8) {
			t.Errorf("channel %d: relative error %.3g (the start's %.3g), want below 1e-8", h, e, first.RelErrors[h])
		}
		if d := filters.RelDiff(f.Filters[h].Impulse(512), sharedImpulse(f, h, ys[h][0], 512)); !(d < 1e-12) {
			t.Errorf("channel %d: the filter and the modes with their residues differ by %.3g", h, d)
		}
		for _, p := range f.Filters[h].Poles {
			if !(cmplx.Abs(p) < 1) {
				t.Errorf("channel %d: pole %v outside the unit circle", h, p)
			}
		}
	}
	// Δ·A is what the kernels determine (A/s with Δ·s is the same filter).
	for h, dt := range f.Modes.Dt {
		for n, a := range f.Modes.A[f.Modes.Group[h]] {
			got := sharedPoleOf(a, dt, bilinear)
			if d := cmplx.Abs(got - sharedPoleOf(truth.A[truth.Group[h]][n], truth.Dt[h], bilinear)); !(d < 1e-6) {
				t.Errorf("channel %d, mode %d: pole %v, %.3g from the true one", h, n, got, d)
			}
		}
	}
}

// TestFitSharedTruncates: twelve shared modes cut to four (the four of most energy) and
// moved together lower the total squared error of the group's channels (by a quarter on these
// random kernels, whose twelve modes are about equally strong).
func TestFitSharedTruncates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ys, truth := sharedKernels(rng, 1, 12, 8, 1024)
	total := func(f *SharedFit) float64 {
		s := 0.0
		for h, e := range f.RelErrors {
			s += e * e * sumSquares(ys[h])
		}
		return s
	}
	cut, err := FitShared(t.Context(), ys, truth, 4, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var told [][2]int
	fit, err := FitShared(t.Context(), ys, truth, 4, 100, func(done, total int) { told = append(told, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	// Progress rises to what was planned (two starts of 20 iterations, then 80 more).
	for i, c := range told {
		if c[1] != 120 || c[0] > c[1] || i > 0 && c[0] <= told[i-1][0] {
			t.Fatalf("progress %v", told)
		}
	}
	if len(told) == 0 || told[len(told)-1][0] != 120 {
		t.Errorf("progress ends at %v, want 120 of 120", told)
	}
	if a, b := total(cut), total(fit); !(b < 0.9*a) {
		t.Errorf("total squared error %.4g after the fit, %.4g for the cut: want below 0.9 of it", b, a)
	}
	if len(fit.Modes.A[0]) != 4 {
		t.Errorf("%d modes, want 4", len(fit.Modes.A[0]))
	}
}

// TestFitSharedRefuses: modes that do not decay, a step that is not positive and groups that
// do not cover the channels are refused before any fit.
func TestFitSharedRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ys, m := sharedKernels(rng, 1, 2, 2, 64)
	bad := []SharedModes{
		{Group: m.Group, Dt: m.Dt, A: [][]complex128{{complex(0.1, 1), -1}}},
		{Group: m.Group, Dt: []float64{1e-2, 0}, A: m.A},
		{Group: []int{0, 1}, Dt: m.Dt, A: m.A},
	}
	for i, b := range bad {
		if _, err := FitShared(t.Context(), ys, b, 2, 10, nil); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	if _, err := FitShared(t.Context(), ys, m, 3, 10, nil); err == nil {
		t.Error("3 modes of 2: no error")
	}
}

// TestSharedSolveDamped: the damped Gauss–Newton system solved through its structure (the
// channels' δ block eliminated first) is the dense Cholesky solution, to rounding.
func TestSharedSolveDamped(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ys, m := sharedKernels(rng, 2, 3, 7, 256)
	p := newSharedProblem(ys, m)
	defer p.release()
	x := p.params(m)
	np := len(x)
	h, g := mat.NewSymDense(np, nil), make([]float64, np)
	p.sse(x)
	p.normal(x, h, g)
	for _, mu := range []float64{1e-4, 1e-2, 1} { // one direction, Δ·s with A/s, is flat: μ = 0 is singular
		damped := mat.NewSymDense(np, nil)
		damped.CopySym(h)
		maxDiag := 0.0
		for i := range np {
			maxDiag = math.Max(maxDiag, h.At(i, i))
		}
		for i := range np { // as levenbergMarquardt damps (a real mode's θ column is 0)
			damped.SetSym(i, i, h.At(i, i)+mu*(h.At(i, i)+1e-12*maxDiag))
		}
		dense, structured := make([]float64, np), make([]float64, np)
		for i := range g {
			dense[i], structured[i] = -g[i], -g[i]
		}
		copyD := mat.NewSymDense(np, nil)
		copyD.CopySym(damped)
		if !choleskySolve(copyD.RawSymmetric().Data, np, dense) || !p.solveDamped(damped, structured) {
			t.Fatalf("μ = %g: a solve failed", mu)
		}
		diff, size := 0.0, 0.0
		for i := range dense {
			diff = math.Max(diff, math.Abs(dense[i]-structured[i]))
			size = math.Max(size, math.Abs(dense[i]))
		}
		if !(diff <= 1e-8*size) {
			t.Errorf("μ = %g: structured and dense steps differ by %.3g (of %.3g)", mu, diff, size)
		}
	}
}

// TestFitSharedZeroChannels: channels whose kernels are zero at every sample take no part in
// the shared modes (the fit of the others is the one without them, to the bit), and are
// fitted by those modes with residues +0 (the zero filter's, zeroFit's; a least squares gives
// −0), error 0 (filters.RelDiff of a zero target: the response's norm), nothing NaN. A bank
// of zero kernels alone keeps its start's modes, each channel's error 0.
func TestFitSharedZeroChannels(t *testing.T) {
	for _, bilinear := range []bool{false, true} {
		t.Run(map[bool]string{false: "zoh", true: "bilinear"}[bilinear], func(t *testing.T) { testFitSharedZeroChannels(t, bilinear) })
	}
}

func testFitSharedZeroChannels(t *testing.T, bilinear bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	ys, truth := sharedKernelsDisc(rng, 2, 6, 8, 512, bilinear)
	zero := map[int]bool{1: true, 4: true, 5: true}
	var rest [][]float64
	restModes := SharedModes{A: truth.A, Bilinear: bilinear}
	for h := range ys {
		if zero[h] {
			ys[h] = make([]float64, len(ys[h]))
			continue
		}
		rest = append(rest, ys[h])
		restModes.Group = append(restModes.Group, truth.Group[h])
		restModes.Dt = append(restModes.Dt, truth.Dt[h])
	}
	fit, err := FitShared(t.Context(), ys, truth, 3, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := FitShared(t.Context(), rest, restModes, 3, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	for g, a := range fit.Modes.A {
		if !slices.Equal(a, alone.Modes.A[g]) {
			t.Errorf("group %d: modes %v with the zero channels, %v without", g, a, alone.Modes.A[g])
		}
	}
	plusZero := func(rs []complex128) bool {
		for _, r := range rs {
			if real(r) != 0 || imag(r) != 0 || math.Signbit(real(r)) || math.Signbit(imag(r)) {
				return false
			}
		}
		return true
	}
	k := 0
	for h := range ys {
		if zero[h] {
			if fit.RelErrors[h] != 0 || !plusZero(fit.Residues[h]) || fit.Filters[h].H0 != 0 {
				t.Errorf("zero channel %d: error %g, residues %v, h0 %g; want 0 and +0 each", h, fit.RelErrors[h], fit.Residues[h], fit.Filters[h].H0)
			}
			continue
		}
		if fit.RelErrors[h] != alone.RelErrors[k] || fit.Modes.Dt[h] != alone.Modes.Dt[k] || !slices.Equal(fit.Residues[h], alone.Residues[k]) {
			t.Errorf("channel %d: error %g, step %g with the zero channels; %g, %g without", h, fit.RelErrors[h], fit.Modes.Dt[h], alone.RelErrors[k], alone.Modes.Dt[k])
		}
		k++
	}

	for h := range ys {
		ys[h] = make([]float64, len(ys[h]))
	}
	fit, err = FitShared(t.Context(), ys, truth, 3, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	for h := range ys {
		if fit.RelErrors[h] != 0 || !plusZero(fit.Residues[h]) || !(fit.Modes.Dt[h] > 0) {
			t.Errorf("all zero, channel %d: error %g, residues %v, step %g; want 0, +0 each", h, fit.RelErrors[h], fit.Residues[h], fit.Modes.Dt[h])
		}
	}
	for g, a := range fit.Modes.A {
		for _, l := range a {
			if !(real(l) < 0) || math.IsNaN(imag(l)) {
				t.Errorf("all zero, group %d: mode %v", g, l)
			}
		}
	}
}
