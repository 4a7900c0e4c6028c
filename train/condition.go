package train

import (
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/filters"
)

// Conditioning of a modal fit. Variable projection is free to reach its error with modes
// that cancel: two nearly equal poles with huge residues of opposite sign (a double pole's
// τλ^τ written as (λ₁^τ − λ₂^τ)/(λ₁ − λ₂)), or a pair at the parametrisation's smallest
// radius whose residue, divided by the pole, writes the first samples (an FIR tap). The
// response is right in float64 arithmetic on the residues as fitted, but not once they are
// rounded: to float32 (a pair of poles 1e-15 apart at 0.9999 with residues ∓1.9e10 on a
// trained Hyena kernel loses everything), or by the layouts that store the residue over the
// pole from t = 0 with the direct term taking the rest (StripedHyena, S4D): a pair at radius
// 1.9e-9 with residue 1.3e6 becomes residues of 7e14 and D = −4.9e14, whose float64 sum is
// off by 0.06 (a relative error of 0.028 on that channel).
//
// conditionFit moves such poles — a pole below condMinRadius out (to at least it), the inner one of two
// nearly coincident poles inward, or two real ones no such move parts (a double pole at the
// radius bound) into a conjugate pair — and solves the residues again by least squares, one move
// at a time, each taken only while the fit's error stays within condErrorRatio of the
// error it had (so the accuracy the fit reports is the one a rounded deployment keeps); then
// it puts the poles on float32's grid (snapPoles), on the same condition.

// condAmplification is the amplification (below) beneath which a fit is left as it is: its
// parameters rounded to float32 (6e-8) move the response by at most about 6e-6 of its norm.
const condAmplification = 100

// condErrorRatio bounds the relative error of a conditioned fit by that of the fit it
// started from; condErrorFloor is added for fits near exact, whose error is rounding (the
// tutorial's order-16 Hyena fit, at 1.9e-10, rose to 3.3e-10 with its poles snapped when
// this was set).
const (
	condErrorRatio = 1.1
	condErrorFloor = 1e-12
)

// condSnapRatio bounds the error of a fit with its poles on float32's grid by that of the fit
// before (and by condErrorRatio times the error of the fit conditionFit started from):
// tighter than condErrorRatio, since a deployment in float64 gains nothing from the snap (the
// README's order-2 Hyena fit, written as a tf, would rise from 8.82e-7 to 8.92e-7).
const condSnapRatio = 1.01

// condMinRadius is the smallest pole radius a conditioned fit keeps: a mode at radius ρ is
// stored by the layouts as r/p, and a tap of size h at t = 1 then costs a residue of h/ρ.
const condMinRadius = 1e-2

// condRadii are the radii a pole below condMinRadius is moved out to, the largest first.
var condRadii = []float64{0.3, 0.1, 3e-2, condMinRadius}

// condSteps are the distances (relative to the pole's radius) by which a pole is moved off
// its neighbour, the largest first: the first within condErrorRatio is kept.
var condSteps = []float64{3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5}

// condAngles are the angles of the pair two real poles are merged into (mergeReals), the
// largest first: condSteps, then on to 1e-7 for fits closer than those reach (a double pole
// at 0.9999 fitted to 6.4e-7 over 1024 samples, which θ = 1e-5 takes to 4.0e-6 and
// θ = 1e-6 to 6.7e-7).
var condAngles = append(append([]float64(nil), condSteps...), 3e-6, 1e-6, 3e-7, 1e-7)

// modeAmplification is how much larger than the response ‖y‖ its modes are before they
// cancel: √Σₖ aₖ² / ‖y‖ with aₖ = |rₖ|·max(1, 1/|λₖ|)·‖λₖ^τ‖ (τ = 0…L−2) for each real pole
// and each pair (2|r|), the size of the mode in ssmlab's convention or in the layouts' r/λ
// from t = 0. A fit whose modes do not cancel has it near 1; rounding the residues to a
// relative ε moves the response by about ε times it.
func modeAmplification(f *modalFit, y []float64) float64 {
	norm := math.Sqrt(sumSquares(y))
	if norm == 0 {
		return 0
	}
	s := 0.0
	for i := 0; i < f.s.pairs+f.s.reals; i++ {
		a := modeSize(f, i, len(y)-1)
		s += a * a
	}
	return math.Sqrt(s) / norm
}

// modeSize is aₖ of modeAmplification for mode i of f over m samples.
func modeSize(f *modalFit, i, m int) float64 {
	p := f.s.pole(f.a, i)
	var r float64
	if i < f.s.pairs {
		r = 2 * math.Hypot(f.c[2*i], f.c[2*i+1])
	} else {
		r = math.Abs(f.c[2*f.s.pairs+i-f.s.pairs])
	}
	rho := cmplx.Abs(p)
	if r == 0 {
		return 0
	}
	g := math.Sqrt(float64(m)) // ‖λ^τ‖ over τ < m: √Σ ρ^(2τ), in closed form
	if rho < 1 {
		g = math.Sqrt(real(filters.GeomSum(complex(2*math.Log(rho), 0), m)))
	}
	return r * math.Max(1, 1/rho) * g
}

