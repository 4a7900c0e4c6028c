package filters

import (
	"math"
	"math/cmplx"
	"sort"

	"github.com/ssmlab/ssmlab/internal/underflow"
)

// Diagonal is the modal form: h[0] = H0, h[t] = Σ Residues[i]·Poles[i]^(t-1).
// Poles and residues of a real filter are conjugate-closed and both members of each pair are
// stored. A pole may repeat, but every mode is a plain geometric sequence: a defective
// system (a Jordan block, whose modes carry (t-1)·λ^(t-2) terms) has no diagonal form.
type Diagonal struct {
	Poles, Residues []complex128
	H0              float64
}

// NewDiagonal validates and returns a modal filter. The slices are copied.
func NewDiagonal(poles, residues []complex128, h0 float64) (*Diagonal, error) {
	f := &Diagonal{Poles: append([]complex128(nil), poles...), Residues: append([]complex128(nil), residues...), H0: h0}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Form returns FormDiagonal.
func (f *Diagonal) Form() Form { return FormDiagonal }

// Order returns the number of poles.
func (f *Diagonal) Order() int { return len(f.Poles) }

// Validate checks lengths, finiteness and that poles and residues are conjugate-closed.
func (f *Diagonal) Validate() error {
	_, err := f.modes()
	return err
}

// modes is Validate's check that also returns f's modes, so that a caller that needs both
// pairs the poles once.
func (f *Diagonal) modes() ([]mode, error) {
	if err := checkOrder(len(f.Poles)); err != nil {
		return nil, err
	}
	if err := checkLen("residues", len(f.Residues), len(f.Poles)); err != nil {
		return nil, err
	}
	if err := checkFiniteC("poles", f.Poles...); err != nil {
		return nil, err
	}
	if err := checkFiniteC("residues", f.Residues...); err != nil {
		return nil, err
	}
	if err := checkFinite("h0", f.H0); err != nil {
		return nil, err
	}
	return pairModes(f.Poles, f.Residues)
}

// checkConjugateClosed checks that every complex root has its conjugate in v.
func checkConjugateClosed(what string, v []complex128) error {
	_, err := pairRoots(what, v, make([]complex128, len(v)))
	return err
}

// mode is one real mode or one conjugate pair (stored by its member with Im > 0).
type mode struct {
	pole, residue complex128
	pair          bool
}

// conjTol is the relative mismatch accepted between the members of a conjugate pair; it
// allows poles that went through a decimal text format or float32 storage once more.
const conjTol = 1e-9

// pairModes groups conjugate pairs; a real filter must be conjugate-closed.
func pairModes(poles, residues []complex128) ([]mode, error) {
	return pairRoots("pole", poles, residues)
}

func pairRoots(what string, poles, residues []complex128) ([]mode, error) {
	n := len(poles)
	used := make([]bool, n)
	modes := make([]mode, 0, n)
	rscale := 0.0
	for _, r := range residues {
		rscale = math.Max(rscale, cmplx.Abs(r))
	}
	for i, p := range poles {
		if used[i] {
			continue
		}
		used[i] = true
		if NearlyReal(p) && math.Abs(imag(residues[i])) <= conjTol*(1+rscale) {
			modes = append(modes, mode{pole: complex(real(p), 0), residue: complex(real(residues[i]), 0)})
			continue // a real mode: no partner to look for, so a real pole set pairs in O(n)
		}
		ptol := conjTol * (1 + cmplx.Abs(p))
		best, bestDist := -1, math.Inf(1)
		for j := i + 1; j < n; j++ {
			if used[j] {
				continue
			}
			if d := cmplx.Abs(poles[j] - cmplx.Conj(p)); d < bestDist {
				best, bestDist = j, d
			}
		}
		if NearlyReal(p) {
			// A complex pole whose imaginary part is below the tolerance only in absolute
			// terms (the pair 1e-13 ± 1e-13i) is a pair when its conjugate is there with the
			// conjugate residue.
			if imag(p) == 0 || best < 0 || bestDist > ptol || cmplx.Abs(residues[best]-cmplx.Conj(residues[i])) > conjTol*(1+rscale) {
				return nil, invalidf("%s %d %v is real but its residue %v is not: a real filter's residues are conjugate-closed", what, i, p, residues[i])
			}
		}
		if best < 0 || bestDist > ptol {
			return nil, invalidf("%s %d %v has no conjugate partner: store both members of every complex pair", what, i, p)
		}
		if d := cmplx.Abs(residues[best] - cmplx.Conj(residues[i])); d > conjTol*(1+rscale) {
			return nil, invalidf("residues %d and %d of the conjugate %ss %v are not conjugate (mismatch %.3g)", i, best, what, p, d)
		}
		used[best] = true
		pp, rr := (p+cmplx.Conj(poles[best]))/2, (residues[i]+cmplx.Conj(residues[best]))/2
		if imag(pp) < 0 {
			pp, rr = cmplx.Conj(pp), cmplx.Conj(rr)
		}
		modes = append(modes, mode{pole: pp, residue: rr, pair: true})
	}
	return modes, nil
}

// diagonalFromModes expands modes into a Diagonal with the package's pole order.
func diagonalFromModes(modes []mode, h0 float64) *Diagonal {
	sortModes(modes)
	f := &Diagonal{H0: h0}
	for _, m := range modes {
		f.Poles = append(f.Poles, m.pole)
		f.Residues = append(f.Residues, m.residue)
		if m.pair {
			f.Poles = append(f.Poles, cmplx.Conj(m.pole))
			f.Residues = append(f.Residues, cmplx.Conj(m.residue))
		}
	}
	return f
}

// lessRoot orders by decreasing modulus, then increasing |angle|, positive imaginary part first.
func lessRoot(a, b complex128) bool {
	ma, mb := cmplx.Abs(a), cmplx.Abs(b)
	if ma != mb {
		return ma > mb
	}
	aa, ab := math.Abs(cmplx.Phase(a)), math.Abs(cmplx.Phase(b))
	if aa != ab {
		return aa < ab
	}
	return imag(a) > imag(b)
}

func sortModes(modes []mode) {
	sort.SliceStable(modes, func(i, j int) bool { return lessRoot(modes[i].pole, modes[j].pole) })
}

// SortRoots sorts roots (poles or zeros) in place in the package's order — decreasing
// modulus, then increasing |angle|, the member with a positive imaginary part first — and
// returns its argument.
func SortRoots(r []complex128) []complex128 {
	sort.SliceStable(r, func(i, j int) bool { return lessRoot(r[i], r[j]) })
	return r
}

// powerAnchor is how many steps a running product λ^t may take before it is recomputed from
// the polar form; it keeps the rounding of long products near t·eps without a pow per sample.
const powerAnchor = 64

// Impulse sums the modes (a Vandermonde product), a conjugate pair as 2·Re(r·λ^(t-1)).
func (f *Diagonal) Impulse(length int) []float64 {
	h := make([]float64, length)
	if length == 0 {
		return h
	}
	h[0] = f.H0
	modes, err := pairModes(f.Poles, f.Residues)
	if err != nil {
		panic("filters: Impulse of an invalid Diagonal: " + err.Error())
	}
	for _, m := range modes {
		scale := 1.0
		if m.pair {
			scale = 2
		}
		p := m.residue
		size := underflow.Scale(p)
		for t := 1; t < length; t++ {
			h[t] += scale * real(p)
			if t%powerAnchor == 0 {
				// An anchor decayed below underflow.Below of the residue is zero: the chain
				// does not run on subnormal numbers (package underflow).
				p = underflow.Complex(m.residue*cpow(m.pole, t), size)
			} else {
				p *= m.pole
			}
		}
	}
	return h
}

// cpow returns λ^t from the polar form.
func cpow(l complex128, t int) complex128 {
	r, th := cmplx.Polar(l)
	if r == 0 {
		return 0
	}
	return cmplx.Rect(math.Pow(r, float64(t)), th*float64(t))
}

// FreqResponse returns h0 + Σ rᵢ/(e^{jω} - λᵢ).
func (f *Diagonal) FreqResponse(omega []float64) []complex128 {
	out := make([]complex128, len(omega))
	for k, w := range omega {
		z := unitCircle(w)
		s := complex(f.H0, 0)
		for i, p := range f.Poles {
			s += f.Residues[i] / (z - p)
		}
		out[k] = s
	}
	return out
}
