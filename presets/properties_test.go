package presets

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// Tolerances of the property tests, each for numbers of size about one.
const (
	// exactTol is for quantities a few roundings away from the exact value.
	exactTol = 1e-14
	// eigTol is for eigenvalues computed by the filters package's QR iteration: its backward
	// error is a few ε·‖A‖, and the eigenvalues tested here are well conditioned.
	eigTol = 1e-12
	// orthoTol is the bar of the issue for ‖PᵀP - I‖: the matrix exponential of RotRNN (scaling
	// and squaring of a skew-symmetric matrix of norm ≈ 10) and the Householder products keep
	// orthogonality to a few hundred ε (measured below 1e-14 for the sizes here).
	orthoTol = 1e-12
	// seriesTol is for sums of geometric series cut where the terms fall below 1e-17.
	seriesTol = 1e-12
)

// build builds a preset with the given parameters ("name=value" strings), failing the test on
// error.
func build(t *testing.T, name string, kv ...string) Result {
	t.Helper()
	values := map[string]string{}
	for _, s := range kv {
		k, v, ok := cut(s)
		if !ok {
			t.Fatalf("bad test parameter %q", s)
		}
		values[k] = v
	}
	r, err := New(name, values)
	if err != nil {
		t.Fatalf("%s %v: %v", name, kv, err)
	}
	return r
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

func poles(t *testing.T, f filters.Filter) []complex128 {
	t.Helper()
	p, err := filters.Poles(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func eigenvalues(t *testing.T, a *mat.Dense) []complex128 {
	t.Helper()
	var e mat.Eigen
	if !e.Factorize(a, mat.EigenNone) {
		t.Fatal("eigen-decomposition failed")
	}
	return e.Values(nil)
}

func TestLegS(t *testing.T) {
	for _, n := range []int{1, 2, 5, 16} {
		a, b := LegS(n)
		for i := 0; i < n; i++ {
			for k := i + 1; k < n; k++ {
				if a.At(i, k) != 0 {
					t.Fatalf("N=%d: A[%d][%d] = %v above the diagonal: LegS is lower triangular", n, i, k, a.At(i, k))
				}
			}
			// A triangular matrix's eigenvalues are its diagonal: -1, …, -N.
			if a.At(i, i) != -float64(i+1) {
				t.Errorf("N=%d: A[%d][%d] = %v, want %d", n, i, i, a.At(i, i), -(i + 1))
			}
			if b[i] != math.Sqrt(float64(2*i+1)) {
				t.Errorf("N=%d: B[%d] = %v", n, i, b[i])
			}
		}
	}
	// After a zero-order hold the poles are e^{-kΔt}, k = 1 … N, found by the eigen solver.
	const dt = 0.05
	r := build(t, "hippo-legs", "order=6", "dt=0.05", "method=zoh")
	p := poles(t, r.Filter)
	want := make([]complex128, 6)
	for k := range want {
		want[k] = complex(math.Exp(-float64(k+1)*dt), 0)
	}
	if d := numtest.RootsDist(p, want); d > eigTol {
		t.Errorf("poles %v, want e^{-kΔt}: off by %.3g", p, d)
	}
}

func TestLegT(t *testing.T) {
	const n, theta = 7, 2.5
	a, b := LegT(n, theta)
	// A + Aᵀ = -(rrᵀ + ssᵀ)/θ, r[n] = √(2n+1), s[n] = (-1)ⁿ√(2n+1): rank 2, negative semidefinite.
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			ri, rk := math.Sqrt(float64(2*i+1)), math.Sqrt(float64(2*k+1))
			si, sk := ri*math.Pow(-1, float64(i)), rk*math.Pow(-1, float64(k))
			want := -(ri*rk + si*sk) / theta
			if d := math.Abs(a.At(i, k) + a.At(k, i) - want); d > exactTol*10 {
				t.Errorf("(A+Aᵀ)[%d][%d] off by %.3g", i, k, d)
			}
		}
		if math.Abs(b[i]-math.Sqrt(float64(2*i+1))/theta) > exactTol {
			t.Errorf("B[%d] = %v", i, b[i])
		}
	}
	for _, l := range eigenvalues(t, a) {
		if real(l) >= 0 {
			t.Errorf("eigenvalue %v is not in the open left half-plane", l)
		}
	}
}

func TestLagT(t *testing.T) {
	a, b := LagT(5, 1, 0.5)
	for i := 0; i < 5; i++ {
		for k := 0; k < 5; k++ {
			want := 0.0
			switch {
			case k == i:
				want = -0.75 // -(1+β)/2
			case k < i:
				want = -1
			}
			if a.At(i, k) != want {
				t.Errorf("A[%d][%d] = %v, want %v", i, k, a.At(i, k), want)
			}
		}
		// α = 1: B[n] = √(Γ(n+2)/Γ(n+1))/Γ(2) = √(n+1).
		if d := math.Abs(b[i] - math.Sqrt(float64(i+1))); d > exactTol*10 {
			t.Errorf("B[%d] = %v, want √%d", i, b[i], i+1)
		}
	}
	_, b0 := LagT(4, 0, 0)
	if !slices.Equal(b0, []float64{1, 1, 1, 1}) {
		t.Errorf("α = 0: B = %v, want ones", b0)
	}
}

func TestFouT(t *testing.T) {
	const n = 8
	a, b := FouT(n)
	// A = skew - BBᵀ: A + Aᵀ = -2BBᵀ.
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			if d := math.Abs(a.At(i, k) + a.At(k, i) + 2*b[i]*b[k]); d > exactTol {
				t.Errorf("(A+Aᵀ)[%d][%d] off by %.3g", i, k, d)
			}
		}
		if a.At(1, i) != 0 || a.At(i, 1) != 0 {
			t.Errorf("state 1 is coupled: A[1][%d] = %v, A[%d][1] = %v", i, a.At(1, i), i, a.At(i, 1))
		}
	}
	if a.At(2, 3) != -math.Pi || a.At(6, 7) != -3*math.Pi || b[0] != 1 || b[2] != math.Sqrt2 || b[1] != 0 {
		t.Errorf("A[2][3] = %v, A[6][7] = %v, B = %v", a.At(2, 3), a.At(6, 7), b)
	}
	if r := build(t, "hippo-fout", "order=8"); r.Filter.Order() != 7 {
		t.Errorf("order %d, want 7 (state 1 dropped)", r.Filter.Order())
	}
}

