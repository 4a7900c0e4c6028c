package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// normTol bounds relative differences between two computations of a norm (H2 by Gramian and
// by Σh², HSV by two realisations): backward-stable O(n³) solves of systems with modest
// condition, measured ≤ 1e-12.
const normTol = 1e-10

// TestH2Property checks H2² = Σ_t h[t]² on every form of random stable systems.
func TestH2Property(t *testing.T) {
	for _, n := range []int{1, 2, 7, 24, 64} {
		for k, rho := range []float64{0.5, 0.95, 0.995} {
			f := randomStable(rand.New(rand.NewPCG(uint64(n), 100+uint64(k))), n, rho)
			h := f.Impulse(LengthForRadius(rho, n, 1e-18))
			sum := 0.0
			for _, v := range h {
				sum += v * v
			}
			want := math.Sqrt(sum)
			for _, form := range filters.Forms {
				g, _, err := filters.Convert(f, form)
				if err != nil {
					t.Fatal(err)
				}
				got, err := H2(g)
				if err != nil {
					t.Fatalf("n=%d %s: %v", n, form, err)
				}
				if e := math.Abs(got-want) / want; e > normTol {
					t.Errorf("n=%d rho=%g %s: H2 = %.15g, (Σh²)^½ = %.15g (rel %.3g)", n, rho, form, got, want, e)
				}
			}
		}
	}
}

// TestNormsOverflow: a stable filter of gain beyond float64 has no finite H2 norm or Hankel
// singular values; each says so (a *NonFiniteError) instead of returning +Inf or NaN.
func TestNormsOverflow(t *testing.T) {
	huge, err := filters.NewDense([][]float64{{0.5}}, []float64{1e200}, []float64{1e200}, 0)
	if err != nil {
		t.Fatal(err)
	}
	diag, err := filters.NewDiagonal([]complex128{0.9}, []complex128{1.7e308}, 0) // H2 3.9e308
	if err != nil {
		t.Fatal(err)
	}
	var nf *NonFiniteError
	for _, f := range []filters.Filter{huge, diag} {
		if v, err := H2(f); !errors.As(err, &nf) || nf.Index != -1 {
			t.Errorf("%s: H2 = %v, %v; want a NonFiniteError", f.Form(), v, err)
		}
	}
	if hs, err := HankelSV(huge); !errors.As(err, &nf) || !strings.Contains(err.Error(), "beyond float64's range") {
		t.Errorf("HankelSV = %v, %v; want a NonFiniteError", hs, err)
	}
	if _, err := BalancedTruncation(huge, 1); !errors.As(err, &nf) {
		t.Errorf("BalancedTruncation: %v; want a NonFiniteError", err)
	}
}

func TestH2Edges(t *testing.T) {
	if v, err := H2(mustDense(t, nil, nil, nil, -2)); err != nil || v != 2 {
		t.Errorf("order 0: %v %v", v, err)
	}
	if v, err := H2(&filters.Diagonal{H0: -2}); err != nil || v != 2 {
		t.Errorf("order 0 diagonal: %v %v", v, err)
	}
	for _, f := range []filters.Filter{
		mustDense(t, [][]float64{{1.1, 0}, {0, 0.5}}, []float64{1, 1}, []float64{1, 1}, 0),
		mustDense(t, [][]float64{{0, -1}, {1, 0}}, []float64{1, 0}, []float64{1, 0}, 0), // poles ±i
	} {
		for _, form := range filters.Forms {
			g, _, err := filters.Convert(f, form)
			if err != nil {
				t.Fatal(err)
			}
			_, err = H2(g)
			var ue *UnstableError
			if !errors.As(err, &ue) || !errors.Is(err, ErrUnstable) || len(ue.Poles) == 0 {
				t.Errorf("%s: err = %v, want an UnstableError", form, err)
				continue
			}
			if cmplx.Abs(ue.Poles[0]) < 1-filters.MarginalTol {
				t.Errorf("%s: offending poles %v", form, ue.Poles)
			}
		}
	}
}

