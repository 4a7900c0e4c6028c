package filters

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// jordanSum is a dense filter of two Jordan blocks side by side, each fed at its last state
// and read at its first: a block of k1 at r1 plus eps times one of k2 at r2.
func jordanSum(k1 int, r1 float64, k2 int, r2, eps float64) *Dense {
	n := k1 + k2
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	b, c := make([]float64, n), make([]float64, n)
	for _, blk := range []struct {
		off, k int
		r, b   float64
	}{{0, k1, r1, 1}, {k1, k2, r2, eps}} {
		for i := blk.off; i < blk.off+blk.k; i++ {
			a[i][i] = blk.r
			if i+1 < blk.off+blk.k {
				a[i][i+1] = 1
			}
		}
		b[blk.off+blk.k-1], c[blk.off] = blk.b, 1
	}
	d, err := NewDense(a, b, c, 0)
	if err != nil {
		panic(err)
	}
	return d
}

// TestCompareBanksLateDifference: a read-back that differs from the filter only after the
// radius's window is caught. The filter is a Jordan block of 37 at 0.3 (0 for 36 samples,
// peaking at t = 52); its copy adds a tiny block of 25 at 0.9, 0 for 24 samples and peaking
// near t = 24/ln(1/0.9) ≈ 228, scaled to 1e-2 of the filter's norm. Over ReportLength of
// the filter's radius and the copy's order (64 samples) the two agree to far better than
// MaxRelError; over the whole response they differ by 1e-2. CompareBanks compared the 64
// samples and passed the copy.
func TestCompareBanksLateDifference(t *testing.T) {
	const horizon = 4096 // both responses have fallen below 1e-100 of their peaks by then
	want := jordanBlock(37, 0.3)
	h := want.Impulse(horizon)
	g := jordanSum(37, 0.3, 25, 0.9, 1).Impulse(horizon) // the block of 37 plus the whole tail block
	for i := range g {
		g[i] -= h[i]
	}
	eps := 1e-2 * floats.Norm(h, 2) / floats.Norm(g, 2)
	got := jordanSum(37, 0.3, 25, 0.9, eps)

	short := ReportLength(0.3, got.Order())
	if e := RelDiff(want.Impulse(short), got.Impulse(short)); !(e < MaxRelError/100) {
		t.Fatalf("the copy differs by %.3g over the first %d samples: the test needs a difference that shows only later", e, short)
	}
	whole := RelDiff(h, got.Impulse(horizon))
	errs := make([]float64, 1)
	worst, ch, samples, cut := CompareBanks(errs, []Filter{want}, []Filter{got}, 0, 1<<40)
	if !(worst > MaxRelError) || ch != 0 || errs[0] != worst || cut {
		t.Errorf("CompareBanks: %.3g on channel %d over %d samples (cut %v), want above %g (%.3g over %d samples)", worst, ch, samples, cut, MaxRelError, whole, horizon)
	}
	if math.Abs(worst-whole) > 1e-6*whole {
		t.Errorf("CompareBanks: %.6g over %d samples, %.6g over %d: the window misses part of the difference", worst, samples, whole, horizon)
	}
	// The copy is judged as its conversion report would be: the same window.
	start, limit := comparisonWindow(0.3, got.Order())
	if d, _ := MeasureDecay(decayTol, start, limit, func(l int) ([][]float64, error) {
		return [][]float64{want.Impulse(l), got.Impulse(l)}, nil
	}); d.Length != samples || d.AtLeast {
		t.Errorf("CompareBanks compared %d samples, MeasureDecay's window is %+v", samples, d)
	}
}

