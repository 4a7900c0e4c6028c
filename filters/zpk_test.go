package filters

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/ssmlab/ssmlab/internal/numtest"
)

// movingAverageZPK is the moving average of length n in zpk form: the n−1 roots of unity
// other than 1 as zeros, n−1 poles at the origin, gain 1/n, in the package's root order.
func movingAverageZPK(n int) *ZPK {
	zeros := make([]complex128, 0, n-1)
	for k := 1; k < n; k++ {
		zeros = append(zeros, cmplx.Rect(1, 2*math.Pi*float64(k)/float64(n)))
	}
	for k := 1; k < n-k; k++ { // exact conjugates
		zeros[n-1-k] = cmplx.Conj(zeros[k-1])
	}
	if n%2 == 0 {
		zeros[n/2-1] = -1
	}
	return &ZPK{Zeros: SortRoots(zeros), Poles: make([]complex128, n-1), Gain: 1 / float64(n)}
}

// TestZPKImpulseMovingAverage: h[t] = 1/n for t < n and 0 after. In stored order (by
// modulus, then angle) the cascade's partial responses reached 1e14 at n = 200 and 1e59 at
// n = 1000, and h[100] came out as −9.9e13.
func TestZPKImpulseMovingAverage(t *testing.T) {
	for _, n := range []int{8, 200, 1000} {
		f := movingAverageZPK(n)
		want := make([]float64, n+16)
		for i := range n {
			want[i] = 1 / float64(n)
		}
		h, est, ok := f.ImpulseError(len(want))
		e := relErr(h, want)
		// The zeros are roots of unity rounded to float64: a few eps each.
		if e > 1e-13 {
			t.Errorf("n=%d: relative error %.3g", n, e)
		}
		if !ok || est < e || est > 1e-9 {
			t.Errorf("n=%d: error estimate %.3g (ok %v) for an error of %.3g", n, est, ok, e)
		}
		if e2 := relErr(f.Impulse(len(want)), h); e2 != 0 {
			t.Errorf("n=%d: Impulse and ImpulseError differ by %.3g", n, e2)
		}
	}
}

// TestZPKImpulseAllPoleRing: the poles r·e^{iπ(2k+1)/n} make z⁻ⁿ/(1 + rⁿz⁻ⁿ), whose response
// is (−rⁿ)^(t/n − 1) at the multiples t of n and 0 elsewhere; in stored order the cascade of pole
// sections lost every digit at n = 200 (1e22 relative).
func TestZPKImpulseAllPoleRing(t *testing.T) {
	for _, c := range []struct {
		n int
		r float64
	}{{50, 0.9}, {200, 0.98}} {
		poles := make([]complex128, c.n)
		for k := range c.n / 2 {
			p := cmplx.Rect(c.r, math.Pi*float64(2*k+1)/float64(c.n))
			poles[2*k], poles[2*k+1] = p, cmplx.Conj(p)
		}
		f := &ZPK{Poles: SortRoots(poles), Gain: 1}
		want := make([]float64, 4*c.n)
		for t := c.n; t < len(want); t += c.n { // delayed by the n zeros it lacks
			want[t] = math.Pow(-math.Pow(c.r, float64(c.n)), float64(t/c.n-1))
		}
		if e := relErr(f.Impulse(len(want)), want); e > 1e-12 {
			t.Errorf("n=%d: relative error %.3g", c.n, e)
		}
	}
}