// TestHiPPOConvention checks the S4 convention: the preset's kernel is C·Āᵗ·B̄ from t = 0.
func TestHiPPOConvention(t *testing.T) {
	r := build(t, "hippo-legt", "order=4", "dt=0.1", "method=bilinear", "c=ones")
	a, b := LegT(4, 1)
	sys, err := filters.NewDense(rowsOf(a), b, []float64{1, 1, 1, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := (&filters.Continuous{System: sys, Dt: 0.1, Method: filters.Bilinear}).Discretize()
	if err != nil {
		t.Fatal(err)
	}
	got, want := r.Filter.Impulse(40), ctrl.Impulse(41)[1:] // control h[t+1] = C Āᵗ B̄
	if d := relMaxDiff(got, want); d > exactTol*100 {
		t.Errorf("kernel differs from C·Āᵗ·B̄ by %.3g", d)
	}
}

func TestHiPPOBank(t *testing.T) {
	r := build(t, "hippo-legs", "order=3", "channels=20", "dt_min=0.01", "dt_max=0.5", "method=zoh", "seed=3")
	if r.Bank == nil || len(r.Bank.Channels) != 20 {
		t.Fatalf("got %+v, want a bank of 20", r)
	}
	// Each channel's slowest pole is e^{-Δt}: recover Δt and check the range.
	var lo, hi = math.Inf(1), 0.0
	for _, c := range r.Bank.Channels {
		rho, err := filters.SpectralRadius(c)
		if err != nil {
			t.Fatal(err)
		}
		dt := -math.Log(rho)
		lo, hi = math.Min(lo, dt), math.Max(hi, dt)
	}
	if lo < 0.01*(1-eigTol) || hi > 0.5*(1+eigTol) || hi/lo < 3 {
		t.Errorf("Δt spans [%g, %g], want a spread inside [0.01, 0.5]", lo, hi)
	}
}

func TestS4D(t *testing.T) {
	const n, dt = 8, 0.02
	for _, c := range []struct {
		name  string
		modes []complex128
		order int
	}{
		{"s4d-lin", S4DLin(n), n - 1},
		{"s4d-inv", S4DInv(n), n},
		{"s4d-real", S4DReal(n), n},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := build(t, c.name, "order="+strconv.Itoa(n), "dt=0.02")
			if r.Filter.Order() != c.order {
				t.Errorf("order %d, want %d", r.Filter.Order(), c.order)
			}
			var want []complex128
			for _, l := range c.modes {
				want = append(want, cmplx.Exp(dt*l))
				if imag(l) != 0 {
					want = append(want, cmplx.Exp(dt*cmplx.Conj(l)))
				}
			}
			if d := numtest.RootsDist(r.Filter.(*filters.Diagonal).Poles, want); d > exactTol {
				t.Errorf("poles off e^{Δt·λ} by %.3g", d)
			}
		})
	}
	// The stated continuous poles.
	lin, inv := S4DLin(6), S4DInv(6)
	for k := 0; k < 3; k++ {
		if lin[k] != complex(-0.5, math.Pi*float64(k)) {
			t.Errorf("S4D-Lin λ%d = %v", k, lin[k])
		}
		if w := complex(-0.5, 6/math.Pi*(6/float64(2*k+1)-1)); cmplx.Abs(inv[k]-w) > exactTol*10 {
			t.Errorf("S4D-Inv λ%d = %v, want %v", k, inv[k], w)
		}
	}
	if r := S4DReal(3); !slices.Equal(r, []complex128{-1, -2, -3}) {
		t.Errorf("S4D-Real = %v", r)
	}
}

