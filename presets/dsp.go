package presets

import (
	"fmt"
	"math"
	"math/cmplx"
	"strconv"

	"github.com/ssmlab/ssmlab/filters"
)

// Band is the band type of a classic IIR design.
type Band string

// The band types of Butter and Cheby1, named as scipy.signal names them.
const (
	Lowpass  Band = "lowpass"
	Highpass Band = "highpass"
	Bandpass Band = "bandpass"
	Bandstop Band = "bandstop"
)

// Butter designs the digital Butterworth filter of order n, as scipy.signal.butter(n, w/π,
// band, output="zpk") does: the analog prototype's poles -e^{iπm/(2n)} (m = -n+1, -n+3, …,
// n-1), the low-pass to low/high/band-pass/band-stop transform at the prewarped edges
// 4·tan(ω/2), and the bilinear transform s = 4(z-1)/(z+1) (fs = 2). w holds one edge ωc in
// (0, π) rad/sample for Lowpass and Highpass (where |H| = 1/√2), two edges ω₁ < ω₂ for Bandpass
// and Bandstop (whose filters have 2n poles). The zeros, poles and gain are computed directly,
// never through polynomial coefficients, so the design is exact to rounding at any order.
func Butter(n int, band Band, w ...float64) (*filters.ZPK, error) {
	if n < 1 {
		return nil, fmt.Errorf("presets: Butterworth order %d < 1", n)
	}
	p := make([]complex128, n)
	for i := range p {
		m := float64(-n + 1 + 2*i)
		if m == 0 {
			p[i] = -1 // exactly real, as SciPy makes it
			continue
		}
		p[i] = -cmplx.Exp(complex(0, math.Pi*m/float64(2*n)))
	}
	return design(nil, p, 1, band, w)
}

// Cheby1 designs the digital Chebyshev type I filter of order n with rp dB of passband ripple,
// as scipy.signal.cheby1(n, rp, w/π, band, output="zpk") does: the analog prototype's poles
// -sinh(μ + iπm/(2n)) with μ = asinh(1/ε)/n and ε = √(10^(rp/10) - 1), gain Π(-p) (divided by
// √(1+ε²) for even n, so the passband peaks at 1), then the same transforms as Butter. At
// a low-pass or high-pass edge ωc the gain is -rp dB.
func Cheby1(n int, rp float64, band Band, w ...float64) (*filters.ZPK, error) {
	if n < 1 {
		return nil, fmt.Errorf("presets: Chebyshev order %d < 1", n)
	}
	if !(rp > 0) || math.IsInf(rp, 0) {
		return nil, fmt.Errorf("presets: Chebyshev ripple %v dB, want > 0", rp)
	}
	eps := math.Sqrt(math.Pow(10, 0.1*rp) - 1)
	mu := math.Asinh(1/eps) / float64(n)
	p := make([]complex128, n)
	k := complex(1, 0)
	for i := range p {
		th := math.Pi * float64(-n+1+2*i) / float64(2*n)
		p[i] = -cmplx.Sinh(complex(mu, th))
		k *= -p[i]
	}
	gain := real(k)
	if n%2 == 0 {
		gain /= math.Sqrt(1 + eps*eps)
	}
	return design(nil, p, gain, band, w)
}

