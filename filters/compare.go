package filters

import "math"

// CompareBanks measures how closely the filters got give the impulse responses of want,
// channel by channel: the worst relative L2 difference (RelDiff; math.MaxFloat64 for an
// overflow), its channel, and the samples compared; each channel's difference goes into
// errs unless it is nil, for a caller that holds each channel to its own limit. It compares
// n samples, or ReportLength(ρ, N) for the largest spectral radius ρ of want and the largest
// order N of either bank when n is 0, and fewer where that many would cost more than maxWork
// multiply-adds (a sample costs N² for a dense channel of order N, N for the other forms). It
// panics if the banks, or errs when not nil, differ in length.
func CompareBanks(errs []float64, want, got []Filter, n, maxWork int) (worst float64, channel, samples int) {
	if len(want) != len(got) || (errs != nil && len(errs) != len(want)) {
		panic("filters: CompareBanks of banks of different lengths")
	}
	if n == 0 {
		rho, order := 0.0, 0
		for c, f := range want {
			r, err := SpectralRadius(f)
			if err != nil {
				r = math.NaN()
			}
			rho = max(rho, r)
			order = max(order, f.Order(), got[c].Order())
		}
		n = ReportLength(rho, order)
	}
	perSample := 0.0
	for c, f := range want {
		perSample += sampleCost(f) + sampleCost(got[c]) + 1
	}
	n = max(1, min(n, int(float64(maxWork)/perSample)))
	for c, f := range want {
		e := RelDiff(f.Impulse(n), got[c].Impulse(n))
		if math.IsNaN(e) || math.IsInf(e, 0) {
			e = math.MaxFloat64
		}
		if errs != nil {
			errs[c] = e
		}
		if e > worst {
			worst, channel = e, c
		}
	}
	return worst, channel, n
}

// sampleCost is the multiply-adds of one sample of f's impulse response.
func sampleCost(f Filter) float64 {
	k := float64(f.Order())
	if _, dense := f.(*Dense); dense {
		k *= k
	}
	return k
}
