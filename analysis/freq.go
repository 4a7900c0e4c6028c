package analysis

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"github.com/ssmlab/ssmlab/filters"
)

// LinearGrid returns n frequencies from 0 to π inclusive, equally spaced (just 0 for n = 1).
func LinearGrid(n int) []float64 {
	if n < 0 {
		panic("analysis: negative grid size")
	}
	w := make([]float64, n)
	for i := 1; i < n; i++ {
		w[i] = math.Pi * float64(i) / float64(n-1)
	}
	if n > 1 {
		w[n-1] = math.Pi
	}
	return w
}

// LogGrid returns n frequencies from lo to π inclusive, equally spaced in log ω (just lo for
// n = 1). It panics unless 0 < lo < π.
func LogGrid(n int, lo float64) []float64 {
	if n < 0 {
		panic("analysis: negative grid size")
	}
	if !(lo > 0 && lo < math.Pi) {
		panic("analysis: LogGrid needs 0 < lo < π")
	}
	w := make([]float64, n)
	if n == 0 {
		return w
	}
	w[0] = lo
	ll, lh := math.Log(lo), math.Log(math.Pi)
	for i := 1; i < n; i++ {
		w[i] = math.Exp(ll + (lh-ll)*float64(i)/float64(n-1))
	}
	if n > 1 {
		w[n-1] = math.Pi
	}
	return w
}

// MagFloorDB is the magnitude, in dB, reported where H(e^{jω}) is exactly zero (a zero on the
// unit circle on a grid point), or lower when the grid's smallest nonzero magnitude is lower.
const MagFloorDB = -400.0

// Note marks a grid point whose value is not the plain formula's, and says why.
type Note struct {
	Index int     `json:"index"`
	Omega float64 `json:"omega"`
	// Root is "pole" or "zero" for a pole or zero of H on the unit circle at Omega, and ""
	// otherwise (H identically zero).
	Root string `json:"root,omitempty"`
	// Overflow is set where H is beyond float64's range with no pole there (a filter of huge
	// gain); H is stored as 0, as at a pole.
	Overflow bool   `json:"overflow,omitempty"`
	Text     string `json:"note"`
}

// Response is a frequency response on a grid of ω (rad/sample).
type Response struct {
	Omega []float64
	// H is H(e^{jω}). Where a pole lies on e^{jω} (within 1e-12: a grid point meant to be
	// the pole, such as ω = π for z = -1, misses it by rounding), H is infinite: H is 0 there
	// and Masked is set; so where H overflows float64 without a pole (Note.Overflow).
	H []complex128
	// MagDB is 20·log₁₀|H|. Where |H| = 0 (a zero on the unit circle) it is the floor
	// min(MagFloorDB, smallest finite value on the grid) and Masked is set; at a masked
	// pole it is the largest finite value on the grid (or 0 if none).
	MagDB []float64
	// Phase is arg H unwrapped along the grid as numpy.unwrap does: a jump of more than π
	// between neighbours is taken as a wrap and removed, so the grid must resolve the
	// narrowest resonance. Masked points repeat the previous point's phase, and unwrapping
	// resumes from it.
	Phase []float64
	// Masked[i] is set where H, the magnitude or the phase is not defined; Notes says why.
	Masked []bool
	Notes  []Note
}

// SteadyStateNote is what a frequency response of f must say where f is not stable (its
// filters.SpectralRadius, in StabilityOf's words), "" where it is or where its radius cannot
// be computed: H(e^{jω}) is then the z-transform on a circle outside the region of
// convergence of its causal response (or on its edge), not the response it settles to for
// the input e^{jωt}, which grows or persists at its poles' frequencies instead ("unstable,
// ρ = 4: H on the unit circle is not its steady-state response"). ssmlab analyze warns of
// it, and the figures and the workbench put it under their frequency plots.
func SteadyStateNote(f filters.Filter) string {
	rho, err := filters.SpectralRadius(f)
	if err != nil {
		return ""
	}
	return steadyStateNote(rho)
}

