package filters

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// decayCase is a filter with its impulse response computed independently of its Impulse
// method, as log|h[t]| (−Inf for 0): a closed form or a plain recurrence.
type decayCase struct {
	name  string
	f     Filter
	rho   float64
	logH  func(n int) []float64
	start int // 0: ReportLength(rho, order), as conversion reports start
}

// logAbs is log|h| of a response.
func logAbs(h []float64) []float64 {
	out := make([]float64, len(h))
	for i, v := range h {
		out[i] = math.Log(math.Abs(v))
	}
	return out
}

// chainFilter is a fast mode at fast (none when 0) plus eps times a k×k Jordan block at r fed
// at its last state and read at its first: h[t] = fast^(t−1) + eps·C(t−1, k−1)·r^(t−k), the
// chain's part 0 before t = k. With a tiny eps the chain rises above tol·peak only after the
// fast mode has fallen below it: a response that dips and rises again.
func chainFilter(fast float64, k int, r, eps float64) decayCase {
	n, off := k, 0
	if fast > 0 {
		n, off = k+1, 1
	}
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	b, c := make([]float64, n), make([]float64, n)
	if fast > 0 {
		a[0][0], b[0], c[0] = fast, 1, 1
	}
	for i := off; i < n; i++ {
		a[i][i] = r
		if i+1 < n {
			a[i][i+1] = 1
		}
	}
	b[n-1], c[off] = eps, 1
	f, err := NewDense(a, b, c, 0)
	if err != nil {
		panic(err)
	}
	logH := func(l int) []float64 {
		out := make([]float64, l)
		out[0] = math.Inf(-1)
		lgk, _ := math.Lgamma(float64(k))
		for t := 1; t < l; t++ {
			terms := []float64{math.Inf(-1), math.Inf(-1)}
			if fast > 0 {
				terms[0] = float64(t-1) * math.Log(fast)
			}
			if t >= k {
				lg1, _ := math.Lgamma(float64(t))
				lg2, _ := math.Lgamma(float64(t - k + 1))
				terms[1] = math.Log(eps) + lg1 - lg2 - lgk + float64(t-k)*math.Log(r)
			}
			m := max(terms[0], terms[1])
			if math.IsInf(m, -1) {
				out[t] = m
				continue
			}
			out[t] = m + math.Log(math.Exp(terms[0]-m)+math.Exp(terms[1]-m))
		}
		return out
	}
	name := fmt.Sprintf("Jordan %d at %g", k, r)
	if fast > 0 {
		name = fmt.Sprintf("mode %g + %g·Jordan %d at %g", fast, eps, k, r)
	}
	return decayCase{name: name, f: f, rho: max(fast, r), logH: logH}
}

// denseCase computes f's response by the plain state recurrence x ← A·x, from x = B.
func denseCase(name string, f *Dense, rho float64) decayCase {
	n := f.Order()
	logH := func(l int) []float64 {
		h := make([]float64, l)
		h[0] = f.D
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = f.B[i]
		}
		for t := 1; t < l; t++ {
			for i := range x {
				h[t] += f.C[i] * x[i]
			}
			for i := range y {
				y[i] = 0
				for j := range x {
					y[i] += f.A.At(i, j) * x[j]
				}
			}
			x, y = y, x
		}
		return logAbs(h)
	}
	return decayCase{name: name, f: f, rho: rho, logH: logH}
}

// lateTF is a tf of order n whose numerator is 0 before b[s], so that h starts at t = s + 1,
// computed by its difference equation h[t] = b[t] − Σ aᵢ·h[t−i] (t ≥ 1, h[0] = h0 apart).
func lateTF(rng *rand.Rand, n, s int, pole float64) decayCase {
	a, b := make([]float64, n), make([]float64, n)
	a[0] = -pole
	for i := s; i < n; i++ {
		b[i] = rng.NormFloat64()
	}
	f := &TransferFunction{Den: a, Num: b, H0: 3}
	logH := func(l int) []float64 {
		h := make([]float64, l)
		h[0] = f.H0
		for t := 1; t < l; t++ {
			if t <= n {
				h[t] = b[t-1]
			}
			for i := 1; i <= n && t-i >= 1; i++ {
				h[t] -= a[i-1] * h[t-i]
			}
		}
		return logAbs(h)
	}
	// The poles are pole and n − 1 at 0.
	return decayCase{name: fmt.Sprintf("tf of order %d from sample %d", n, s+1), f: f, rho: pole, logH: logH}
}