// TestCompareBanksAsReports: with n = 0, CompareBanks compares a filter and its conversion
// over the window the conversion's report measured, and finds the same error: the Jordan
// block of 37 at 0.3 and its tf form (1.41e-6 over its whole response, mpmath, after 64
// samples of 5.9e-7), and a fast mode with a tiny chain that rises again after sample 81.
func TestCompareBanksAsReports(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Filter
	}{
		{"Jordan 37 at 0.3", jordanBlock(37, 0.3)},
		{"mode 0.5 + 1e-20·Jordan 60 at 0.3", chainFilter(0.5, 60, 0.3, 1e-20).f},
		{"Jordan 5 at 0.9", jordanBlock(5, 0.9)},
	} {
		out, rep, err := Convert(c.f, FormTF)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		worst, _, samples, cut := CompareBanks(nil, []Filter{c.f}, []Filter{out}, 0, 1<<40)
		if samples != rep.Length || worst != rep.RelError || cut {
			t.Errorf("%s: CompareBanks %.3g over %d samples (cut %v), the report %.3g over %d", c.name, worst, samples, cut, rep.RelError, rep.Length)
		}
	}
}

// TestCompareBanksBudget: where comparing the window would cost more than maxWork
// multiply-adds, fewer samples are compared and cut says so, for a window given (n) and one
// measured (n = 0), whose Jordan block of 37 at 0.3 is above 1e-12 of its peak until
// t = 104 (TestMeasureDecayProperty), so that the window doubles from its start until
// 2·105 ≤ window + 1.
func TestCompareBanksBudget(t *testing.T) {
	f := jordanBlock(37, 0.3)
	perSample := 2*sampleCost(f) + 1
	measured, _ := comparisonWindow(0.3, f.Order())
	for 2*105 > measured+1 {
		measured *= 2
	}
	full, _, samples, _ := CompareBanks(nil, []Filter{f}, []Filter{f}, 0, 1<<40)
	if full != 0 || samples != measured {
		t.Fatalf("a filter against itself: %.3g over %d samples, want 0 over %d", full, samples, measured)
	}
	for _, c := range []struct {
		n, budget, want int
		cut             bool
	}{
		{0, 100, 100, true},            // the window is cut before the response has decayed
		{0, measured, measured, false}, // the budget allows the window measured
		{0, 1000, measured, false},
		{500, 100, 100, true}, // fewer samples than asked for
		{50, 100, 50, false},
	} {
		_, _, samples, cut := CompareBanks(nil, []Filter{f}, []Filter{f}, c.n, int(perSample)*c.budget)
		if samples != c.want || cut != c.cut {
			t.Errorf("n %d, budget of %d samples: %d samples, cut %v; want %d, %v", c.n, c.budget, samples, cut, c.want, c.cut)
		}
	}
}

// TestWindowHoldsLateRise: a fast mode at 0.5 plus 1e-20 times a Jordan block of 80 at 0.3
// falls below 1e-12 of its peak at t = 41 and rises above it again from t = 92 to 144,
// beyond the radius's first window of order + 1 = 82 samples, where the rule of MeasureDecay
// (the last sample above in the first half) is already met. A conversion's report and
// CompareBanks start from twice the order + 1 and hold the rise: the window they compare
// extends past twice the last sample above 1e-12 of the peak, found here from the closed
// form.
func TestWindowHoldsLateRise(t *testing.T) {
	c := chainFilter(0.5, 80, 0.3, 1e-20)
	lh := c.logH(4096)
	peak := math.Inf(-1)
	for _, v := range lh[1:] {
		peak = max(peak, v)
	}
	last := 0 // 1 + the last t with |h[t]| above 1e-12 of the peak
	for i := len(lh) - 1; i >= 1; i-- {
		if lh[i] > peak+math.Log(decayTol) {
			last = i + 1
			break
		}
	}
	if first := ReportLength(c.rho, c.f.Order()); last <= first {
		t.Fatalf("the chain's rise ends at t = %d, within the radius's window of %d samples: the test needs it beyond", last, first)
	}
	out, rep, err := Convert(c.f, FormDense)
	if err != nil {
		t.Fatal(err)
	}
	if 2*last > rep.Length+1 {
		t.Errorf("%s: the report compares %d samples, the response is above 1e-12 of its peak until t = %d", c.name, rep.Length, last-1)
	}
	if _, _, samples, _ := CompareBanks(nil, []Filter{c.f}, []Filter{out}, 0, 1<<40); samples != rep.Length {
		t.Errorf("%s: CompareBanks compares %d samples, the report %d", c.name, samples, rep.Length)
	}
}

