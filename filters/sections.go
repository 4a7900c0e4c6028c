package filters

import (
	"math"
	"math/cmplx"
)

// Section is one second-order section [b0 b1 b2 a0 a1 a2] of a cascade, the row of
// scipy.signal's sos arrays: (b0 + b1z⁻¹ + b2z⁻²)/(a0 + a1z⁻¹ + a2z⁻²).
type Section [6]float64

// Identity is the section that changes nothing, which pads a cascade to more sections.
var Identity = Section{1, 0, 0, 1, 0, 0}

// Sections factors a zero-pole-gain filter into real second-order sections with a0 = 1, as
// scipy.signal.zpk2sos does with pairing 'nearest': poles from the one nearest the unit
// circle down, each conjugate pair (or two real poles) with the zero nearest to it and its
// partner, the sections nearest the circle last, and the gain in the first section's
// numerator. An odd order gets a pole and a zero at the origin, which cancel. ssmlab's
// H(z) = k·Π(z − zᵢ)/Π(z − pᵢ) delays by the n − m zeros it lacks; zpk2sos would put them at
// the origin instead, so here they stay out, and a section short of zeros has b0 = 0 (b0 =
// b1 = 0 without any). A filter of order 0 is the one section [k 0 0 1 0 0]. A cascade holds
// no offset: f.H0 must be 0 (toZPK folds a direct term into the zeros where it matters).
func Sections(f *ZPK) ([]Section, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.H0 != 0 {
		return nil, invalidf("a cascade of sections holds no offset h0 = %v: fold it into the zeros first", f.H0)
	}
	if len(f.Poles) == 0 {
		return []Section{{f.Gain, 0, 0, 1, 0, 0}}, nil
	}
	p, err := halfRoots("pole", f.Poles)
	if err != nil {
		return nil, err
	}
	z, err := halfRoots("zero", f.Zeros)
	if err != nil {
		return nil, err
	}
	if len(f.Poles)%2 == 1 {
		p, z = append(p, 0), append(z, 0)
	}
	sos := make([]Section, (len(f.Poles)+1)/2)
	for si := len(sos) - 1; si >= 0; si-- {
		var p1, p2 complex128
		p1, p = take(p, worst(p, allRoots))
		switch {
		case imag(p1) != 0 && len(p)+1 == len(z) && count(p, isReal) == 1 && count(z, isReal) == 1:
			// One real pole and one real zero are left beside as many poles as zeros: they
			// make a section together, so this pair must take a complex zero.
			var z1 complex128
			z1, z = take(z, nearest(z, p1, isComplex))
			sos[si] = section([]complex128{z1, cmplx.Conj(z1)}, p1, cmplx.Conj(p1))
			continue
		case imag(p1) != 0:
			p2 = cmplx.Conj(p1)
		default: // the real poles are even in number: one more is left
			p2, p = take(p, worst(p, isReal))
		}
		var zs []complex128
		if len(z) > 0 {
			var z1 complex128
			z1, z = take(z, nearest(z, p1, allRoots))
			zs = append(zs, z1)
			switch {
			case imag(z1) != 0:
				zs = append(zs, cmplx.Conj(z1))
			case count(z, isReal) > 0:
				var z2 complex128
				z2, z = take(z, nearest(z, p1, isReal))
				zs = append(zs, z2)
			}
		}
		sos[si] = section(zs, p1, p2)
	}
	for i := range 3 {
		sos[0][i] *= f.Gain
	}
	for i, s := range sos {
		for j, x := range s {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, invalidf("section %d: coefficient %d overflows (%v): the roots or the gain are beyond float64 as a quadratic's coefficients", i, j, x)
			}
		}
	}
	return sos, nil
}

// splitRoots pairs roots (pairRoots) into one member of each conjugate pair and the real
// roots, each in pairRoots' order.
func splitRoots(what string, roots []complex128) (pairs, reals []complex128, err error) {
	modes, err := pairRoots(what, roots, make([]complex128, len(roots)))
	if err != nil {
		return nil, nil, err
	}
	for _, m := range modes {
		if m.pair {
			pairs = append(pairs, m.pole)
		} else {
			reals = append(reals, m.pole)
		}
	}
	return pairs, reals, nil
}

// halfRoots lists one member of each conjugate pair (Im > 0) then the real roots, each
// group by increasing real part, as scipy's _cplxreal does (its order decides ties).
func halfRoots(what string, roots []complex128) ([]complex128, error) {
	pairs, reals, err := splitRoots(what, roots)
	if err != nil {
		return nil, err
	}
	byReal := func(v []complex128) {
		for i := 1; i < len(v); i++ { // insertion sort: stable, and these lists are short
			for j := i; j > 0 && (real(v[j]) < real(v[j-1]) || real(v[j]) == real(v[j-1]) && math.Abs(imag(v[j])) < math.Abs(imag(v[j-1]))); j-- {
				v[j], v[j-1] = v[j-1], v[j]
			}
		}
	}
	byReal(pairs)
	byReal(reals)
	return append(pairs, reals...), nil
}

func allRoots(complex128) bool    { return true }
func isReal(r complex128) bool    { return imag(r) == 0 }
func isComplex(r complex128) bool { return imag(r) != 0 }

func isOrigin(r complex128) bool { return r == 0 }