// steadyStateNote is SteadyStateNote for a filter of spectral radius rho.
func steadyStateNote(rho float64) string {
	v := StabilityOf(rho)
	if v == Stable {
		return ""
	}
	return fmt.Sprintf("%s, ρ = %s: H on the unit circle is not its steady-state response", v, filters.FormatModulus(rho))
}

// Zero reports whether H is 0 at every frequency of the grid (ZeroThroughout).
func (r *Response) Zero() bool { return ZeroThroughout(r.H, r.Masked) }

// ZeroThroughout reports whether a response held as its H and Masked is 0, and masked, at
// every frequency (the zero filter, or a response below float64's range): it has no
// magnitude in dB, phase or group delay to show, only the floors that stand in for them
// (MagFloorDB, a delay stored as 0). An empty grid is not.
func ZeroThroughout(h []complex128, masked []bool) bool {
	if len(h) == 0 || len(masked) != len(h) {
		return false
	}
	for i, v := range h {
		if v != 0 || !masked[i] {
			return false
		}
	}
	return true
}

// FreqResponse returns the frequency response of f on omega. Every number in it is finite.
// For a modal (diagonal) filter the sum h0 + Σ rᵢ/(e^{jω} - λᵢ) is evaluated here, with
// conjugate pairs together and divisions by a real reciprocal, O(n) per point, and so is the
// product of a ZPK filter; other forms use their own FreqResponse (a Hessenberg solve for
// dense filters, O(n²) per point).
func FreqResponse(f filters.Filter, omega []float64) *Response {
	h := responder(f)(omega)
	var poles []complex128
	found, known := false, false
	getPoles := func() bool {
		if !found {
			var err error
			poles, err = Poles(f)
			found, known = true, err == nil
		}
		return known
	}
	poleAt := func(w float64) bool {
		if !getPoles() {
			return true // unknown poles: the infinite H is taken to be one's
		}
		z := cmplx.Rect(1, w)
		for _, p := range poles {
			if cmplx.Abs(p-z) <= onCircleTol {
				return true
			}
		}
		return false
	}
	markGridPoles(f, omega, h, func() []complex128 {
		if !getPoles() {
			return nil
		}
		return poles
	})
	return newResponse(omega, h, poleAt)
}

// responder is H(e^{jω}) as FreqResponse computes it, before it masks the points where H is
// infinite: the modal sum for a diagonal filter, the products for a zpk one, the form's own
// FreqResponse for the others. What does not depend on ω is done once, here, for a caller
// that asks a few frequencies at a time (HInf's refinement): a diagonal filter's modes
// paired, a FreqPreparer's preparation (a dense A's Hessenberg reduction).
func responder(f filters.Filter) func(omega []float64) []complex128 {
	switch s := f.(type) {
	case *filters.Diagonal:
		md := modal{h0: s.H0, modes: pairModes(s.Poles, s.Residues)}
		return func(omega []float64) []complex128 { return modalResponse(md, omega) }
	case *filters.ZPK:
		return func(omega []float64) []complex128 { return zpkResponse(s, omega) }
	case filters.FreqPreparer:
		return s.PrepareFreqResponse()
	}
	return f.FreqResponse
}

// gridPoleTol is how close e^{jω} must come to a pole for the grid point to be that pole.
// There H is infinite, but rounding leaves it finite, about |residue|/1e-16: ω = fl(π) lies
// 1.2e-16 from π, so 1/(e^{jω} + 1) is -8.2e15j, not ∞; a computed pole carries its own
// rounding. A grid point this close to a pole it is not meant to hit would need a grid
// finer than 1e-12 rad, which LinearGrid and LogGrid never are.
const gridPoleTol = 1e-12