// TestRelErrorFloor: a nonzero measured error below RelErrorFloor is reported as the floor, in
// a conversion's report and in CompareBanks; 0 (responses equal bit for bit) stays 0. The tf
// with poles 4 and 1 and its rotation form agree bit for bit where their responses reach
// 1e307 and measured 2.7e-307, while the two filters' exact responses differ by 1.8e-16
// (mpmath; analysis QA N4).
func TestRelErrorFloor(t *testing.T) {
	tf := &TransferFunction{Num: []float64{1, 0.3}, Den: []float64{-5, 4}}
	rot, rep, err := Convert(tf, FormRotation)
	if err != nil {
		t.Fatal(err)
	}
	if raw := RelDiff(tf.Impulse(rep.Length), rot.Impulse(rep.Length)); !(raw > 0 && raw < RelErrorFloor) {
		t.Fatalf("the responses differ by %.3g: no longer a case below the floor", raw)
	}
	if rep.RelError != RelErrorFloor {
		t.Errorf("tf → rotation: rel error %.3g, want the floor %.3g", rep.RelError, RelErrorFloor)
	}
	if worst, _, _, _ := CompareBanks(nil, []Filter{tf}, []Filter{rot}, 0, 1<<30); worst != RelErrorFloor {
		t.Errorf("CompareBanks: %.3g, want the floor %.3g", worst, RelErrorFloor)
	}
	_, rep, err = Convert(tf, FormTF)
	if err != nil || rep.RelError != 0 {
		t.Errorf("a copy: rel error %.3g (%v), want 0", rep.RelError, err)
	}
}

// TestReportCatchesUnstableHeadError: a conversion's report measures an unstable filter's
// first 2(N + 1) samples on their own, as CompareBanks does (one rule, comparison.relError).
// A result of the filter of poles {0, 1.5} and residues {1, 2} without its tap at t = 1
// differs from it by 1/‖h‖ = 0.073 over its first 6 samples (h = 0, 3, 3, 4.5, … against
// 0, 2, 3, …) and by 2.2e-16 over the whole window, where the response grows to 1e90: the
// report said 2.2e-16, accurate.
func TestReportCatchesUnstableHeadError(t *testing.T) {
	in := &Diagonal{Poles: []complex128{0, 1.5}, Residues: []complex128{1, 2}}
	noTap := &Diagonal{Poles: []complex128{1.5}, Residues: []complex128{2}}
	if whole := RelDiff(in.Impulse(512), noTap.Impulse(512)); !(whole < MaxRelError) {
		t.Fatalf("the test's premise: the whole window's error %.3g hides the tap", whole)
	}
	rep := measure(in, noTap, exact)
	if !(rep.RelError > 0.05) || !rep.Inaccurate() {
		t.Errorf("the filter without its tap: report's relative error %.3g over %d samples (inaccurate %v), want above 0.05", rep.RelError, rep.Length, rep.Inaccurate())
	}
	if worst, _, _, _ := CompareBanks(nil, []Filter{in}, []Filter{noTap}, 0, 1<<30); worst != rep.RelError {
		t.Errorf("CompareBanks measures %.3g, the report %.3g", worst, rep.RelError)
	}
	// A conversion that keeps the tap is reported accurate.
	if _, rep, err := Convert(in, FormZPK); err != nil || rep.Inaccurate() {
		t.Errorf("diagonal → zpk: %+v, %v", rep, err)
	}
}