// conditionFit returns f with its cancelling modes moved apart (see above) and its poles on
// float32's grid (snapPoles), each step taken only where it keeps the error within
// condErrorRatio of f's; f itself when neither is needed or taken.
func conditionFit(y []float64, f *modalFit) *modalFit {
	limit := math.Max(condErrorRatio*f.rel, f.rel+condErrorFloor)
	best := f
	if modeAmplification(f, y) > condAmplification {
		best = separateModes(y, f, limit)
	}
	if g := snapPoles(y, best, math.Min(limit, math.Max(condSnapRatio*best.rel, best.rel+condErrorFloor))); g != nil {
		best = g
	}
	return best
}

// snapPoles returns f with every pole rounded to float32 in its real and imaginary parts and
// the residues solved again, or nil when they are on that grid already or the error would
// leave limit. A float32 deployment that stores poles as their parts (StripedHyena) then
// rounds only the residues: a pole at radius 0.9999 rounded by 6e-8 moves λ^τ by τ·6e-8,
// 2.4e-4 at τ = 4096 (the trained layer-0 fit at n = 16 read back to 7.1e-4). The layouts
// that store log λ (S4D) round it finer still near z = 1.
func snapPoles(y []float64, f *modalFit, limit float64) *modalFit {
	f32 := func(v float64) float64 { return float64(float32(v)) }
	pairs := make([]complex128, f.s.pairs)
	reals := make([]float64, f.s.reals)
	moved := false
	for i := range pairs {
		p := f.s.pole(f.a, i)
		pairs[i] = complex(f32(real(p)), f32(imag(p)))
		moved = moved || cmplx.Abs(pairs[i]-p) > 1e-15*cmplx.Abs(p)
	}
	for i := range reals {
		p := real(f.s.pole(f.a, f.s.pairs+i))
		reals[i] = f32(p)
		moved = moved || math.Abs(reals[i]-p) > 1e-15*math.Abs(p)
	}
	if !moved {
		return nil
	}
	g := refitResidues(y, f.s, pairs, reals, f.h0)
	if g == nil || !(g.rel <= limit) {
		return nil
	}
	return g
}

// separateModes moves f's cancelling modes apart, the largest first, each move kept while the
// error stays within limit and the amplification falls.
func separateModes(y []float64, f *modalFit, limit float64) *modalFit {
	best := f
	moved := map[int]bool{}
	for range f.s.pairs + f.s.reals {
		// The largest mode not yet moved; once it is small, so are the others.
		k, size := -1, 0.0
		for i := 0; i < best.s.pairs+best.s.reals; i++ {
			if a := modeSize(best, i, len(y)-1); !moved[i] && a > size {
				k, size = i, a
			}
		}
		if k < 0 || size <= condAmplification*math.Sqrt(sumSquares(y)) {
			break
		}
		moved[k] = true
		next, j := moveMode(y, best, k, limit)
		if next == nil || !(modeAmplification(next, y) < modeAmplification(best, y)) {
			continue
		}
		if j >= 0 {
			// k and j are now a pair, after best's: the real poles after them move up.
			was := moved
			moved = map[int]bool{best.s.pairs: true}
			for i := range was {
				switch {
				case i < best.s.pairs:
					moved[i] = true
				case i != k && i != j:
					n := i + 1
					if i > k {
						n--
					}
					if i > j {
						n--
					}
					moved[n] = true
				}
			}
		}
		best = next
	}
	return best
}