// design transforms an analog low-pass prototype (cut-off 1 rad/s) to the band and edges w
// (rad/sample) and maps it to discrete time, following scipy.signal.iirfilter (lp2lp_zpk,
// lp2hp_zpk, lp2bp_zpk, lp2bs_zpk, bilinear_zpk with fs = 2).
func design(z, p []complex128, k float64, band Band, w []float64) (*filters.ZPK, error) {
	want := 1
	if band == Bandpass || band == Bandstop {
		want = 2
	}
	if len(w) != want {
		return nil, fmt.Errorf("presets: a %s design takes %d edge frequencies, got %d", band, want, len(w))
	}
	warped := make([]float64, len(w))
	for i, x := range w {
		if !(x > 0 && x < math.Pi) {
			return nil, fmt.Errorf("presets: edge frequency %v is outside (0, π)", x)
		}
		warped[i] = 4 * math.Tan(x/2) // 2·fs·tan(π·Wn/fs) with Wn = ω/π, fs = 2
	}
	degree := len(p) - len(z)
	switch band {
	case Lowpass:
		wo := complex(warped[0], 0)
		z, p = scale(z, wo), scale(p, wo)
		k *= math.Pow(warped[0], float64(degree))
	case Highpass:
		wo := complex(warped[0], 0)
		k *= real(prodNeg(z) / prodNeg(p))
		z, p = invert(z, wo), invert(p, wo)
		z = append(z, make([]complex128, degree)...)
	case Bandpass, Bandstop:
		if warped[0] >= warped[1] {
			return nil, fmt.Errorf("presets: band edges %v, %v are not increasing", w[0], w[1])
		}
		bw := warped[1] - warped[0]
		wo := math.Sqrt(warped[0] * warped[1])
		if band == Bandpass {
			z, p = scale(z, complex(bw/2, 0)), scale(p, complex(bw/2, 0))
			z, p = shiftBand(z, wo), shiftBand(p, wo)
			z = append(z, make([]complex128, degree)...)
			k *= math.Pow(bw, float64(degree))
		} else {
			k *= real(prodNeg(z) / prodNeg(p))
			z, p = invert(z, complex(bw/2, 0)), invert(p, complex(bw/2, 0))
			z, p = shiftBand(z, wo), shiftBand(p, wo)
			for range degree {
				z = append(z, complex(0, wo))
			}
			for range degree {
				z = append(z, complex(0, -wo))
			}
		}
	default:
		return nil, fmt.Errorf("presets: unknown band %q", band)
	}
	// Bilinear transform with fs = 2: s ↦ (4 + s)/(4 - s); zeros at infinity go to z = -1.
	degree = len(p) - len(z)
	num, den := complex(1, 0), complex(1, 0)
	for _, x := range z {
		num *= 4 - x
	}
	for _, x := range p {
		den *= 4 - x
	}
	k *= real(num / den)
	zz := make([]complex128, 0, len(p))
	for _, x := range z {
		zz = append(zz, (4+x)/(4-x))
	}
	for range degree {
		zz = append(zz, -1)
	}
	pz := make([]complex128, len(p))
	for i, x := range p {
		pz[i] = (4 + x) / (4 - x)
	}
	return filters.NewZPK(tidyRoots(zz), tidyRoots(pz), k, 0)
}

func scale(v []complex128, s complex128) []complex128 {
	out := make([]complex128, len(v))
	for i, x := range v {
		out[i] = x * s
	}
	return out
}

func invert(v []complex128, s complex128) []complex128 {
	out := make([]complex128, len(v))
	for i, x := range v {
		out[i] = s / x
	}
	return out
}

// prodNeg returns Π(-vᵢ).
func prodNeg(v []complex128) complex128 {
	p := complex(1, 0)
	for _, x := range v {
		p *= -x
	}
	return p
}

// shiftBand maps each root x of the scaled prototype to the two roots x ± √(x² - wo²).
func shiftBand(v []complex128, wo float64) []complex128 {
	out := make([]complex128, 0, 2*len(v))
	w2 := complex(wo*wo, 0)
	for _, x := range v {
		out = append(out, x+cmplx.Sqrt(x*x-w2))
	}
	for _, x := range v {
		out = append(out, x-cmplx.Sqrt(x*x-w2))
	}
	return out
}

// tidyRoots makes the members of each conjugate pair exact conjugates of each other (their
// computed values differ by rounding at most) and sorts the roots in the filters package's
// order: decreasing modulus, then increasing |angle|, positive imaginary part first.
func tidyRoots(r []complex128) []complex128 {
	out := append([]complex128(nil), r...)
	used := make([]bool, len(out))
	for i, x := range out {
		if used[i] || imag(x) == 0 {
			continue
		}
		best, dist := -1, math.Inf(1)
		for j := i + 1; j < len(out); j++ {
			if used[j] || imag(out[j])*imag(x) >= 0 {
				continue
			}
			if d := cmplx.Abs(out[j] - cmplx.Conj(x)); d < dist {
				best, dist = j, d
			}
		}
		if best < 0 || dist > 1e-9*(1+cmplx.Abs(x)) {
			continue // no partner: leave it for the filter's validation to report
		}
		used[i], used[best] = true, true
		m := (x + cmplx.Conj(out[best])) / 2
		out[i], out[best] = m, cmplx.Conj(m)
	}
	return filters.SortRoots(out)
}

