package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/numtest"
)

// TestImpulseAgreement is the acceptance test: the four algorithms agree to agreeTol
// (1e-10 relative L2) on random stable systems up to n = 256 and L = 16384. The dense form is
// the input, so each method runs a different computation: the state recurrence, the FFT
// kernel of the tf form (a circle-sampled conversion), the modal sum and the scan (an
// eigendecomposition). Radii 0.99 and 0.999 make the long responses matter.
func TestImpulseAgreement(t *testing.T) {
	orders := []int{1, 2, 3, 8, 16, 64, 256}
	length := 16384
	if testing.Short() {
		orders, length = orders[:6], 4096
	}
	for _, n := range orders {
		for k, rho := range []float64{0.9, 0.99, 0.999} {
			if n == 256 && k > 0 && testing.Short() {
				continue
			}
			rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
			f := randomStable(rng, n, rho)
			t.Run(fmt.Sprintf("n=%d/rho=%g", n, rho), func(t *testing.T) {
				t.Logf("worst relative difference from the recurrence over %d samples: %.2g", length, checkAgreement(t, f, length))
			})
		}
	}
}

// checkAgreement compares every method with the recurrence and returns the worst difference.
func checkAgreement(t *testing.T, f filters.Filter, length int) float64 {
	t.Helper()
	ref, err := Impulse(nil, f, length, Recurrence)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, m := range Methods[1:] {
		got, err := Impulse(nil, f, length, m)
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		e := relErr(got, ref)
		worst = math.Max(worst, e)
		if e > agreeTol {
			t.Errorf("%s differs from the recurrence by %.3g (limit %g)", m, e, agreeTol)
		}
	}
	return worst
}

// TestScanSameOnAnyThreadCount: the scan gives the same bits on 1, 2, 3 and 8 threads.
// It cut time into GOMAXPROCS chunks, and the chunking orders the products: on 8 threads
// a slowly decaying response differed from the one-thread one in a third of its samples.
func TestScanSameOnAnyThreadCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(9, 9))
	var poles, res []complex128
	for range 4 {
		p := cmplx.Rect(0.9995+0.0004*rng.Float64(), math.Pi*rng.Float64())
		r := complex(rng.NormFloat64(), rng.NormFloat64())
		poles, res = append(poles, p, cmplx.Conj(p)), append(res, r, cmplx.Conj(r))
	}
	f, err := filters.NewDiagonal(poles, res, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	for _, L := range []int{scanParallelMin + 1, 20000, 1<<16 + 1} {
		runtime.GOMAXPROCS(1)
		want, err := Impulse(nil, f, L, Scan)
		if err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{2, 3, 8} {
			runtime.GOMAXPROCS(procs)
			got, err := Impulse(nil, f, L, Scan)
			if err != nil {
				t.Fatal(err)
			}
			differ := 0
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					differ++
				}
			}
			if differ > 0 {
				t.Errorf("L = %d: %d of %d samples differ on %d threads from one thread", L, differ, L, procs)
			}
		}
	}
}

// TestImpulseEveryForm runs every method on every form of one filter.
func TestImpulseEveryForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	base := randomStable(rng, 12, 0.97)
	want := base.Impulse(3000)
	for _, form := range filters.Forms {
		f, _, err := filters.Convert(base, form)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range Methods {
			got, err := Impulse(nil, f, len(want), m)
			if err != nil {
				t.Errorf("%s %s: %v", form, m, err)
				continue
			}
			if e := relErr(got, want); e > agreeTol {
				t.Errorf("%s %s: differs by %.3g", form, m, e)
			}
		}
	}
}

// TestImpulseRTF checks the methods on transfer functions under Montel's constraint (the RTF
// initialisation), whose poles lie near |z| = (Σ|a|)^{1/n}·… close to the circle: n = 256 has
// its poles at |z| ≈ 0.98.
func TestImpulseRTF(t *testing.T) {
	for _, n := range []int{4, 64, 256} {
		rng := rand.New(rand.NewPCG(11, uint64(n)))
		f := montelTF(rng, n, 0.9)
		t.Run(fmt.Sprint(n), func(t *testing.T) { checkAgreement(t, f, 8192) })
	}
}