// TestS4DLinRealPoles: S4D-Lin's modes λₖ = -1/2 + iπk land on real discrete poles where
// Δt·k is an integer; each such pair becomes one real mode (these builds failed with "pole …
// is real but its residue … is not").
func TestS4DLinRealPoles(t *testing.T) {
	for _, c := range []struct {
		order, dt string
		real      int // modes with Δt·k an integer, k ≥ 1
	}{{"64", "0.1", 3}, {"16", "1", 7}, {"16", "0.25", 1}, {"256", "0.01", 1}} {
		r := build(t, "s4d-lin", "order="+c.order, "dt="+c.dt)
		d := r.Filter.(*filters.Diagonal)
		reals := 0
		for _, p := range d.Poles {
			if imag(p) == 0 {
				reals++
			}
		}
		// The mode k = 0 is real in continuous time already.
		if reals != c.real+1 {
			t.Errorf("order %s dt %s: %d real poles, want %d", c.order, c.dt, reals, c.real+1)
		}
	}
}

// TestFewerStatesNote: a filter that comes out with fewer states than its order gives (pole
// pairs that fall on the real axis, or underflow, and are kept as one real pole each) carries
// a note saying so and why; these were written without a word. S4D-Lin's N-1 states (λ₀ is
// real) and the drawn defaults are what the preset gives and carry none.
func TestFewerStatesNote(t *testing.T) {
	for _, c := range []struct {
		name string
		kv   []string
		want []string // in the note; none for no note
	}{
		{"lru", []string{"order=4", "max_phase=0"}, []string{"lru: the filter has 2 states where order=4 gives 4", "max_phase=0"}},
		{"s4d-lin", []string{"order=8", "dt=1000"}, []string{"s4d-lin: the filter has 4 states where order=8 gives 7", "real", "underflows"}},
		{"s4d-lin", []string{"order=16", "dt=1"}, []string{"the filter has 8 states where order=16 gives 15", "multiple of π"}},
		{"s4d-inv", []string{"order=8", "dt=1000", "channels=3"}, []string{"s4d-inv: 3 of 3 channels have fewer than the 8 states order=8 gives (fewest: 4, channel 0)"}},
		{"lru", []string{"order=8", "max_phase=0", "channels=2"}, []string{"2 of 2 channels have fewer than the 8 states order=8 gives (fewest: 4, channel 0)"}},
		{"lru", []string{"order=16"}, nil},
		{"lru", []string{"order=64", "channels=16", "max_phase=pi/10"}, nil},
		{"s4d-lin", []string{"order=16"}, nil},
		{"s4d-lin", []string{"order=64", "channels=16"}, nil},
		{"s4d-lin", []string{"order=16", "dt=0.02"}, nil},
		{"s4d-inv", []string{"order=64", "channels=16"}, nil},
		{"s4d-real", []string{"order=16", "dt=1000"}, nil},
		{"hippo-fout", []string{"order=8"}, nil},
	} {
		r := build(t, c.name, c.kv...)
		if c.want == nil && r.Note != "" {
			t.Errorf("%s %v: note %q, want none", c.name, c.kv, r.Note)
		}
		for _, w := range c.want {
			if !strings.Contains(r.Note, w) {
				t.Errorf("%s %v: note %q, want it to contain %q", c.name, c.kv, r.Note, w)
			}
		}
	}
}