// TestGramianFactors checks Hammarling's factors against the Stein equations they solve: the
// residual of T·P·Tᵀ - P + B·Bᵀ (Tᵀ·Q·T - Q + Cᵀ·C) with P = S·Sᵀ, on dense (quasi-triangular)
// and modal (block-diagonal) T, with real and complex poles, for the filter's b and c and for
// B of 3 and of n + 2 columns.
func TestGramianFactors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var fs []filters.Filter
	for _, n := range []int{1, 2, 3, 6, 11} {
		fs = append(fs, randomStable(rng, n, 0.9))
	}
	modal, err := filters.NewDiagonal([]complex128{0.99i, -0.99i, 0.5 + 0.8i, 0.5 - 0.8i, -0.3}, []complex128{1 + 1i, 1 - 1i, 2i, -2i, 0.5}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fs = append(fs, modal)
	for _, f := range fs {
		sys, err := schurOf(f)
		if err != nil {
			t.Fatal(err)
		}
		n := sys.order()
		cs := complexSchur(sys.t, sys.blockDiag)
		for _, trans := range []bool{false, true} {
			for _, cols := range []int{1, 3, n + 2} {
				v := sys.b
				if trans {
					v = sys.c
				}
				if cols > 1 {
					v = make([]float64, n*cols)
					for i := range v {
						v[i] = rng.NormFloat64()
					}
				}
				s := cs.realFactor(v, cols, trans)
				var x mat.Dense
				x.Mul(s, s.T())
				var r, tmp mat.Dense
				if trans {
					tmp.Mul(sys.t.T(), &x)
					r.Mul(&tmp, sys.t)
				} else {
					tmp.Mul(sys.t, &x)
					r.Mul(&tmp, sys.t.T())
				}
				r.Sub(&r, &x)
				vm := mat.NewDense(n, cols, v)
				var w mat.Dense
				w.Mul(vm, vm.T())
				r.Add(&r, &w)
				if res := mat.Norm(&r, 1) / mat.Norm(&x, 1); res > 1e-14 {
					t.Errorf("%s n=%d trans=%v, %d columns: relative residual %.3g", f.Form(), n, trans, cols, res)
				}
			}
		}
	}
	// Sylvester residual on two random quasi-triangular matrices.
	a, err := schurOf(randomStable(rng, 7, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	b, err := schurOf(randomStable(rng, 5, 2))
	if err != nil {
		t.Fatal(err)
	}
	c := mat.NewDense(7, 5, nil)
	for i := 0; i < 7; i++ {
		for j := 0; j < 5; j++ {
			c.Set(i, j, rng.NormFloat64())
		}
	}
	x, err := sylvester(a.t, b.t, c)
	if err != nil {
		t.Fatal(err)
	}
	var ax, xb mat.Dense
	ax.Mul(a.t, x)
	xb.Mul(x, b.t)
	ax.Sub(&ax, &xb)
	ax.Sub(&ax, c)
	if res := mat.Norm(&ax, 1) / mat.Norm(c, 1); res > 1e-13 {
		t.Errorf("Sylvester residual %.3g", res)
	}
}

// TestHSVForms: the Hankel singular values do not depend on the realisation.
func TestHSVForms(t *testing.T) {
	f := randomStable(rand.New(rand.NewPCG(3, 33)), 16, 0.97)
	ref, err := HankelSV(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range filters.Forms {
		g, _, err := filters.Convert(f, form)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := HankelSV(g)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range ref.Values {
			if math.Abs(hs.Values[i]-s) > 1e-9*ref.Values[0] {
				t.Errorf("%s: σ%d = %.15g, dense %.15g", form, i+1, hs.Values[i], s)
			}
		}
	}
	if hs, err := HankelSV(mustDense(t, nil, nil, nil, 3)); err != nil || len(hs.Values) != 0 || len(hs.Unstable) != 0 {
		t.Errorf("order 0: %+v %v", hs, err)
	}
}

// unstableSum returns a dense realisation of H_s + H_u hidden behind a random similarity,
// with H_s = stable (dense) and H_u = poles 1.2, 1.05·e^{±0.7i} and 1 (an integrator).
func unstableSum(t *testing.T, rng *rand.Rand, stable *filters.Dense) *filters.Dense {
	t.Helper()
	u, err := filters.NewDiagonal([]complex128{1.2, cmplx.Rect(1.05, 0.7), cmplx.Rect(1.05, -0.7), 1}, []complex128{0.3, 0.5 - 1i, 0.5 + 1i, 0.2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ud, _, err := filters.ToDense(u)
	if err != nil {
		t.Fatal(err)
	}
	ns, nu := stable.Order(), ud.Order()
	n := ns + nu
	a := mat.NewDense(n, n, nil)
	a.Slice(0, ns, 0, ns).(*mat.Dense).Copy(stable.A)
	a.Slice(ns, n, ns, n).(*mat.Dense).Copy(ud.A)
	b := append(append([]float64(nil), stable.B...), ud.B...)
	c := append(append([]float64(nil), stable.C...), ud.C...)
	// A well-conditioned random similarity V = I + 0.3·G/√n.
	v := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x := 0.3 * rng.NormFloat64() / math.Sqrt(float64(n))
			if i == j {
				x++
			}
			v.Set(i, j, x)
		}
	}
	var vi, av, via mat.Dense
	if err := vi.Inverse(v); err != nil {
		t.Fatal(err)
	}
	av.Mul(a, v)
	via.Mul(&vi, &av)
	bv := mat.NewVecDense(n, nil)
	bv.MulVec(&vi, mat.NewVecDense(n, b))
	cv := mat.NewVecDense(n, nil)
	cv.MulVec(v.T(), mat.NewVecDense(n, c))
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = mat.Row(nil, i, &via)
	}
	return mustDense(t, rows, bv.RawVector().Data, cv.RawVector().Data, stable.D)
}

// TestHSVUnstable: the stable part's values are those of H_s alone, the unstable poles are
// reported, and balanced truncation keeps them exactly.
func TestHSVUnstable(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	stable := randomStable(rng, 9, 0.9)
	f := unstableSum(t, rng, stable)
	want, err := HankelSV(stable)
	if err != nil {
		t.Fatal(err)
	}
	got, err := HankelSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Values) != 9 || len(got.Unstable) != 4 {
		t.Fatalf("%d values and %d unstable poles, want 9 and 4", len(got.Values), len(got.Unstable))
	}
	for i := range want.Values {
		if math.Abs(got.Values[i]-want.Values[i]) > 1e-8*want.Values[0] {
			t.Errorf("σ%d = %.15g, stable part alone %.15g", i+1, got.Values[i], want.Values[i])
		}
	}
	if cmplx.Abs(got.Unstable[0]-1.2) > 1e-10 || cmplx.Abs(got.Unstable[3]-1) > 1e-10 {
		t.Errorf("unstable poles %v", got.Unstable)
	}
	if _, err := BalancedTruncation(f, 3); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("order below the unstable part: err = %v", err)
	}
	red, err := BalancedTruncation(f, 7)
	if err != nil {
		t.Fatal(err)
	}
	if red.Order != 7 || len(red.Unstable) != 4 {
		t.Fatalf("order %d, %d unstable", red.Order, len(red.Unstable))
	}
	poles, err := filters.Poles(red.Filter)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got.Unstable {
		if !slices.ContainsFunc(poles, func(q complex128) bool { return cmplx.Abs(p-q) < 1e-9 }) {
			t.Errorf("unstable pole %v was not kept: %v", p, poles)
		}
	}
	// The error of the whole is that of the stable part: within the bound on the circle
	// away from the poles on it.
	w := LinearGrid(4001)[1:]
	checkBound(t, f, red, w)
}