func buildIIR(a Args, cheby bool) (Result, error) {
	band := Band(a.Choice("band"))
	var w []float64
	if band == Lowpass || band == Highpass {
		if a.Has("wlo") || a.Has("whi") {
			return Result{}, paramErrorf(a.preset.Name, "wlo and whi are the edges of band=bandpass or bandstop; band=%s takes wc", band)
		}
		a.fill("wc", "pi/4")
		w = []float64{a.Float("wc")}
	} else {
		if a.Has("wc") {
			return Result{}, paramErrorf(a.preset.Name, "wc is the cut-off of band=lowpass or highpass; band=%s takes wlo and whi", band)
		}
		a.fill("wlo", "pi/4")
		a.fill("whi", "pi/2")
		if a.Float("wlo") >= a.Float("whi") {
			return Result{}, paramErrorf(a.preset.Name, "wlo=%g must be below whi=%g", a.Float("wlo"), a.Float("whi"))
		}
		w = []float64{a.Float("wlo"), a.Float("whi")}
	}
	n := a.Int("order")
	designIIR := func(w []float64) (*filters.ZPK, error) {
		if cheby {
			return Cheby1(n, a.Float("ripple"), band, w...)
		}
		return Butter(n, band, w...)
	}
	// The passband's nominal gain: 1, or -rp dB where an even-order Chebyshev filter starts.
	nominal := 1.0
	if cheby && n%2 == 0 {
		nominal = math.Pow(10, -a.Float("ripple")/20)
	}
	f, err := designIIR(w)
	if err != nil {
		return Result{}, err
	}
	if flaw := iirFlaw(f, band, w, nominal); flaw != "" {
		return Result{}, iirLimitError(a, band, w, flaw, func(w []float64) string {
			g, err := designIIR(w)
			if err != nil {
				return err.Error()
			}
			return iirFlaw(g, band, w, nominal)
		})
	}
	return Result{Filter: f}, nil
}

// iirFlaw says why the designed filter f is not the one asked for, or "" if it is: in float64
// a cut-off near 0 (or an edge near π) puts the poles within rounding of z = ±1, where the
// bilinear transform loses them (1 + 2e-17 rounds to 1). The filter must then be stable with
// the margin the rest of ssmlab calls stable (filters.Stable), and its passband gain, at the
// frequency the analog prototype's s = 0 maps to, within the documented accuracy
// filters.MaxRelError of nominal.
func iirFlaw(f *filters.ZPK, band Band, w []float64, nominal float64) string {
	for _, p := range f.Poles {
		if !filters.Stable(cmplx.Abs(p)) {
			return fmt.Sprintf("a pole at |p| = %.12g is on the unit circle to within %g", cmplx.Abs(p), filters.MarginalTol)
		}
	}
	at := 0.0 // lowpass and bandstop pass ω = 0
	switch band {
	case Highpass:
		at = math.Pi
	case Bandpass:
		// the centre √(ω̃₁ω̃₂) of the prewarped edges, warped back
		at = 2 * math.Atan(math.Sqrt(math.Tan(w[0]/2)*math.Tan(w[1]/2)))
	}
	g := cmplx.Abs(f.FreqResponse([]float64{at})[0])
	if !(math.Abs(g/nominal-1) <= filters.MaxRelError) {
		return fmt.Sprintf("its passband gain is %.6g, not %.6g", g, nominal)
	}
	return ""
}