// markGridPoles sets h[i] to ∞ where e^{jω_i} lies within gridPoleTol of a pole, so that
// newResponse masks it as the pole it is. The poles are asked for only where some |H| stands
// 1e12 above the grid's median (a pole within 1e-12 of a grid point puts |H| about 1e4 above
// any grid point 1e-8 away), except for the forms that store them.
func markGridPoles(f filters.Filter, omega []float64, h []complex128, poles func() []complex128) {
	switch f.(type) {
	case *filters.Diagonal, *filters.ZPK, *filters.Rotation:
	default:
		mags := make([]float64, 0, len(h))
		for _, v := range h {
			if a := cmplx.Abs(v); !math.IsInf(a, 0) && !math.IsNaN(a) {
				mags = append(mags, a)
			}
		}
		if len(mags) == 0 {
			return
		}
		slices.Sort(mags)
		med := mags[len(mags)/2]
		if !(mags[len(mags)-1] > 1e12*med) {
			return
		}
	}
	var onCircle []complex128
	for _, p := range poles() {
		if math.Abs(cmplx.Abs(p)-1) <= gridPoleTol {
			onCircle = append(onCircle, p)
		}
	}
	for i, w := range omega {
		s, c := math.Sincos(w)
		for _, p := range onCircle {
			if math.Hypot(c-real(p), s-imag(p)) <= gridPoleTol {
				h[i] = cmplx.Inf()
				break
			}
		}
	}
}

// onCircleTol is how close to e^{jω} a computed pole must be for an infinite H there to be
// its: H overflows float64 only within rounding of a pole, and a pole's computed position is
// off by about ε times its condition.
const onCircleTol = 1e-6

// newResponse completes a Response from H on omega: magnitude, unwrapped phase and the masks
// of FreqResponse's documentation. poleAt says whether an infinite H at ω is a pole's (else
// it is an overflow).
func newResponse(omega []float64, h []complex128, poleAt func(w float64) bool) *Response {
	r := &Response{Omega: omega, H: h, Masked: make([]bool, len(omega))}
	r.MagDB = make([]float64, len(omega))
	r.Phase = make([]float64, len(omega))
	lo, hi := math.Inf(1), math.Inf(-1)
	atPole := make([]bool, len(omega))
	for i, h := range r.H {
		if cmplx.IsNaN(h) || cmplx.IsInf(h) {
			r.H[i] = 0
			r.Masked[i], atPole[i] = true, true
			if poleAt(omega[i]) {
				r.Notes = append(r.Notes, Note{Index: i, Omega: omega[i], Root: "pole", Text: "a pole on the unit circle: H is infinite here (stored as 0)"})
			} else {
				r.Notes = append(r.Notes, Note{Index: i, Omega: omega[i], Overflow: true, Text: "|H| is beyond float64's range here, with no pole (stored as 0)"})
			}
			continue
		}
		if a := cmplx.Abs(h); a > 0 {
			db := 20 * math.Log10(a)
			r.MagDB[i] = db
			lo, hi = math.Min(lo, db), math.Max(hi, db)
		} else {
			r.Masked[i] = true
			r.Notes = append(r.Notes, Note{Index: i, Omega: omega[i], Root: "zero", Text: "H = 0 (a zero on the unit circle): magnitude floored, phase undefined"})
		}
	}
	floor := math.Min(MagFloorDB, lo)
	if math.IsInf(hi, -1) {
		hi = 0
	}
	for i := range r.H {
		switch {
		case atPole[i]:
			r.MagDB[i] = hi
		case r.Masked[i]:
			r.MagDB[i] = floor
		}
	}
	unwrapPhase(r.Phase, r.H, r.Masked)
	return r
}