// TestEulerUnstableNote: forward Euler maps a stable pole λ inside the unit circle only for
// Δt < 2|Re λ|/|λ|²; beyond the smallest of those the preset is unstable, and its note says so
// with that step (analysis QA N2: hippo-legs order=16 dt=0.5 method=euler wrote poles near −7
// without a word). For S4D-Lin's λₖ = −1/2 + iπk the step is 1/|λ_{N/2−1}|²; HiPPO-LegS's is
// found by the filters' own spectral radius on either side of the step the note gives.
func TestEulerUnstableNote(t *testing.T) {
	lin := 1 / (0.25 + math.Pow(math.Pi*7, 2)) // order 16: k up to 7
	stepIn := func(note string) float64 {
		i := strings.Index(note, "only for dt < ")
		if i < 0 {
			t.Fatalf("note %q names no step", note)
		}
		f, err := strconv.ParseFloat(strings.TrimRight(strings.Fields(note[i+len("only for dt < "):])[0], ";)"), 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	rho := func(r Result) float64 {
		v, err := filters.SpectralRadius(r.Filter)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name string
		kv   []string
	}{
		{"s4d-lin", []string{"order=16", "dt=0.5"}},
		{"s4d-lin", []string{"order=16", fmt.Sprint("dt=", 1.01*lin)}},
		{"hippo-legs", []string{"order=16", "dt=0.5"}},
	} {
		r := build(t, c.name, append(c.kv, "method=euler")...)
		if filters.Stable(rho(r)) {
			t.Fatalf("%s %v: stable (ρ = %v)", c.name, c.kv, rho(r))
		}
		if !strings.Contains(r.Note, "made the filter unstable") {
			t.Errorf("%s %v: note %q", c.name, c.kv, r.Note)
			continue
		}
		dt := stepIn(r.Note)
		if c.name == "s4d-lin" && math.Abs(dt-lin) > 5e-3*lin { // printed to 3 digits
			t.Errorf("%s %v: the note's step %v, want %.3g", c.name, c.kv, dt, lin)
		}
		// Just below the step: stable, and no note.
		below := build(t, c.name, "order=16", fmt.Sprint("dt=", 0.99*dt), "method=euler")
		if !filters.Stable(rho(below)) || below.Note != "" {
			t.Errorf("%s at dt = %v (below the note's %v): ρ = %v, note %q", c.name, 0.99*dt, dt, rho(below), below.Note)
		}
	}
	// A bank: how many channels, and the first.
	r := build(t, "s4d-lin", "order=16", "dt_max=0.3", "method=euler", "channels=8")
	var n int
	first := -1
	for i, f := range r.Bank.Channels {
		if v, err := filters.SpectralRadius(f); err == nil && !filters.Stable(v) {
			n++
			if first < 0 {
				first = i
			}
		}
	}
	if want := fmt.Sprintf("made %d of 8 channels unstable although their continuous-time systems are stable (first: channel %d at", n, first); n == 0 || !strings.Contains(r.Note, want) {
		t.Errorf("bank: note %q, want it to contain %q", r.Note, want)
	}
	// The A-stable methods never do.
	for _, m := range []string{"bilinear", "zoh", "backward_euler"} {
		if r := build(t, "hippo-legs", "order=16", "dt=0.5", "method="+m); r.Note != "" {
			t.Errorf("method=%s: note %q", m, r.Note)
		}
	}
}

func TestLRU(t *testing.T) {
	const rMin, rMax, phase = 0.5, 0.95, math.Pi / 3
	l := NewLRU(NewRand(7), 40, rMin, rMax, phase)
	for k, lam := range l.Lambda {
		r, th := cmplx.Abs(lam), cmplx.Phase(lam)
		if r < rMin-exactTol || r > rMax+exactTol || th < 0 || th > phase+exactTol {
			t.Errorf("λ%d = %v: radius %v, phase %v outside the ring", k, lam, r, th)
		}
		// γ normalises the mode: γ²·Σ|λ|^(2t) = γ²/(1-|λ|²) = 1.
		sum, term := 0.0, l.Gamma[k]*l.Gamma[k]
		for term > 1e-17 {
			sum += term
			term *= r * r
		}
		if math.Abs(sum-1) > seriesTol {
			t.Errorf("mode %d: γ²Σ|λ|^2t = %v, want 1", k, sum)
		}
	}
	// The filter's kernel is Re Σ Cₖγₖ Bₖ λₖᵗ from t = 0 (the S4 convention).
	f, err := l.Filter()
	if err != nil {
		t.Fatal(err)
	}
	got := f.Impulse(60)
	for ti, h := range got {
		var want float64
		for k, lam := range l.Lambda {
			want += real(l.C[k] * complex(l.Gamma[k], 0) * l.B[k] * cmplx.Pow(lam, complex(float64(ti), 0)))
		}
		if math.Abs(h-want) > 1e-13 {
			t.Errorf("h[%d] = %v, want %v", ti, h, want)
		}
	}
}

func TestRotRNN(t *testing.T) {
	const n, heads = 24, 3
	rr := NewRotRNN(NewRand(11), n, heads, 0.6, 0.95, math.Pi/10)
	f, err := rr.Filter()
	if err != nil {
		t.Fatal(err)
	}
	rot := f.(*filters.Rotation)
	if o := rot.Orthogonality(); o > orthoTol {
		t.Errorf("‖PᵀP - I‖ = %.3g above %g", o, orthoTol)
	}
	k := n / heads
	a := rot.Dense().A
	b := rr.NormalizedB()
	for h, head := range rr.Heads {
		if head.Gamma < 0.6 || head.Gamma > 0.95 {
			t.Errorf("head %d: γ = %v outside [0.6, 0.95]", h, head.Gamma)
		}
		// Eq. 11 with c = 1: Tr[(ξB)ᵀ(ξB)] = 1 - γ².
		var ss float64
		for _, x := range b[h*k : (h+1)*k] {
			ss += x * x
		}
		if math.Abs(ss-(1-head.Gamma*head.Gamma)) > exactTol {
			t.Errorf("head %d: ‖ξB‖² = %v, want 1 - γ² = %v", h, ss, 1-head.Gamma*head.Gamma)
		}
		// Eq. 12 under white noise: E‖x‖² = Σₜ ‖(γA)ᵗ ξB‖² = ξ²‖B‖²/(1-γ²) = 1, because
		// γ⁻¹A_h is orthogonal. Run the recurrence on this head's block.
		ah := a.Slice(h*k, (h+1)*k, h*k, (h+1)*k)
		x := mat.NewVecDense(k, append([]float64(nil), b[h*k:(h+1)*k]...))
		var sum float64
		for step := 0; ; step++ {
			e := mat.Dot(x, x)
			sum += e
			if e < 1e-17 {
				break
			}
			var next mat.VecDense
			next.MulVec(ah, x)
			x = &next
		}
		if math.Abs(sum-1) > seriesTol {
			t.Errorf("head %d: stationary E‖x‖² = %v, want 1 (RotRNN paper, eq. 12, c = 1)", h, sum)
		}
		// γ⁻¹A_h is orthogonal: A_hᵀA_h = γ²I.
		var ata mat.Dense
		ata.Mul(ah.T(), ah)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				want := 0.0
				if i == j {
					want = head.Gamma * head.Gamma
				}
				if math.Abs(ata.At(i, j)-want) > orthoTol {
					t.Fatalf("head %d: (AᵀA)[%d][%d] = %v, want %v", h, i, j, ata.At(i, j), want)
				}
			}
		}
	}
	// The S4 convention: h[0] = C·ξB.
	if h0, want := f.Impulse(1)[0], mat.Dot(mat.NewVecDense(n, rr.C), mat.NewVecDense(n, b)); math.Abs(h0-want) > exactTol {
		t.Errorf("h[0] = %v, want C·ξB = %v", h0, want)
	}
}

