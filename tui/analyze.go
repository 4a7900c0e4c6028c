package tui

import (
	"cmp"
	"math"
	"math/cmplx"
	"slices"

	"github.com/ssmlab/ssmlab/filters"
)

// filterAnalyzer is the default Analyzer, built on the filters package alone: each form's own
// Impulse and FreqResponse (O(n·L) and O(n·N) for the modal and zpk forms), the group delay by
// a central difference of the phase, and filters.Poles/Zeros.
type filterAnalyzer struct{}

// delayStep is the half-width of the central difference that gives the group delay
// τ(ω) = -Im(H'(ω)/H(ω)). H is analytic in ω, so the truncation error is O(δ²)·|H‴/H|
// ≈ 1e-12 relative for the smooth responses plotted; rounding adds eps/δ ≈ 2e-10. Both are
// far below what a terminal plot resolves.
const delayStep = 1e-6

func (filterAnalyzer) Responses(f filters.Filter, length int, omega []float64) (Responses, error) {
	var r Responses
	r.Impulse = f.Impulse(length)
	// One call for ω, ω+δ and ω-δ: the dense form reduces A to Hessenberg form once per call.
	n := len(omega)
	all := make([]float64, 3*n)
	copy(all, omega)
	for i, w := range omega {
		all[n+i] = w + delayStep
		all[2*n+i] = w - delayStep
	}
	h := f.FreqResponse(all)
	r.H = h[:n:n]
	r.Delay = make([]float64, n)
	for i := range omega {
		d := (h[n+i] - h[2*n+i]) / complex(2*delayStep, 0)
		if h[i] == 0 {
			r.Delay[i] = math.NaN()
			continue
		}
		r.Delay[i] = -imag(d / h[i])
	}
	return r, nil
}

func (filterAnalyzer) PolesZeros(f filters.Filter) (poles, zeros []complex128, err error) {
	p, hp := filters.HeldPoles(f)
	if z, hz := filters.HeldZeros(f); hp && hz {
		return p, z, nil
	}
	if poles, err = filters.Poles(f); err != nil {
		return nil, nil, err
	}
	if zeros, err = filters.Zeros(f); err != nil {
		return nil, nil, err
	}
	return poles, zeros, nil
}

// radius returns max |p| (0 for none).
func radius(poles []complex128) float64 {
	r := 0.0
	for _, p := range poles {
		r = math.Max(r, cmplx.Abs(p))
	}
	return r
}

// sortRoots orders roots as the filters package does: decreasing modulus, then increasing
// |angle|, the member with a positive imaginary part first.
func sortRoots(r []complex128) {
	slices.SortStableFunc(r, func(a, b complex128) int {
		if c := cmp.Compare(cmplx.Abs(b), cmplx.Abs(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(math.Abs(cmplx.Phase(a)), math.Abs(cmplx.Phase(b))); c != 0 {
			return c
		}
		return cmp.Compare(imag(b), imag(a))
	})
}

// dftResponse evaluates H(e^{jω}) = Σ h[t] e^{-jωt} of a finite kernel (for kernel items,
// which have no state-space form), and the group delay by the same central difference.
func dftResponse(h []float64, omega []float64) Responses {
	r := Responses{Impulse: h, H: make([]complex128, len(omega)), Delay: make([]float64, len(omega))}
	eval := func(w float64) complex128 {
		// Horner in e^{-jω}.
		z := cmplx.Rect(1, -w)
		var s complex128
		for t := len(h) - 1; t >= 0; t-- {
			s = s*z + complex(h[t], 0)
		}
		return s
	}
	for i, w := range omega {
		r.H[i] = eval(w)
		d := (eval(w+delayStep) - eval(w-delayStep)) / complex(2*delayStep, 0)
		if r.H[i] == 0 {
			r.Delay[i] = math.NaN()
		} else {
			r.Delay[i] = -imag(d / r.H[i])
		}
	}
	return r
}