// unwrapPhase writes arg H unwrapped as numpy.unwrap(angle(H)) with discont π does, skipping
// masked points (which repeat the last phase).
func unwrapPhase(phase []float64, h []complex128, masked []bool) {
	prevRaw, prevOut, started := 0.0, 0.0, false
	for i, v := range h {
		if masked[i] {
			phase[i] = prevOut
			continue
		}
		raw := cmplx.Phase(v)
		if !started {
			prevRaw, prevOut, started = raw, raw, true
			phase[i] = raw
			continue
		}
		dd := raw - prevRaw
		mod := math.Mod(dd+math.Pi, 2*math.Pi)
		if mod < 0 {
			mod += 2 * math.Pi
		}
		mod -= math.Pi
		if mod == -math.Pi && dd > 0 {
			mod = math.Pi
		}
		if math.Abs(dd) < math.Pi {
			mod = dd
		}
		prevOut += mod
		prevRaw = raw
		phase[i] = prevOut
	}
}

// modalResponse evaluates h0 + Σ wᵢ-weighted modes at e^{jω}: a pair contributes
// r/(z - λ) + conj(r)/(z - conj λ).
func modalResponse(md modal, omega []float64) []complex128 {
	out := make([]complex128, len(omega))
	for k, w := range omega {
		s, c := math.Sincos(w)
		var acc complex128
		for _, m := range md.modes {
			dr, di := c-real(m.pole), s-imag(m.pole)
			inv := 1 / (dr*dr + di*di)
			rr, ri := real(m.residue), imag(m.residue)
			// r/(z - λ) = r·conj(z - λ)/|z - λ|².
			acc += complex((rr*dr+ri*di)*inv, (ri*dr-rr*di)*inv)
			if m.weight == 2 {
				// conj(r)/(z - conj λ): z - conj λ = dr + i(s + Im λ).
				dj := s + imag(m.pole)
				inv2 := 1 / (dr*dr + dj*dj)
				acc += complex((rr*dr-ri*dj)*inv2, (-ri*dr-rr*dj)*inv2)
			}
		}
		out[k] = complex(md.h0, 0) + acc
	}
	return out
}

// zpkResponse evaluates H0 + k·Π(z - zᵢ)/Π(z - pᵢ) as filters does (each zero factor
// divided by a pole factor as it goes, so high orders cannot overflow in between), with the
// divisions done by a real reciprocal.
func zpkResponse(f *filters.ZPK, omega []float64) []complex128 {
	out := make([]complex128, len(omega))
	for k, w := range omega {
		s, c := math.Sincos(w)
		z := complex(c, s)
		g := complex(f.Gain, 0)
		for i, p := range f.Poles {
			if i < len(f.Zeros) {
				g *= z - f.Zeros[i]
			}
			dr, di := c-real(p), s-imag(p)
			d2 := dr*dr + di*di
			if d2 == 0 {
				g = cmplx.Inf()
				break
			}
			inv := 1 / d2
			g = complex((real(g)*dr+imag(g)*di)*inv, (imag(g)*dr-real(g)*di)*inv)
		}
		out[k] = complex(f.H0, 0) + g
	}
	return out
}

// CircleTol is how close to the unit circle a zero or pole counts as on it for the group
// delay: |1 - |q|| ≤ CircleTol. Zeros computed as eigenvalues carry errors of this order.
const CircleTol = 1e-8

// GroupDelay is the group delay τ(ω) = -dφ/dω, in samples, on a grid.
type GroupDelay struct {
	Omega []float64
	Tau   []float64
	// Masked[i] is set where the phase is not differentiable: a zero or pole of H on the unit
	// circle at ω (the phase jumps by ±π there). Tau holds the two-sided limit, which is
	// finite; Notes says which root caused it.
	Masked []bool
	Notes  []Note
}

