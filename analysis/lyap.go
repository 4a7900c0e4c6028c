package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// This file holds the linear-algebra kernels of the norms: a state-space system in real Schur
// coordinates, its split into stable and unstable parts (a Sylvester equation A·X - X·B = C on
// quasi-triangular matrices, in the manner of Bartels and Stewart, 1972), and the Cholesky
// factors of its Gramians by Hammarling's method (S. J. Hammarling, Numerical solution of the
// discrete-time, convergent, non-negative definite Lyapunov equation, 1991): the factor U of
// T·P·Tᴴ - P + B·Bᴴ = 0, P = U·Uᴴ, B of one column or several, comes from a back-substitution
// on the triangular T without P ever being formed. Forming P first and factoring it loses
// every singular value of the factor below √ε of its largest (the square root of P's
// rounding): on a 5×5 Jordan block at 0.99 that was the smallest Hankel singular value,
// 5e-4·σ₁, printed as 0, and σ₁ 1.5% off; on an LRU-like layer of clustered modes every value
// below 1e-13·σ₁ printed as 0 (gen_mimo_hsv_exact.py).

// schurSys is (T, B, C, D) with T upper quasi-triangular: 1×1 blocks and 2×2 blocks with
// complex conjugate eigenvalues. blockDiag is set when T has no coupling between blocks (the
// modal forms), which lets every solver work block by block in O(n²). src is the dense
// realisation whose Schur decomposition rounded T (nil when T holds the filter's own numbers:
// a modal form, or an A already in Schur form), from which perturbed() measures what that
// rounding does to a result.
type schurSys struct {
	t         *mat.Dense // nil for order 0
	b, c      []float64
	d         float64
	blockDiag bool
	src       *filters.Dense
}

func (s *schurSys) order() int { return len(s.b) }

// errSchur marks a QR iteration that did not converge (rare).
var errSchur = errors.New("analysis: the Schur decomposition of A did not converge")

// schurOf realises f in real Schur coordinates. Modal forms (diagonal, rotation, ZPK with
// distinct poles) are already block diagonal; the others are reduced by an orthogonal
// similarity A = U·T·Uᵀ (Hessenberg reduction and the multishift QR of LAPACK's dhseqr).
func schurOf(f filters.Filter) (*schurSys, error) {
	switch s := f.(type) {
	case *filters.Rotation:
		return rotationSchur(s)
	case *filters.Diagonal, *filters.ZPK:
		if r, _, err := filters.ToRotation(f); err == nil {
			return rotationSchur(r)
		} else if !errors.Is(err, filters.ErrDefective) {
			return nil, err
		}
		// Repeated poles: the dense realisation (companion) below.
	}
	d, ok := f.(*filters.Dense)
	if !ok {
		var err error
		if d, _, err = filters.ToDense(f); err != nil {
			return nil, err
		}
	}
	return denseSchur(d)
}

// denseSchur realises d in the Schur coordinates of its A.
func denseSchur(d *filters.Dense) (*schurSys, error) {
	n := d.Order()
	if n == 0 {
		return &schurSys{d: d.D, b: []float64{}, c: []float64{}, blockDiag: true}, nil
	}
	t, u, err := realSchur(d.A)
	if err != nil {
		return nil, err
	}
	b := make([]float64, n)
	c := make([]float64, n)
	mat.NewVecDense(n, b).MulVec(u.T(), mat.NewVecDense(n, d.B))
	mat.NewVecDense(n, c).MulVec(u.T(), mat.NewVecDense(n, d.C))
	s := &schurSys{t: t, b: b, c: c, d: d.D}
	if !mat.Equal(t, d.A) {
		s.src = d
	}
	return s, nil
}

// perturbed returns the Schur realisation of src with A moved by ε·‖A‖_F in a fixed
// pseudo-random direction: a change the size of the Schur decomposition's own rounding. How
// far a result moves with it estimates how far that rounding moved it (Kenney and Laub's
// small-sample statistical condition estimation, one sample).
func (s *schurSys) perturbed() (*schurSys, error) {
	a := mat.DenseCopyOf(s.src.A)
	n, _ := a.Dims()
	rng := rand.New(rand.NewPCG(0x5eed, uint64(n)))
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	g.Scale(eps*mat.Norm(a, 2)/mat.Norm(g, 2), g)
	a.Add(a, g)
	return denseSchur(&filters.Dense{A: a, B: s.src.B, C: s.src.C, D: s.src.D})
}

