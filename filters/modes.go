package filters

import (
	"math"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/internal/plural"
)

// NewDiagonalRealPart returns the real modal filter whose impulse response is the real part
// of a sum of complex modes,
//
//	h[0] = h0,  h[t] = Re Σₙ rₙ·pₙ^(t-1)  (t ≥ 1),
//
// the form in which S4D, StripedHyena, LRU and S5 store a layer: one member of each conjugate
// pair, the other implied. A complex pole gives the pair (p, r/2), (p̄, r̄/2); a pole real to
// within rounding (|Im p| ≤ 1e-12·(1+|p|)) gives one real pole with the residue Re r, so that
// the modes of a pair whose members land on one real pole — a continuous pole λ with
// Δt·Im λ a multiple of π under the zero-order hold, or an S4D mode with A_imag = 0 — merge
// into one mode instead of a real pole with a complex residue. A pole listed more than once
// (StripedHyena repeats its poles across groups) stays listed; poles already conjugate-closed
// give the same response. The slices are not modified.
func NewDiagonalRealPart(poles, residues []complex128, h0 float64) (*Diagonal, error) {
	if len(poles) != len(residues) {
		return nil, invalidf("%s and %s: want one residue per pole", plural.Count(len(poles), "pole"), plural.Count(len(residues), "residue"))
	}
	if err := checkOrder(len(poles)); err != nil {
		return nil, err
	}
	var ps, rs []complex128
	for i, p := range poles {
		r := residues[i]
		if NearlyReal(p) {
			ps = append(ps, complex(real(p), 0))
			rs = append(rs, complex(real(r), 0))
			continue
		}
		ps = append(ps, p, cmplx.Conj(p))
		rs = append(rs, r/2, cmplx.Conj(r)/2)
	}
	return NewDiagonal(ps, rs, h0)
}

// realPoleTol is the imaginary part, relative to 1+|p|, below which NewDiagonalRealPart takes
// a pole as real: the tolerance Validate applies to a real pole (conjTol·1e-3), well above the
// rounding of e^{Δtλ} at Δt·Im λ = kπ (1.2e-16 for S4D-Lin at Δt = 0.1).
const realPoleTol = conjTol * 1e-3

// NearlyReal reports whether a pole counts as real: its imaginary part within realPoleTol of
// 1+|p|, as NewDiagonal judges (its residue must then be real too, unless the pole pairs with
// its conjugate and a conjugate residue).
func NearlyReal(p complex128) bool { return math.Abs(imag(p)) <= realPoleTol*(1+cmplx.Abs(p)) }

// HalfModes is the inverse of NewDiagonalRealPart: it returns one pole of each conjugate
// pair of f (the one with a positive imaginary part) with twice its residue, and each real
// pole with its residue, so that f's impulse response is h[t] = Re Σₙ rₙ·pₙ^(t-1) for t ≥ 1.
// A pole whose imaginary part is within rounding of 0 (as Validate judges) counts as real,
// unless its residue is complex and its conjugate is there with the conjugate residue (the
// pair 1e-13 ± 1e-13i): then the two are a pair.
func HalfModes(f *Diagonal) (poles, residues []complex128) {
	modes, err := pairModes(f.Poles, f.Residues)
	if err != nil {
		panic("filters: HalfModes of an invalid Diagonal: " + err.Error())
	}
	return halves(modes)
}

// ValidHalfModes is HalfModes of f, or Validate's error where f is not a valid Diagonal:
// the check and the halves from one pairing of the poles, where Validate and then HalfModes
// would pair them twice.
func ValidHalfModes(f *Diagonal) (poles, residues []complex128, err error) {
	modes, err := f.modes()
	if err != nil {
		return nil, nil, err
	}
	poles, residues = halves(modes)
	return poles, residues, nil
}

// halves lists each mode's pole with its residue, doubled for a pair (HalfModes).
func halves(modes []mode) (poles, residues []complex128) {
	for _, m := range modes {
		r := m.residue
		if m.pair {
			r *= 2
		}
		poles = append(poles, m.pole)
		residues = append(residues, r)
	}
	return poles, residues
}