// GroupDelayOf returns the group delay of f on omega from its poles and zeros:
//
//	τ(ω) = Σ_poles Re(z/(z - p)) - Σ_zeros Re(z/(z - q)),  z = e^{jω},
//
// the derivative of φ = arg k + Σ arg(z - qᵢ) - Σ arg(z - pᵢ) term by term. Each term is
// accurate on its own, unlike Re(zH'(z)/H(z)), which loses every digit near a zero of H.
// A root on the unit circle (within CircleTol) contributes exactly ±1/2 (the value of
// Re(z/(z - q)) for |q| = |z| = 1, z ≠ q), so τ stays finite next to it; grid points on
// such a root are masked and annotated. A filter whose H is a constant has τ = 0 (and H ≡ 0
// is masked everywhere: its phase is undefined).
func GroupDelayOf(f filters.Filter, omega []float64) (*GroupDelay, error) {
	poles, zeros, constant, zero, err := rootsOf(f)
	if err != nil {
		return nil, err
	}
	g := &GroupDelay{Omega: omega, Tau: make([]float64, len(omega)), Masked: make([]bool, len(omega))}
	if constant {
		if zero {
			for i := range g.Masked {
				g.Masked[i] = true
			}
			if len(omega) > 0 {
				g.Notes = append(g.Notes, Note{Index: 0, Omega: omega[0], Text: "H is identically zero: the phase and its delay are undefined (stored as 0)"})
			}
		}
		return g, nil
	}
	type root struct {
		q      complex128
		sign   float64 // +1 pole, -1 zero
		circle bool
	}
	roots := make([]root, 0, len(poles)+len(zeros))
	for _, p := range poles {
		roots = append(roots, root{p, 1, math.Abs(cmplx.Abs(p)-1) <= CircleTol})
	}
	for _, q := range zeros {
		roots = append(roots, root{q, -1, math.Abs(cmplx.Abs(q)-1) <= CircleTol})
	}
	for i, w := range omega {
		s, c := math.Sincos(w)
		tau := 0.0
		for _, r := range roots {
			if r.circle {
				tau += r.sign / 2
				// Angular distance to the root: |e^{jω} - q| ≈ |ω - arg q| for |q| ≈ 1.
				if d := math.Hypot(c-real(r.q), s-imag(r.q)); d <= 16*CircleTol {
					if !g.Masked[i] {
						what := "zero"
						if r.sign > 0 {
							what = "pole"
						}
						g.Notes = append(g.Notes, Note{Index: i, Omega: w, Root: what, Text: fmt.Sprintf("a %s on the unit circle at %.6g%+.6gi: the phase jumps by π here; τ is the two-sided limit", what, real(r.q), imag(r.q))})
					}
					g.Masked[i] = true
				}
				continue
			}
			// Re(z/(z - q)) = Re(1/(1 - q·conj z)) = (1 - Re u)/|1 - u|², u = q·conj z.
			ur := real(r.q)*c + imag(r.q)*s
			ui := imag(r.q)*c - real(r.q)*s
			dr := 1 - ur
			tau += r.sign * dr / (dr*dr + ui*ui)
		}
		g.Tau[i] = tau
	}
	return g, nil
}

// rootsOf returns the poles and zeros of f for the group delay, or constant = true when H is
// a constant (zero = true when that constant is 0). The zeros are those of all of H(z), so a
// ZPK filter with an offset H0 goes through its state-space realisation.
func rootsOf(f filters.Filter) (poles, zeros []complex128, constant, zero bool, err error) {
	if cubicPoles(f) || cubicZeros(f) {
		if err := checkCubic("the group delay", adviceRoots, f); err != nil {
			return nil, nil, false, false, err
		}
	}
	src := f
	if z, ok := f.(*filters.ZPK); ok && z.H0 != 0 && len(z.Poles) > 0 {
		if src, _, err = filters.ToDense(f); err != nil {
			return nil, nil, false, false, err
		}
	}
	z, _, err := filters.ToZPK(src)
	if err != nil {
		return nil, nil, false, false, err
	}
	switch {
	case len(z.Poles) == 0:
		// Order 0: H = Gain + H0.
		return nil, nil, true, z.Gain+z.H0 == 0, nil
	case z.Gain == 0:
		// Every Markov parameter vanishes: H = H0.
		return nil, nil, true, z.H0 == 0, nil
	}
	return z.Poles, z.Zeros, false, false, nil
}