// TestMeasureDecayProperty: where MeasureDecay says the responses have decayed, they stay
// below tol of their peak over one more doubling of the window, by responses computed apart
// (closed forms and plain recurrences). The families: random stable dense filters (with a
// feedthrough 1e8 times their dynamics, which must change nothing), Jordan blocks fed at their
// last state (0 for k − 1 samples, peaking near (k−1)/ln(1/ρ)), tfs whose response starts at
// sample 80 or 290, and a fast mode with a tiny Jordan chain that rises above 1e-12 of the
// fast mode's peak only after that has fallen below it: over the conversion reports' first
// window of 64 samples its last fifth is below, so the rule MeasureDecay replaced (the last
// fifth below tol·peak) stopped there, and the response beyond 64 fails the check.
func TestMeasureDecayProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	var cases []decayCase
	for _, n := range []int{1, 3, 8, 20} {
		for _, rho := range []float64{0.2, 0.5, 0.9, 0.97} {
			f := randomStable(rng, n, rho)
			cases = append(cases, denseCase(fmt.Sprintf("dense %d at %g", n, rho), f, rho))
			g := *f
			g.D = 1e8 * math.Abs(f.Impulse(2)[1])
			cases = append(cases, denseCase(fmt.Sprintf("dense %d at %g with D = 1e8·h[1]", n, rho), &g, rho))
		}
	}
	for _, k := range []int{5, 20, 37, 60} {
		for _, r := range []float64{0.3, 0.6, 0.9} {
			cases = append(cases, chainFilter(0, k, r, 1))
		}
	}
	jordan37 := chainFilter(0, 37, 0.3, 1)
	jordan37.name += ", memory's start 2·38"
	jordan37.start = 76
	cases = append(cases, jordan37, lateTF(rng, 150, 79, 0.5), lateTF(rng, 300, 289, 0.5))
	fooled := chainFilter(0.5, 60, 0.3, 1e-20)
	cases = append(cases, fooled)

	const slack = 1e-9 // log units: the two computations of a sample near the threshold
	for _, tol := range []float64{1e-12, 1e-6} {
		var withoutD Decay
		for i, c := range cases {
			start := c.start
			if start == 0 {
				start = ReportLength(c.rho, c.f.Order())
			}
			d, err := MeasureDecay(tol, start, 1<<16, func(l int) ([][]float64, error) {
				return [][]float64{c.f.Impulse(l)}, nil
			})
			if err != nil || d.AtLeast || d.Length < start {
				t.Errorf("tol %g, %s: %+v, %v", tol, c.name, d, err)
				continue
			}
			if 2*d.Time > d.Length+1 {
				t.Errorf("tol %g, %s: %+v: the last sample above tol·peak is not in the window's first half", tol, c.name, d)
			}
			lh := c.logH(2 * d.Length)
			peak := math.Inf(-1)
			for _, v := range lh[1:] {
				peak = max(peak, v)
			}
			for i := d.Length; i < len(lh); i++ {
				if lh[i] > peak+math.Log(tol)+slack {
					t.Errorf("tol %g, %s: |h[%d]| is %.3g of the peak, beyond the window of %d samples", tol, c.name, i, math.Exp(lh[i]-peak), d.Length)
					break
				}
			}
			// Time is 1 + the last sample above tol·peak (over t ≥ 1) within the window.
			wantTime := 0
			for i := d.Length - 1; i >= 0; i-- {
				if lh[i] > peak+math.Log(tol) {
					wantTime = i + 1
					break
				}
			}
			if d.Time != wantTime {
				t.Errorf("tol %g, %s: Time %d, want %d", tol, c.name, d.Time, wantTime)
			}
			if i < 32 && i%2 == 1 && d != withoutD { // the dense cases, with D after without
				t.Errorf("tol %g, %s: %+v, without D %+v", tol, c.name, d, withoutD)
			}
			withoutD = d
		}
	}
	// The example of the doc comment: the 37×37 block at 0.3 is 0 for 36 samples, peaks at
	// t = 52 and stays below 1e-12 of its peak from t = 105 on.
	d, _ := MeasureDecay(1e-12, 76, 1<<16, func(l int) ([][]float64, error) {
		return [][]float64{jordan37.f.Impulse(l)}, nil
	})
	if d.Time != 105 {
		t.Errorf("Jordan 37 at 0.3: Time %d, want 105", d.Time)
	}
}