func TestHouseholder(t *testing.T) {
	rng := NewRand(5)
	for _, c := range []struct{ n, m int }{{1, 1}, {2, 1}, {5, 5}, {8, 3}, {16, 16}, {64, 40}} {
		us := make([][]float64, c.m)
		for i := range us {
			us[i] = normals(rng, c.n-i, 1)
			if c.n-i == 1 {
				us[i] = []float64{-1}
			}
		}
		w, err := HouseholderProduct(c.n, us)
		if err != nil {
			t.Fatal(err)
		}
		var wtw mat.Dense
		wtw.Mul(w.T(), w)
		worst := 0.0
		for i := 0; i < c.n; i++ {
			for j := 0; j < c.n; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				worst = math.Max(worst, math.Abs(wtw.At(i, j)-want))
			}
		}
		if worst > orthoTol {
			t.Errorf("n=%d m=%d: ‖WᵀW - I‖ = %.3g", c.n, c.m, worst)
		}
		// Each reflection, and H₁(-1), has determinant -1.
		if d, want := mat.Det(w), math.Pow(-1, float64(c.m)); math.Abs(d-want) > 1e-10 {
			t.Errorf("n=%d m=%d: det W = %v, want %v", c.n, c.m, d, want)
		}
		// The filters package builds the same product as a rotation basis.
		if c.n%2 == 0 {
			blocks := make([]filters.RotationBlock, c.n/2)
			rf, err := filters.NewRotationFromHouseholder(us, blocks, nil, make([]float64, c.n), make([]float64, c.n), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.EqualApprox(rf.P, w, exactTol*10) {
				t.Errorf("n=%d m=%d: differs from filters.NewRotationFromHouseholder", c.n, c.m)
			}
		}
	}
	// The preset: every pole has modulus radius.
	r := build(t, "householder", "order=10", "reflections=4", "radius=0.9", "seed=2")
	for _, p := range poles(t, r.Filter) {
		if math.Abs(cmplx.Abs(p)-0.9) > eigTol {
			t.Errorf("pole %v has modulus %v, want 0.9", p, cmplx.Abs(p))
		}
	}
}