// dropOrigin removes the first c roots at the origin.
func dropOrigin(v []complex128, c int) []complex128 {
	out := v[:0]
	for _, r := range v {
		if r == 0 && c > 0 {
			c--
			continue
		}
		out = append(out, r)
	}
	return out
}

func count(v []complex128, keep func(complex128) bool) int {
	n := 0
	for _, r := range v {
		if keep(r) {
			n++
		}
	}
	return n
}

// worst is the index of the root nearest the unit circle among those kept (the first of
// equals).
func worst(v []complex128, keep func(complex128) bool) int {
	best, bd := -1, math.Inf(1)
	for i, r := range v {
		if d := math.Abs(1 - cmplx.Abs(r)); keep(r) && d < bd {
			best, bd = i, d
		}
	}
	return best
}

// nearest is the index of the root nearest to p among those kept (the first of equals).
func nearest(v []complex128, p complex128, keep func(complex128) bool) int {
	best, bd := -1, math.Inf(1)
	for i, r := range v {
		if d := cmplx.Abs(r - p); keep(r) && d < bd {
			best, bd = i, d
		}
	}
	return best
}

// take removes v[i], keeping the order of the rest.
func take(v []complex128, i int) (complex128, []complex128) {
	r := v[i]
	return r, append(v[:i:i], v[i+1:]...)
}

// section is the section of up to two zeros (a pair, or real) over two poles (a pair, or
// real): numerator and denominator right-aligned, as zpk2sos's _single_zpksos writes them.
func section(zs []complex128, p1, p2 complex128) Section {
	s := Section{3: 1, 4: -real(p1 + p2), 5: real(p1 * p2)}
	switch len(zs) {
	case 0:
		s[2] = 1
	case 1:
		s[1], s[2] = 1, -real(zs[0])
	default:
		s[0], s[1], s[2] = 1, -real(zs[0]+zs[1]), real(zs[0]*zs[1])
	}
	for i := range s {
		s[i] += 0 // no −0 in the file
	}
	return s
}

// FromSections returns the zero-pole-gain form of a cascade of sections: each section's
// poles and zeros are the roots of its quadratics (closed form), after the factors z⁻¹ common
// to its numerator and denominator are cancelled ([1 0 0 1 0 0] is no section at all) and
// with leading zero numerator coefficients as delays; the gain is the product of each
// section's leading numerator coefficient over its a0. a0 must not be 0.
func FromSections(sos []Section) (*ZPK, error) {
	f := &ZPK{Gain: 1}
	for i, s := range sos {
		for j, x := range s {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, invalidf("section %d: coefficient %d is %v", i, j, x)
			}
		}
		if s[3] == 0 {
			return nil, invalidf("section %d: a0 = 0: the section [b0 b1 b2 a0 a1 a2] = %v is not causal (scipy's sos rows have a0 = 1)", i, [6]float64(s))
		}
		deg := 2
		for deg > 0 && s[deg] == 0 && s[3+deg] == 0 {
			deg--
		}
		f.Poles = append(f.Poles, polyRoots(s[3], s[4], s[5], deg)...)
		k := 0
		for k <= deg && s[k] == 0 {
			k++
		}
		if k > deg { // a zero numerator: H = 0
			f.Gain = 0
			continue
		}
		f.Gain *= s[k] / s[3]
		f.Zeros = append(f.Zeros, polyRoots(s[k], s[k+1], s[min(k+2, 2)], deg-k)...)
	}
	if f.Gain == 0 {
		f.Zeros = nil
	}
	// A zero and a pole at the origin cancel exactly (zpk2sos puts one of each into the
	// cascade of an odd order).
	c := min(count(f.Zeros, isOrigin), count(f.Poles, isOrigin))
	f.Zeros, f.Poles = dropOrigin(f.Zeros, c), dropOrigin(f.Poles, c)
	SortRoots(f.Zeros)
	SortRoots(f.Poles)
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// polyRoots returns the roots of c0·x^deg + c1·x^(deg−1) + … (deg ≤ 2, c0 ≠ 0).
func polyRoots(c0, c1, c2 float64, deg int) []complex128 {
	switch deg {
	case 0:
		return nil
	case 1:
		return []complex128{complex(-c1/c0, 0)}
	}
	r1, r2 := quadRoots(c1/c0, c2/c0)
	return []complex128{r1, r2}
}

// quadRoots returns the roots of x² + c1·x + c2: real ones without cancellation (the larger
// from h ± √(h² − c2) with h = −c1/2 by its sign, the other as c2 over it), complex ones as
// an exact conjugate pair. The coefficients are scaled by a power of two first so that h²
// cannot overflow, and h² − c2 is formed with one rounding (FMA).
func quadRoots(c1, c2 float64) (complex128, complex128) {
	h := -c1 / 2
	s := math.Max(math.Abs(h), math.Sqrt(math.Abs(c2)))
	if s == 0 {
		return 0, 0
	}
	_, e := math.Frexp(s)
	hs, cs := math.Ldexp(h, -e), math.Ldexp(math.Ldexp(c2, -e), -e)
	d := math.FMA(hs, hs, -cs)
	if d < 0 {
		re, im := math.Ldexp(hs, e), math.Ldexp(math.Sqrt(-d), e)
		return complex(re, im), complex(re, -im)
	}
	q := hs + math.Copysign(math.Sqrt(d), hs)
	return complex(math.Ldexp(q, e), 0), complex(math.Ldexp(cs/q, e), 0)
}