// TestZPKImpulseGolden: zpk forms of firwin(201, 0.3) (whose end taps of −2.7e-18 give a
// zero near −7.6e13) and of a random polynomial of degree 300, against their coefficients
// expanded at 600 bits (testdata/golden/zpk/gen_zpk_golden.py). The stored order gave
// errors of 4.8e7 and 670.
func TestZPKImpulseGolden(t *testing.T) {
	var g struct {
		Cases []struct {
			Name    string       `json:"name"`
			Zeros   [][2]float64 `json:"zeros"`
			Poles   int          `json:"poles"`
			Gain    float64      `json:"gain"`
			Impulse []float64    `json:"impulse"`
		} `json:"cases"`
	}
	numtest.ReadJSON(t, "../testdata/golden/zpk/zpk_impulse.json", &g)
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range g.Cases {
		f, err := NewZPK(SortRoots(numtest.Complexes(c.Zeros)), make([]complex128, c.Poles), c.Gain, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		h, est, ok := f.ImpulseError(len(c.Impulse))
		if e := relErr(h, c.Impulse); e > 1e-13 || !ok || est < e || est > 1e-9 {
			t.Errorf("%s: relative error %.3g, estimate %.3g (ok %v)", c.Name, e, est, ok)
		}
	}
}

// TestZPKImpulseMatchesTF: the zpk cascade agrees with the difference equation of the same
// filter's tf form where that form is well conditioned: FIR filters (the denominator zⁿ,
// condition 1) with zeros on the unit circle, in reciprocal pairs (linear phase) or spread
// over an annulus, and low-order IIR filters with poles inside 0.8.
func TestZPKImpulseMatchesTF(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	pair := func(r, a float64) []complex128 {
		p := cmplx.Rect(r, a)
		return []complex128{p, cmplx.Conj(p)}
	}
	for trial := range 60 {
		var zeros, poles []complex128
		kind := trial % 4
		n := 2 * (1 + rng.IntN(150))
		switch kind {
		case 0: // on the circle
			for range n / 2 {
				zeros = append(zeros, pair(1, math.Pi*rng.Float64())...)
			}
		case 1: // reciprocal pairs and pairs on the circle
			for len(zeros) < n {
				r, a := 0.5+rng.Float64(), math.Pi*rng.Float64()
				if len(zeros)+4 <= n && rng.IntN(2) == 0 {
					zeros = append(zeros, pair(r, a)...)
					zeros = append(zeros, pair(1/r, a)...)
				} else {
					zeros = append(zeros, pair(1, a)...)
				}
			}
		case 2: // an annulus
			for range n / 2 {
				zeros = append(zeros, pair(0.3+1.5*rng.Float64(), math.Pi*rng.Float64())...)
			}
		case 3: // IIR, order 2 to 12
			n = 2 * (1 + rng.IntN(6))
			for range n / 2 {
				poles = append(poles, pair(0.8*rng.Float64(), math.Pi*rng.Float64())...)
			}
			for range n/2 - rng.IntN(2) {
				zeros = append(zeros, pair(0.3+1.5*rng.Float64(), math.Pi*rng.Float64())...)
			}
		}
		if poles == nil {
			poles = make([]complex128, n)
		}
		f := &ZPK{Zeros: SortRoots(zeros), Poles: SortRoots(poles), Gain: rng.NormFloat64()}
		tf, rep, err := ToTF(f)
		if err != nil {
			t.Fatal(err)
		}
		if kind == 3 && rep.Condition > 1e4 {
			continue
		}
		l := n + 64
		if e := relErr(f.Impulse(l), tf.Impulse(l)); e > 1e-12*rep.Condition {
			t.Errorf("trial %d (kind %d, order %d): zpk and tf differ by %.3g (tf condition %.3g)", trial, kind, n, e, rep.Condition)
		}
	}
}

// TestCascadeErrorEstimate: the estimate flags the cancelling stored order (the order
// Impulse used before its Leja order) of the moving average of length 200, stays far below
// MaxRelError on random stable filters (it bounds the errors of the tests above), and is
// not made for a response that grows.
func TestCascadeErrorEstimate(t *testing.T) {
	ma := movingAverageZPK(200)
	stored := make([]zpkSection, len(ma.Poles))
	for i := range stored {
		stored[i] = zpkSection{zero: ma.Zeros[i], pole: ma.Poles[i]}
	}
	if _, est := ma.evaluationBound(stored, 216); est < 1 {
		t.Errorf("moving average 200 in stored order: estimate %.3g, want ≥ 1 (its error is 1e16)", est)
	}
	rng := rand.New(rand.NewPCG(5, 9))
	for trial := range 20 {
		n := 2 + rng.IntN(60)
		var zeros, poles []complex128
		for len(poles) < n {
			p := cmplx.Rect(0.99*rng.Float64(), math.Pi*rng.Float64())
			poles = append(poles, p, cmplx.Conj(p))
		}
		for len(zeros)+2 <= n-1 {
			z := cmplx.Rect(2*rng.Float64(), math.Pi*rng.Float64())
			zeros = append(zeros, z, cmplx.Conj(z))
		}
		f := &ZPK{Zeros: SortRoots(zeros), Poles: SortRoots(poles), Gain: 1}
		if _, est, ok := f.ImpulseError(256); !ok || est > 1e-8 {
			t.Errorf("trial %d (order %d): estimate %.3g (ok %v)", trial, n, est, ok)
		}
	}
	// A pole outside the circle: no estimate.
	if _, est, ok := (&ZPK{Zeros: []complex128{0.5}, Poles: []complex128{1.5}, Gain: 1}).ImpulseError(8); ok || est != 0 {
		t.Errorf("unstable pole: estimate %.3g, ok %v", est, ok)
	}
	// A zero that cancels a pole on the circle exactly: the identity, estimated.
	if _, _, ok := (&ZPK{Zeros: []complex128{1}, Poles: []complex128{1, 0.5}, Gain: 1}).ImpulseError(8); !ok {
		t.Error("a pole at 1 cancelled by a zero at 1: no estimate")
	}
}

// TestZPKImpulseMultipleZero: the 300 zeros of a Butterworth filter all lie at −1, so the
// poles decide the order: taken in Leja order the cascade of order 100 rounds at 6e-13
// (1e-10 in pairing order, 5e-4 and 5e3 at orders 200 and 300). At order 300 the Leja order
// amplifies the roundings by 8e10 and rounded at 1e-4 (TestZPKCascadeGolden), so the
// balanced order replaces it (1e-14): the estimate, 0.06 before, is now far below
// MaxRelError, and a conversion, even the copy to zpk that measures 0, says nothing.
func TestZPKImpulseMultipleZero(t *testing.T) {
	for _, c := range []struct {
		n  int
		wc float64
	}{{100, 0.3}, {300, 0.5}} {
		n := c.n
		f := lowpassZPK(n, c.wc, 0)
		_, est, ok := f.ImpulseError(1500)
		if !ok || est > 1e-9 {
			t.Errorf("order %d: estimate %.3g (ok %v), want at most 1e-9", n, est, ok)
		}
		_, rep, err := ToZPK(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Warnings) > 0 {
			t.Errorf("order %d: warnings %q", n, rep.Warnings)
		}
	}
}

// TestZPKBalanceBudget: the balanced order, O(n²·M) for each window length, is sought only within
// balanceBudget: a Butterworth filter of order 300 gets it (its Leja order amplifies the
// roundings by 8e10), one of order 2048 keeps the Leja order (what a length below 2 gives,
// where no order is weighed), and ImpulseError's estimate says what that costs.
func TestZPKBalanceBudget(t *testing.T) {
	for _, c := range []struct {
		n        int
		balanced bool
	}{{300, true}, {2048, false}} {
		f := lowpassZPK(c.n, 0.5, 0)
		if got := !slices.Equal(f.cascade(1500), f.cascade(1)); got != c.balanced {
			t.Errorf("order %d: balanced order %v, want %v", c.n, got, c.balanced)
		}
	}
	if _, est, ok := lowpassZPK(2048, 0.5, 0).ImpulseError(1500); !ok || !(est > 1e-9) {
		t.Errorf("order 2048 in Leja order: estimate %.3g (ok %v), want it to show the rounding", est, ok)
	}
}

// BenchmarkZPKImpulse: the cascade with its Leja order, O(n² + nL) at the first call and
// O(n + nL) after (cascadeOrder).
func BenchmarkZPKImpulse(b *testing.B) {
	for _, n := range []int{200, 1000, 4000} {
		f := movingAverageZPK(n + 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				f.Impulse(n + 64)
			}
		})
	}
}

