package filters

import (
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/internal/underflow"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
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
func (f *ZPK) Impulse(length int) []float64 {
	h, _ := f.run(f.cascade(), length, false)
	return h
}

// ImpulseError returns Impulse(length) with a first-order estimate of its relative rounding
// error: Σₖ 4ε·‖eₖ‖₂·max|Rₖ(e^{jω})| / ‖h‖₂, where eₖ bounds what section k rounds (the
// moduli of its operands, sample by sample) and Rₖ is the rest of the cascade after it,
// whose gain is sampled on max(64, 4(n+1)) points of the unit circle. It is an estimate
// (the sampling can miss the peak of a pole very near the circle), typically 10 to 1000
// times the actual error, and large where the cascade cancels. A gain on the unit circle
// says nothing of a response that grows, so ok is false for a pole on or outside it
// (within MarginalTol) that no zero cancels exactly; the estimate is then 0.
func (f *ZPK) ImpulseError(length int) (h []float64, relErr float64, ok bool) {
	secs := f.cascade()
	for _, s := range secs {
		if s.pole != s.zero && !Stable(cmplx.Abs(s.pole)) {
			h, _ = f.run(secs, length, false)
			return h, 0, false
		}
	}
	h, relErr = f.run(secs, length, true)
	return h, relErr, true
}

// zpkSection is the factor (1 − zero·z⁻¹)/(1 − pole·z⁻¹) of a cascade (zero = 0 for a
// section without one: the missing zeros are a delay of the input instead).
type zpkSection struct{ zero, pole complex128 }

// cascade pairs each zero, in stored order, with the nearest pole not yet taken, and orders
// the sections (lejaOrder) so that the partial products of the cascade stay near the size of
// the whole: in stored order (by modulus, then angle) the 199 zeros of a moving average of
// length 200, adjacent roots of unity, made partial responses of 1e14 around a response of
// 0.005.
func (f *ZPK) cascade() []zpkSection {
	n, m := len(f.Poles), len(f.Zeros)
	secs := make([]zpkSection, n)
	poles := append([]complex128(nil), f.Poles...)
	for i := range secs {
		if i < m {
			zero := f.Zeros[i]
			best, bd := i, dist2(poles[i], zero)
			for j := i + 1; j < n; j++ {
				if d := dist2(poles[j], zero); d < bd {
					best, bd = j, d
				}
			}
			poles[i], poles[best] = poles[best], poles[i]
			secs[i].zero = zero
		}
		secs[i].pole = poles[i]
	}
	return lejaOrder(secs)
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

// run filters the delayed impulse through secs and, when estimate is set, returns the
// rounding estimate of ImpulseError with it.
func (f *ZPK) run(secs []zpkSection, length int, estimate bool) ([]float64, float64) {
	h := make([]float64, length)
	if length == 0 {
		return h, 0
	}
	n, m := len(f.Poles), len(f.Zeros)
	x := make([]complex128, length)
	if delay := n - m; delay < length {
		x[delay] = 1
	}
	var (
		in     []complex128 // a copy of each section's input, for the estimate
		local  []float64    // log₂ of each section's ‖eₖ‖₂ in true units (−Inf: none)
		scale  = 0
		inPeak = 1.0 // the section's input's largest |re| + |im|: the impulse's, then each output's
	)
	if estimate {
		in = make([]complex128, length)
		local = make([]float64, n)
	}
	for k, s := range secs {
		if estimate {
			copy(in, x)
		}
		zero, p := s.zero, s.pole
		var prevIn, prevOut complex128
		peak := 0.0
		for t := range x {
			v := x[t]
			out := v + p*prevOut
			if zero != 0 {
				out -= zero * prevIn
			}
			// What has decayed below underflow.Below of the input goes to zero as it comes,
			// so that the section does not run on subnormal numbers (package underflow).
			out = underflow.Complex(out, inPeak)
			prevIn, prevOut = v, out
			x[t] = out
			// A plain comparison: math.Max's NaN handling dominated this loop.
			if a := cabs1(out); a > peak {
				peak = a
			}
		}
		if estimate {
			local[k] = sectionRounding(in, x, zero, p, scale)
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
	if !estimate {
		return h, 0
	}
	return h, cascadeError(secs, local, math.Abs(f.Gain), h)
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

// sectionRounding returns log₂‖e‖₂ in true units (−Inf for zero) for the section
// out[t] = in[t] − zero·in[t−1] + pole·out[t−1] run on values scaled by 2^-scale, where
// e[t] = |in[t]| + |zero|·|in[t−1]| + |pole|·|out[t−1]| (in |re| + |im|) is what its
// roundings at sample t are proportional to.
func sectionRounding(in, out []complex128, zero, pole complex128, scale int) float64 {
	az, ap := cmplx.Abs(zero), cmplx.Abs(pole)
	e := func(t int) float64 {
		v := cabs1(in[t])
		if t > 0 {
			v += az*cabs1(in[t-1]) + ap*cabs1(out[t-1])
		}
		return v
	}
	big := 0.0
	for t := range in {
		big = max(big, e(t))
	}
	if big == 0 {
		return math.Inf(-1)
	}
	if math.IsInf(big, 0) {
		return math.Inf(1)
	}
	var ss float64
	for t := range in {
		r := e(t) / big
		ss += r * r
	}
	return math.Log2(big) + math.Log2(ss)/2 + float64(scale)
}

// cascadeError is ImpulseError's estimate: each section's rounding (log₂, local) times the
// largest gain of the sections after it on a grid of the unit circle, summed, times 4ε and
// the gain, over ‖h‖₂; saturated at math.MaxFloat64.
func cascadeError(secs []zpkSection, local []float64, gain float64, h []float64) float64 {
	n := len(secs)
	if gain == 0 || n == 0 {
		return 0
	}
	grid := max(64, 4*(n+1))
	cs, sn := make([]float64, grid), make([]float64, grid)
	r2 := make([]float64, grid) // |R(e^{jω})|², times 2^rexp
	for i := range grid {
		sn[i], cs[i] = math.Sincos(2 * math.Pi * float64(i) / float64(grid))
		r2[i] = 1
	}
	// |1 − q·e^{−jω}|²
	factor := func(q complex128, i int) float64 {
		re := 1 - real(q)*cs[i] - imag(q)*sn[i]
		im := imag(q)*cs[i] - real(q)*sn[i]
		return re*re + im*im
	}
	rexp := 0
	terms := make([]float64, n) // log₂ of each section's contribution
	for k := n - 1; k >= 0; k-- {
		peak := 0.0
		for _, v := range r2 {
			peak = max(peak, v)
		}
		terms[k] = local[k] + (math.Log2(peak)+float64(rexp))/2
		s := secs[k]
		if s.zero == s.pole {
			continue // the identity, exactly
		}
		top := 0.0
		for i := range r2 {
			r2[i] *= factor(s.zero, i) / factor(s.pole, i)
			top = max(top, r2[i])
		}
		if top > 0x1p300 || top > 0 && top < 0x1p-300 {
			_, e := math.Frexp(top)
			for i := range r2 {
				r2[i] = math.Ldexp(r2[i], -e)
			}
			rexp += e
		}
	}
	// log₂ Σ 2^termₖ, from the largest term.
	top := math.Inf(-1)
	for _, v := range terms {
		top = max(top, v)
	}
	if math.IsInf(top, -1) {
		return 0
	}
	if math.IsInf(top, 1) || math.IsNaN(top) {
		return math.MaxFloat64
	}
	var sum float64
	for _, v := range terms {
		sum += math.Exp2(v - top)
	}
	hn := floats.Norm(h, 2)
	if !(hn > 0 && hn <= math.MaxFloat64) { // nothing left, or an overflow
		return math.MaxFloat64
	}
	rel := math.Exp2(math.Log2(4*eps*gain) + top + math.Log2(sum) - math.Log2(hn))
	if math.IsNaN(rel) || rel > math.MaxFloat64 {
		return math.MaxFloat64
	}
	return rel
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
	zm, err := pairRoots("zero", f.Zeros, make([]complex128, len(f.Zeros)))
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
	var zpairs, zreals []complex128
	for _, m := range zm {
		if m.pair {
			zpairs = append(zpairs, m.pole)
		} else {
			zreals = append(zreals, m.pole)
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
