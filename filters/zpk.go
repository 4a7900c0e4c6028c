package filters

import (
	"math"
	"math/cmplx"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/underflow"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ZPK is the zero-pole-gain form H(z) = H0 + Gain·Π(z - zᵢ)/Π(z - pᵢ) with len(Zeros) ≤
// len(Poles). Zeros and poles are conjugate-closed. Conversions into this form put every zero
// of H in Zeros and set H0 = 0; H0 lets an RTF-style offset be written without expanding it.
// A ZPK keeps the order of its cascade between calls of Impulse (checked against its roots at
// each), so it is used by pointer: to copy one, copy its fields.
type ZPK struct {
	Zeros, Poles []complex128
	Gain, H0     float64

	// order keeps cascade's pairing and orders for the roots they were computed from. The
	// fields are exported and may change after construction (FromSections fills them in,
	// scaledBy shares the slices), so each use checks it against them, O(n), rather than
	// trust a value set once. A ZPK must not be copied (go vet says where): copy its fields.
	order atomic.Pointer[cascadeOrder]
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
		return invalidf("%s but only %s: H(z) must be proper", plural.Count(len(f.Zeros), "zero"), plural.Count(len(f.Poles), "pole"))
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

// Impulse filters a delayed impulse through the cascade of first-order sections
// (1 − zᵢz⁻¹)/(1 − pᵢz⁻¹) that cascade orders, in complex arithmetic, with a running
// power-of-two scale so that high orders cannot overflow in between.
func (f *ZPK) Impulse(length int) []float64 { return f.impulseOf(f.cascade(length), length) }

// impulseOf is Impulse through the sections secs.
func (f *ZPK) impulseOf(secs []zpkSection, length int) []float64 {
	st := f.start(length)
	for _, s := range secs {
		st.step(s, nil)
	}
	return f.output(st)
}

// ImpulseError returns Impulse(length) with a first-order estimate of its relative error
// ‖δh‖₂/‖h‖₂ from rounding, over those samples: the sum of two bounds for the worst signs of
// the roundings,
//
//   - the stored numbers' (storageError): each part of a pole or zero, the gain and H0 moved
//     by one unit in its last place, a root q by at most ε·|q| (ε = 2⁻⁵²), each root's change
//     of h added without cancellation;
//   - the cascade's (evaluationBound): what each section rounds at each sample, through the
//     sections after it, within the window.
//
// Against exact arithmetic (TestZPKErrorEstimateGolden) the first lies within 1.6 to 5.5 times
// the error of moving every stored number by one ulp the worst way, on clustered Butterworth,
// Chebyshev, HiPPO-LegS, S4D-Lin and random filters, and the sum within 6 to 160 times the
// larger of that and the cascade's own error (the cascade's roundings do not take their worst
// signs): 2.8e-12 for a Butterworth filter of order 64 at ωc = 0.001 whose stored numbers fix
// its response to 4.5e-13. A gain on the unit circle says nothing of a response that grows,
// so ok is false for a pole on or outside it (within MarginalTol) that no zero cancels
// exactly; the estimate is then 0.
func (f *ZPK) ImpulseError(length int) (h []float64, relErr float64, ok bool) {
	secs := f.cascade(length)
	for _, s := range secs {
		if s.pole != s.zero && !Stable(cmplx.Abs(s.pole)) {
			return f.impulseOf(secs, length), 0, false
		}
	}
	h, relErr = f.evaluationBound(secs, length)
	if relErr < math.MaxFloat64 {
		relErr = min(relErr+f.storageError(h), math.MaxFloat64)
	}
	return h, relErr, true
}

// zpkSection is the factor (1 − zero·z⁻¹)/(1 − pole·z⁻¹) of a cascade (zero = 0 for a
// section without one: the missing zeros are a delay of the input instead).
type zpkSection struct{ zero, pole complex128 }

// cascade pairs each pole, from the one nearest the unit circle, with the nearest zero not
// yet taken (scipy.signal.zpk2sos's 'nearest' pairing: the sections whose poles amplify most
// get the zeros that cancel them best; a conjugate pole then takes the mirror image of its
// partner's zero), and orders the sections (lejaOrder) so that the partial products of the
// cascade stay near the size of the whole: in stored order (by modulus, then angle) the 199
// zeros of a moving average of length 200, adjacent roots of unity, made partial responses
// of 1e14 around a response of 0.005. Where both zeros and poles lie off the origin and the
// poles inside the unit circle, the Leja order's amplification of the roundings over a
// window of length samples is measured (zpkorder.go), and above maxCascadeAmp the balanced
// order replaces it when it does better: O(n·M) for the check on M ≤ orderGridMax
// frequencies, O(n²·M) for the balanced order. Both depend on the roots and the length
// alone, so f keeps them (cascadeOrder) and a repeated call costs O(n) to check the roots.
// The sections returned are shared: read them, never write them.
func (f *ZPK) cascade(length int) []zpkSection {
	c := f.order.Load()
	if c == nil || !c.holds(f.Zeros, f.Poles) {
		c = newCascadeOrder(f.Zeros, f.Poles)
		f.order.Store(c)
	}
	return c.sections(length)
}

// pairedLeja is cascade's pairing in Leja order, which depends on the roots alone.
func pairedLeja(zeros, poles []complex128) []zpkSection {
	n, m := len(poles), len(zeros)
	secs := make([]zpkSection, n)
	for i, p := range poles {
		secs[i].pole = p
	}
	// Nearest the circle first; the stored order breaks ties, so conjugates stay together.
	slices.SortStableFunc(secs, func(a, b zpkSection) int {
		da, db := math.Abs(1-cmplx.Abs(a.pole)), math.Abs(1-cmplx.Abs(b.pole))
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
	zeros = slices.Clone(zeros)
	for i := range min(n, m) {
		p := secs[i].pole
		best, bd := i, dist2(zeros[i], p)
		for j := i + 1; j < m; j++ {
			if d := dist2(zeros[j], p); d < bd {
				best, bd = j, d
			}
		}
		zeros[i], zeros[best] = zeros[best], zeros[i]
		secs[i].zero = zeros[i]
	}
	return lejaOrder(secs)
}

// windowOrder is the order of secs (in Leja order) for a window of length samples: secs
// itself, or the balanced order where secs amplify the roundings above maxCascadeAmp and
// the balanced order does better.
func windowOrder(secs []zpkSection, length int) []zpkSection {
	if !rational(secs) || length < 2 {
		return secs
	}
	n := len(secs)
	g := newOrderGrid(secs, windowRadius(length))
	logH := g.logH(secs)
	amp := g.amplification(secs, logH)
	if amp <= math.Log(maxCascadeAmp) {
		return secs
	}
	if n*balanceWindow(n)*len(g.w) > balanceBudget {
		// Too large to balance: the Leja order, whose rounding ImpulseError's estimate
		// reports.
		return secs
	}
	if b := g.balancedOrder(secs, logH); g.amplification(b, logH) < amp {
		return b
	}
	return secs
}

// cascadeOrder is what cascade computed for one set of roots: the paired sections in Leja
// order, and the order for each window length asked (at most maxOrderLengths of them).
type cascadeOrder struct {
	zeros, poles []complex128 // copies of the roots it holds
	leja         []zpkSection
	rational     bool // whether a window's length can change the order (windowOrder)

	mu       sync.Mutex
	byLength map[int][]zpkSection
}

// maxOrderLengths bounds the window lengths a cascadeOrder keeps: a report, a plot and
// MeasureDecay's doublings ask a handful; past that the map starts again.
const maxOrderLengths = 16

func newCascadeOrder(zeros, poles []complex128) *cascadeOrder {
	leja := pairedLeja(zeros, poles)
	return &cascadeOrder{zeros: slices.Clone(zeros), poles: slices.Clone(poles), leja: leja, rational: rational(leja)}
}

// holds reports whether c was computed from these roots, bit for bit (a signed zero or a
// NaN included, whatever == says of them).
func (c *cascadeOrder) holds(zeros, poles []complex128) bool {
	return sameBits(c.zeros, zeros) && sameBits(c.poles, poles)
}

func sameBits(a, b []complex128) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		w := b[i]
		if math.Float64bits(real(v)) != math.Float64bits(real(w)) || math.Float64bits(imag(v)) != math.Float64bits(imag(w)) {
			return false
		}
	}
	return true
}

// sections is windowOrder(c.leja, length), computed once per length. Two callers that miss
// at once both compute it, and the same sections are kept.
func (c *cascadeOrder) sections(length int) []zpkSection {
	if !c.rational || length < 2 {
		return c.leja
	}
	c.mu.Lock()
	secs, ok := c.byLength[length]
	c.mu.Unlock()
	if ok {
		return secs
	}
	secs = windowOrder(c.leja, length)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byLength == nil || len(c.byLength) >= maxOrderLengths {
		c.byLength = make(map[int][]zpkSection)
	}
	c.byLength[length] = secs
	return secs
}

// rational reports whether secs hold a zero and a pole off the origin, every pole inside the
// unit circle: a polynomial or its reciprocal keeps its Leja order unchecked, and so does a
// response that grows, of which H on the circle says nothing.
func rational(secs []zpkSection) bool {
	var zero, pole bool
	for _, s := range secs {
		if cmplx.Abs(s.pole) >= 1 {
			return false
		}
		zero, pole = zero || s.zero != 0, pole || s.pole != 0
	}
	return zero && pole
}

// lejaDist is the smallest distance between roots that lejaOrder counts: coincident roots (a
// multiple zero, the poles of an FIR filter at the origin) leave the choice to the section's
// other root instead of zeroing its product.
const lejaDist = 0x1p-26

// lejaOrder orders sections in Leja order, the points being the pairs (zero, pole): the
// section with the zero (then the pole) of largest modulus first, then each time the one whose
// product of distances Π|z − zⱼ|·|p − pⱼ| to the sections before it is largest (each
// distance at least lejaDist; the first of equals). A product of factors multiplied one at a
// time in Leja order of its roots keeps its partial products near the size of the whole
// (Reichel, "Newton interpolation at Leja points", BIT 1990; Calvetti and Reichel, "On the
// evaluation of polynomial coefficients", Numer. Algorithms 2003); taking the poles' distances
// too spreads the poles of a multiple zero (Butterworth's at −1: order 200 rounds at 2e-8
// instead of 5e-4) and of a filter without zeros. The products are kept as a mantissa and a
// power of two, so that no order overflows them; O(n²) without a logarithm.
func lejaOrder(secs []zpkSection) []zpkSection {
	n := len(secs)
	out := make([]zpkSection, 0, n)
	if n == 0 {
		return out
	}
	left := make([]lejaPoint, n)
	first := 0
	for i, s := range secs {
		left[i] = lejaPoint{zpkSection: s, i: i, mant: 0.5, exp: 1}
		az, af := cmplx.Abs(s.zero), cmplx.Abs(secs[first].zero)
		if az > af || az == af && cmplx.Abs(s.pole) > cmplx.Abs(secs[first].pole) {
			first = i
		}
	}
	const floor = lejaDist * lejaDist
	for next := first; ; {
		c := left[next].zpkSection
		out = append(out, c)
		left[next] = left[len(left)-1] // the indices break ties below, not the positions
		left = left[:len(left)-1]
		if len(left) == 0 {
			return out
		}
		next = 0
		for k := range left {
			q := &left[k]
			q.mul(max(dist2(q.zero, c.zero), floor))
			q.mul(max(dist2(q.pole, c.pole), floor))
			if k > 0 && q.farther(&left[next]) {
				next = k
			}
		}
	}
}

// lejaPoint is a section that lejaOrder has not taken yet.
type lejaPoint struct {
	zpkSection
	mant float64 // the product of squared distances to the sections taken, as mant·2^exp
	exp  int
	i    int // its index, which breaks ties
}

// farther reports whether a's product is larger than b's, or equal with a smaller index.
func (a *lejaPoint) farther(b *lejaPoint) bool {
	switch {
	case a.exp != b.exp:
		return a.exp > b.exp
	case a.mant != b.mant:
		return a.mant > b.mant
	}
	return a.i < b.i
}

// mul multiplies the product by v > 0, keeping mant in [1/2, 1): by the bits of a normal
// result, which costs a fraction of math.Frexp in lejaOrder's O(n²) loop.
func (a *lejaPoint) mul(v float64) {
	x := a.mant * v
	b := math.Float64bits(x)
	if e := int(b>>52) & 0x7ff; e != 0 && e != 0x7ff {
		a.mant = math.Float64frombits(b&^(0x7ff<<52) | 1022<<52)
		a.exp += e - 1022
		return
	}
	fr, e := math.Frexp(x)
	a.mant, a.exp = fr, a.exp+e
}

// dist2 is |a − b|², math.MaxFloat64 where it overflows.
func dist2(a, b complex128) float64 {
	dr, di := real(a)-real(b), imag(a)-imag(b)
	return min(dr*dr+di*di, math.MaxFloat64)
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

// cascadeState is the signal between two sections of the cascade: x·2^scale, and the peak
// of the last section's output (the impulse's 1 before the first), against which step
// flushes what has decayed below underflow.Below.
type cascadeState struct {
	x      []complex128
	scale  int
	inPeak float64
}

// start is the cascade's input: the impulse delayed by the zeros f lacks.
func (f *ZPK) start(length int) *cascadeState {
	st := &cascadeState{x: make([]complex128, length), inPeak: 1}
	if delay := len(f.Poles) - len(f.Zeros); delay < length {
		st.x[delay] = 1
	}
	return st
}

// output is h from the cascade's last signal: Gain·Re x, plus H0 at t = 0.
func (f *ZPK) output(st *cascadeState) []float64 {
	h := make([]float64, len(st.x))
	for t := range h {
		h[t] = math.Ldexp(f.Gain*real(st.x[t]), st.scale)
	}
	if len(h) > 0 {
		h[0] += f.H0
	}
	return h
}

// step runs the section out[t] = in[t] + pole·out[t−1] − zero·in[t−1] over st.x in place,
// in that order of operations. When e is not nil it receives what the section rounds at
// sample t is at most u = 2⁻⁵³ times: each part of out[t] sums rounded products, and each term
// is rounded once per operation it passes through (Higham, "Accuracy and Stability of
// Numerical Algorithms", 2nd ed., sec. 3.1 and 3.6), four times for the pole's products, three
// for the zero's, twice for the input (once, three times without a zero), so
// e[t] = 2|in[t]|₁ + 4|pole|₁·|out[t−1]|₁ + 3|zero|₁·|in[t−1]|₁ with |w|₁ = |Re w| + |Im w|,
// in units of 2^scale as st was before the step. Where the output's peak leaves
// [2⁻³⁰⁰, 2³⁰⁰] it is scaled back by a power of two, so that no order overflows in between.
func (st *cascadeState) step(s zpkSection, e []float64) {
	zero, p := s.zero, s.pole
	cv, cp, cz := 2.0, 4*cabs1(p), 3*cabs1(zero)
	if zero == 0 {
		cv, cp = 1, 3*cabs1(p)
	}
	x := st.x
	var prevIn, prevOut complex128
	peak := 0.0
	for t := range x {
		v := x[t]
		if e != nil {
			e[t] = cv*cabs1(v) + cz*cabs1(prevIn) + cp*cabs1(prevOut)
		}
		out := v + p*prevOut
		if zero != 0 {
			out -= zero * prevIn
		}
		// What has decayed below underflow.Below of the input goes to zero as it comes,
		// so that the section does not run on subnormal numbers (package underflow).
		out = underflow.Complex(out, st.inPeak)
		prevIn, prevOut = v, out
		x[t] = out
		// A plain comparison: math.Max's NaN handling dominated this loop.
		if a := cabs1(out); a > peak {
			peak = a
		}
	}
	st.rescale(peak)
}

// rescale brings x back by a power of two where its peak (|re| + |im|) left [2⁻³⁰⁰, 2³⁰⁰],
// and keeps the peak for the next section's flush.
func (st *cascadeState) rescale(peak float64) {
	if peak > 0x1p300 || (peak > 0 && peak < 0x1p-300) {
		_, sh := math.Frexp(peak)
		for t, v := range st.x {
			st.x[t] = complex(math.Ldexp(real(v), -sh), math.Ldexp(imag(v), -sh))
		}
		st.scale += sh
		peak = math.Ldexp(peak, -sh)
	}
	if !math.IsInf(peak, 0) { // an overflowed section flushes nothing after it
		st.inPeak = peak
	}
}

// evaluationBound returns the cascade's h with the evaluation's part of ImpulseError's
// estimate, a first-order bound for the worst signs of the roundings: what section k rounds
// at sample t, at most u·eₖ[t] (step), runs through the section's own pole and the sections
// after it, whose impulse response ρₖ reaches the samples t..L−1 with its first L − t
// samples, so by the triangle inequality over the samples
//
//	‖δh‖₂ ≤ u·|Gain|·Σₖ min(Σₜ eₖ[t]·‖ρₖ[0..L−1−t]‖₂, ‖ρₖ[0..L−1]‖₁·‖eₖ‖₂),
//
// the second by Young's inequality for the truncated convolution, over ‖h‖₂, plus u for the
// gain's product. Unlike the gain of ρₖ over all frequencies, both respect the window, in
// which a long response such as a Butterworth filter's of order 64 at ωc = 0.001 has barely
// begun: max|Rₖ(e^{jω})| of the sections after k made 3e36 of a cascade's error of 4e-16.
// eₖ comes from a forward pass and ρₖ from a backward one; the forward signals are kept every
// √n sections and recomputed a block at a time, so that the memory is O(√n·L) rather than
// O(n·L). Saturated at math.MaxFloat64.
func (f *ZPK) evaluationBound(secs []zpkSection, length int) ([]float64, float64) {
	const u = eps / 2
	n := len(secs)
	st := f.start(length)
	block := max(1, int(math.Ceil(math.Sqrt(float64(n)))))
	var saved []cascadeState
	for k, s := range secs {
		if k%block == 0 {
			saved = append(saved, cascadeState{x: slices.Clone(st.x), scale: st.scale, inPeak: st.inPeak})
		}
		st.step(s, nil)
	}
	h := f.output(st)
	if f.Gain == 0 || n == 0 || length == 0 {
		return h, 0
	}

	terms := make([]float64, n)                                     // log₂ of each section's Σₜ eₖ[t]·‖ρₖ[0..L−1−t]‖₂
	rest := &cascadeState{x: make([]complex128, length), inPeak: 1} // rₖ: the sections after k
	rest.x[0] = 1
	cum := make([]float64, length+1)  // energies of ρₖ's first m samples
	cum1 := make([]float64, length+1) // and their |·| sums
	es := make([][]float64, block)
	for i := range es {
		es[i] = make([]float64, length)
	}
	scales := make([]int, block)
	for b := len(saved) - 1; b >= 0; b-- {
		lo, hi := b*block, min((b+1)*block, n)
		fw := &saved[b]
		for k := lo; k < hi; k++ {
			scales[k-lo] = fw.scale
			fw.step(secs[k], es[k-lo])
		}
		for k := hi - 1; k >= lo; k-- {
			// ρₖ = rₖ through 1/(1 − pₖz⁻¹), its energies as it goes.
			p := secs[k].pole
			var rho complex128
			for m, v := range rest.x {
				rho = v + p*rho
				cum[m+1] = cum[m] + real(rho)*real(rho) + imag(rho)*imag(rho)
				cum1[m+1] = cum1[m] + cmplx.Abs(rho)
			}
			// The triangle inequality over the samples, or Young's inequality for the
			// truncated convolution (‖ρₖ[0..L−1]‖₁·‖eₖ‖₂), whichever is smaller: the first
			// wins where the window cuts ρₖ short, the second where ρₖ is short and the
			// shifted copies of it are far from parallel.
			var tri, e2 float64
			for t, w := range es[k-lo] {
				tri += w * math.Sqrt(cum[length-t])
				e2 += w * w
			}
			sum := min(tri, cum1[length]*math.Sqrt(e2))
			terms[k] = math.Log2(sum) + float64(scales[k-lo]+rest.scale)
			if k > 0 && secs[k].zero != secs[k].pole {
				rest.step(secs[k], nil)
			}
		}
	}
	top := math.Inf(-1)
	for _, v := range terms {
		top = max(top, v)
	}
	if math.IsInf(top, -1) {
		return h, 0 // the window ends before the impulse arrives
	}
	if math.IsInf(top, 1) || math.IsNaN(top) {
		return h, math.MaxFloat64
	}
	var sum float64
	for _, v := range terms {
		sum += math.Exp2(v - top)
	}
	hn := floats.Norm(h, 2)
	if !(hn > 0 && hn <= math.MaxFloat64) { // nothing left, or an overflow
		return h, math.MaxFloat64
	}
	rel := math.Exp2(math.Log2(u*math.Abs(f.Gain))+top+math.Log2(sum)-math.Log2(hn)) + u
	if math.IsNaN(rel) || rel > math.MaxFloat64 {
		return h, math.MaxFloat64
	}
	return h, rel
}

// storageError is the stored numbers' part of ImpulseError's estimate:
// ε·(Σ_q |q|·‖(H − H0)/(z − q)‖₂ + ‖h − H0‖₂ + |H0|)/‖h‖₂ over the samples of h, the sum over
// every stored pole and zero q, ε = 2⁻⁵²: one ulp of a number is at most ε times it, so a
// root moves by at most ε·|q|, the gain's ulp moves h by ε·(h − H0), and ∂H/∂q is
// ±(H − H0)/(z − q) (a first-order condition of each factor, added without cancellation).
// Its samples are those of h − H0 filtered by z⁻¹/(1 − qz⁻¹); for a zero outside the unit
// circle, which that recursion would amplify, by z⁻¹/(1 − z⁻¹/q̄)/|q|, of the same gain on the
// circle. A repeated root is filtered once.
func (f *ZPK) storageError(h []float64) float64 {
	hn := floats.Norm(h, 2)
	if !(hn > 0 && hn <= math.MaxFloat64) {
		return 0
	}
	_, e := math.Frexp(hn)
	g := make([]complex128, len(h)) // (h − H0)/2^e, of norm near 1
	for t, v := range h {
		if t == 0 {
			v -= f.H0
		}
		g[t] = complex(math.Ldexp(v, -e), 0)
	}
	unit := math.Ldexp(1, -e)
	known := map[complex128]float64{}
	sens := func(q complex128) float64 {
		if q == 0 {
			return 0 // stored exactly
		}
		if v, ok := known[q]; ok {
			return v
		}
		a := cmplx.Abs(q)
		r, w := q, a
		if a > 1 {
			r, w = 1/cmplx.Conj(q), 1
		}
		var y complex128
		var ss float64
		for t := 1; t < len(g); t++ {
			y = r*y + g[t-1]
			ss += real(y)*real(y) + imag(y)*imag(y)
		}
		v := w * math.Sqrt(ss)
		known[q] = v
		return v
	}
	var g2 float64
	for _, v := range g {
		g2 += real(v) * real(v)
	}
	sum := math.Sqrt(g2) + math.Abs(f.H0)*unit
	for _, q := range f.Poles {
		sum += sens(q)
	}
	for _, q := range f.Zeros {
		sum += sens(q)
	}
	return eps * sum / (hn * unit)
}

// realSection is one real section of realCascade: its poles (a conjugate pair, or one or two
// real poles) and the zeros it holds (no more than its poles, a complex zero with its
// conjugate).
type realSection struct {
	poles, zeros []complex128
}

// realCascade realises f as a series connection of real sections of order one and two, each
// holding its own poles and at most as many zeros, the gain spread evenly over them: a
// conjugate pair p = σ ± iω in the block [[σ, ω], [−ω, σ]], whose eigenvalues are p exactly,
// two real poles in [[p₁, 0], [1, p₂]], one in [p]. Each block's output row comes from
// products p − zᵢ (H_k(p) for a pair), not from polynomial coefficients, so poles clustered
// near the unit circle, where the coefficients of Π(z − pᵢ) lose them (a Butterworth filter of
// order 12 at ωc = 0.01), and repeated poles, which have no modal form, keep their digits.
// The state is that of the sections in turn, each block's input the previous sections' output.
func (f *ZPK) realCascade() (*Dense, error) {
	pm, err := pairModes(f.Poles, make([]complex128, len(f.Poles)))
	if err != nil {
		return nil, err
	}
	zpairs, zreals, err := splitRoots("zero", f.Zeros)
	if err != nil {
		return nil, err
	}
	var secs []realSection
	var reals []int // sections of one real pole
	for _, m := range pm {
		if m.pair {
			secs = append(secs, realSection{poles: []complex128{m.pole, cmplx.Conj(m.pole)}})
		} else {
			reals = append(reals, len(secs))
			secs = append(secs, realSection{poles: []complex128{m.pole}})
		}
	}
	// A complex zero needs a section of two poles: join real poles two by two while there are
	// fewer such sections than zero pairs (len(Zeros) ≤ len(Poles) leaves enough).
	free := 0
	for _, s := range secs {
		if len(s.poles) == 2 {
			free++
		}
	}
	for free < len(zpairs) && len(reals) >= 2 {
		i, j := reals[len(reals)-2], reals[len(reals)-1]
		reals = reals[:len(reals)-2]
		secs[i].poles = append(secs[i].poles, secs[j].poles...)
		secs[j].poles = nil
		free++
	}
	nearest := func(z complex128, room func(s *realSection) bool) int {
		best, bd := -1, math.Inf(1)
		for k := range secs {
			if s := &secs[k]; len(s.poles) > 0 && room(s) {
				if d := dist2(s.poles[0], z); d < bd {
					best, bd = k, d
				}
			}
		}
		return best
	}
	for _, z := range zpairs {
		k := nearest(z, func(s *realSection) bool { return len(s.poles) == 2 && len(s.zeros) == 0 })
		if k < 0 {
			return nil, invalidf("%s in conjugate pairs cannot be held by sections of %s", plural.Count(len(f.Zeros), "zero"), plural.Count(len(f.Poles), "pole"))
		}
		secs[k].zeros = []complex128{z, cmplx.Conj(z)}
	}
	for _, z := range zreals {
		k := nearest(z, func(s *realSection) bool { return len(s.zeros) < len(s.poles) })
		if k < 0 {
			return nil, invalidf("%s cannot be held by sections of %s", plural.Count(len(f.Zeros), "zero"), plural.Count(len(f.Poles), "pole"))
		}
		secs[k].zeros = append(secs[k].zeros, z)
	}
	live := secs[:0]
	for _, s := range secs {
		if len(s.poles) > 0 {
			live = append(live, s)
		}
	}
	secs = live

	n := len(f.Poles)
	a := mat.NewDense(max(n, 1), max(n, 1), nil)
	b, c := make([]float64, n), make([]float64, n)
	g := math.Pow(math.Abs(f.Gain), 1/float64(len(secs)))
	d := 1.0 // the direct term of the sections so far
	at := 0
	for k, s := range secs {
		gk := g
		if k == 0 && f.Gain < 0 {
			gk = -g
		}
		// N(z) = gk·Π(z − zᵢ); the section is dk + ck·(zI − Ak)⁻¹·e₁.
		num := func(z complex128) complex128 {
			v := complex(gk, 0)
			for _, q := range s.zeros {
				v *= z - q
			}
			return v
		}
		var dk float64
		if len(s.zeros) == len(s.poles) {
			dk = gk
		}
		var ak [2][2]float64
		var ck [2]float64
		p := s.poles[0]
		switch {
		case len(s.poles) == 1:
			ak[0][0] = real(p)
			ck[0] = real(num(p))
		case imag(p) != 0:
			// N(z) − dk·D(z) = r₁z + r₀ equals N at p: r₁ = Im N(p)/ω, and the second entry
			// −(r₀ + r₁σ)/ω is −Re N(p)/ω.
			sg, om := real(p), imag(p)
			ak[0][0], ak[0][1], ak[1][0], ak[1][1] = sg, om, -om, sg
			np := num(p)
			ck[0], ck[1] = imag(np)/om, -real(np)/om
		default:
			p1, p2 := real(s.poles[0]), real(s.poles[1])
			ak[0][0], ak[1][0], ak[1][1] = p1, 1, p2
			// (N − dk·D)(z) = r₁z + r₀: the output row is (r₁, N(p₂)).
			switch len(s.zeros) {
			case 2:
				ck[0] = gk * ((p1 - real(s.zeros[0])) + (p2 - real(s.zeros[1])))
			case 1:
				ck[0] = gk
			}
			ck[1] = real(num(complex(p2, 0)))
		}
		sz := len(s.poles)
		for i := range sz {
			for j := range sz {
				a.Set(at+i, at+j, ak[i][j])
			}
		}
		// The section's input is the previous sections' output y = C·x + d·u: its block
		// couples to every state before it through C, and B gets d.
		for j := range at {
			a.Set(at, j, c[j])
		}
		b[at] = d
		for j := range at {
			c[j] *= dk
		}
		for i := range sz {
			c[at+i] = ck[i]
		}
		d *= dk
		at += sz
	}
	if n == 0 {
		return newDenseMat(nil, b, c, f.Gain+f.H0), nil
	}
	return newDenseMat(a, b, c, d+f.H0), nil
}
