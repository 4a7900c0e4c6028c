package analysis

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		poles []complex128
		want  Stability
		off   int
	}{
		{nil, Stable, 0},
		{[]complex128{0.5, 0.9i, -0.9i}, Stable, 0},
		{[]complex128{1, 0.5}, Marginal, 1},
		{[]complex128{1 - 1e-12, 0.5}, Marginal, 1},
		{[]complex128{cmplx.Rect(1, 0.3), cmplx.Rect(1, -0.3), 1.5}, Unstable, 3},
		{[]complex128{1.5, 1}, Unstable, 2},
	} {
		v, off := Classify(c.poles)
		if v != c.want || len(off) != c.off {
			t.Errorf("Classify(%v) = %v, %v; want %v with %d offending", c.poles, v, off, c.want, c.off)
		}
	}
	for s, name := range map[Stability]string{Stable: "stable", Marginal: "marginal", Unstable: "unstable", 7: "Stability(?)"} {
		if b, _ := s.MarshalText(); s.String() != name || string(b) != name {
			t.Errorf("%d: %q", s, s.String())
		}
	}
}

func TestAnalyze(t *testing.T) {
	// H(z) = 0.1 + 1/(z - 0.5) + 1/(z - 0.8): DC gain 0.1 + 2 + 5.
	f, err := filters.NewDiagonal([]complex128{0.8, 0.5}, []complex128{1, 1}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Analyze(f, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if p.Order != 2 || p.Stability != Stable || len(p.Offending) != 0 || p.SpectralRadius != 0.8 {
		t.Errorf("%+v", p)
	}
	if !p.DCFinite || math.Abs(p.DCGain-7.1) > 1e-14 {
		t.Errorf("DC gain %v (finite %v), want 7.1", p.DCGain, p.DCFinite)
	}
	// (z - 0.5)(z - 0.8) = z² - 1.3z + 0.4.
	if math.Abs(p.Montel-1.7) > 1e-15 {
		t.Errorf("Montel = %v, want 1.7", p.Montel)
	}
	// h[t] = 0.8^(t-1) + 0.5^(t-1) for t ≥ 1 and peak 2 at t = 1: |h| ≤ 1e-6·2 from
	// 0.8^(t-1) ≈ 2e-6, t - 1 = ⌈log(2e-6)/log 0.8⌉ = 59 (the 0.5 mode is gone by then).
	want := 1
	for tt := 1; tt < 1000; tt++ {
		if math.Pow(0.8, float64(tt-1))+math.Pow(0.5, float64(tt-1)) > 2e-6 {
			want = tt + 1
		}
	}
	if p.Memory != want || p.Tol != 1e-6 {
		t.Errorf("Memory = %d (tol %v), want %d", p.Memory, p.Tol, want)
	}
	// Zeros: 0.1(z - 0.5)(z - 0.8) + (z - 0.8) + (z - 0.5) = 0.1z² + 1.87z - 1.26.
	zeros, err := Zeros(f)
	if err != nil || len(zeros) != 2 {
		t.Fatalf("zeros %v, %v", zeros, err)
	}
	for _, z := range zeros {
		if v := 0.1*z*z + 1.87*z - 1.26; cmplx.Abs(v) > 1e-12 {
			t.Errorf("zero %v leaves %v", z, v)
		}
	}

	// A TF's Montel sum is its own coefficients'.
	tf, _ := filters.NewTransferFunction([]float64{-0.5, 0.25}, []float64{1, 0}, 0)
	if p, err := Analyze(tf, 0); err != nil || p.Montel != 0.75 || p.Tol != DefaultTol {
		t.Errorf("tf: %+v %v", p, err)
	}
}

func TestAnalyzeEdges(t *testing.T) {
	// Marginal: an integrator has an infinite DC gain and no finite memory.
	integ, _ := filters.NewTransferFunction([]float64{-1}, []float64{1}, 0)
	p, err := Analyze(integ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stability != Marginal || len(p.Offending) != 1 || p.DCFinite || p.DCGain != 0 || p.Memory != -1 {
		t.Errorf("integrator: %+v", p)
	}
	// Unstable: the offending poles are named, everything stays finite.
	un := mustDense(t, [][]float64{{1.2, 0}, {0, 0.3}}, []float64{1, 1}, []float64{1, 1}, 0)
	p, err = Analyze(un, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stability != Unstable || len(p.Offending) != 1 || p.Offending[0] != 1.2 || p.Memory != -1 || !p.DCFinite {
		t.Errorf("unstable: %+v", p)
	}
	// Order 0.
	for _, d := range []float64{3, 0} {
		p, err = Analyze(mustDense(t, nil, nil, nil, d), 0)
		if err != nil {
			t.Fatal(err)
		}
		wantMem := 1
		if d == 0 {
			wantMem = 0
		}
		if p.Order != 0 || len(p.Poles) != 0 || p.Stability != Stable ||
			p.SpectralRadius != 0 || p.Montel != 0 || p.Memory != wantMem || p.DCGain != d || !p.DCFinite {
			t.Errorf("gain %v: %+v", d, p)
		}
	}
	// Every form of a random filter gives the same verdict and radius.
	f := randomStable(rand.New(rand.NewPCG(4, 9)), 10, 0.95)
	var ref *Properties
	for _, form := range filters.Forms {
		g, _, err := filters.Convert(f, form)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Analyze(g, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = p
			continue
		}
		if p.Stability != ref.Stability || math.Abs(p.SpectralRadius-ref.SpectralRadius) > 1e-10 ||
			math.Abs(p.Montel-ref.Montel) > 1e-9*ref.Montel || math.Abs(p.DCGain-ref.DCGain) > 1e-10*math.Abs(ref.DCGain) ||
			abs(p.Memory-ref.Memory) > 1 {
			t.Errorf("%s: %+v\nwant %+v", form, p, ref)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// jordanBlock returns the n×n Jordan block at r fed at its last state and read at its first:
// h[t] = C(t-1, n-1)·r^(t-n), 0 before t = n.
func jordanBlock(t *testing.T, n int, r float64) *filters.Dense {
	t.Helper()
	a := make([][]float64, n)
	b, c := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
		a[i][i] = r
		if i+1 < n {
			a[i][i+1] = 1
		}
	}
	b[n-1], c[0] = 1, 1
	return mustDense(t, a, b, c, 0)
}

// TestMemoryMeasured: the memory is measured until the response is over, not over a window
// from the pole radius alone (QA finding 5): the 37×37 Jordan block at 0.3 starts at t = 37,
// peaks at 52 and stays below 1e-12 of its peak from 105 on (mpmath), where the window was 76
// and the memory printed 76; AutoLength covers it too (it gave 38). A response not over
// within MaxAutoLength samples says so (MemoryAtLeast) rather than giving the window.
func TestMemoryMeasured(t *testing.T) {
	f := jordanBlock(t, 37, 0.3)
	p, err := Analyze(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	// |h[t]| = C(t-1, 36)·0.3^(t-37) in logs: the last t above 1e-12·max.
	lh := func(t int) float64 {
		lg1, _ := math.Lgamma(float64(t))
		lg2, _ := math.Lgamma(float64(t - 36))
		lg3, _ := math.Lgamma(37)
		return lg1 - lg2 - lg3 + float64(t-37)*math.Log(0.3)
	}
	peak := math.Inf(-1)
	for tt := 37; tt < 400; tt++ {
		peak = math.Max(peak, lh(tt))
	}
	want := 0
	for tt := 37; tt < 400; tt++ {
		if lh(tt) > peak+math.Log(1e-12) {
			want = tt + 1
		}
	}
	if want != 105 || p.Memory != want || p.MemoryAtLeast {
		t.Errorf("Memory = %d (at least %v), want %d", p.Memory, p.MemoryAtLeast, want)
	}
	if l, err := AutoLength(f, 0); err != nil || l != want {
		t.Errorf("AutoLength = %d, %v, want %d", l, err, want)
	}
	slow, err := filters.NewDiagonal([]complex128{0.99999}, []complex128{1}, 0) // 1e-12 at t = 2.8e6
	if err != nil {
		t.Fatal(err)
	}
	p, err = Analyze(slow, 0)
	if err != nil || !p.MemoryAtLeast || p.Memory != MaxAutoLength {
		t.Errorf("pole 0.99999: Memory %d, at least %v, %v", p.Memory, p.MemoryAtLeast, err)
	}
}

// TestMemoryIgnoresFeedthrough: the memory is the state's, measured against the peak over
// t ≥ 1, so D does not change it: with D = 1e8·|h[1]| this filter of order 4 at 0.9 had
// memory 85 against its peak h[0], where its modes last 260 samples.
func TestMemoryIgnoresFeedthrough(t *testing.T) {
	f := randomStable(rand.New(rand.NewPCG(1, 4)), 4, 0.9)
	f.D = 0
	p, err := Analyze(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := *f
	g.D = 1e8 * math.Abs(f.Impulse(2)[1])
	q, err := Analyze(&g, 0)
	if err != nil || q.Memory != p.Memory || p.Memory < LengthForRadius(0.9, 4, 0)/2 {
		t.Errorf("memory %d with D = 0, %d with D = %.3g (%v)", p.Memory, q.Memory, g.D, err)
	}
}
