package analysis

import (
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/filters"
)

// Stability is the verdict on a filter's poles.
type Stability int

// The verdicts. Poles closer to the unit circle than filters.MarginalTol count as on it.
const (
	// Stable: every pole has |p| < 1 - filters.MarginalTol; the response decays.
	Stable Stability = iota
	// Marginal: no pole outside the circle, at least one on it; the response neither decays
	// nor grows (it grows polynomially if a pole on the circle is repeated in a Jordan
	// block, which the poles alone cannot tell).
	Marginal
	// Unstable: at least one pole has |p| > 1 + filters.MarginalTol; the response grows.
	Unstable
)

func (s Stability) String() string {
	switch s {
	case Stable:
		return "stable"
	case Marginal:
		return "marginal"
	case Unstable:
		return "unstable"
	}
	return "Stability(?)"
}

// MarshalText writes the verdict's name, so that JSON shows "stable", "marginal" or "unstable".
func (s Stability) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// StabilityOf is the verdict on a spectral radius ρ (the largest modulus of the poles): the
// one home of the classification, which analyze --properties, the conversion reports' words
// and the workbench all print.
func StabilityOf(rho float64) Stability {
	switch {
	case filters.Stable(rho):
		return Stable
	case rho > 1+filters.MarginalTol:
		return Unstable
	}
	return Marginal
}

// Classify returns the verdict on poles (StabilityOf their largest modulus) and the offending
// ones (|p| ≥ 1 - filters.MarginalTol), in the given order. No poles (order 0) is Stable.
func Classify(poles []complex128) (Stability, []complex128) {
	rho := 0.0
	var off []complex128
	for _, p := range poles {
		a := cmplx.Abs(p)
		rho = max(rho, a)
		if !filters.Stable(a) {
			off = append(off, p)
		}
	}
	return StabilityOf(rho), off
}

// Properties are the facts about a filter's poles and response that analyze --properties
// reports.
type Properties struct {
	Order          int
	Poles          []complex128 // largest modulus first (the filters package's order)
	SpectralRadius float64      // max |pᵢ|, 0 for order 0
	Stability      Stability
	Offending      []complex128 // the poles with |p| ≥ 1 - filters.MarginalTol
	// Montel is Σᵢ|aᵢ| over the non-leading coefficients of the monic denominator
	// zⁿ + a₁zⁿ⁻¹ + … + aₙ (RTF paper, eq. 17): Montel ≤ 1 guarantees every pole inside the
	// unit disc (it is sufficient, not necessary). For forms without coefficients the
	// denominator is expanded from the poles.
	Montel float64
	// Memory is the number of samples after which |h[t]| stays at or below Tol·max|h[t≥1]|:
	// the filter's effective memory, that of its state (h[0] = D does not decay and does not
	// count in the peak). It is -1 when the filter is not stable (the response never decays),
	// 0 when h is identically zero, 1 for a pure gain. It is measured on the response (decay),
	// over at most MaxAutoLength samples: where it is not over by then, MemoryAtLeast is
	// set and Memory is only a lower bound (its last exceedance within the window).
	Memory        int
	MemoryAtLeast bool
	Tol           float64 // the tolerance Memory used
	// DCGain is H(1), which is Σ h[t] for a stable filter (the value the step response
	// settles at). When a pole lies at z = 1 (an integrator) the DC gain is infinite:
	// DCFinite is false and DCGain is 0.
	DCGain   float64
	DCFinite bool
}

// Analyze returns the Properties of f; tol is the decay tolerance of Memory (0 means
// DefaultTol). Every number is finite. The zeros are not among them (Zeros computes them: an
// O(n³) eigenvalue problem for every form but tf, companion and zpk, which the properties do
// not need).
func Analyze(f filters.Filter, tol float64) (*Properties, error) {
	if tol <= 0 {
		tol = DefaultTol
	}
	poles, err := Poles(f)
	if err != nil {
		return nil, err
	}
	p := &Properties{Order: f.Order(), Poles: poles, Tol: tol}
	for _, z := range poles {
		p.SpectralRadius = math.Max(p.SpectralRadius, cmplx.Abs(z))
	}
	p.Stability, p.Offending = Classify(poles)
	p.Montel = montel(f, poles)
	if p.Memory, p.MemoryAtLeast, err = memory(f, p.SpectralRadius, tol); err != nil {
		return nil, err
	}
	if h := f.FreqResponse([]float64{0})[0]; !cmplx.IsNaN(h) && !cmplx.IsInf(h) {
		p.DCGain, p.DCFinite = real(h), true
	}
	return p, nil
}

