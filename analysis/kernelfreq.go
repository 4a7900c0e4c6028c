package analysis

import (
	"math"
	"math/cmplx"
)

// The frequency response and group delay of a kernel (an impulse response given as samples,
// such as a distillation target), taken as the FIR filter H(z) = Σ h[t]z⁻ᵗ. The workbench and
// the figures both use these, so a kernel's delay on screen and in a figure agree.

// KernelResponse returns the frequency response of the kernel h on omega,
// H(e^{jω}) = Σ h[t]e^{-jωt} by Horner's rule in e^{-jω} (O(len(h)) per point), with its
// magnitude, phase and masks as FreqResponse gives them.
func KernelResponse(h, omega []float64) *Response {
	out := make([]complex128, len(omega))
	for i, w := range omega {
		out[i], _ = kernelAt(h, w)
	}
	return newResponse(omega, out, func(float64) bool { return false }) // an FIR kernel has no poles
}

// kernelAt returns H(e^{jω}) and Σ t·h[t]e^{-jωt}.
func kernelAt(h []float64, w float64) (s, ds complex128) {
	z := cmplx.Rect(1, -w)
	for t := len(h) - 1; t >= 0; t-- {
		s = s*z + complex(h[t], 0)
		ds = ds*z + complex(float64(t)*h[t], 0)
	}
	return s, ds
}

// kernelZeroTol is how small |H| must be, relative to Σ|h[t]|, to count as a zero of H: the
// rounding of Horner's rule is a few eps·Σ|h[t]|, so below it the phase is noise.
const kernelZeroTol = 64 * 0x1p-52

// KernelGroupDelay returns the group delay of the kernel h on omega by the exact derivative
// of its phase,
//
//	τ(ω) = Re(Σ t·h[t]z⁻ᵗ / H(z)),  z = e^{jω},
//
// (no finite difference). Where H vanishes to rounding (|H| ≤ 64·eps·Σ|h[t]|, a zero of H on
// the unit circle) the phase has no derivative: the point is masked with a note and holds
// the value of the point before it (0 for the first), so every value is finite. A kernel
// that is identically zero is masked everywhere.
func KernelGroupDelay(h, omega []float64) *GroupDelay {
	g := &GroupDelay{Omega: omega, Tau: make([]float64, len(omega)), Masked: make([]bool, len(omega))}
	l1 := 0.0
	for _, v := range h {
		l1 += math.Abs(v)
	}
	prev := 0.0
	for i, w := range omega {
		s, ds := kernelAt(h, w)
		tau := real(ds / s)
		if cmplx.Abs(s) <= kernelZeroTol*l1 || math.IsNaN(tau) || math.IsInf(tau, 0) {
			g.Masked[i] = true
			g.Tau[i] = prev
			switch {
			case l1 != 0:
				g.Notes = append(g.Notes, Note{Index: i, Omega: w, Root: "zero", Text: "H = 0 here (a zero on the unit circle): the phase has no derivative; τ repeats the previous point"})
			case i == 0:
				g.Notes = append(g.Notes, Note{Index: i, Omega: w, Text: "the kernel is identically zero: the phase and its delay are undefined (stored as 0)"})
			}
			continue
		}
		g.Tau[i], prev = tau, tau
	}
	return g
}