// checkBound verifies max|H - H_r| ≤ Bound on the grid, up to rounding relative to the
// largest Hankel singular value (the frequency responses carry ~eps·cond each).
func checkBound(t *testing.T, f filters.Filter, red *Reduced, w []float64) {
	t.Helper()
	h, hr := f.FreqResponse(w), red.Filter.FreqResponse(w)
	worst := 0.0
	for i := range h {
		worst = math.Max(worst, cmplx.Abs(h[i]-hr[i]))
	}
	slack := 1e-9
	if len(red.HSV) > 0 {
		slack *= red.HSV[0]
	}
	if worst > red.Bound+slack {
		t.Errorf("order %d: max|H - H_r| = %.6g above the bound %.6g", red.Order, worst, red.Bound)
	}
}

// TestBalancedTruncationBound is the property ‖H - H_r‖_∞ ≤ 2Σ_{i>r}σᵢ over random systems
// and every order, checked on a fine grid (which can only underestimate the sup).
func TestBalancedTruncationBound(t *testing.T) {
	w := LinearGrid(3000)
	for _, n := range []int{1, 3, 8, 20, 40} {
		f := randomStable(rand.New(rand.NewPCG(uint64(n), 77)), n, 0.95)
		for _, r := range []int{0, 1, n / 3, n / 2, n - 1, n, n + 5} {
			red, err := BalancedTruncation(f, r)
			if err != nil {
				t.Fatal(err)
			}
			if red.Order > min(r, n) || red.Filter.Order() != red.Order {
				t.Errorf("n=%d r=%d: order %d (filter %d)", n, r, red.Order, red.Filter.Order())
			}
			if rho, _ := filters.SpectralRadius(red.Filter); !filters.Stable(rho) {
				t.Errorf("n=%d r=%d: the reduced filter is not stable (ρ = %v)", n, r, rho)
			}
			checkBound(t, f, red, w)
			if r >= n {
				// Nothing truncated but rounding: the full balanced realisation.
				if e := relErr(red.Filter.Impulse(500), f.Impulse(500)); e > 1e-9 {
					t.Errorf("n=%d r=%d: the balanced realisation differs by %.3g", n, r, e)
				}
			}
		}
	}
	// Order 0 input and order 0 output.
	red, err := BalancedTruncation(mustDense(t, nil, nil, nil, 2), 3)
	if err != nil || red.Order != 0 || red.Filter.D != 2 || red.Bound != 0 {
		t.Errorf("order 0: %+v %v", red, err)
	}
}