// rotationSchur uses the block-diagonal Λ of a rotation filter with P⁻¹B and CP.
func rotationSchur(r *filters.Rotation) (*schurSys, error) {
	n := r.Order()
	if n == 0 {
		return &schurSys{d: r.D, b: []float64{}, c: []float64{}, blockDiag: true}, nil
	}
	b, c, err := r.Modal()
	if err != nil {
		return nil, fmt.Errorf("%w: the rotation basis P is singular", filters.ErrIllConditioned)
	}
	return &schurSys{t: r.Lambda(), b: b, c: c, d: r.D, blockDiag: true}, nil
}

const eps = 0x1p-52

// realSchur returns T and U with A = U·T·Uᵀ, T in Schur canonical form.
func realSchur(a *mat.Dense) (t, u *mat.Dense, err error) {
	t, u, ok := filters.RealSchur(a)
	if !ok {
		return nil, nil, errSchur
	}
	return t, u, nil
}

// blocksOf returns the start of each diagonal block of the quasi-triangular t, plus n.
func blocksOf(t *mat.Dense) []int {
	if t == nil {
		return []int{0}
	}
	n, _ := t.Dims()
	out := make([]int, 0, n+1)
	for i := 0; i < n; {
		out = append(out, i)
		if i+1 < n && t.At(i+1, i) != 0 {
			i += 2
		} else {
			i++
		}
	}
	return append(out, n)
}

// blockEigen returns the eigenvalue with Im ≥ 0 of the diagonal block of t starting at i of
// size sz (for a 2×2 block, (a+d)/2 ± √(((a-d)/2)² + bc)).
func blockEigen(t *mat.Dense, i, sz int) complex128 {
	if sz == 1 {
		return complex(t.At(i, i), 0)
	}
	a, b, c, d := t.At(i, i), t.At(i, i+1), t.At(i+1, i), t.At(i+1, i+1)
	m := (a + d) / 2
	disc := (a-d)*(a-d)/4 + b*c
	if disc >= 0 {
		// A 2×2 block with real eigenvalues does not occur in Schur canonical form; report
		// the larger in modulus.
		r := math.Sqrt(disc)
		if math.Abs(m+r) >= math.Abs(m-r) {
			return complex(m+r, 0)
		}
		return complex(m-r, 0)
	}
	return complex(m, math.Sqrt(-disc))
}