// cascadeOf is cascade without what the filter keeps (cascadeOrder): the sections of zeros
// and poles for a window of length samples, computed afresh.
func cascadeOf(zeros, poles []complex128, length int) []zpkSection {
	return windowOrder(pairedLeja(zeros, poles), length)
}

// TestZPKCascadeKept: the pairing and order the filter keeps (cascadeOrder) give Impulse
// and ImpulseError bit for bit what cascadeOf computes afresh, at every call, on the zpk
// forms of zpk_cascade.json (the preset HiPPO-LegS of orders 64 and 512, whose Leja order
// the balanced one replaces), a Chebyshev filter and a moving average (whose roots are kept
// unchecked); a second call returns the kept sections rather than computing them again; and
// moving a pole in place, or sharing the roots with another filter, is seen.
func TestZPKCascadeKept(t *testing.T) {
	cases := map[string]*ZPK{"cheby1_16": lowpassZPK(16, 0.02, 1), "moving_average_200": movingAverageZPK(200)}
	for _, c := range readZPKGolden(t, "../testdata/golden/zpk/zpk_cascade.json") {
		cases[c.Name] = c.filter
	}
	same := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	}
	check := func(name string, f *ZPK, length int) {
		t.Helper()
		want := f.impulseOf(cascadeOf(f.Zeros, f.Poles, length), length)
		for call := range 3 {
			if h := f.Impulse(length); !same(h, want) {
				t.Errorf("%s, length %d: Impulse's call %d differs from the order computed afresh by %.3g", name, length, call+1, relErr(h, want))
			}
		}
		if h, _, _ := f.ImpulseError(length); !same(h, want) {
			t.Errorf("%s, length %d: ImpulseError's response differs from the order computed afresh by %.3g", name, length, relErr(h, want))
		}
		if a, b := f.cascade(length), f.cascade(length); len(a) > 0 && &a[0] != &b[0] {
			t.Errorf("%s, length %d: the second call computed the order again", name, length)
		}
	}
	for name, f := range cases {
		for _, length := range []int{1, 2, 300, 4096} {
			check(name, f, length)
		}
	}
	// A pole moved in place, as a caller holding the exported fields may: the kept order is
	// of the old roots.
	f := cases["hippo_legs64_preset"]
	before := f.Impulse(4096)
	f.Poles[0] *= 0.9 // real, as all of this filter's poles
	check("hippo_legs64_preset with a pole moved", f, 4096)
	if same(f.Impulse(4096), before) {
		t.Error("moving a pole in place left the response as it was")
	}
	// Two filters on the same slices with different gains (as scaledBy makes them).
	g := &ZPK{Zeros: f.Zeros, Poles: f.Poles, Gain: 2 * f.Gain}
	check("the same roots with twice the gain", g, 4096)
}