// TestMinimal builds a system with one uncontrollable and two unobservable modes behind a
// similarity and checks that Minimal removes exactly them and keeps the response.
func TestMinimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	core := randomStable(rng, 5, 0.9)
	// Extra modes: 0.7 uncontrollable (B = 0), 0.6 ± 0.2i unobservable (C = 0), coupled in
	// the directions that keep them so: A = [[Ac, X], [0, Au]] for the uncontrollable part.
	n := 8
	a := mat.NewDense(n, n, nil)
	a.Slice(0, 5, 0, 5).(*mat.Dense).Copy(core.A)
	a.Set(5, 5, 0.7)
	a.Set(6, 6, 0.6)
	a.Set(6, 7, -0.2)
	a.Set(7, 6, 0.2)
	a.Set(7, 7, 0.6)
	for i := 0; i < 5; i++ {
		a.Set(i, 5, rng.NormFloat64()) // the uncontrollable mode drives the core
		a.Set(6, i, rng.NormFloat64()) // the core drives the unobservable pair
	}
	b := append(append([]float64(nil), core.B...), 0, rng.NormFloat64(), rng.NormFloat64())
	c := append(append([]float64(nil), core.C...), rng.NormFloat64(), 0, 0)
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = mat.Row(nil, i, a)
	}
	f := mustDense(t, rows, b, c, core.D)
	m, rep, err := Minimal(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Order() != 5 || rep.Order != 5 || rep.Uncontrollable != 1 || rep.Unobservable != 2 || rep.Tol != DefaultMinimalTol {
		t.Errorf("order %d, report %+v; want 5 with 1 uncontrollable and 2 unobservable", m.Order(), rep)
	}
	if e := relErr(m.Impulse(300), f.Impulse(300)); e > 1e-12 || rep.RelError > 1e-12 {
		t.Errorf("minimal realisation differs by %.3g (report %.3g)", e, rep.RelError)
	}
	// A minimal system is left at its order, unstable ones included; B = 0 leaves order 0.
	for _, g := range []*filters.Dense{core, mustDense(t, [][]float64{{1.5, 1}, {0, 0.5}}, []float64{0, 1}, []float64{1, 0}, 0)} {
		m, _, err := Minimal(g, 1e-12)
		if err != nil || m.Order() != g.Order() {
			t.Errorf("minimal system: order %d → %d, %v", g.Order(), m.Order(), err)
		}
	}
	m, rep, err = Minimal(mustDense(t, [][]float64{{0.5}}, []float64{0}, []float64{1}, 4), 0)
	if err != nil || m.Order() != 0 || m.D != 4 || rep.Uncontrollable != 1 {
		t.Errorf("B = 0: %v %+v %v", m, rep, err)
	}
	if m, _, err := Minimal(mustDense(t, nil, nil, nil, 4), 0); err != nil || m.Order() != 0 {
		t.Errorf("order 0: %v %v", m, err)
	}
}

func ExampleH2() {
	// h[t] = 0.5^(t-1) for t ≥ 1: Σh² = 1/(1 - 0.25) = 4/3.
	f, _ := filters.NewDiagonal([]complex128{0.5}, []complex128{1}, 0)
	h2, _ := H2(f)
	fmt.Printf("%.6f %.6f\n", h2, math.Sqrt(4.0/3))
	// Output:
	// 1.154701 1.154701
}