// split separates the stable part (every eigenvalue with |λ| < 1 - filters.MarginalTol) from
// the rest: H = H_s + H_u with H_s = (T₁₁, B_s, C_s, D) and H_u = (T₂₂, B_u, C_u, 0). The stable
// blocks are moved to the top of T by orthogonal swaps (LAPACK's dtrexc); the coupling T₁₂ is
// removed by the similarity [[I, X], [0, I]] with T₁₁X - XT₂₂ = -T₁₂ (solvable since T₁₁ and T₂₂
// share no eigenvalue). unstable lists the eigenvalues of T₂₂, both members of each pair.
func (s *schurSys) split() (stable, rest *schurSys, unstable []complex128, err error) {
	n := s.order()
	if n == 0 {
		return s, &schurSys{b: []float64{}, c: []float64{}, blockDiag: true}, nil, nil
	}
	isStable := func(l complex128) bool { return filters.Stable(cmplx.Abs(l)) }
	bl := blocksOf(s.t)
	if s.blockDiag {
		var si, ui []int
		for k := 0; k+1 < len(bl); k++ {
			i, sz := bl[k], bl[k+1]-bl[k]
			l := blockEigen(s.t, i, sz)
			idx := []int{i}
			if sz == 2 {
				idx = append(idx, i+1)
			}
			if isStable(l) {
				si = append(si, idx...)
			} else {
				ui = append(ui, idx...)
				unstable = append(unstable, l)
				if sz == 2 {
					unstable = append(unstable, cmplx.Conj(l))
				}
			}
		}
		return s.sub(si, s.d), s.sub(ui, 0), unstable, nil
	}
	t := mat.DenseCopyOf(s.t)
	q := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		q.Set(i, i, 1)
	}
	tr, qr := t.RawMatrix(), q.RawMatrix()
	impl := gonum.Implementation{}
	work := make([]float64, n)
	ks := 0
	for k := 0; k < n; {
		sz := 1
		if k+1 < n && t.At(k+1, k) != 0 {
			sz = 2
		}
		if isStable(blockEigen(t, k, sz)) {
			if k != ks {
				_, _, ok := impl.Dtrexc(lapack.UpdateSchur, n, tr.Data, tr.Stride, qr.Data, qr.Stride, k, ks, work)
				if !ok {
					return nil, nil, nil, fmt.Errorf("%w: a stable and an unstable pole are too close to separate", filters.ErrIllConditioned)
				}
			}
			ks += sz
		}
		k += sz
	}
	b := make([]float64, n)
	c := make([]float64, n)
	mat.NewVecDense(n, b).MulVec(q.T(), mat.NewVecDense(n, s.b))
	mat.NewVecDense(n, c).MulVec(q.T(), mat.NewVecDense(n, s.c))
	tb := blocksOf(t)
	for i := 0; i+1 < len(tb); i++ {
		if k, sz := tb[i], tb[i+1]-tb[i]; k >= ks {
			l := blockEigen(t, k, sz)
			unstable = append(unstable, l)
			if sz == 2 {
				unstable = append(unstable, cmplx.Conj(l))
			}
		}
	}
	if ks == 0 || ks == n {
		whole := &schurSys{t: t, b: b, c: c, d: s.d}
		empty := &schurSys{b: []float64{}, c: []float64{}, blockDiag: true}
		if ks == n {
			return whole, empty, nil, nil
		}
		empty.d = s.d
		whole.d = 0
		return empty, whole, unstable, nil
	}
	t11 := mat.DenseCopyOf(t.Slice(0, ks, 0, ks))
	t22 := mat.DenseCopyOf(t.Slice(ks, n, ks, n))
	rhs := mat.DenseCopyOf(t.Slice(0, ks, ks, n))
	rhs.Scale(-1, rhs)
	x, err := sylvester(t11, t22, rhs)
	if err != nil {
		return nil, nil, nil, err
	}
	// B̂ = [B₁ - X·B₂; B₂], Ĉ = [C₁, C₁·X + C₂].
	bs := append([]float64(nil), b[:ks]...)
	for i := 0; i < ks; i++ {
		for j := ks; j < n; j++ {
			bs[i] -= x.At(i, j-ks) * b[j]
		}
	}
	cu := append([]float64(nil), c[ks:]...)
	for j := ks; j < n; j++ {
		for i := 0; i < ks; i++ {
			cu[j-ks] += c[i] * x.At(i, j-ks)
		}
	}
	stable = &schurSys{t: t11, b: bs, c: append([]float64(nil), c[:ks]...), d: s.d}
	rest = &schurSys{t: t22, b: append([]float64(nil), b[ks:]...), c: cu}
	return stable, rest, unstable, nil
}

// sub returns the block-diagonal subsystem on the state indices idx.
func (s *schurSys) sub(idx []int, d float64) *schurSys {
	out := &schurSys{d: d, b: make([]float64, len(idx)), c: make([]float64, len(idx)), blockDiag: true}
	if len(idx) == 0 {
		return out
	}
	out.t = mat.NewDense(len(idx), len(idx), nil)
	for i, p := range idx {
		out.b[i], out.c[i] = s.b[p], s.c[p]
		for j, q := range idx {
			out.t.Set(i, j, s.t.At(p, q))
		}
	}
	return out
}

// sylvester solves A·X - X·B = C for X (m×k) with A and B upper quasi-triangular, column
// blocks of B forward and row blocks of A backward.
func sylvester(a, b, c *mat.Dense) (*mat.Dense, error) {
	m, k := c.Dims()
	x := mat.NewDense(m, k, nil)
	ba, bb := blocksOf(a), blocksOf(b)
	for J := 0; J+1 < len(bb); J++ {
		j0, j1 := bb[J], bb[J+1]
		q := j1 - j0
		for I := len(ba) - 2; I >= 0; I-- {
			i0, i1 := ba[I], ba[I+1]
			p := i1 - i0
			var rhs [4]float64
			for r := 0; r < p; r++ {
				for cc := 0; cc < q; cc++ {
					s := c.At(i0+r, j0+cc)
					for kk := i1; kk < m; kk++ {
						s -= a.At(i0+r, kk) * x.At(kk, j0+cc)
					}
					for l := 0; l < j0; l++ {
						s += x.At(i0+r, l) * b.At(l, j0+cc)
					}
					rhs[r+p*cc] = s
				}
			}
			// A_II·Y - Y·B_JJ: coefficient of Y[a][b] in (r, c) is A_II[r][a]δ_cb - δ_ra·B_JJ[b][c].
			var mm [16]float64
			for r := 0; r < p; r++ {
				for cc := 0; cc < q; cc++ {
					row := r + p*cc
					for aa := 0; aa < p; aa++ {
						for bbb := 0; bbb < q; bbb++ {
							col := aa + p*bbb
							v := 0.0
							if cc == bbb {
								v += a.At(i0+r, i0+aa)
							}
							if r == aa {
								v -= b.At(j0+bbb, j0+cc)
							}
							mm[row*4+col] = v
						}
					}
				}
			}
			y, ok := smallSolve(mm[:], rhs[:], p*q)
			if !ok {
				return nil, fmt.Errorf("%w: the Sylvester equation is singular", filters.ErrIllConditioned)
			}
			for r := 0; r < p; r++ {
				for cc := 0; cc < q; cc++ {
					x.Set(i0+r, j0+cc, y[r+p*cc])
				}
			}
		}
	}
	return x, nil
}

