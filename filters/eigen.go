package filters

import (
	"context"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// DiagonalizeCondLimit is the largest eigenvector-basis condition number a diagonalisation
// accepts. Beyond it the modal form would carry fewer than about six correct digits: the
// matrix is defective or too close to a defective one.
const DiagonalizeCondLimit = 1e10

// eigenvalues returns the eigenvalues of A (balanced QR iteration, as LAPACK's dgeev).
func eigenvalues(a *mat.Dense) ([]complex128, error) {
	if a == nil {
		return nil, nil
	}
	var e mat.Eigen
	if !e.Factorize(a, mat.EigenNone) {
		return nil, &ConditionError{What: "A (the QR iteration did not converge)", Condition: math.Inf(1), Limit: 0, Kind: ErrIllConditioned}
	}
	return e.Values(nil), nil
}

// modalBasis is a real basis W in which W⁻¹AW = blockdiag(ρₖR(θₖ), …, rⱼ, …): one pair of
// columns [x, -y] for each complex pair (eigenvector x + iy of λ = ρe^{iθ}, θ ∈ (0, π)), then one
// column per real eigenvalue. Pairs and real values are in the package's pole order.
type modalBasis struct {
	w     *mat.Dense
	pairs []complex128 // λ with Im > 0, one per 2×2 block
	reals []float64
	cond  float64 // 1-norm condition estimate of w
}

// realModal diagonalises A in real arithmetic. It fails with ErrDefective when the basis
// condition exceeds DiagonalizeCondLimit.
func realModal(a *mat.Dense) (*modalBasis, error) {
	n, _ := a.Dims()
	var e mat.Eigen
	if !e.Factorize(a, mat.EigenRight) {
		return nil, &ConditionError{What: "A (the QR iteration did not converge)", Condition: math.Inf(1), Kind: ErrIllConditioned}
	}
	vals := e.Values(nil)
	var vecs mat.CDense
	e.VectorsTo(&vecs)
	type col struct {
		l    complex128
		x, y []float64
	}
	var pairs, reals []col
	for j, l := range vals {
		if imag(l) < 0 {
			continue
		}
		x, y := make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			v := vecs.At(i, j)
			x[i], y[i] = real(v), -imag(v)
		}
		if imag(l) == 0 {
			s := floats.Norm(x, 2)
			floats.Scale(1/s, x)
			reals = append(reals, col{l: l, x: x})
			continue
		}
		// Both columns of a pair take one scale so the block keeps its rotation shape.
		s := math.Sqrt((floats.Dot(x, x) + floats.Dot(y, y)) / 2)
		floats.Scale(1/s, x)
		floats.Scale(1/s, y)
		pairs = append(pairs, col{l: l, x: x, y: y})
	}
	sortCols := func(c []col) {
		for i := 1; i < len(c); i++ {
			for j := i; j > 0 && lessRoot(c[j].l, c[j-1].l); j-- {
				c[j], c[j-1] = c[j-1], c[j]
			}
		}
	}
	sortCols(pairs)
	sortCols(reals)
	mb := &modalBasis{w: mat.NewDense(n, n, nil)}
	k := 0
	for _, p := range pairs {
		mb.w.SetCol(k, p.x)
		mb.w.SetCol(k+1, p.y)
		mb.pairs = append(mb.pairs, p.l)
		k += 2
	}
	for _, r := range reals {
		mb.w.SetCol(k, r.x)
		mb.reals = append(mb.reals, real(r.l))
		k++
	}
	var lu mat.LU
	lu.Factorize(mb.w)
	mb.cond = lu.Cond()
	if math.IsInf(mb.cond, 0) || math.IsNaN(mb.cond) || mb.cond > DiagonalizeCondLimit {
		return nil, &ConditionError{What: "the eigenvector basis of A (defective or nearly defective)", Condition: mb.cond, Limit: DiagonalizeCondLimit, Kind: ErrDefective}
	}
	return mb, nil
}

// blocks returns the rotation blocks of the basis.
func (m *modalBasis) blocks() []RotationBlock {
	out := make([]RotationBlock, len(m.pairs))
	for i, l := range m.pairs {
		out[i] = RotationBlock{Radius: cmplx.Abs(l), Angle: cmplx.Phase(l)}
	}
	return out
}