// TestZPKCascadeKeptConcurrent: goroutines asking one new filter for its response at once
// (Filter's methods are safe for concurrent use) all get the response computed afresh; run
// with -race, it checks that what the filter keeps is shared safely.
func TestZPKCascadeKeptConcurrent(t *testing.T) {
	c := readZPKGolden(t, "../testdata/golden/zpk/zpk_cascade.json")[0]
	if c.Name != "hippo_legs64_preset" {
		t.Fatalf("zpk_cascade.json's first case is %s, want the preset HiPPO-LegS of order 64", c.Name)
	}
	f := c.filter
	lengths := []int{300, c.Length}
	want := make([][]float64, len(lengths))
	for i, l := range lengths {
		want[i] = f.impulseOf(cascadeOf(f.Zeros, f.Poles, l), l)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range lengths {
				i := (g + k) % len(lengths)
				if h := f.Impulse(lengths[i]); relErr(h, want[i]) != 0 {
					errs <- fmt.Sprintf("goroutine %d, length %d: differs by %.3g", g, lengths[i], relErr(h, want[i]))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkZPKImpulseRepeated: Impulse asked again of one filter over one window, as a
// report or a redrawn plot asks it, on zpk filters whose cascade weighs and balances its
// order (zpk_cascade.json: the preset HiPPO-LegS of order 64, Butterworth of order 300).
func BenchmarkZPKImpulseRepeated(b *testing.B) {
	cases := readZPKGolden(b, "../testdata/golden/zpk/zpk_cascade.json")
	for _, name := range []string{"hippo_legs64_preset", "butter300"} {
		i := slices.IndexFunc(cases, func(c zpkGoldenCase) bool { return c.Name == name })
		if i < 0 {
			b.Fatalf("zpk_cascade.json has no case %s", name)
		}
		c := cases[i]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				c.filter.Impulse(c.Length)
			}
		})
	}
}

// estTrust is how far above the larger of the stored numbers' error and the cascade's own
// ImpulseError's estimate may lie: the cascade's part bounds its roundings for their worst
// signs, which they do not take (measured: 6 to 160, the largest for S4D-Lin poles, whose
// cascade errs by 5.5e-15 and is bounded by 7e-12).
const estTrust = 200

// zpkGoldenCase is a case of the goldens of exact zpk impulse responses (zpk_error.json,
// zpk_cascade.json in testdata/golden/zpk).
type zpkGoldenCase struct {
	Name      string       `json:"name"`
	Zeros     [][2]float64 `json:"zeros"`
	Poles     [][2]float64 `json:"poles"`
	Gain      float64      `json:"gain"`
	Length    int          `json:"length"`
	Perturbed float64      `json:"perturbed"` // zpk_error.json's alone
	Impulse   []float64    `json:"impulse"`
	filter    *ZPK
}

// readZPKGolden reads such a golden's cases, each with its filter.
func readZPKGolden(t testing.TB, path string) []zpkGoldenCase {
	t.Helper()
	var g struct {
		Cases []zpkGoldenCase `json:"cases"`
	}
	numtest.ReadJSON(t, path, &g)
	if len(g.Cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	for i := range g.Cases {
		c := &g.Cases[i]
		var err error
		if c.filter, err = NewZPK(numtest.Complexes(c.Zeros), numtest.Complexes(c.Poles), c.Gain, 0); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
	}
	return g.Cases
}

// TestZPKErrorEstimateGolden: ImpulseError's estimate against exact arithmetic
// (testdata/golden/zpk/gen_zpk_error_golden.py) on Butterworth filters of orders 24, 48 and
// 64 at ωc = 0.001 (poles clustered near z = 1), a Chebyshev filter, HiPPO-LegS and S4D-Lin
// poles and random filters, each over its window. The stored numbers' part must lie above
// the error of moving every stored number by one ulp (the worst signs found and four random
// draws, the largest of them) and within storeTrust of it; the whole estimate above that and
// above the cascade's own error, and within estTrust of the larger. The estimate was 7e-5,
// 2e18 and 3e36 for the Butterworth filters, whose stored numbers fix their responses to
// 4.5e-13 and whose cascade errs by 2e-15 and less (analysis QA finding 8).
func TestZPKErrorEstimateGolden(t *testing.T) {
	// storeTrust: each root's part is added without cancellation, each part of a root
	// bounded by ε·|q| where its ulp may be half that (measured: 1.6 to 5.5).
	const storeTrust = 10
	for _, c := range readZPKGolden(t, "../testdata/golden/zpk/zpk_error.json") {
		f := c.filter
		h, est, ok := f.ImpulseError(c.Length)
		stored := f.storageError(h)
		e := relErr(h, c.Impulse)
		worst := max(e, c.Perturbed)
		t.Logf("%s: estimate %.3g (stored numbers %.3g), stored numbers' error %.3g, cascade's error %.3g", c.Name, est, stored, c.Perturbed, e)
		if stored < c.Perturbed || stored > storeTrust*c.Perturbed {
			t.Errorf("%s: the stored numbers' estimate %.3g for their error %.3g: want within [1, %d] times it", c.Name, stored, c.Perturbed, storeTrust)
		}
		if !ok || est < worst || est > estTrust*worst {
			t.Errorf("%s: estimate %.3g (ok %v) for errors of %.3g (stored numbers) and %.3g (cascade): want within [1, %d] times the larger", c.Name, est, ok, c.Perturbed, e, estTrust)
		}
	}
}

// TestZPKCascadeGolden: the cascade against exact arithmetic
// (testdata/golden/zpk/gen_zpk_cascade_golden.py) on filters whose partial products cancel in
// a careless order: the zpk forms of the presets HiPPO-LegS of orders 64 and 512 and
// HiPPO-LagT of order 384, which the Leja order after pairing each zero in stored order got
// wrong by 3.96, 1e122 and 2e7 (estimates 223, 172 and 1.6e3), a HiPPO-LegS filter of order
// 64 at dt = 0.01 (9e-4), Butterworth filters of order 48 at ωc = 0.001 and of order 300
// (1e-4), and zeros within a pole spacing of real poles. The cascade's error must lie below
// the stored numbers' (their estimate, storageError), and ImpulseError's estimate above the
// error and within estTrust of the larger of the two.
func TestZPKCascadeGolden(t *testing.T) {
	for _, c := range readZPKGolden(t, "../testdata/golden/zpk/zpk_cascade.json") {
		f := c.filter
		h, est, ok := f.ImpulseError(c.Length)
		stored := f.storageError(h)
		e := relErr(h, c.Impulse)
		t.Logf("%s: cascade's error %.3g, stored numbers' estimate %.3g, estimate %.3g", c.Name, e, stored, est)
		if e > stored {
			t.Errorf("%s: the cascade errs by %.3g, above the stored numbers' %.3g", c.Name, e, stored)
		}
		if !ok || est < e || est > estTrust*max(e, stored) {
			t.Errorf("%s: estimate %.3g (ok %v) for errors of %.3g (cascade) and %.3g (stored numbers): want within [1, %d] times the larger", c.Name, est, ok, e, stored, estTrust)
		}
		if e2 := relErr(f.Impulse(c.Length), h); e2 != 0 {
			t.Errorf("%s: Impulse and ImpulseError differ by %.3g", c.Name, e2)
		}
	}
}