// smallSolve solves the k×k system m·y = rhs (m row-major with stride 4, k ≤ 4) by Gaussian
// elimination with complete pivoting; ok is false for a (numerically) singular m.
func smallSolve(m, rhs []float64, k int) ([4]float64, bool) {
	var a [4][5]float64
	scale := 0.0
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			a[i][j] = m[i*4+j]
			scale = math.Max(scale, math.Abs(a[i][j]))
		}
		a[i][4] = rhs[i]
	}
	perm := [4]int{0, 1, 2, 3}
	for col := 0; col < k; col++ {
		pr, pc, best := col, col, -1.0
		for i := col; i < k; i++ {
			for j := col; j < k; j++ {
				if v := math.Abs(a[i][j]); v > best {
					pr, pc, best = i, j, v
				}
			}
		}
		if best <= 8*eps*scale || best == 0 {
			return [4]float64{}, false
		}
		a[col], a[pr] = a[pr], a[col]
		if pc != col {
			for i := 0; i < k; i++ {
				a[i][col], a[i][pc] = a[i][pc], a[i][col]
			}
			perm[col], perm[pc] = perm[pc], perm[col]
		}
		for i := col + 1; i < k; i++ {
			f := a[i][col] / a[col][col]
			for j := col; j < k; j++ {
				a[i][j] -= f * a[col][j]
			}
			a[i][4] -= f * a[col][4]
		}
	}
	var z [4]float64
	for i := k - 1; i >= 0; i-- {
		s := a[i][4]
		for j := i + 1; j < k; j++ {
			s -= a[i][j] * z[j]
		}
		z[i] = s / a[i][i]
	}
	var y [4]float64
	for i := 0; i < k; i++ {
		y[perm[i]] = z[i]
	}
	return y, true
}

// cschur is a quasi-triangular T in complex Schur form, T = Z·Tc·Zᴴ with Tc upper triangular
// and Z block diagonal: a 2×2 unitary G per 2×2 block of T (a conjugate pair), 1 elsewhere.
// gap[k] = 1 - |Tc_kk|², from T's own entries without cancellation (it is all that keeps a
// pole near the unit circle apart from it).
type cschur struct {
	n    int
	t    []complex128 // Tc, row-major
	gap  []float64
	rots []blockRot
	diag bool // Tc is diagonal (T block diagonal)
}

// blockRot is the G of the 2×2 block starting at i: Gᴴ·T_block·G is upper triangular.
type blockRot struct {
	i int
	g [2][2]complex128
}

