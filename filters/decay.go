package filters

import "math"

// Decay is what MeasureDecay found.
type Decay struct {
	// Time is the responses' decay time: the largest over them of 1 + the last t at which
	// |h[t]| exceeds tol times the response's peak over t ≥ 1 (0 for a response that is zero
	// throughout; 1 for a pure gain, whose h[0] = D exceeds tol·0).
	Time int
	// Length is the window the responses were last computed over.
	Length int
	// AtLeast is set when the window reached its limit before the responses had decayed, or
	// a response overflowed: Time is then only a lower bound.
	AtLeast bool
}

// MeasureDecay measures how long the impulse responses that respond computes take to fall
// for good below tol of their peak. It asks respond for min(start, limit) samples first and
// doubles the window, up to limit, until each response's decay time t (Decay.Time) lies in
// the window's first half, 2t ≤ length + 1: the response then stayed below tol·peak for at
// least as long as it took to get there. It returns respond's error as it comes; respond
// must return responses of the length asked for.
//
// The window is measured because the spectral radius ρ alone cannot bound it: a pole of
// multiplicity k decays as t^(k−1)·ρ^t, which peaks near t = (k−1)/ln(1/ρ), and a response
// can start late (a 37×37 Jordan block at 0.3 fed at its last state is 0 for 36 samples,
// peaks at t = 52 and falls below 1e-12 of its peak at t = 105, where the radius says 24).
// The criterion is the stronger of the two ssmlab used (conversion reports asked only for
// the window's last fifth to be below, which is cheaper: a simple mode passes it over
// ReportLength samples and needs one doubling here): a response that dips below tol·peak
// and rises again is caught unless it stayed below for as long as it took to dip. A mode at
// 0.5 plus 1e-20 times a 60×60 Jordan block at 0.3 falls below 1e-12 of its peak at t = 41
// and is above it again from t = 81 to 89: over 64 samples its last fifth is below, but it
// has stayed below for 23 samples after taking 41 to get there; over 128 the rise shows. No
// finite window proves decay: with a block of 80 (above again from t = 92 to 144) a first
// window of order + 1 = 82 samples passes this rule too. So start should be generous: at
// least the order + 1 samples that decide whether a response is zero throughout
// (Cayley–Hamilton) and as many again, 2(order + 1), and the time a simple mode of radius ρ
// takes to fall by tol. Conversion reports, CompareBanks and analysis's effective memory so
// start, and hold the block of 80's rise (164 samples, doubled once).
//
// The peak is taken over t ≥ 1, the state's response C·A^(t−1)·B: h[0] = D does not decay,
// and a large feedthrough must not make the dynamics look decayed. A sample that is not
// finite counts as above the tolerance and sets AtLeast; its response no longer holds the
// window open (a longer window does not mend an overflow), the others' still do. MeasureDecay panics unless tol > 0 and start, limit ≥ 1.
func MeasureDecay(tol float64, start, limit int, respond func(length int) ([][]float64, error)) (Decay, error) {
	if !(tol > 0) || start < 1 || limit < 1 {
		panic("filters: MeasureDecay with tol ≤ 0 or a window below 1")
	}
	for l := min(start, limit); ; l = min(2*l, limit) {
		hs, err := respond(l)
		if err != nil {
			return Decay{}, err
		}
		d, pending := Decay{Length: l}, false
		for _, h := range hs {
			if len(h) != l {
				panic("filters: MeasureDecay's respond returned a response of another length")
			}
			t, finite := decayTime(h, tol)
			d.Time = max(d.Time, t)
			d.AtLeast = d.AtLeast || !finite
			pending = pending || finite && 2*t > l+1
		}
		if !pending {
			return d, nil
		}
		if l >= limit {
			d.AtLeast = true
			return d, nil
		}
	}
}

// decayTime is 1 + the last t at which |h[t]| is not at or below tol times its peak over
// t ≥ 1 (0 when there is none), and whether every sample is finite.
func decayTime(h []float64, tol float64) (int, bool) {
	peak, finite := 0.0, true
	for t, v := range h {
		a := math.Abs(v)
		if math.IsNaN(a) || math.IsInf(a, 0) {
			finite = false
		} else if t >= 1 {
			peak = max(peak, a)
		}
	}
	for t := len(h) - 1; t >= 0; t-- {
		if !(math.Abs(h[t]) <= tol*peak) {
			return t + 1, finite
		}
	}
	return 0, finite
}