// iirLimitError refuses edges w whose design has the given flaw. For a lowpass or highpass
// cut-off it finds, by bisection on log ωc (or log(π - ωc) near π) with flawOf judging each
// try, the nearest cut-off toward π/2 that designs accurately at this order.
func iirLimitError(a Args, band Band, w []float64, flaw string, flawOf func([]float64) string) error {
	name := a.preset.Name
	if band != Lowpass && band != Highpass {
		return paramErrorf(name, "wlo=%g, whi=%g at order %d are beyond what float64 designs accurately: %s; move the edges away from 0 and π",
			w[0], w[1], a.Int("order"), flaw)
	}
	wc := w[0]
	if flawOf([]float64{math.Pi / 2}) != "" {
		return paramErrorf(name, "wc=%g at order %d is beyond what float64 designs accurately: %s", wc, a.Int("order"), flaw)
	}
	d := nearestWorkable(wc, func(x float64) bool { return flawOf([]float64{x}) == "" })
	if wc > math.Pi/2 {
		return paramErrorf(name, "wc=%g at order %d is too close to π for float64 to design accurately (%s): the largest workable wc is π - %s",
			wc, a.Int("order"), flaw, d)
	}
	return paramErrorf(name, "wc=%g at order %d is too small for float64 to design accurately (%s): the smallest workable wc is %s",
		wc, a.Int("order"), flaw, d)
}

// nearestWorkable finds, for a frequency x in (0, π) at which a design fails and π/2 at
// which ok says it works, the nearest workable frequency toward π/2 by bisection on the log
// of its distance from the end of (0, π) that x is near. It returns that distance with two
// significant digits, rounded toward π/2 so that the value named works.
func nearestWorkable(x float64, ok func(float64) bool) string {
	near := func(d float64) float64 { return d } // the frequency at distance d from the end
	if x > math.Pi/2 {
		near = func(d float64) float64 { return math.Pi - d }
	}
	return distanceWorkable(near(x), math.Pi/2, func(d float64) bool { return ok(near(d)) })
}

// distanceWorkable bisects on log d between bad, a distance from a limit at which a design
// fails, and good, one at which ok says it works, and returns the smallest workable distance
// with two significant digits, rounded away from the limit. Near the limit rounding errors
// make ok flicker, so it steps on from the rounded value until ok holds there.
func distanceWorkable(bad, good float64, ok func(float64) bool) string {
	lb, lg := math.Log(bad), math.Log(good)
	for range 60 {
		mid := (lb + lg) / 2
		if ok(math.Exp(mid)) {
			lg = mid
		} else {
			lb = mid
		}
	}
	d := math.Exp(lg)
	unit := math.Pow(10, math.Floor(math.Log10(d))-1)
	d = math.Ceil(d/unit) * unit
	for range 100 {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(d, 'g', 2, 64), 64)
		if v >= good || ok(v) {
			break
		}
		d += math.Pow(10, math.Floor(math.Log10(d))-1)
	}
	return strconv.FormatFloat(d, 'g', 2, 64)
}

func iirParams(cheby bool) []Param {
	ps := []Param{
		orderParam("4", 1, 64, "filter order N (band-pass and band-stop filters have 2N poles)"),
		{Name: "band", Kind: Choice, Default: "lowpass", Choices: []string{"lowpass", "highpass", "bandpass", "bandstop"},
			Help: "band type"},
		{Name: "wc", Kind: Float, Min: 0, Max: math.Pi, OpenMin: true, OpenMax: true,
			Help: "cut-off ωc in rad/sample, lowpass and highpass only (default pi/4); SciPy's Wn = ωc/π; one too close to 0 or π for float64 is refused, naming the nearest workable value"},
		{Name: "wlo", Kind: Float, Min: 0, Max: math.Pi, OpenMin: true, OpenMax: true,
			Help: "lower band edge in rad/sample, bandpass and bandstop only (default pi/4)"},
		{Name: "whi", Kind: Float, Min: 0, Max: math.Pi, OpenMin: true, OpenMax: true,
			Help: "upper band edge in rad/sample, bandpass and bandstop only (default pi/2)"},
	}
	if cheby {
		ps = append(ps, Param{Name: "ripple", Kind: Float, Default: "1", Min: 0, Max: 100, OpenMin: true,
			Help: "passband ripple rp in dB"})
	}
	return ps
}