// complexSchur returns T in complex Schur form. A 2×2 block [[a, b], [c, d]] with eigenvalue
// λ (Im λ > 0) is triangularised by G = [v, v⊥], v its unit eigenvector.
func complexSchur(t *mat.Dense, blockDiag bool) *cschur {
	n, _ := t.Dims()
	cs := &cschur{n: n, t: make([]complex128, n*n), gap: make([]float64, n), diag: blockDiag}
	tr := t.RawMatrix()
	for i := 0; i < n; i++ {
		for j := max(i-1, 0); j < n; j++ {
			cs.t[i*n+j] = complex(tr.Data[i*tr.Stride+j], 0)
		}
	}
	bl := blocksOf(t)
	for k := 0; k+1 < len(bl); k++ {
		i := bl[k]
		if bl[k+1]-i == 1 {
			a := t.At(i, i)
			cs.gap[i] = (1 - a) * (1 + a)
			continue
		}
		a, b, c, d := t.At(i, i), t.At(i, i+1), t.At(i+1, i), t.At(i+1, i+1)
		l := blockEigen(t, i, 2)
		v0, v1 := complex(b, 0), l-complex(a, 0)
		if w0, w1 := l-complex(d, 0), complex(c, 0); cmplx.Abs(w0)+cmplx.Abs(w1) > cmplx.Abs(v0)+cmplx.Abs(v1) {
			v0, v1 = w0, w1
		}
		nv := complex(math.Hypot(cmplx.Abs(v0), cmplx.Abs(v1)), 0)
		v0, v1 = v0/nv, v1/nv
		r := blockRot{i: i, g: [2][2]complex128{{v0, -cmplx.Conj(v1)}, {v1, cmplx.Conj(v0)}}}
		cs.rots = append(cs.rots, r)
		g := oneMinusDet(a, b, c, d)
		cs.gap[i], cs.gap[i+1] = g, g
		// Rows i, i+1 (nonzero from column i on) by Gᴴ, then columns i, i+1 (nonzero in rows
		// up to i+1) by G; a modal T has nothing outside the block.
		lo, hi := i, n
		if blockDiag {
			hi = i + 2
		}
		for j := lo; j < hi; j++ {
			x, y := cs.t[i*n+j], cs.t[(i+1)*n+j]
			cs.t[i*n+j] = cmplx.Conj(r.g[0][0])*x + cmplx.Conj(r.g[1][0])*y
			cs.t[(i+1)*n+j] = cmplx.Conj(r.g[0][1])*x + cmplx.Conj(r.g[1][1])*y
		}
		if blockDiag {
			lo = i
		} else {
			lo = 0
		}
		for j := lo; j < i+2; j++ {
			x, y := cs.t[j*n+i], cs.t[j*n+i+1]
			cs.t[j*n+i] = x*r.g[0][0] + y*r.g[1][0]
			cs.t[j*n+i+1] = x*r.g[0][1] + y*r.g[1][1]
		}
		cs.t[i*n+i], cs.t[(i+1)*n+i+1], cs.t[(i+1)*n+i] = l, cmplx.Conj(l), 0
	}
	return cs
}

// zh returns Zᴴ·V for V n×cols, row-major.
func (cs *cschur) zh(v []float64, cols int) []complex128 {
	out := make([]complex128, len(v))
	for i, x := range v {
		out[i] = complex(x, 0)
	}
	for _, r := range cs.rots {
		for j := r.i * cols; j < (r.i+1)*cols; j++ {
			x, y := out[j], out[j+cols]
			out[j] = cmplx.Conj(r.g[0][0])*x + cmplx.Conj(r.g[1][0])*y
			out[j+cols] = cmplx.Conj(r.g[0][1])*x + cmplx.Conj(r.g[1][1])*y
		}
	}
	return out
}

// ctrlFactor returns U (row-major) with Tc·Pc·Tcᴴ - Pc + β·βᴴ = 0, Pc = U·Uᴴ, for β = Zᴴ·b
// (b n×cols, row-major): the controllability Gramian is P = (Z·U)·(Z·U)ᴴ. U is triangular in
// hammarling's order of elimination (upper triangular for a triangular T).
func (cs *cschur) ctrlFactor(b []float64, cols int) []complex128 {
	u, _ := hammarling(cs.t, cs.n, cs.gap, cs.diag, cs.pairs(), cs.zh(b, cols), cols)
	return u
}

// pairs marks the first state of each 2×2 block of T.
func (cs *cschur) pairs() []bool {
	p := make([]bool, cs.n)
	for _, r := range cs.rots {
		p[r.i] = true
	}
	return p
}