func TestImpulseUnstableAndMarginal(t *testing.T) {
	// Unstable but finite over the length: 1.01^600 ≈ 390. Every method agrees, the FFT
	// kernel included (eq. 13 holds for any A).
	un, err := filters.NewDiagonal([]complex128{complex(1.01*math.Cos(0.3), 1.01*math.Sin(0.3)), complex(1.01*math.Cos(0.3), -1.01*math.Sin(0.3)), 0.5},
		[]complex128{complex(1, 2), complex(1, -2), 3}, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	checkAgreement(t, un, 600)
	dense, _, err := filters.ToDense(un)
	if err != nil {
		t.Fatal(err)
	}
	checkAgreement(t, dense, 600)

	// Marginal: a rotation on the circle at an angle that is no FFT root of unity.
	marg, err := filters.NewDiagonal([]complex128{cmplx.Rect(1, 1), cmplx.Rect(1, -1), 0.9}, []complex128{1i, -1i, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkAgreement(t, marg, 5000)

	// Overflow is an error naming the first bad sample, for every method but the FFT method,
	// which already overflows in the correction b̃ = b - b·A^L (10^400).
	big, err := filters.NewDiagonal([]complex128{10}, []complex128{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Methods {
		if m == FFT {
			continue
		}
		_, err := Impulse(nil, big, 400, m)
		var nf *NonFiniteError
		if !errors.As(err, &nf) || nf.What != "impulse" || nf.Index < 300 || nf.Index > 320 {
			t.Errorf("%s: err = %v, want a NonFiniteError near impulse[310]", m, err)
		}
	}
}

// TestFFTOverflowWithin: where the FFT method overflows on an unstable filter (in b̃ = b −
// b·A^L, or in the transforms of a b̃ near float64's limit), its error says so with the
// spectral radius and an estimate of the response's first sample that overflows, within a
// few samples below the one the recurrence names; it named b̃ ("b̃[0] is -Inf"), an
// internal quantity, or a kernel sample the response does not overflow at ("kernel[1] is
// NaN" at 1750 samples, where the response first overflows at 1752). The step response
// says step.
func TestFFTOverflowWithin(t *testing.T) {
	for _, c := range []struct {
		a, b   []float64
		radius float64
	}{
		{[]float64{-1.5}, []float64{1}, 1.5},
		{[]float64{-10}, []float64{1}, 10},
		{[]float64{-2.5, 1.2}, []float64{3, 1}, 0},
	} {
		f, err := filters.NewTransferFunction(c.a, c.b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.radius == 0 {
			if c.radius, err = SpectralRadius(f); err != nil {
				t.Fatal(err)
			}
		}
		var nf *NonFiniteError
		if _, err := Impulse(nil, f, 4000, Recurrence); !errors.As(err, &nf) {
			t.Fatalf("%v: the recurrence: %v", c.a, err)
		}
		for _, n := range []int{4000, nf.Index - 2} {
			for _, step := range []bool{false, true} {
				var err error
				what := "impulse"
				if step {
					_, err = Step(nil, f, n, FFT)
					what = "step"
				} else {
					_, err = Impulse(nil, f, n, FFT)
				}
				var ow *OverflowWithinError
				if !errors.As(err, &ow) || ow.What != what || ow.Length != n || math.Abs(ow.Radius-c.radius) > 1e-12*c.radius || ow.Near > nf.Index || ow.Near < nf.Index-3 {
					t.Errorf("%v, %s over %d: err = %v (%+v), want an *OverflowWithinError near %d", c.a, what, n, err, ow, nf.Index)
					continue
				}
				if msg := err.Error(); strings.Contains(msg, "b̃") || !strings.Contains(msg, fmt.Sprintf("near sample %d", ow.Near)) {
					t.Errorf("%v over %d: %q", c.a, n, msg)
				}
			}
		}
	}

	// An integrator (pole at z = 1) has a(1) = 0 at every FFT length: the FFT method fails,
	// saying that a pole lies on its grid (a NonFiniteError, which the CLI read as "the
	// response overflows float64; --impulse 1 stops before it", misled: nothing overflows);
	// the others give the step 0, 1, 1, 1, ….
	integ, err := filters.NewTransferFunction([]float64{-1}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Methods {
		h, err := Impulse(nil, integ, 50, m)
		if m == FFT {
			var nf *NonFiniteError
			if !errors.Is(err, filters.ErrIllConditioned) || errors.As(err, &nf) || !strings.Contains(err.Error(), "a pole lies on it (ω = 0π)") {
				t.Errorf("fft of an integrator: err = %v, want ErrIllConditioned naming the pole on the grid", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		for i, v := range h {
			if want := math.Min(float64(i), 1); math.Abs(v-want) > 1e-15 {
				t.Fatalf("%s: h[%d] = %v, want %v", m, i, v, want)
			}
		}
	}
}

// TestFFTRefusalNamesTheDifference: the fft method's refusal of a filter whose tf form does
// not hold it says what was measured (the two impulse responses' difference, over how many
// samples) apart from the conversion's condition; it read "holds this filter only to a relative
// error of 1 (… condition 1)" (QA finding 13). A tf form that is unstable where the filter is
// stable is refused as such: over 8 samples its response does not overflow, and the kernel
// came back 11% off (h[1] 17.85 for 20) with no error.
func TestFFTRefusalNamesTheDifference(t *testing.T) {
	pairs := func(r, lo, hi float64, k int) filters.Filter {
		var poles, res []complex128
		for i := 0; i < k; i++ {
			p := cmplx.Rect(r, lo+(hi-lo)*float64(i)/float64(k-1))
			poles = append(poles, p, cmplx.Conj(p))
			res = append(res, 1, 1)
		}
		f, err := filters.NewDiagonal(poles, res, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		f    filters.Filter
		want []string
	}{
		// 16 pairs at radius 0.9: a stable tf form 2.4e-3 off.
		{pairs(0.9, 0.3, 1.5, 16), []string{"the impulse responses of this diagonal filter and of its tf form differ by ", " relative over ", " samples, above the documented 1e-06 (the conversion's condition, of "}},
		// 10 pairs clustered at radius 0.97: the polynomial puts roots outside the circle.
		{pairs(0.97, 0.01, 0.29, 10), []string{"the tf form of this stable diagonal filter is unstable", "the recurrence, vandermonde and scan methods use the filter as it is"}},
	} {
		_, err := Impulse(nil, c.f, 8, FFT)
		if !errors.Is(err, filters.ErrIllConditioned) {
			t.Errorf("order %d: err = %v", c.f.Order(), err)
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v\nwant %q", err, want)
			}
		}
	}
}

func TestImpulseOrderZero(t *testing.T) {
	gains := []filters.Filter{}
	for _, form := range filters.Forms {
		f, _, err := filters.Convert(mustDense(t, nil, nil, nil, -1.5), form)
		if err != nil {
			t.Fatal(err)
		}
		gains = append(gains, f)
	}
	for _, f := range gains {
		for _, m := range Methods {
			h, err := Impulse(nil, f, 5, m)
			if err != nil {
				t.Fatalf("%s %s: %v", f.Form(), m, err)
			}
			if want := []float64{-1.5, 0, 0, 0, 0}; numtest.MaxAbsDiff(h, want) != 0 {
				t.Errorf("%s %s: %v, want %v", f.Form(), m, h, want)
			}
			s, err := Step(nil, f, 3, m)
			if err != nil || numtest.MaxAbsDiff(s, []float64{-1.5, -1.5, -1.5}) != 0 {
				t.Errorf("%s %s: step %v, %v", f.Form(), m, s, err)
			}
		}
		if h, err := Impulse(nil, f, 0, Recurrence); err != nil || len(h) != 0 {
			t.Errorf("length 0: %v, %v", h, err)
		}
	}
}

func TestImpulseDst(t *testing.T) {
	f := randomStable(rand.New(rand.NewPCG(1, 2)), 4, 0.5)
	dst := make([]float64, 10)
	for i := range dst {
		dst[i] = 99 // stale contents must be overwritten
	}
	for _, m := range Methods {
		got, err := Impulse(dst, f, 10, m)
		if err != nil || &got[0] != &dst[0] {
			t.Fatalf("%s: the result does not use dst (%v)", m, err)
		}
		if e := relErr(got, f.Impulse(10)); e > 1e-13 {
			t.Errorf("%s into a used dst: differs by %.3g", m, e)
		}
	}
	for _, bad := range []func(){
		func() { _, _ = Impulse(make([]float64, 3), f, 4, Recurrence) },
		func() { _, _ = Impulse(nil, f, -1, Recurrence) },
		func() { _, _ = Impulse(nil, f, 4, Method("horner")) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Error("no panic")
				} else if s, ok := r.(string); !ok || s[:10] != "analysis: " {
					t.Errorf("panic %v does not start with \"analysis: \"", r)
				}
			}()
			bad()
		}()
	}
}

func TestParseMethod(t *testing.T) {
	for _, m := range Methods {
		if got, err := ParseMethod(string(m)); got != m || err != nil {
			t.Errorf("ParseMethod(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := ParseMethod("horner"); !errors.Is(err, filters.ErrInvalid) {
		t.Errorf("ParseMethod(horner): %v", err)
	}
}

func TestStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	f := randomStable(rng, 6, 0.95)
	h := f.Impulse(2000)
	for _, m := range Methods {
		s, err := Step(nil, f, 2000, m)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for i, v := range h {
			sum += v
			if math.Abs(s[i]-sum) > 1e-11*(1+math.Abs(sum)) {
				t.Fatalf("%s: s[%d] = %v, running sum %v", m, i, s[i], sum)
			}
		}
	}
	// The step response settles at the DC gain H(1).
	dc := real(f.FreqResponse([]float64{0})[0])
	if s, _ := Step(nil, f, 2000, Vandermonde); math.Abs(s[1999]-dc) > 1e-10*math.Abs(dc) {
		t.Errorf("step settles at %v, DC gain %v", s[1999], dc)
	}
}

func TestLengthForRadius(t *testing.T) {
	for _, c := range []struct {
		rho  float64
		n    int
		tol  float64
		want int
	}{
		{0.5, 2, 1e-12, 41},                  // ⌈log 1e-12 / log 0.5⌉ + 1 = 40 + 1
		{0.9, 2, 0, 264},                     // DefaultTol: ⌈262.3⌉ + 1
		{0.999, 8, 1e-6, 13810},              // ⌈13808.6⌉ + 1
		{0, 5, 0, 6},                         // poles at 0: n + 1 samples
		{0.1, 40, 0, 41},                     // at least n + 1
		{1, 2, 0, MaxAutoLength},             // marginal
		{1 - 1e-12, 2, 0, MaxAutoLength},     // on the circle within MarginalTol
		{1.1, 2, 1e-12, 291},                 // grows by 1e12: ⌈289.9⌉ + 1
		{0.9999999, 2, 0, MaxAutoLength},     // capped
		{math.NaN(), 2, 0, MaxAutoLength},    // defined anyway
		{0.5, 0, 2, 2},                       // tol ≥ 1 is read as 0.5
		{1e-301, 3, 0, 4},                    // underflowing radius: n + 1
		{math.Inf(1), 3, 0, MaxAutoLength},   //
		{1 + 2e-10, 3, 1e-12, MaxAutoLength}, // barely unstable: capped
		{0.99, 1, 1e-300, MaxAutoLength},     // tiny tolerance: capped
		{0.25, 0, 0.25, 2},                   // one step to decay
		{0.5, 0, 1e-3, 11},                   // ⌈9.97⌉ + 1
		{0.5, 100000, 1e-3, MaxAutoLength},   // order beyond the cap
		{2, 0, 1e-3, 11},                     // grows by 1e3
		{0.5, 3, 1e-300, 998},                // ⌈996.6⌉ + 1
	} {
		if got := LengthForRadius(c.rho, c.n, c.tol); got != c.want {
			t.Errorf("LengthForRadius(%v, %d, %v) = %d, want %d", c.rho, c.n, c.tol, got, c.want)
		}
	}
	f := randomStable(rand.New(rand.NewPCG(2, 2)), 5, 0.9)
	// The radius gives 264; the response, a sum of five modes, stays above 1e-12 of its peak
	// one sample longer, and AutoLength measures that.
	if l, err := AutoLength(f, 0); err != nil || l != 265 {
		t.Errorf("AutoLength = %d, %v, want 265", l, err)
	}
}

// TestImpulseFlushesUnderflow: the recurrences of every form and the modal methods leave no
// subnormal number in a response that decays past 2^-1022 within its samples (poles of radius
// 0.7 and 0.6: package underflow), and flush relative to the filter's scale, not at an
// absolute threshold: the filter scaled by 2^-780 gives the response scaled by 2^-780.
func TestImpulseFlushesUnderflow(t *testing.T) {
	const length, scale = 8192, 0x1p-780
	p := cmplx.Rect(0.7, 0.5)
	build := func(s float64) *filters.Diagonal {
		r := complex(0.3*s, 0.2*s)
		d, err := filters.NewDiagonal([]complex128{p, cmplx.Conj(p), 0.6}, []complex128{r, cmplx.Conj(r), complex(0.5*s, 0)}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, form := range filters.Forms {
		for _, m := range []Method{Recurrence, Vandermonde} {
			if m == Vandermonde && form != filters.FormDiagonal {
				continue // the same modes as the diagonal form's
			}
			var h [2][]float64
			for i, s := range []float64{1, scale} {
				f, _, err := filters.Convert(build(s), form)
				if err != nil {
					t.Fatal(err)
				}
				if h[i], err = Impulse(nil, f, length, m); err != nil {
					t.Fatal(err)
				}
				if m == Recurrence && s == 1 { // the form's own, which Recurrence uses but for the diagonal form
					for i, v := range f.Impulse(length) {
						if v != 0 && math.Abs(v) < 0x1p-1022 {
							t.Errorf("%s: its Impulse's h[%d] = %g is subnormal", form, i, v)
							break
						}
					}
				}
			}
			top := 0.0
			for i, v := range h[0] {
				if v != 0 && math.Abs(v) < 0x1p-1022 {
					t.Errorf("%s, %s: h[%d] = %g is subnormal", form, m, i, v)
					break
				}
				top = math.Max(top, math.Abs(v))
			}
			for i := range h[0] {
				if d := math.Abs(h[1][i]/scale - h[0][i]); d > 1e-12*top {
					t.Errorf("%s, %s: h[%d] = %g, %g from the filter scaled by 2^-780", form, m, i, h[0][i], h[1][i]/scale)
					break
				}
			}
		}
	}
}

// TestFFTRefusesLostEarlySamples: on an unstable filter whose correction for the length has
// grown past 1e-6/ε times its numerator, the fft method refuses (its first samples would carry
// errors of that size: a pole at 1.5 over 1700 samples gave h[1] = 1.65e282 for 1), and over a
// length where it has not, it agrees with the recurrence.
func TestFFTRefusesLostEarlySamples(t *testing.T) {
	f, err := filters.NewDiagonal([]complex128{1.5}, []complex128{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Impulse(nil, f, 1700, FFT)
	if !errors.Is(err, filters.ErrIllConditioned) || !strings.Contains(err.Error(), "spectral radius 1.5") || !strings.Contains(err.Error(), "recurrence") {
		t.Errorf("1700 samples: err = %v, want the fft method refused, naming the radius and the recurrence", err)
	}
	h, err := Impulse(nil, f, 40, FFT)
	if err != nil {
		t.Fatalf("40 samples (1.5^40 ≈ 1.1e7): %v", err)
	}
	ref, err := Impulse(nil, f, 40, Recurrence)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h {
		if math.Abs(h[i]-ref[i]) > 1e-6*math.Abs(ref[i]) {
			t.Fatalf("40 samples: h[%d] = %g, recurrence %g", i, h[i], ref[i])
		}
	}
}