// MovingAverage returns the m-tap moving average h[t] = 1/m for t = 0 … m-1, a
// transfer function of order m-1 whose poles all sit at z = 0.
func MovingAverage(m int) (*filters.TransferFunction, error) {
	if m < 1 {
		return nil, fmt.Errorf("presets: moving average of %d taps", m)
	}
	b := make([]float64, m-1)
	for i := range b {
		b[i] = 1 / float64(m)
	}
	return filters.NewTransferFunction(make([]float64, m-1), b, 1/float64(m))
}

// Delay returns the pure delay H(z) = z⁻ᵈ, h[d] = 1: a transfer function of order d (d poles
// at z = 0); d = 0 is the identity.
func Delay(d int) (*filters.TransferFunction, error) {
	if d < 0 {
		return nil, fmt.Errorf("presets: negative delay %d", d)
	}
	if d == 0 {
		return filters.NewTransferFunction(nil, nil, 1)
	}
	b := make([]float64, d)
	b[d-1] = 1
	return filters.NewTransferFunction(make([]float64, d), b, 0)
}

// Resonator returns the two-pole resonator with poles r·e^{±iθ},
//
//	H(z) = g / (1 - 2r·cos θ·z⁻¹ + r²z⁻²),   g = (1 - r)·√((1 - r)² + 4r·sin²θ),
//
// normalised so that |H(e^{iθ})| = 1 (J. O. Smith, Introduction to Digital Filters, "Two-Pole
// Resonator"; the peak of |H| lies near, not exactly at, θ). g is Smith's
// (1 - r)·√(1 - 2r·cos 2θ + r²) written without its cancellation as r → 1 and θ → 0. Near
// those limits the coefficients themselves cannot hold the poles; ResonatorFlaw says when.
func Resonator(r, theta float64) (*filters.TransferFunction, error) {
	s := math.Sin(theta)
	g := (1 - r) * math.Sqrt((1-r)*(1-r)+4*r*s*s)
	a1, a2 := -2*r*math.Cos(theta), r*r
	return filters.NewTransferFunction([]float64{a1, a2}, []float64{-g * a1, -g * a2}, g)
}

// ResonatorFlaw says how f, built by Resonator(r, theta), misses what was asked for by more
// than filters.MaxRelError, or returns "" if it does not. The float64 coefficients
// -2r·cos θ and r² lose θ as θ nears 0 or π (their discriminant -4r²·sin²θ drowns in
// rounding and the poles collapse onto the real axis), and as r nears 1 the gain at θ,
// 1/((1-r)·|1 - r·e^{2iθ}|) before normalisation, magnifies those errors. So the realised
// poles' distance from the real axis must be r·sin θ, and the realised |H(e^{iθ})| must be
// 1, both to within MaxRelError. Both are computed from the stored coefficients without
// cancellation.
func ResonatorFlaw(f *filters.TransferFunction, r, theta float64) string {
	if len(f.Den) != 2 || len(f.Num) != 2 {
		return fmt.Sprintf("it has order %d, not 2", len(f.Den))
	}
	a1, a2 := f.Den[0], f.Den[1]
	disc := math.FMA(-a1, a1, 4*a2) // 4a2 - a1², rounded once: -(p - p̄)² for poles p, p̄
	if !(disc > 0) {
		return "its poles are real"
	}
	rr := math.Sqrt(a2)
	if im, want := math.Sqrt(disc)/2, r*math.Sin(theta); !(math.Abs(im-want) <= filters.MaxRelError*want) {
		return fmt.Sprintf("its poles lie %.6g from the real axis, not r·sin θ = %.6g", im, want)
	}
	phi := math.Atan2(math.Sqrt(disc), -a1) // the realised pole angle
	// |1 - ρe^{iα}| = √((1-ρ)² + 4ρ·sin²(α/2)), with 1 - ρ = (1 - ρ²)/(1 + ρ) free of cancellation
	omr := (1 - a2) / (1 + rr)
	side := func(alpha float64) float64 {
		s := math.Sin(alpha / 2)
		return math.Sqrt(omr*omr + 4*rr*s*s)
	}
	den := side(phi-theta) * side(phi+theta)
	// numerator h0·A(z) + b₁z⁻¹ + b₂z⁻²: h0 + c₁z⁻¹ + c₂z⁻² with c small, so no cancellation
	c1, c2 := math.FMA(f.H0, a1, f.Num[0]), math.FMA(f.H0, a2, f.Num[1])
	num := cmplx.Abs(complex(f.H0, 0) + complex(c1, 0)*cmplx.Rect(1, -theta) + complex(c2, 0)*cmplx.Rect(1, -2*theta))
	if g := num / den; !(math.Abs(g-1) <= filters.MaxRelError) {
		return fmt.Sprintf("|H(e^{iθ})| is %.6g, not 1", g)
	}
	return ""
}