// realFactor returns a real n×n X with X·Xᵀ the controllability Gramian of (T, B) (trans
// false) or the observability Gramian of (T, C) (trans true: Tᵀ·Q·T - Q + Cᵀ·C = 0); v is B
// or Cᵀ, n×cols, row-major.
//
// The observability equation in complex coordinates, Tcᴴ·Qc·Tc - Qc + γ·γᴴ = 0 with γ = Zᴴ·C,
// is the controllability one of the upper triangular M = J·Tcᴴ·J (J the reversal), Qc =
// J·Y·J; so Q = (Z·J·V·J)·(Z·J·V·J)ᴴ with V the factor of Y, and J·V·J is lower triangular.
//
// The complex factor F (Z·U, or Z·J·V·J) is block triangular, its diagonal blocks those of T,
// and so is the real factor X of the same shape; X⁻¹·F is then block triangular and unitary,
// so block diagonal: F = X·W with W a 1×1 phase or 2×2 unitary per block, which F's diagonal
// block gives (its RQ decomposition, whose R is real). X = Re(F·Wᴴ) in O(n²) keeps the
// accuracy of Hammarling's factor entry by entry; a QR decomposition of [Fr, Fi]ᵀ (also a
// real factor, in O(n³)) mixed every row of F with every other, and kept the Hankel singular
// values of gen_mimo_hsv_exact.py's layers at 2e-21·σ₁ to 1e-6 relative, not 1e-10.
func (cs *cschur) realFactor(v []float64, cols int, trans bool) *mat.Dense {
	n := cs.n
	if cols > n {
		// V·Vᵀ = Rᵀ·R for the QR decomposition Vᵀ = Q·R: the n columns of Rᵀ carry the same
		// Gramian, and each step of hammarling costs O(n·cols).
		var qr mat.QR
		qr.Factorize(mat.NewDense(n, cols, v).T())
		var r mat.Dense
		qr.RTo(&r)
		w := mat.NewDense(n, n, nil)
		w.Copy(r.Slice(0, n, 0, n).T())
		v, cols = w.RawMatrix().Data, n
	}
	pair := cs.pairs()
	var f []complex128
	var order []int
	if !trans {
		f, order = hammarling(cs.t, n, cs.gap, cs.diag, pair, cs.zh(v, cols), cols)
	} else {
		m := make([]complex128, n*n)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				m[i*n+j] = cmplx.Conj(cs.t[(n-1-j)*n+n-1-i])
			}
		}
		gap := make([]float64, n)
		gamma := cs.zh(v, cols)
		beta := make([]complex128, n*cols)
		rpair := make([]bool, n)
		for i := range gap {
			gap[i] = cs.gap[n-1-i]
			copy(beta[i*cols:(i+1)*cols], gamma[(n-1-i)*cols:(n-i)*cols])
			if pair[i] {
				rpair[n-2-i] = true
			}
		}
		y, ord := hammarling(m, n, gap, cs.diag, rpair, beta, cols)
		f = make([]complex128, n*n)
		for i, z := range y {
			f[n*n-1-i] = z // J·V·J
		}
		order = make([]int, n)
		for t, k := range ord {
			order[t] = n - 1 - k
		}
	}
	// F ← Z·F.
	for _, r := range cs.rots {
		for j := 0; j < n; j++ {
			x, y := f[r.i*n+j], f[(r.i+1)*n+j]
			f[r.i*n+j] = r.g[0][0]*x + r.g[0][1]*y
			f[(r.i+1)*n+j] = r.g[1][0]*x + r.g[1][1]*y
		}
	}
	// X's columns go in the order of elimination (the largest first, for a diagonal T), which
	// grades Rᵀ·S the same way in its rows and its columns, and the SVD of Rᵀ·S keeps the small
	// singular values' digits: σ₉ = 4e-20·σ₁ of gen_mimo_hsv_exact.py's cluster_r90 came out
	// 1e3 times too large with the columns in the states' order, and agrees to 3e-13 in this one.
	x := mat.NewDense(n, n, nil)
	for t := 0; t < n; {
		j := order[t]
		if j > 0 && pair[j-1] {
			j-- // the pair's first state: its block's columns go together, j first
		}
		if !pair[j] {
			w := complex(1, 0)
			if a := cmplx.Abs(f[j*n+j]); a > 0 && len(cs.rots) > 0 {
				w = f[j*n+j] / complex(a, 0)
			}
			for i := 0; i < n; i++ {
				x.Set(i, t, real(f[i*n+j]*cmplx.Conj(w)))
			}
			t++
			continue
		}
		// The block [[a, b], [c, d]] = R·W: W's second row is (c, d) normalised, its first
		// the orthogonal complement with the phase that makes R₀₀ real.
		a, b, c, d := f[j*n+j], f[j*n+j+1], f[(j+1)*n+j], f[(j+1)*n+j+1]
		w10, w11 := complex(0, 0), complex(1, 0)
		if r := math.Hypot(cmplx.Abs(c), cmplx.Abs(d)); r > 0 {
			w10, w11 = c/complex(r, 0), d/complex(r, 0)
		}
		w00, w01 := cmplx.Conj(w11), -cmplx.Conj(w10)
		if r := a*cmplx.Conj(w00) + b*cmplx.Conj(w01); r != 0 {
			ph := r / complex(cmplx.Abs(r), 0)
			w00, w01 = w00*ph, w01*ph
		}
		for i := 0; i < n; i++ {
			y, z := f[i*n+j], f[i*n+j+1]
			x.Set(i, t, real(y*cmplx.Conj(w00)+z*cmplx.Conj(w01)))
			x.Set(i, t+1, real(y*cmplx.Conj(w10)+z*cmplx.Conj(w11)))
		}
		t += 2
	}
	return x
}