// TestUnstablePolesAsPoles: the poles on the circle that HankelSV, BalancedTruncation and H2
// name are the filter's poles as Poles gives them; a zpk filter's ±j came out of the Schur
// blocks as 6.1e-17 ± 1i (QA finding 13).
func TestUnstablePolesAsPoles(t *testing.T) {
	f, err := filters.NewZPK(nil, []complex128{1i, -1i, 0.5}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []complex128{1i, -1i}
	hs, err := HankelSV(f)
	if err != nil || !slices.Equal(hs.Unstable, want) {
		t.Errorf("HankelSV: %v, %v; want unstable %v", hs, err, want)
	}
	red, err := BalancedTruncation(f, 2)
	if err != nil || !slices.Equal(red.Unstable, want) {
		t.Errorf("BalancedTruncation: %v; want unstable %v", err, want)
	}
	var ue *UnstableError
	if _, err := H2(f); !errors.As(err, &ue) || !slices.Equal(ue.Poles, want) || !strings.Contains(err.Error(), "0+1i (|p| = 1)") {
		t.Errorf("H2: %v", err)
	}
}

// TestUnstableMessages: a pole inside the circle by less than filters.MarginalTol is printed
// with the digits that show it inside, and the message says why it counts as on the circle;
// one pole is "the 1 pole", not "the 1 poles" (QA finding 13).
func TestUnstableMessages(t *testing.T) {
	near, err := filters.NewTransferFunction([]float64{-(1 - 1e-12)}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = H2(near)
	if err == nil || !strings.Contains(err.Error(), "(|p| = 0.999999999999) lies on or outside the unit circle (within 1e-10 of it counts as on it)") {
		t.Errorf("H2: %v", err)
	}
	_, err = BalancedTruncation(near, 0)
	if err == nil || !strings.Contains(err.Error(), "order 0 is below the 1 pole on or outside the unit circle, which balanced truncation keeps: pole 1+0i (|p| = 0.999999999999) lies there") {
		t.Errorf("BalancedTruncation: %v", err)
	}
}

// TestMinimalErrorOverTheDecay: Minimal's error is measured until both responses have decayed,
// as a conversion's report measures its own, not over the radius's window. The filter is a
// Jordan block of 37 at 0.3 (fed at its last state, read at its first: 0 for 36 samples,
// peaking at t = 52) whose read state drives, through 1e-11, a second block of 37 at 0.3
// read at its first state: that part is uncontrollable within the tolerance, and Minimal
// drops it. It starts at t = 74 and rises long after, a response far slower than its radius
// of 0.3 says: ReportLength(0.3, 74) = 75 samples hold 1 sample of it, and the error reported
// was that of the 75, 7.6e-17, where the whole response's is 4.5e-6 (over 600 samples now).
func TestMinimalErrorOverTheDecay(t *testing.T) {
	const k, eps = 37, 1e-11
	n := 2 * k
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
		a[i][i] = 0.3
	}
	// In the order B's Krylov vectors take them (already upper Hessenberg, as the staircase
	// makes it): the main block's states from the fed one to the read one, then the tail's.
	for i := 1; i < n; i++ {
		a[i][i-1] = 1
	}
	a[k][k-1] = eps
	b, c := make([]float64, n), make([]float64, n)
	b[0], c[k-1], c[n-1] = 1, 1, 1
	f := mustDense(t, a, b, c, 0)

	m, rep, err := Minimal(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Order() != k || rep.Uncontrollable != k {
		t.Fatalf("order %d, report %+v; want %d with %d uncontrollable", m.Order(), rep, k, k)
	}
	const horizon = 4096 // the responses differ until t = 768, and are 0 long before 4096
	whole := filters.RelDiff(f.Impulse(horizon), m.Impulse(horizon))
	short := filters.ReportLength(0.3, n)
	if e := filters.RelDiff(f.Impulse(short), m.Impulse(short)); !(e < whole/100) {
		t.Fatalf("over the first %d samples the error is %.3g, over the whole response %.3g: the test needs an error that shows only later", short, e, whole)
	}
	if math.Abs(rep.RelError-whole) > 1e-6*whole || rep.Length <= short {
		t.Errorf("Minimal's error %.6g over %d samples; over the whole response %.6g", rep.RelError, rep.Length, whole)
	}
}
