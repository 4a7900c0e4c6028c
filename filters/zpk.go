package filters

import (
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/internal/underflow"
)

// ZPK is the zero-pole-gain form H(z) = H0 + Gain·Π(z - zᵢ)/Π(z - pᵢ) with len(Zeros) ≤
// len(Poles). Zeros and poles are conjugate-closed. Conversions into this form put every zero
// of H in Zeros and set H0 = 0; H0 lets an RTF-style offset be written without expanding it.
type ZPK struct {
	Zeros, Poles []complex128
	Gain, H0     float64
}

// NewZPK validates and returns a zero-pole-gain filter; the slices are copied.
func NewZPK(zeros, poles []complex128, gain, h0 float64) (*ZPK, error) {
	f := &ZPK{Zeros: cloneC(zeros), Poles: cloneC(poles), Gain: gain, H0: h0}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Form returns FormZPK.
func (f *ZPK) Form() Form { return FormZPK }

// Order returns the number of poles.
func (f *ZPK) Order() int { return len(f.Poles) }

// Validate checks counts, finiteness and conjugate closure.
func (f *ZPK) Validate() error {
	if err := checkOrder(len(f.Poles)); err != nil {
		return err
	}
	if len(f.Zeros) > len(f.Poles) {
		return invalidf("%d zeros but only %d poles: H(z) must be proper", len(f.Zeros), len(f.Poles))
	}
	if err := checkFiniteC("zeros", f.Zeros...); err != nil {
		return err
	}
	if err := checkFiniteC("poles", f.Poles...); err != nil {
		return err
	}
	if err := checkFinite("gain", f.Gain); err != nil {
		return err
	}
	if err := checkFinite("h0", f.H0); err != nil {
		return err
	}
	if err := checkConjugateClosed("zero", f.Zeros); err != nil {
		return err
	}
	return checkConjugateClosed("pole", f.Poles)
}

// Impulse filters a delayed impulse through a cascade of first-order sections
// (1 - zᵢz⁻¹)/(1 - pᵢz⁻¹), each zero paired with its nearest pole, in complex arithmetic, with
// a running power-of-two scale so that high orders cannot overflow in between.
func (f *ZPK) Impulse(length int) []float64 {
	h := make([]float64, length)
	if length == 0 {
		return h
	}
	n, m := len(f.Poles), len(f.Zeros)
	x := make([]complex128, length)
	if delay := n - m; delay < length {
		x[delay] = 1
	}
	scale := 0
	inPeak := 1.0 // the section's input's largest |re| + |im|: the impulse's, then each output's
	poles := append([]complex128(nil), f.Poles...)
	for i := 0; i < n; i++ {
		var zero complex128
		hasZero := i < m
		if hasZero {
			zero = f.Zeros[i]
			// Pair with the nearest remaining pole.
			best := i
			for j := i + 1; j < n; j++ {
				if cmplx.Abs(poles[j]-zero) < cmplx.Abs(poles[best]-zero) {
					best = j
				}
			}
			poles[i], poles[best] = poles[best], poles[i]
		}
		p := poles[i]
		var prevIn, prevOut complex128
		peak := 0.0
		for t := range x {
			in := x[t]
			out := in + p*prevOut
			if hasZero {
				out -= zero * prevIn
			}
			// What has decayed below underflow.Below of the input goes to zero as it comes,
			// so that the section does not run on subnormal numbers (package underflow).
			out = underflow.Complex(out, inPeak)
			prevIn, prevOut = in, out
			x[t] = out
			// A plain comparison: math.Max's NaN handling dominated this loop.
			if a := cabs1(out); a > peak {
				peak = a
			}
		}
		if peak > 0x1p300 || (peak > 0 && peak < 0x1p-300) {
			_, e := math.Frexp(peak)
			for t := range x {
				x[t] = complex(math.Ldexp(real(x[t]), -e), math.Ldexp(imag(x[t]), -e))
			}
			scale += e
			peak = math.Ldexp(peak, -e)
		}
		if !math.IsInf(peak, 0) { // an overflowed section flushes nothing after it
			inPeak = peak
		}
	}
	for t := range h {
		h[t] = math.Ldexp(f.Gain*real(x[t]), scale)
	}
	h[0] += f.H0
	return h
}

// FreqResponse evaluates the products, each zero factor divided by a pole factor as it goes.
func (f *ZPK) FreqResponse(omega []float64) []complex128 {
	out := make([]complex128, len(omega))
	for k, w := range omega {
		z := unitCircle(w)
		g := complex(f.Gain, 0)
		for i, p := range f.Poles {
			if i < len(f.Zeros) {
				g *= z - f.Zeros[i]
			}
			g /= z - p
		}
		out[k] = complex(f.H0, 0) + g
	}
	return out
}