// hammarling returns U (row-major) with M·P·Mᴴ - P + β·βᴴ = 0, P = U·Uᴴ, for M upper
// triangular (diagonal when diag) with every |M_kk| < 1, gap[k] = 1 - |M_kk|² and β n×cols
// (row-major), and the order in which it eliminated the states: U is upper triangular in that
// order. With M = [[M₁, m], [0, λ]], U = [[U₁, u], [0, ν]] and one column, β = [β₁; β_k]:
//
//	ν = |β_k|/√(1 - |λ|²),  (λ̄·M₁ - I)·u = -β₁·β̄_k/ν - λ̄·m·ν,
//
// and the leading block solves the same equation for M₁ with β₁ ← λ·β₁ - (β_k/ν)·(M₁·u + m·ν);
// where β_k = 0 the state is unreachable: u = 0 and β₁ stays. β_k/ν = √(1 - |λ|²)·β_k/|β_k|
// stays bounded however small β_k is. With several columns (Hammarling 1982, the case of a B
// of several columns; SLICOT's SB03OD), a Householder reflection of the columns first makes
// row k of β zero but in the last column (β·βᴴ unchanged): the last column then takes that
// step, and the others pass to the leading block as they are.
//
// A triangular M takes its states last first. A diagonal M couples them only through β, so
// any state can go next: the one whose remaining Gramian has the largest diagonal entry,
// ‖β_k‖²/(1 - |λ_k|²), with the other state of its pair of T (pair[k] marks a pair's first
// state) right after it, as in a Cholesky factorisation with complete pivoting (LAPACK's
// dpstrf; Demmel 1999 for the Cauchy-like Gramians of diagonal M); and β_i's update is then
// β_i·(λ - λ_i)/(1 - λ̄·λ_i), which this closed form computes without the cancellation between
// clustered poles that λ·β_i - (β_k/ν)·λ_i·u_i suffers. Both keep the factor accurate entry
// by entry, so the Hankel singular values of clustered poles keep their digits far below
// √ε·σ₁ (gen_mimo_hsv_exact.py's cases). O(n³/3 + n²·cols) complex operations, O(n²·cols)
// for diagonal M.
func hammarling(m []complex128, n int, gap []float64, diag bool, pair []bool, beta []complex128, cols int) (u []complex128, order []int) {
	u = make([]complex128, n*n)
	order = make([]int, 0, n)
	b := append([]complex128(nil), beta...)
	x := make([]complex128, n)
	acc := make([]complex128, n)
	den := make([]complex128, n)
	live := make([]int, n) // the states not yet eliminated, ascending
	for i := range live {
		live[i] = i
	}
	l := cols - 1 // the column that takes the step
	partner := -1 // the other state of a pair whose first went last
	for len(live) > 0 {
		p := len(live) - 1
		if diag {
			p = pivot(b, gap, live, partner, cols)
		}
		k := live[p]
		live = slices.Delete(live, p, p+1)
		order = append(order, k)
		partner = -1
		if k+1 < n && pair[k] {
			partner = k + 1
		} else if k > 0 && pair[k-1] {
			partner = k - 1
		}
		if cols > 1 {
			reflectRow(b, k, live, cols)
		}
		ab := cmplx.Abs(b[k*cols+l])
		if ab == 0 {
			continue
		}
		sg := math.Sqrt(gap[k])
		nu := ab / sg
		u[k*n+k] = complex(nu, 0)
		ph := b[k*cols+l] / complex(ab, 0)
		lam := m[k*n+k]
		cl := cmplx.Conj(lam)
		f := complex(sg, 0) * cmplx.Conj(ph) // β̄_k/ν
		cnu := complex(nu, 0)
		for q := len(live) - 1; q >= 0; q-- {
			i := live[q]
			row := m[i*n : i*n+n]
			var s complex128
			if !diag {
				for j := i + 1; j < k; j++ {
					s += row[j] * x[j]
				}
			}
			acc[i] = s
			rhs := -b[i*cols+l]*f - cl*row[k]*cnu
			den[i] = oneMinus(cl, row[i])
			x[i] = (cl*s - rhs) / den[i]
		}
		g := complex(sg, 0) * ph // β_k/ν
		for _, i := range live {
			if diag {
				b[i*cols+l] *= (lam - m[i*n+i]) / den[i]
			} else {
				w := m[i*n+i]*x[i] + acc[i] + m[i*n+k]*cnu
				b[i*cols+l] = lam*b[i*cols+l] - g*w
			}
			u[i*n+k] = x[i]
		}
	}
	return u, order
}

