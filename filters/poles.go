package filters

import (
	"math"
	"math/cmplx"
	"slices"
	"strconv"
)

// PoleMover is a Filter whose form holds its poles (zpk, diagonal, rotation): they are read
// without computation and moved in O(n), fast enough to follow a key held down.
type PoleMover interface {
	Filter
	// HeldPoles returns a copy of the poles the form holds, in a fixed order: pole i of
	// MovePole. Both members of a conjugate pair are listed.
	HeldPoles() []complex128
	// MovePole returns the filter with pole i moved to p and, when it is one of a conjugate
	// pair, its partner to conj(p); the rest of the representation (residues, zeros, basis)
	// is kept. A real pole stays real and a pair's member complex: the other way is an error.
	MovePole(i int, p complex128) (Filter, error)
}

// ZeroHolder is a Filter whose form holds its zeros (zpk).
type ZeroHolder interface {
	Filter
	// HeldZeros returns a copy of the zeros the form holds.
	HeldZeros() []complex128
}

// HeldPoles returns the poles f's form holds, computing nothing: a PoleMover's, or none for
// a filter of order 0. It reports false for a form that would have to compute them (Poles).
func HeldPoles(f Filter) ([]complex128, bool) {
	if pm, ok := f.(PoleMover); ok {
		return pm.HeldPoles(), true
	}
	return nil, f.Order() == 0
}

// HeldZeros returns the zeros f's form holds, computing nothing: a ZeroHolder's, or none for
// a filter of order 0. It reports false for a form that would have to compute them (Zeros).
func HeldZeros(f Filter) ([]complex128, bool) {
	if zh, ok := f.(ZeroHolder); ok {
		return zh.HeldZeros(), true
	}
	return nil, f.Order() == 0
}

// Partner returns the index of the conjugate partner of roots[i] (-1 for a real root): the
// nearest other root to conj(roots[i]).
func Partner(roots []complex128, i int) int {
	if imag(roots[i]) == 0 {
		return -1
	}
	best, bd := -1, math.Inf(1)
	c := conj(roots[i])
	for j, r := range roots {
		if j == i {
			continue
		}
		if d := cmplx.Abs(r - c); d < bd {
			best, bd = j, d
		}
	}
	return best
}

// setRoot sets roots[i] = p and its partner to conj(p), refusing to turn a pair into two
// real roots or a real root into half a pair. roots[i] keeps the sign of its imaginary part.
func setRoot(roots []complex128, i int, p complex128) error {
	j := Partner(roots, i)
	switch {
	// name the value given first: it is what was typed, and what is wrong
	case j < 0 && imag(p) != 0:
		return invalidf("%s is complex, but %s is real and has no conjugate partner: it must stay real (type a real value)", formatC(p), formatC(roots[i]))
	case j >= 0 && imag(p) == 0:
		return invalidf("%s is real, but %s is one of a conjugate pair: it must stay complex (type a complex value; its partner follows)", formatC(p), formatC(roots[i]))
	}
	if j >= 0 && math.Signbit(imag(p)) != math.Signbit(imag(roots[i])) {
		p = conj(p)
	}
	roots[i] = p
	if j >= 0 {
		roots[j] = conj(p)
	}
	return nil
}

// formatC writes a root for a message as the workbench shows it: "0.5+0.25j", or "0.5" when
// real, to 6 digits.
func formatC(v complex128) string {
	if imag(v) == 0 {
		return format6(real(v))
	}
	sign := "+"
	if math.Signbit(imag(v)) {
		sign = "-"
	}
	return format6(real(v)) + sign + format6(math.Abs(imag(v))) + "j"
}