// ownPoles returns the poles of f on or outside the unit circle as Poles gives them (the
// form's stored poles, or its eigenvalues), in place of computed, the same poles found
// otherwise (from the blocks of a Schur form, where cos(π/2) turns ±j into 6.1e-17 ± 1i), so
// that every result names a pole alike; computed stays where the two disagree in number.
func ownPoles(f filters.Filter, computed []complex128) []complex128 {
	if len(computed) == 0 {
		return computed
	}
	poles, err := Poles(f)
	if err != nil {
		return computed
	}
	if _, off := Classify(poles); len(off) == len(computed) {
		return filters.SortRoots(off)
	}
	return computed
}

// Zeros returns the zeros of all of H(z), offset included, from the system's zero dynamics
// (filters.Zeros), largest modulus first; an empty, non-nil slice for none. filters.Zeros
// returns a ZPK filter's stored zeros, which ignore its offset H0 (the zeros of
// Gain·Π(z - zᵢ)/Π(z - pᵢ), not of H0 + that); such a filter goes through its dense
// realisation here.
//
// Zeros other than a transfer function's are refused above MaxCubicOrder (*OrderLimitError).
func Zeros(f filters.Filter) ([]complex128, error) {
	if cubicZeros(f) {
		if err := checkCubic("the zeros", adviceZeros, f); err != nil {
			return nil, err
		}
	}
	if z, ok := f.(*filters.ZPK); ok && z.H0 != 0 && len(z.Poles) > 0 {
		d, _, err := filters.ToDense(f)
		if err != nil {
			return nil, err
		}
		return filters.Zeros(d)
	}
	zeros, err := filters.Zeros(f)
	if zeros == nil && err == nil {
		zeros = []complex128{}
	}
	return zeros, err
}

// montel returns Σ|aᵢ| of the monic denominator: the coefficients of a tf or companion
// filter, or Π(z - pᵢ) expanded in real arithmetic (a conjugate pair as z² - 2Re(p)z + |p|²).
func montel(f filters.Filter, poles []complex128) float64 {
	var a []float64
	switch s := f.(type) {
	case *filters.TransferFunction:
		a = s.Den
	case *filters.Companion:
		a = s.Den
	default:
		a = polyFromRoots(poles)
	}
	sum := 0.0
	for _, v := range a {
		sum += math.Abs(v)
	}
	return sum
}

// polyFromRoots returns a₁…aₙ of Π(z - pᵢ) = zⁿ + a₁zⁿ⁻¹ + … + aₙ for a conjugate-closed set.
func polyFromRoots(roots []complex128) []float64 {
	c := []float64{1} // descending powers
	mul := func(f []float64) {
		out := make([]float64, len(c)+len(f)-1)
		for i, u := range c {
			for j, v := range f {
				out[i+j] += u * v
			}
		}
		c = out
	}
	for _, m := range pairModes(roots, make([]complex128, len(roots))) {
		if m.weight == 2 {
			mul([]float64{1, -2 * real(m.pole), real(m.pole)*real(m.pole) + imag(m.pole)*imag(m.pole)})
		} else {
			mul([]float64{1, -real(m.pole)})
		}
	}
	return c[1:]
}

// memory returns the effective memory of f (decay); -1 when f is not stable.
func memory(f filters.Filter, rho, tol float64) (int, bool, error) {
	if !filters.Stable(rho) {
		return -1, false, nil
	}
	return decay(f, rho, tol)
}

// decay measures how many samples the impulse response of the stable f takes to fall for good
// below tol of its peak over t ≥ 1 (filters.MeasureDecay: t = 1 + the last index where |h|
// exceeds it; 0 when h ≡ 0, 1 for a pure gain). The window starts at 2·LengthForRadius(ρ),
// the time the slowest mode takes to decay by tol², and doubles up to MaxAutoLength; where
// the response is not over by then, atLeast is set and t is only a lower bound.
func decay(f filters.Filter, rho, tol float64) (t int, atLeast bool, err error) {
	m := Recurrence
	if _, ok := f.(*filters.Diagonal); ok {
		m = Vandermonde
	}
	d, err := filters.MeasureDecay(tol, 2*LengthForRadius(rho, f.Order(), tol), MaxAutoLength, func(l int) ([][]float64, error) {
		h, err := Impulse(nil, f, l, m)
		return [][]float64{h}, err
	})
	return d.Time, d.AtLeast, err
}