// pivot returns the position in live of the state a diagonal M eliminates next: partner
// where it is one (≥ 0), else the largest ‖β_k‖²/gap_k. The squares may overflow or
// underflow for gains far from 1; the choice is then a worse order, not a wrong factor.
func pivot(b []complex128, gap []float64, live []int, partner, cols int) int {
	best, at := -1.0, len(live)-1
	for q, i := range live {
		if i == partner {
			return q
		}
		s := 0.0
		for _, z := range b[i*cols : (i+1)*cols] {
			s += real(z)*real(z) + imag(z)*imag(z)
		}
		if s /= gap[i]; s > best {
			best, at = s, q
		}
	}
	return at
}

// reflectRow multiplies the rows k and live of b (cols columns, row-major) on the right by
// the Householder reflection G = I - τ·v·vᴴ (v_last = 1, τ ∈ [1, 2], so nothing overflows)
// that takes row k to [0, …, 0, α], |α| its norm; the other rows are done with.
func reflectRow(b []complex128, k int, live []int, cols int) {
	r := b[k*cols : (k+1)*cols]
	l := cols - 1
	mu, off := 0.0, 0.0
	for j, z := range r {
		mu = math.Hypot(mu, cmplx.Abs(z))
		if j < l {
			off = math.Max(off, cmplx.Abs(z))
		}
	}
	if off == 0 {
		return
	}
	// G·x = -e^{iθ}·μ·e_last for the column x = rᴴ, θ = arg x_last: v = (x + e^{iθ}·μ·e_last)
	// scaled to v_last = 1, and r·G = (G·x)ᴴ since G is Hermitian.
	al := cmplx.Abs(r[l])
	ph := complex(1, 0) // e^{iθ}
	if al > 0 {
		ph = cmplx.Conj(r[l]) / complex(al, 0)
	}
	v := make([]complex128, cols)
	den := ph * complex(al+mu, 0)
	for j := 0; j < l; j++ {
		v[j] = cmplx.Conj(r[j]) / den
	}
	v[l] = 1
	tau := complex((mu+al)/mu, 0)
	for _, i := range live {
		row := b[i*cols : (i+1)*cols]
		var s complex128
		for j, z := range row {
			s += z * v[j]
		}
		s *= tau
		for j := range row {
			row[j] -= s * cmplx.Conj(v[j])
		}
	}
	for j := 0; j < l; j++ {
		r[j] = 0
	}
	r[l] = -cmplx.Conj(ph) * complex(mu, 0)
}

// oneMinus is 1 - a·b with the real part compensated as in oneMinusDet, so that it keeps its
// relative accuracy near the unit circle (1 - |p|² for |p| = 0.9999 is 2e-4); the imaginary
// part is formed plainly so that it is exactly 0 for b = ā.
func oneMinus(a, b complex128) complex128 {
	// Re(a·b) = Re a·Re b − Im a·Im b, the determinant of [[Re a, Im a], [Im b, Re b]].
	return complex(oneMinusDet(real(a), imag(a), imag(b), real(b)), -(real(a)*imag(b) + imag(a)*real(b)))
}

// oneMinusDet is 1 - (a·d - b·c) with the products and sums compensated (exact products by
// fused multiply-adds, Knuth's two-sum), accurate to a few ulps of the result however close
// the determinant is to 1.
func oneMinusDet(a, b, c, d float64) float64 {
	p1, e1 := twoProd(a, d)
	p2, e2 := twoProd(b, c)
	s, e3 := twoSum(1, -p1)
	s, e4 := twoSum(s, p2)
	return s + (e3 + e4 - e1 + e2)
}

// twoProd returns p = fl(a·b) and its rounding error: a·b = p + e exactly.
func twoProd(a, b float64) (p, e float64) {
	p = a * b
	return p, math.FMA(a, b, -p)
}

// twoSum returns s = fl(a + b) and its rounding error: a + b = s + e exactly.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}
