package filters

import (
	"math"
	"slices"

	"github.com/ssmlab/ssmlab/internal/plural"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/internal/underflow"
)

// RotationBlock is one 2×2 block ρ·R(θ) with R(θ) = [[cos θ, -sin θ], [sin θ, cos θ]]; its
// eigenvalues are ρe^{±jθ}.
type RotationBlock struct {
	Radius, Angle float64
}

// Rotation is the form A = P·Λ·P⁻¹, Λ = blockdiag(ρ₁R(θ₁), …, ρₖR(θₖ), r₁, …, rₘ), with B and C
// acting on the same state as A (so (A, B, C, D) is the equivalent dense filter). P is
// orthogonal when A is normal; otherwise it is a general real basis and Condition reports
// its condition number. The columns of P hold two vectors per block, then one per real value.
type Rotation struct {
	P      *mat.Dense // n×n, nil for order 0
	Blocks []RotationBlock
	Real   []float64
	B, C   []float64
	D      float64
}

// NewRotation validates and returns a rotation-form filter with P given by rows.
func NewRotation(p [][]float64, blocks []RotationBlock, real, b, c []float64, d float64) (*Rotation, error) {
	pm, err := squareFromRows("P", p)
	if err != nil {
		return nil, err
	}
	f := &Rotation{P: pm, Blocks: append([]RotationBlock(nil), blocks...), Real: append([]float64(nil), real...),
		B: append([]float64(nil), b...), C: append([]float64(nil), c...), D: d}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// RotRNNHead holds the parameters of one RotRNN head (RotRNN paper, §3): P = expm(M - Mᵀ) of size
// k×k (k even), a decay γ and k/2 angles θ, so that the head's A is γ·P·R(θ)·Pᵀ.
type RotRNNHead struct {
	M     [][]float64
	Gamma float64
	Theta []float64
}

// NewRotationFromRotRNN builds the block-diagonal multi-head A of RotRNN (RotRNN paper, §3.4),
// A = blockdiag_h(γ_h P_h R(θ_h) P_hᵀ) with P_h = expm(M_h - M_hᵀ), exactly orthogonal up to
// the accuracy of the matrix exponential. RotRNN's recurrence updates the state before the
// output (the S4 convention); pass the result to FromS4 to read it in the control convention.
func NewRotationFromRotRNN(heads []RotRNNHead, b, c []float64, d float64) (*Rotation, error) {
	n := 0
	for h, head := range heads {
		k := len(head.M)
		if k%2 != 0 {
			return nil, invalidf("head %d: M is %d×%d, want an even size (one 2×2 rotation per pair of states)", h, k, k)
		}
		if len(head.Theta) != k/2 {
			return nil, invalidf("head %d: %s, want %d", h, plural.Count(len(head.Theta), "angle"), k/2)
		}
		if err := checkFinite("gamma", head.Gamma); err != nil {
			return nil, err
		}
		n += k
	}
	if err := checkOrder(n); err != nil {
		return nil, err
	}
	f := &Rotation{B: append([]float64(nil), b...), C: append([]float64(nil), c...), D: d}
	if n > 0 {
		f.P = mat.NewDense(n, n, nil)
	}
	off := 0
	for h, head := range heads {
		k := len(head.M)
		skew := mat.NewDense(k, k, nil)
		for i, row := range head.M {
			if len(row) != k {
				return nil, invalidf("head %d: M row %d has %d entries, want %d", h, i, len(row), k)
			}
			if err := checkFinite("M", row...); err != nil {
				return nil, err
			}
			for j := range row {
				skew.Set(i, j, head.M[i][j]-head.M[j][i])
			}
		}
		if k > 0 {
			var ph mat.Dense
			ph.Exp(skew)
			f.P.Slice(off, off+k, off, off+k).(*mat.Dense).Copy(&ph)
		}
		for _, th := range head.Theta {
			f.Blocks = append(f.Blocks, RotationBlock{Radius: head.Gamma, Angle: th})
		}
		off += k
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// NewRotationFromHouseholder builds P as the product of Householder reflections of the Householder RNN paper,
// eq. 6–8: P = H_n(u_n)·H_{n-1}(u_{n-1})·…, where us[0] = u_n has length n, us[1] = u_{n-1}
// has length n-1, and so on (m = len(us) reflections). H_k(u) acts on the last k coordinates as
// I - 2uuᵀ/‖u‖²; a length-1 vector is eq. 7's sign ±1. The product is orthogonal by construction.
func NewRotationFromHouseholder(us [][]float64, blocks []RotationBlock, real, b, c []float64, d float64) (*Rotation, error) {
	n := 2*len(blocks) + len(real)
	if err := checkOrder(n); err != nil {
		return nil, err
	}
	if len(us) > n {
		return nil, invalidf("%d Householder vectors for order %d, want at most %d", len(us), n, n)
	}
	p := mat.NewDense(max(n, 1), max(n, 1), nil)
	for i := 0; i < n; i++ {
		p.Set(i, i, 1)
	}
	// Apply the reflections from the right: P ← P·H_k(u).
	for idx, u := range us {
		k := n - idx
		if len(u) != k {
			return nil, invalidf("Householder vector %d has length %d, want %d", idx, len(u), k)
		}
		if err := checkFinite("Householder vector", u...); err != nil {
			return nil, err
		}
		off := n - k
		if k == 1 {
			if u[0] == 0 {
				return nil, invalidf("the length-1 Householder vector must be ±1 (Householder RNN paper, eq. 7), got 0")
			}
			if u[0] < 0 {
				for i := 0; i < n; i++ {
					p.Set(i, n-1, -p.At(i, n-1))
				}
			}
			continue
		}
		nu := floats.Dot(u, u)
		if nu == 0 {
			return nil, invalidf("Householder vector %d is zero", idx)
		}
		for i := 0; i < n; i++ {
			row := p.RawRowView(i)[off : off+k]
			s := 2 * floats.Dot(row, u) / nu
			floats.AddScaled(row, -s, u)
		}
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = p.RawRowView(i)[:n]
	}
	return NewRotation(rows, blocks, real, b, c, d)
}

// Form returns FormRotation.
func (f *Rotation) Form() Form { return FormRotation }

// Order returns 2·len(Blocks) + len(Real).
func (f *Rotation) Order() int { return 2*len(f.Blocks) + len(f.Real) }

// Validate checks the dimensions, finiteness, non-negative radii and an invertible P.
func (f *Rotation) Validate() error {
	n := f.Order()
	if err := checkOrder(n); err != nil {
		return err
	}
	pn, err := squareOrder("P", f.P)
	if err != nil {
		return err
	}
	if pn != n {
		return invalidf("P has size %d but the blocks and real eigenvalues give order %d", pn, n)
	}
	if err := checkFiniteRows("P", f.P, n); err != nil {
		return err
	}
	for i, b := range f.Blocks {
		if err := checkFinite("blocks", b.Radius, b.Angle); err != nil {
			return err
		}
		if b.Radius < 0 {
			return invalidf("block %d has negative radius %v", i, b.Radius)
		}
	}
	if err := checkFinite("real", f.Real...); err != nil {
		return err
	}
	if err := checkIO(n, f.B, f.C, f.D); err != nil {
		return err
	}
	if n > 0 {
		var lu mat.LU
		lu.Factorize(f.P)
		if c := lu.Cond(); math.IsInf(c, 1) || math.IsNaN(c) || c > 1/eps {
			return invalidf("the rotation basis P is singular to working precision (condition number %s)", formatCond(c))
		}
	}
	return nil
}

const eps = 0x1p-52

// Lambda returns the block-diagonal Λ.
func (f *Rotation) Lambda() *mat.Dense {
	n := f.Order()
	if n == 0 {
		return nil
	}
	l := mat.NewDense(n, n, nil)
	for k, b := range f.Blocks {
		s, c := math.Sincos(b.Angle)
		i := 2 * k
		l.Set(i, i, b.Radius*c)
		l.Set(i, i+1, -b.Radius*s)
		l.Set(i+1, i, b.Radius*s)
		l.Set(i+1, i+1, b.Radius*c)
	}
	for k, r := range f.Real {
		i := 2*len(f.Blocks) + k
		l.Set(i, i, r)
	}
	return l
}

// Orthogonality returns ‖PᵀP - I‖_max, 0 for an exactly orthogonal basis.
func (f *Rotation) Orthogonality() float64 {
	n := f.Order()
	if n == 0 {
		return 0
	}
	var g mat.Dense
	g.Mul(f.P.T(), f.P)
	worst := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d := g.At(i, j)
			if i == j {
				d--
			}
			worst = math.Max(worst, math.Abs(d))
		}
	}
	return worst
}

// Condition returns the (1-norm estimate of the) condition number of P.
func (f *Rotation) Condition() float64 {
	if f.Order() == 0 {
		return 1
	}
	var lu mat.LU
	lu.Factorize(f.P)
	return lu.Cond()
}

// Modal returns P⁻¹B and CP, the input and output vectors in the block-diagonal coordinates
// of Λ; with an orthogonal P, PᵀB instead of a solve. err is the solve's (gonum's mat.LU): a
// P singular or ill-conditioned to working precision, whose vectors are still filled in.
// Validate rejected singular bases, so this package's own uses take the near-singular solve;
// analysis refuses it.
func (f *Rotation) Modal() (bt, ct []float64, err error) {
	n := f.Order()
	bt, ct = make([]float64, n), make([]float64, n)
	if n == 0 {
		return bt, ct, nil
	}
	if f.orthogonal() {
		mat.NewVecDense(n, bt).MulVec(f.P.T(), mat.NewVecDense(n, f.B))
	} else {
		var lu mat.LU
		lu.Factorize(f.P)
		err = lu.SolveVecTo(mat.NewVecDense(n, bt), false, mat.NewVecDense(n, f.B))
	}
	mat.NewVecDense(n, ct).MulVec(f.P.T(), mat.NewVecDense(n, f.C))
	return bt, ct, err
}

// modal is Modal for this package's uses, which take a near-singular solve (see Modal).
func (f *Rotation) modal() (bt, ct []float64) {
	bt, ct, _ = f.Modal()
	return bt, ct
}

// orthogonal reports whether P is orthogonal to rounding, so that P⁻¹ = Pᵀ.
func (f *Rotation) orthogonal() bool {
	return f.Orthogonality() < 64*eps*float64(f.Order())
}

// Dense returns (P Λ P⁻¹, B, C, D); with an orthogonal P it uses Pᵀ instead of a solve.
func (f *Rotation) Dense() *Dense {
	n := f.Order()
	if n == 0 {
		return newDenseMat(nil, nil, nil, f.D)
	}
	var pl mat.Dense
	pl.Mul(f.P, f.Lambda())
	a := mat.NewDense(n, n, nil)
	if f.orthogonal() {
		a.Mul(&pl, f.P.T())
	} else {
		// A = (PΛ)P⁻¹  ⇔  PᵀAᵀ = (PΛ)ᵀ.
		var at mat.Dense
		var lu mat.LU
		lu.Factorize(f.P)
		_ = lu.SolveTo(&at, true, pl.T())
		a.Copy(at.T())
	}
	return newDenseMat(a, append([]float64(nil), f.B...), append([]float64(nil), f.C...), f.D)
}

// Impulse runs the recurrence in the block-diagonal coordinates, O(n) per sample.
func (f *Rotation) Impulse(length int) []float64 {
	h := make([]float64, length)
	if length == 0 {
		return h
	}
	h[0] = f.D
	bt, ct := f.modal()
	nb := len(f.Blocks)
	for k, b := range f.Blocks {
		s, c := math.Sincos(b.Angle)
		m00, m01, m10, m11 := b.Radius*c, -b.Radius*s, b.Radius*s, b.Radius*c
		x0, x1 := bt[2*k], bt[2*k+1]
		c0, c1 := ct[2*k], ct[2*k+1]
		scale := underflow.Scale(complex(x0, x1))
		for t := 1; t < length; t++ {
			h[t] += c0*x0 + c1*x1
			x0, x1 = m00*x0+m01*x1, m10*x0+m11*x1
			if t%underflow.Every == 0 { // package underflow
				p := underflow.Complex(complex(x0, x1), scale)
				x0, x1 = real(p), imag(p)
			}
		}
	}
	for k, r := range f.Real {
		x, c := bt[2*nb+k], ct[2*nb+k]
		scale := math.Abs(x)
		for t := 1; t < length; t++ {
			h[t] += c * x
			x *= r
			if t%underflow.Every == 0 {
				x = underflow.Real(x, scale)
			}
		}
	}
	return h
}

// FreqResponse solves each 2×2 block of (zI - Λ) in the block-diagonal coordinates.
func (f *Rotation) FreqResponse(omega []float64) []complex128 {
	return f.PrepareFreqResponse()(omega)
}

// PrepareFreqResponse is FreqResponse with B and C in the block-diagonal coordinates (P's
// orthogonality checked, O(n³)) once, here (FreqPreparer).
func (f *Rotation) PrepareFreqResponse() func(omega []float64) []complex128 {
	bt, ct := f.modal()
	g := &Rotation{Blocks: slices.Clone(f.Blocks), Real: slices.Clone(f.Real), D: f.D}
	return func(omega []float64) []complex128 { return g.blockResponse(bt, ct, omega) }
}

// blockResponse is FreqResponse with B and C in the block-diagonal coordinates, bt and ct
// (Modal); f's P, B and C are not read.
func (f *Rotation) blockResponse(bt, ct []float64, omega []float64) []complex128 {
	out := make([]complex128, len(omega))
	nb := len(f.Blocks)
	for i, w := range omega {
		z := unitCircle(w)
		g := complex(f.D, 0)
		for k, b := range f.Blocks {
			s, c := math.Sincos(b.Angle)
			// (zI - ρR)⁻¹ = adj / det for the 2×2 block.
			a00, a01 := z-complex(b.Radius*c, 0), complex(b.Radius*s, 0)
			a10, a11 := complex(-b.Radius*s, 0), z-complex(b.Radius*c, 0)
			det := a00*a11 - a01*a10
			b0, b1 := complex(bt[2*k], 0), complex(bt[2*k+1], 0)
			x0 := (a11*b0 - a01*b1) / det
			x1 := (-a10*b0 + a00*b1) / det
			g += complex(ct[2*k], 0)*x0 + complex(ct[2*k+1], 0)*x1
		}
		for k, r := range f.Real {
			g += complex(ct[2*nb+k]*bt[2*nb+k], 0) / (z - complex(r, 0))
		}
		out[i] = g
	}
	return out
}