func TestRTF(t *testing.T) {
	for _, n := range []int{1, 2, 4, 16, 64} {
		for seed := range 5 {
			rng := NewRand(uint64(seed))
			a, b := rtf.Montel(rng, n)
			checkMontel(t, "montel", a, 1/float64(n), b)
			xa, xb := rtf.Xavier(rng, n)
			for i := range xa {
				if s := 1 / math.Sqrt(float64(n)); math.Abs(xa[i]) > s || math.Abs(xb[i]) > s {
					t.Fatalf("xavier coefficient beyond 1/√n")
				}
			}
			checkMontel(t, "xavier + l1_montel", rtf.L1Montel(nil, xa, rng.Float64()), inf, xb)
		}
	}
	z := build(t, "rtf-zeros", "order=5").Filter.(*filters.TransferFunction)
	if !slices.Equal(z.Den, make([]float64, 5)) || !slices.Equal(z.Num, make([]float64, 5)) || z.H0 != 1 {
		t.Errorf("zeros init = %+v, want a = b = 0, h0 = 1", z)
	}
	m := build(t, "rtf-montel", "order=12", "channels=8", "constraint=l1_montel")
	for i, c := range m.Bank.Channels {
		tf := c.(*filters.TransferFunction)
		checkMontel(t, "bank channel "+strconv.Itoa(i), tf.Den, inf, tf.Num)
	}
}

