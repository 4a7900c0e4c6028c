package filters

import (
	"math"
	"slices"
)

// CompareBanks measures how closely the filters got give the impulse responses of want,
// channel by channel: the worst relative L2 difference (RelDiff, at least RelErrorFloor
// unless 0, as a conversion's report gives it; math.MaxFloat64 for an overflow), its channel, and the samples compared; each channel's difference goes into
// errs unless it is nil, for a caller that holds each channel to its own limit. It panics if
// the banks, or errs when not nil, differ in length.
//
// It compares n samples when n > 0. When n is 0 it compares every channel over one window
// chosen as a conversion's report chooses its own (Report.Length): it starts from
// ReportLength(ρ, N) for the largest spectral radius ρ of want and the largest order N of
// either bank, and, where want is stable, doubles up to MaxReportLength until each
// channel's two responses have decayed for good (MeasureDecay), so that a late-starting
// or multiple pole is judged over its whole response, and a read-back wrong only in its
// tail is caught. A channel whose responses lie below 2^-960 is compared rescaled, as a
// conversion's report compares it.
//
// Either window is cut where it would cost more than maxWork multiply-adds to compare (a
// sample costs N² for a dense channel of order N, N for the other forms; finding the
// window costs at most twice that again), and cut says so: the samples compared are then
// fewer than n, or fewer than the responses needed to decay.
//
// A channel whose want is not stable (Stable) has its error measured over its first
// 2(N + 1) samples too, as a conversion's report measures it (comparison.relError).
func CompareBanks(errs []float64, want, got []Filter, n, maxWork int) (worst float64, channel, samples int, cut bool) {
	if len(want) != len(got) || (errs != nil && len(errs) != len(want)) {
		panic("filters: CompareBanks of banks of different lengths")
	}
	if errs == nil {
		errs = make([]float64, len(want))
	}
	perSample := 0.0
	for c, f := range want {
		perSample += sampleCost(f) + sampleCost(got[c]) + 1
	}
	budget := max(1, int(min(float64(maxWork)/perSample, math.MaxInt32)))
	lengths := make([]int, len(want))
	// Each channel's responses that lie below float64's normal range are compared rescaled,
	// as a conversion's report compares them (compareResponses), and the channel's filters
	// stay rescaled for the bank's window below.
	want, got = slices.Clone(want), slices.Clone(got)
	rhos := make([]float64, len(want))
	for c, f := range want {
		r, err := SpectralRadius(f)
		if err != nil {
			r = math.NaN()
		}
		rhos[c] = r
	}
	compare := func(c, start, limit int) Decay {
		r := compareResponses(want[c], got[c], start, limit, false)
		want[c], got[c] = r.want, r.got
		errs[c], lengths[c] = r.relError(Stable(rhos[c])), r.decay.Length
		return r.decay
	}
	if n > 0 {
		samples, cut = min(n, budget), budget < n
		for c := range want {
			compare(c, samples, samples)
		}
	} else {
		rho, order := 0.0, 0
		for c, f := range want {
			rho = max(rho, rhos[c])
			order = max(order, f.Order(), got[c].Order())
		}
		start, limit := comparisonWindow(rho, order)
		// Each channel's window is measured apart, holding one channel's responses at a
		// time; the bank's is the longest, over which the others are compared again.
		for c := range want {
			d := compare(c, start, min(limit, budget))
			samples = max(samples, d.Length)
			cut = cut || d.AtLeast && d.Length == budget && budget < limit
		}
	}
	for c := range want {
		if lengths[c] != samples {
			compare(c, samples, samples)
		}
		if e := errs[c]; math.IsNaN(e) || math.IsInf(e, 0) {
			errs[c] = math.MaxFloat64
		}
		if errs[c] > worst {
			worst, channel = errs[c], c
		}
	}
	return worst, channel, samples, cut
}

// comparison is two filters' impulse responses over the window MeasureDecay found for them,
// as a conversion's report and CompareBanks measure them.
type comparison struct {
	want, got       Filter    // the filters compared: the inputs, or both scaled by 2^-exp
	hWant, hGot     []float64 // their responses over decay.Length samples
	estWant, estGot float64   // the responses' rounding estimates (RoundingEstimator) when asked
	decay           Decay
	scaled          bool // the responses lay below tinyResponse: both filters scaled by 2^-exp
	exp             int
}

// compareResponses computes want's and got's impulse responses over the window MeasureDecay
// finds from start up to limit (decayTol; start = limit for a fixed window), with
// ImpulseError's estimates when estimate is set. Where the responses lie below float64's
// normal range (tinyPeak), both filters are scaled by one power of two (rescaled) and
// measured again: a zero filter read back for B = C = 1e-200, whose every sample is 0, is not
// compared as exact.
func compareResponses(want, got Filter, start, limit int, estimate bool) comparison {
	c := comparison{want: want, got: got}
	run := func() {
		c.decay, _ = MeasureDecay(decayTol, start, limit, func(l int) ([][]float64, error) {
			if estimate {
				c.hWant, c.estWant = impulseEstimate(c.want, l)
				c.hGot, c.estGot = impulseEstimate(c.got, l)
			} else {
				c.hWant, c.hGot = c.want.Impulse(l), c.got.Impulse(l)
			}
			return [][]float64{c.hWant, c.hGot}, nil
		})
	}
	run()
	if tinyPeak(c.hWant, c.hGot) {
		if ws, gs, e, ok := rescaled(want, got); ok {
			c.want, c.got, c.scaled, c.exp = ws, gs, true, e
			run()
		}
	}
	return c
}

// relError is the measured error of c as reports give it (measuredError), stable saying
// whether want is (Stable of its spectral radius). Where it is not, its error over its first
// 2(N + 1) samples, N the larger order, is measured too, and the larger of the two is given:
// its response grows, so that its relative error over the window is that of its last
// samples, and an error in the first ones is lost in their rounding (a tap at t = 1 of the
// filter of poles {0, 1.5} and residues {1, 2} left out read back to 2.2e-16 over 512
// samples). Those samples, h[0] to h[2N + 1], decide a filter of order N (its Markov
// parameters).
func (c comparison) relError(stable bool) float64 {
	e := measuredError(c.hWant, c.hGot)
	if stable {
		return e
	}
	head := c.head()
	return max(e, measuredError(c.hWant[:head], c.hGot[:head]))
}

// head is how many of c's first samples relError measures on their own where want is not
// stable: 2(N + 1), N the larger order, or the window where that is shorter.
func (c comparison) head() int {
	return min(len(c.hWant), 2*(max(c.want.Order(), c.got.Order())+1))
}

// sampleCost is the multiply-adds of one sample of f's impulse response.
func sampleCost(f Filter) float64 {
	k := float64(f.Order())
	if _, dense := f.(*Dense); dense {
		k *= k
	}
	return k
}