func format6(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// FormatModulus writes a modulus or spectral radius for a message: to 6 digits, or, within
// 1e-5 of 1, to as many as tell it from 1 (the shortest decimal that reads back as the same
// float64), so that 1 − 1e-12 reads "0.999999999999", not "1".
func FormatModulus(r float64) string {
	if math.Abs(r-1) < 1e-5 {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	return format6(r)
}

// CirclePlace says where a modulus puts a pole against the unit circle, for a message:
// "inside the unit circle", "on the unit circle" (exactly 1), "within 1e-10 of the unit
// circle" (||p| − 1| ≤ MarginalTol, which Stable does not call stable) or "outside the unit
// circle".
func CirclePlace(r float64) string {
	switch {
	case r == 1:
		return "on the unit circle"
	case math.Abs(r-1) <= MarginalTol:
		return "within " + strconv.FormatFloat(MarginalTol, 'g', -1, 64) + " of the unit circle"
	case r < 1:
		return "inside the unit circle"
	}
	return "outside the unit circle"
}

// HeldPoles returns a copy of the poles.
func (f *ZPK) HeldPoles() []complex128 { return slices.Clone(f.Poles) }

// HeldZeros returns a copy of the zeros.
func (f *ZPK) HeldZeros() []complex128 { return slices.Clone(f.Zeros) }

// MovePole moves pole i (and its partner) to p, keeping the zeros and the gain.
func (f *ZPK) MovePole(i int, p complex128) (Filter, error) {
	poles := slices.Clone(f.Poles)
	checkIndex(i, len(poles))
	if err := setRoot(poles, i, p); err != nil {
		return nil, err
	}
	return NewZPK(f.Zeros, poles, f.Gain, f.H0)
}

// HeldPoles returns a copy of the poles.
func (f *Diagonal) HeldPoles() []complex128 { return slices.Clone(f.Poles) }

// MovePole moves pole i (and its partner) to p, keeping the residues. A pole cannot move onto
// another one: the modal form holds no repeated pole.
func (f *Diagonal) MovePole(i int, p complex128) (Filter, error) {
	poles := slices.Clone(f.Poles)
	checkIndex(i, len(poles))
	if err := setRoot(poles, i, p); err != nil {
		return nil, err
	}
	for j, q := range poles {
		if q == poles[i] && j != i {
			return nil, invalidf("the diagonal form cannot hold a repeated pole %s", formatC(q))
		}
	}
	return NewDiagonal(poles, f.Residues, f.H0)
}

// HeldPoles returns the poles of the blocks, ρe^{jθ} then ρe^{-jθ} for each, then the real
// eigenvalues.
func (f *Rotation) HeldPoles() []complex128 {
	var poles []complex128
	for _, b := range f.Blocks {
		p := cmplx.Rect(b.Radius, b.Angle)
		poles = append(poles, p, conj(p))
	}
	for _, r := range f.Real {
		poles = append(poles, complex(r, 0))
	}
	return poles
}

// MovePole sets the block (or real eigenvalue) holding pole i to p, keeping P, B, C and D:
// the basis is not refactored, so a move costs O(n).
func (f *Rotation) MovePole(i int, p complex128) (Filter, error) {
	checkIndex(i, f.Order())
	g := *f
	g.Blocks, g.Real = slices.Clone(f.Blocks), slices.Clone(f.Real)
	if nb := 2 * len(f.Blocks); i >= nb {
		if imag(p) != 0 {
			return nil, invalidf("%s is real and has no conjugate partner: it must stay real", format6(f.Real[i-nb]))
		}
		g.Real[i-nb] = real(p)
	} else {
		if imag(p) == 0 {
			return nil, invalidf("%s is real, but rotation block %d holds a conjugate pair ρe^{±jθ}, whose poles stay complex (a block at the origin is one of radius ρ = 0)", format6(real(p)), i/2+1)
		}
		if i%2 == 1 {
			p = conj(p)
		}
		b := RotationBlock{Radius: cmplx.Abs(p), Angle: cmplx.Phase(p)}
		// A move along the radius keeps the angle as stored: the phase of the pole HeldPoles
		// gives rounds it by an ulp or two, which each move would otherwise add.
		if old := f.Blocks[i/2].Angle; math.Abs(b.Angle-old) <= 8*eps*math.Abs(old) {
			b.Angle = old
		}
		g.Blocks[i/2] = b
	}
	if err := checkFinite("pole", real(p), imag(p)); err != nil {
		return nil, err
	}
	return &g, nil
}

func checkIndex(i, n int) {
	if i < 0 || i >= n {
		panic("filters: pole index out of range")
	}
}