// checkMontel checks Σ|aᵢ| ≤ 1 (RTF paper, eq. 17), |aᵢ| ≤ bound, and that every pole lies inside
// the unit circle, as Montel's bound guarantees.
func checkMontel(t *testing.T, what string, a []float64, bound float64, b []float64) {
	t.Helper()
	var s float64
	for _, x := range a {
		s += math.Abs(x)
		if math.Abs(x) > bound {
			t.Fatalf("%s: coefficient %v beyond %v", what, x, bound)
		}
	}
	if s > 1 {
		t.Fatalf("%s: Σ|aᵢ| = %v > 1", what, s)
	}
	f, err := filters.NewTransferFunction(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	rho, err := filters.SpectralRadius(f)
	if err != nil {
		t.Fatal(err)
	}
	if !filters.Stable(rho) {
		t.Fatalf("%s: spectral radius %v with Σ|aᵢ| = %v", what, rho, s)
	}
}

func TestLDStack(t *testing.T) {
	c, err := LDStackCompanion(NewRand(1), 12)
	if err != nil {
		t.Fatal(err)
	}
	if c.Order() != 12 || c.Observable {
		t.Errorf("got %+v", c)
	}
	for _, vdc := range []bool{false, true} {
		d, err := LDStackUnit(NewRand(2), 20, 0.97, vdc)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range d.Poles {
			if math.Abs(cmplx.Abs(p)-0.97) > exactTol {
				t.Errorf("vdc=%v: pole %v off the circle of radius 0.97", vdc, p)
			}
		}
	}
	// Every radius in (0, 1] builds: below 1e-12 the pairs' imaginary parts are tiny in
	// absolute terms, and radius=1e-300 failed as "pole 0 … is real but its residue is not".
	for _, r := range []float64{1e-13, 1e-300} {
		if _, err := LDStackUnit(NewRand(2), 4, r, false); err != nil {
			t.Errorf("radius %g: %v", r, err)
		}
	}
	if got := []float64{vanDerCorput(1), vanDerCorput(2), vanDerCorput(3), vanDerCorput(6)}; !slices.Equal(got, []float64{0.5, 0.25, 0.75, 0.375}) {
		t.Errorf("van der Corput = %v", got)
	}
}

func TestClassicDSP(t *testing.T) {
	t.Run("butter and cheby1 edges", func(t *testing.T) {
		const wc = 0.7
		for _, band := range []Band{Lowpass, Highpass} {
			b, _ := Butter(5, band, wc)
			if g := cmplx.Abs(b.FreqResponse([]float64{wc})[0]); math.Abs(g-math.Sqrt(0.5)) > exactTol*10 {
				t.Errorf("butter %s: |H(ωc)| = %v, want 1/√2", band, g)
			}
			c, _ := Cheby1(5, 2, band, wc)
			if g := cmplx.Abs(c.FreqResponse([]float64{wc})[0]); math.Abs(g-math.Pow(10, -2.0/20)) > exactTol*10 {
				t.Errorf("cheby1 %s: |H(ωc)| = %v, want -2 dB", band, g)
			}
		}
	})
	t.Run("moving average", func(t *testing.T) {
		f, _ := MovingAverage(5)
		want := []float64{0.2, 0.2, 0.2, 0.2, 0.2, 0, 0}
		if d := relMaxDiff(f.Impulse(7), want); d > exactTol {
			t.Errorf("h = %v", f.Impulse(7))
		}
	})
	t.Run("delay", func(t *testing.T) {
		f, _ := Delay(3)
		if h := f.Impulse(6); !slices.Equal(h, []float64{0, 0, 0, 1, 0, 0}) {
			t.Errorf("h = %v", h)
		}
		if g, _ := Delay(0); !slices.Equal(g.Impulse(3), []float64{1, 0, 0}) {
			t.Errorf("d=0: h = %v", g.Impulse(3))
		}
	})
	t.Run("resonator", func(t *testing.T) {
		const r, th = 0.95, 1.1
		f, _ := Resonator(r, th)
		if g := cmplx.Abs(f.FreqResponse([]float64{th})[0]); math.Abs(g-1) > exactTol*10 {
			t.Errorf("|H(e^{iθ})| = %v, want 1", g)
		}
		want := []complex128{cmplx.Rect(r, th), cmplx.Rect(r, -th)}
		if d := numtest.RootsDist(poles(t, f), want); d > eigTol {
			t.Errorf("poles off r·e^{±iθ} by %.3g", d)
		}
	})
	t.Run("comb", func(t *testing.T) {
		fb, _ := Comb(3, 0.5, true)
		if h := fb.Impulse(10); !slices.Equal(h, []float64{1, 0, 0, 0.5, 0, 0, 0.25, 0, 0, 0.125}) {
			t.Errorf("feedback: h = %v", h)
		}
		ff, _ := Comb(2, -0.3, false)
		if h := ff.Impulse(5); !slices.Equal(h, []float64{1, 0, -0.3, 0, 0}) {
			t.Errorf("feedforward: h = %v", h)
		}
	})
	t.Run("leaky integrator", func(t *testing.T) {
		f, _ := LeakyIntegrator(0.8)
		h := f.Impulse(20)
		for i, x := range h {
			if want := 0.2 * math.Pow(0.8, float64(i)); math.Abs(x-want) > exactTol {
				t.Errorf("h[%d] = %v, want %v", i, x, want)
			}
		}
		if g := f.FreqResponse([]float64{0})[0]; cmplx.Abs(g-1) > exactTol {
			t.Errorf("H(1) = %v, want 1", g)
		}
	})
}

func TestHyena(t *testing.T) {
	h := DefaultHyena(300, 5)
	h.Width, h.Depth, h.EmbDim = 8, 1, 5
	k, err := h.Kernels(NewRand(4))
	if err != nil {
		t.Fatal(err)
	}
	if len(k) != 5 || len(k[0]) != 300 {
		t.Fatalf("shape %d×%d, want 5×300", len(k), len(k[0]))
	}
	// The MLP's output is bounded by the ℓ1 norm of the last layer's rows (≤ √width, since each
	// entry is at most 1/√width and the sines at most 1), so |h_c[t]| ≤ √width·e^{-t|δ_c|}:
	// the exponential modulation with δ_c from ln(target)/slow_decay_pct to ln(target)/fast.
	for c := range k {
		delta := math.Log(h.Target) / h.SlowDecayPct
		delta += float64(c) * (math.Log(h.Target)/h.FastDecayPct - delta) / 4
		for i, x := range k[c] {
			tn := float64(i) / 299
			if bound := math.Sqrt(8) * math.Exp(-tn*math.Abs(delta)); math.Abs(x) > bound*(1+exactTol) {
				t.Fatalf("channel %d: |h[%d]| = %v above the modulation bound %v", c, i, x, bound)
			}
		}
	}
	k2, _ := h.Kernels(NewRand(4))
	for c := range k {
		if !slices.Equal(k[c], k2[c]) {
			t.Fatal("same seed, different kernels")
		}
	}
	if _, err := (Hyena{Length: 10, Channels: 1, EmbDim: 4, Width: 2}).Kernels(NewRand(0)); err == nil {
		t.Error("even emb_dim accepted")
	}
}