// moveMode returns f with pole k moved (out to condMinRadius, or inward off its nearest
// neighbour of the same kind by the largest of condSteps that keeps the error within limit;
// a real pole no such step moves, merged with its real neighbour j into a pair: mergeReals)
// and the residues solved again, and j (−1 unless merged); nil when no move does.
func moveMode(y []float64, f *modalFit, k int, limit float64) (*modalFit, int) {
	pairs := make([]complex128, f.s.pairs)
	reals := make([]float64, f.s.reals)
	for i := range pairs {
		pairs[i] = f.s.pole(f.a, i)
	}
	for i := range reals {
		reals[i] = real(f.s.pole(f.a, f.s.pairs+i))
	}
	p := f.s.pole(f.a, k)
	rho := cmplx.Abs(p)
	try := func(q complex128) *modalFit {
		if k < f.s.pairs {
			pairs[k] = q
		} else {
			reals[k-f.s.pairs] = real(q)
		}
		g := refitResidues(y, f.s, pairs, reals, f.h0)
		if k < f.s.pairs {
			pairs[k] = p
		} else {
			reals[k-f.s.pairs] = real(p)
		}
		if g == nil || !(g.rel <= limit) {
			return nil
		}
		return g
	}
	if rho < condMinRadius {
		// Out to the largest radius of condRadii that keeps the error: the residue a tap
		// needs falls as the radius grows.
		for _, to := range condRadii {
			q := complex(to, 0)
			if rho > 0 {
				q = p * complex(to/rho, 0)
			}
			if g := try(q); g != nil {
				return g, -1
			}
		}
		return nil, -1
	}
	// Its nearest neighbour; a mode with none near needs no move.
	near, j := math.Inf(1), -1
	for i := 0; i < f.s.pairs+f.s.reals; i++ {
		if d := cmplx.Abs(f.s.pole(f.a, i) - p); i != k && (i < f.s.pairs) == (k < f.s.pairs) && d < near {
			near, j = d, i
		}
	}
	for _, d := range condSteps {
		if near >= d*rho {
			continue
		}
		if g := try(p * complex(1-d, 0)); g != nil {
			return g, -1
		}
	}
	if k >= f.s.pairs && near < condSteps[0]*rho && !f.s.poles.realOnly() {
		if g := mergeReals(y, f, k, j, limit); g != nil {
			return g, j
		}
	}
	return nil, -1
}

// mergeReals returns f with its real poles k and j, nearly coincident, replaced by a
// conjugate pair at their mean radius, at the largest of condAngles that keeps the error
// within limit, and the residues solved again; or nil when none does. Two real poles δ apart
// write a double pole's τλ^(τ−1) as the one-sided difference (λ^τ − (λ−δ)^τ)/δ, whose error
// is first order in δ (relative (τ−1)δ/2λ) and whose residues ±1/δ cancel; a pair at angle θ
// writes it as the central one, (λ^τ − λ̄^τ)/(λ − λ̄) = ρ^(τ−1)·sin(τθ)/sin θ, whose error is
// second order (relative (τ²−1)θ²/6) and whose residue, large as 1/θ, multiplies Im λ^τ,
// small as sin(τθ): nothing cancels. So where the fit wants a double pole, moving one pole
// inward costs the first order and the pair the second. Layer 20 of a 24-layer Hyena model,
// channel 2 at n = 16: real poles at the radius bound 0.9999 and 1.0e-8 inside it, residues
// ±1.66e4 (amplification 1.3e5), error 4.88e-5; the smallest inward step (1e-5) rose to
// 2.1e-4, the pair at angle 3e-5 is at 4.99e-5 with an amplification of 30, and its float32
// tensors (poles snapped) read back to 9.1e-8 where the two poles' read back to 0.52: both
// round to one float32 value, so snapPoles could not keep them either.
func mergeReals(y []float64, f *modalFit, k, j int, limit float64) *modalFit {
	pk, pj := real(f.s.pole(f.a, k)), real(f.s.pole(f.a, j))
	if pk*pj <= 0 {
		return nil
	}
	s := poleSet{pairs: f.s.pairs + 1, reals: f.s.reals - 2, rmax: f.s.rmax, poles: f.s.poles}
	pairs := make([]complex128, f.s.pairs, s.pairs)
	var reals []float64
	for i := range pairs {
		pairs[i] = f.s.pole(f.a, i)
	}
	for i := f.s.pairs; i < f.s.pairs+f.s.reals; i++ {
		if i != k && i != j {
			reals = append(reals, real(f.s.pole(f.a, i)))
		}
	}
	rho := (math.Abs(pk) + math.Abs(pj)) / 2
	for _, d := range condAngles {
		theta := d
		if pk < 0 {
			theta = math.Pi - d
		}
		if g := refitResidues(y, s, append(pairs, cmplx.Rect(rho, theta)), reals, f.h0); g != nil && g.rel <= limit {
			return g
		}
	}
	return nil
}

// refitResidues is the fit with the given poles (in s's layout) and least-squares residues.
func refitResidues(y []float64, s poleSet, pairs []complex128, reals []float64, h0 float64) *modalFit {
	a := s.params(pairs, reals)
	v := newVarpro(s, y)
	defer v.release()
	v.sse(a)
	f := v.polish()
	if v.accurate {
		f = v.exactResidues(true)
	}
	norm := math.Sqrt(sumSquares(y))
	rel := math.Sqrt(2 * f)
	if norm > 0 {
		rel /= norm
	}
	if math.IsNaN(rel) {
		return nil
	}
	return &modalFit{s: s, a: a, c: append([]float64(nil), v.c...), h0: h0, rel: rel}
}