// TestMeasureDecayEdges: a window that reaches its limit, several responses, an overflow,
// a pure gain, a zero response and respond's error.
func TestMeasureDecayEdges(t *testing.T) {
	geometric := func(r float64, l int) []float64 {
		h := make([]float64, l)
		for i := 1; i < l; i++ {
			h[i] = math.Pow(r, float64(i-1))
		}
		return h
	}
	var asked []int
	slow := func(l int) ([][]float64, error) {
		asked = append(asked, l)
		return [][]float64{geometric(0.99999, l)}, nil
	}
	// A mode at 0.99999 falls to 1e-12 after 2.8e6 samples: the windows 1000, 2000, 4000
	// and 5000 (the limit) do not hold it, and Time is only a lower bound (its last sample).
	if d, err := MeasureDecay(1e-12, 1000, 5000, slow); err != nil || !d.AtLeast || d.Length != 5000 || d.Time != 5000 || fmt.Sprint(asked) != "[1000 2000 4000 5000]" {
		t.Errorf("slow mode: %+v, %v, windows %v", d, err, asked)
	}
	// A start above the limit is measured at the limit.
	asked = nil
	if d, _ := MeasureDecay(1e-12, 9000, 5000, slow); d.Length != 5000 || fmt.Sprint(asked) != "[5000]" {
		t.Errorf("start above the limit: %+v, windows %v", d, asked)
	}
	// Two responses: the window holds the slower one (0.5^(t−1) is at or below 1e-12 from
	// t = 41 on, 0.8^(t−1) from t = 125: 2·125 > 201, 2·125 ≤ 401).
	d, _ := MeasureDecay(1e-12, 200, 1<<16, func(l int) ([][]float64, error) {
		return [][]float64{geometric(0.5, l), geometric(0.8, l)}, nil
	})
	if want := 2 + int(math.Log(1e-12)/math.Log(0.8)); d.Length != 400 || d.Time != want || d.AtLeast {
		t.Errorf("0.5 and 0.8: %+v, want length 400 and time %d", d, want)
	}
	// An overflowed response no longer holds the window open; the other one still does.
	overflow := func(l int) []float64 {
		h := geometric(0.5, l)
		h[3] = math.Inf(1)
		return h
	}
	d, _ = MeasureDecay(1e-12, 200, 1<<16, func(l int) ([][]float64, error) {
		return [][]float64{overflow(l), geometric(0.8, l)}, nil
	})
	if !d.AtLeast || d.Length != 400 {
		t.Errorf("overflow beside 0.8: %+v, want length 400 and AtLeast", d)
	}
	d, _ = MeasureDecay(1e-12, 200, 1<<16, func(l int) ([][]float64, error) { return [][]float64{overflow(l)}, nil })
	if !d.AtLeast || d.Length != 200 {
		t.Errorf("overflow: %+v, want length 200 and AtLeast", d)
	}
	// A pure gain has decay time 1, whatever its size against the (zero) dynamics; zero, 0.
	for _, g := range []float64{3, 0} {
		d, _ := MeasureDecay(1e-12, 8, 1<<16, func(l int) ([][]float64, error) {
			h := make([]float64, l)
			h[0] = g
			return [][]float64{h}, nil
		})
		want := 1
		if g == 0 {
			want = 0
		}
		if d.Time != want || d.Length != 8 || d.AtLeast {
			t.Errorf("gain %g: %+v, want time %d", g, d, want)
		}
	}
	errRespond := errors.New("respond failed")
	if _, err := MeasureDecay(1e-12, 8, 16, func(int) ([][]float64, error) { return nil, errRespond }); !errors.Is(err, errRespond) {
		t.Errorf("respond's error: %v", err)
	}
}