// schurRotation returns an orthogonal P and the blocks of A when A is normal to working
// accuracy: its real Schur form T = ZᵀAZ is then block diagonal. ok is false otherwise.
func schurRotation(a *mat.Dense) (p *mat.Dense, blocks []RotationBlock, reals []float64, ok bool) {
	n, _ := a.Dims()
	// Screen with ‖AᵀA - AAᵀ‖ first: one matrix product is far cheaper than a QR iteration.
	var ata, aat mat.Dense
	ata.Mul(a.T(), a)
	aat.Mul(a, a.T())
	ata.Sub(&ata, &aat)
	fn := mat.Norm(a, 2)
	if mat.Norm(&ata, 2) > 1e3*eps*float64(n)*fn*fn {
		return nil, nil, nil, false
	}
	t, z, ok := RealSchur(a)
	if !ok {
		return nil, nil, nil, false
	}
	// Find the blocks and measure what lies outside them.
	size := make([]int, 0, n)
	for i := 0; i < n; {
		if i < n-1 && t.At(i+1, i) != 0 {
			size = append(size, 2)
			i += 2
		} else {
			size = append(size, 1)
			i++
		}
	}
	off := 0.0
	start := 0
	for _, s := range size {
		if s == 2 {
			// A normal 2×2 block is [[σ, -ω], [ω, σ]] up to the sign of ω.
			off = math.Hypot(off, t.At(start, start+1)+t.At(start+1, start))
			off = math.Hypot(off, t.At(start, start)-t.At(start+1, start+1))
		}
		for i := start; i < start+s; i++ {
			for j := start + s; j < n; j++ {
				off = math.Hypot(off, t.At(i, j))
			}
		}
		start += s
	}
	if off > 16*eps*math.Sqrt(float64(n))*mat.Norm(a, 2) {
		return nil, nil, nil, false
	}
	// Reorder columns: pairs first, then reals; standardise each block to [[σ, -ω], [ω, σ]].
	type piece struct {
		l    complex128
		cols [][]float64
	}
	var pairs, rs []piece
	start = 0
	for _, s := range size {
		if s == 1 {
			rs = append(rs, piece{l: complex(t.At(start, start), 0), cols: [][]float64{mat.Col(nil, start, z)}})
		} else {
			a00, a01, a10 := t.At(start, start), t.At(start, start+1), t.At(start+1, start)
			a11 := t.At(start+1, start+1)
			sigma := (a00 + a11) / 2
			omega := math.Sqrt(math.Max(-a01*a10, 0))
			c0, c1 := mat.Col(nil, start, z), mat.Col(nil, start+1, z)
			if a10 < 0 {
				floats.Scale(-1, c1)
			}
			pairs = append(pairs, piece{l: complex(sigma, omega), cols: [][]float64{c0, c1}})
		}
		start += s
	}
	for i := 1; i < len(pairs); i++ {
		for j := i; j > 0 && lessRoot(pairs[j].l, pairs[j-1].l); j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && lessRoot(rs[j].l, rs[j-1].l); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	p = mat.NewDense(n, n, nil)
	k := 0
	for _, pc := range append(pairs, rs...) {
		for _, c := range pc.cols {
			p.SetCol(k, c)
			k++
		}
	}
	for _, pc := range pairs {
		blocks = append(blocks, RotationBlock{Radius: cmplx.Abs(pc.l), Angle: cmplx.Phase(pc.l)})
	}
	for _, pc := range rs {
		reals = append(reals, real(pc.l))
	}
	return p, blocks, reals, true
}

// qrRootsMax is the largest degree whose roots are the eigenvalues of the companion matrix:
// its O(n³) cost is a few milliseconds there. Above it, the Aberth–Ehrlich iteration.
var qrRootsMax = 32

// aberthClusterQRMax is the largest degree whose roots are the companion matrix's eigenvalues
// when Aberth's iteration finds clustered roots, whose shape and means it cannot resolve
// (see aberthRoots): QR costs a fraction of a second at 256 (5 s at 512, BenchmarkPolesTF).
const aberthClusterQRMax = 256

// rootsMonic returns the roots of zⁿ + a₁zⁿ⁻¹ + … + aₙ: the eigenvalues of the balanced
// companion matrix (backward stable for the polynomial), each refined by Newton steps while
// its residual is above Horner's rounding error, kept only when they reduce |p|. Conjugate symmetry is preserved.
func rootsMonic(a []float64) ([]complex128, error) {
	return rootsMonicContext(context.Background(), a)
}

// rootsMonicContext is rootsMonic, giving up with ctx's error when ctx is done.
func rootsMonicContext(ctx context.Context, a []float64) ([]complex128, error) {
	n := len(a)
	if n == 0 {
		return nil, nil
	}
	if n > qrRootsMax {
		// Roots at zero are exact; the rest by Aberth's O(n²)-a-sweep iteration.
		nz := 0
		for nz < n && a[n-1-nz] == 0 {
			nz++
		}
		if nz == n {
			return make([]complex128, n), nil
		}
		roots, ok, clustered := aberthRoots(ctx, a[:n-nz])
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if ok && (!clustered || n > aberthClusterQRMax) {
			return append(roots, make([]complex128, nz)...), nil
		}
	}
	comp := mat.NewDense(n, n, nil)
	for j, v := range a {
		comp.Set(0, j, -v)
	}
	for i := 1; i < n; i++ {
		comp.Set(i, i-1, 1)
	}
	roots, err := eigenvalues(comp)
	if err != nil {
		return nil, err
	}
	absA := make([]float64, n+1)
	absA[0] = 1
	for k, v := range a {
		absA[k+1] = math.Abs(v)
	}
	for i, r := range roots {
		if imag(r) < 0 {
			continue
		}
		p, _ := hornerMonic(a, r)
		for iter := 0; iter < 3; iter++ {
			// A residual within Horner's rounding error is noise: a Newton step from it would
			// move each root of a cluster at random by up to ε·Σ|aₖ||r|ᵏ/|p′(r)|, losing the
			// cluster's mean, which the QR iteration keeps (it preserves the trace).
			ratio, small, _ := newtonRatio(a, absA, r)
			if small || cmplx.IsNaN(ratio) || cmplx.IsInf(ratio) {
				break
			}
			next := r - ratio
			if imag(r) == 0 {
				next = complex(real(next), 0)
			}
			q, _ := hornerMonic(a, next)
			if cmplx.Abs(q) >= cmplx.Abs(p) {
				break
			}
			r, p = next, q
		}
		roots[i] = r
	}
	// Mirror refined upper-half roots onto their partners (dgeev stores pairs adjacently).
	for i := 0; i+1 < len(roots); i++ {
		if imag(roots[i]) > 0 && imag(roots[i+1]) < 0 {
			roots[i+1] = cmplx.Conj(roots[i])
			i++
		}
	}
	return roots, nil
}

// hornerMonic evaluates p(z) = zⁿ + a₁zⁿ⁻¹ + … + aₙ and p'(z).
func hornerMonic(a []float64, z complex128) (p, dp complex128) {
	p = 1
	for _, v := range a {
		dp = dp*z + p
		p = p*z + complex(v, 0)
	}
	return p, dp
}