// resonatorLimitError refuses r and theta whose resonator has the given flaw, naming the
// nearest workable theta at this r, or else the nearest workable r (toward 0.5) at this theta.
func resonatorLimitError(name string, r, theta float64, flaw string) error {
	ok := func(r, theta float64) bool {
		f, err := Resonator(r, theta)
		return err == nil && ResonatorFlaw(f, r, theta) == ""
	}
	switch {
	case ok(r, math.Pi/2):
		d := nearestWorkable(theta, func(th float64) bool { return ok(r, th) })
		if theta > math.Pi/2 {
			return paramErrorf(name, "theta=%g at r=%g is too close to π for float64 to hold the resonator (%s): the largest workable theta is π - %s",
				theta, r, flaw, d)
		}
		return paramErrorf(name, "theta=%g at r=%g is too small for float64 to hold the resonator (%s): the smallest workable theta is %s",
			theta, r, flaw, d)
	case ok(0.5, theta) && r > 0.5:
		d := distanceWorkable(1-r, 0.5, func(d float64) bool { return ok(1-d, theta) })
		return paramErrorf(name, "r=%g at theta=%g is too close to 1 for float64 to hold the resonator (%s): the largest workable r is 1 - %s",
			r, theta, flaw, d)
	case ok(0.5, theta):
		// r² underflows
		d := distanceWorkable(r, 0.5, func(d float64) bool { return ok(d, theta) })
		return paramErrorf(name, "r=%g at theta=%g is too small for float64 to hold the resonator (%s): the smallest workable r is %s",
			r, theta, flaw, d)
	}
	return paramErrorf(name, "r=%g, theta=%g are beyond what float64 holds as a resonator: %s; move r away from 0 and 1 and theta away from 0 and π",
		r, theta, flaw)
}

// Comb returns a comb filter of delay d and gain g: the feedback comb y[t] = u[t] + g·y[t-d],
// H(z) = 1/(1 - g·z⁻ᵈ) (stable for |g| < 1, poles at the d-th roots of g), or the feedforward
// comb y[t] = u[t] + g·u[t-d], H(z) = 1 + g·z⁻ᵈ.
func Comb(d int, g float64, feedback bool) (*filters.TransferFunction, error) {
	if d < 1 {
		return nil, fmt.Errorf("presets: comb delay %d < 1", d)
	}
	a, b := make([]float64, d), make([]float64, d)
	b[d-1] = g
	if feedback {
		a[d-1] = -g
	}
	return filters.NewTransferFunction(a, b, 1)
}

// LeakyIntegrator returns the first-order leaky integrator y[t] = λ·y[t-1] + (1-λ)·u[t],
// H(z) = (1-λ)/(1 - λz⁻¹), with unit gain at ω = 0 and h[t] = (1-λ)λᵗ.
func LeakyIntegrator(lambda float64) (*filters.TransferFunction, error) {
	return filters.NewTransferFunction([]float64{-lambda}, []float64{(1 - lambda) * lambda}, 1-lambda)
}
