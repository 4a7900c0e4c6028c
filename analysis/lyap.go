package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// This file holds the linear-algebra kernels of the norms: a state-space system in real Schur
// coordinates, its split into stable and unstable parts, and solvers for the Stein (discrete
// Lyapunov) equation T·X·Tᵀ - X + W = 0 and the Sylvester equation A·X - X·B = C on
// quasi-triangular matrices, in the manner of Bartels and Stewart (1972): one O(n³) Schur
// decomposition, then block back-substitution over the 1×1 and 2×2 diagonal blocks.

// schurSys is (T, B, C, D) with T upper quasi-triangular: 1×1 blocks and 2×2 blocks with
// complex conjugate eigenvalues. blockDiag is set when T has no coupling between blocks (the
// modal forms), which lets every solver work block by block in O(n²).
type schurSys struct {
	t         *mat.Dense // nil for order 0
	b, c      []float64
	d         float64
	blockDiag bool
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
	return &schurSys{t: t, b: b, c: c, d: d.D}, nil
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

// gramians returns the controllability Gramian P (T·P·Tᵀ - P + B·Bᵀ = 0) and the observability
// Gramian Q (Tᵀ·Q·T - Q + Cᵀ·C = 0) of a stable system of order ≥ 1.
func (s *schurSys) gramians() (p, q *mat.Dense, err error) {
	n := s.order()
	w := mat.NewDense(n, n, nil)
	w.Outer(1, mat.NewVecDense(n, s.b), mat.NewVecDense(n, s.b))
	if p, err = stein(s.t, w, false, s.blockDiag); err != nil {
		return nil, nil, err
	}
	w.Outer(1, mat.NewVecDense(n, s.c), mat.NewVecDense(n, s.c))
	if q, err = stein(s.t, w, true, s.blockDiag); err != nil {
		return nil, nil, err
	}
	return p, q, nil
}

// stein solves T·X·Tᵀ - X + W = 0 (trans false) or Tᵀ·X·T - X + W = 0 (trans true) for the
// symmetric X, with T upper quasi-triangular and W symmetric. The transposed equation is the
// plain one for S = J·Tᵀ·J, Y = J·X·J with J the reversal permutation (S is again upper
// quasi-triangular). It fails only when λᵢλⱼ = 1 for two eigenvalues (not for stable T).
func stein(t, w *mat.Dense, trans, blockDiag bool) (*mat.Dense, error) {
	n, _ := w.Dims()
	if trans {
		s := mat.NewDense(n, n, nil)
		wr := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				s.Set(i, j, t.At(n-1-j, n-1-i))
				wr.Set(i, j, w.At(n-1-i, n-1-j))
			}
		}
		y, err := stein(s, wr, false, blockDiag)
		if err != nil {
			return nil, err
		}
		x := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				x.Set(i, j, y.At(n-1-i, n-1-j))
			}
		}
		return x, nil
	}
	bl := blocksOf(t)
	nb := len(bl) - 1
	x := mat.NewDense(n, n, nil)
	tt := t.RawMatrix()
	xr := x.RawMatrix()
	at := func(i, j int) float64 { return tt.Data[i*tt.Stride+j] }
	g := make([]float64, 2*n) // G[k][c] at g[2k+c]
	v := make([]float64, 2*n)
	acc := make([]float64, 2*n)
	for J := nb - 1; J >= 0; J-- {
		j0, j1 := bl[J], bl[J+1]
		q := j1 - j0
		// Symmetry: rows below block J are known, X[k][J] = X[J][k].
		for k := j1; k < n; k++ {
			for c := 0; c < q; c++ {
				xr.Data[k*xr.Stride+j0+c] = xr.Data[(j0+c)*xr.Stride+k]
			}
		}
		if !blockDiag {
			// G = Σ_{l ≥ j1} X[:, l]·T[J, l]ᵀ, all rows.
			for k := 0; k < n; k++ {
				xrow := xr.Data[k*xr.Stride : k*xr.Stride+n]
				for c := 0; c < q; c++ {
					trow := tt.Data[(j0+c)*tt.Stride : (j0+c)*tt.Stride+n]
					s := 0.0
					for l := j1; l < n; l++ {
						s += xrow[l] * trow[l]
					}
					g[2*k+c] = s
				}
			}
			// V = T·G, rows i < j1.
			for i := 0; i < j1; i++ {
				lo := max(i-1, 0)
				trow := tt.Data[i*tt.Stride : i*tt.Stride+n]
				for c := 0; c < q; c++ {
					s := 0.0
					for k := lo; k < n; k++ {
						s += trow[k] * g[2*k+c]
					}
					v[2*i+c] = s
				}
			}
		}
		// Row blocks I = J, J-1, …, 0.
		for I := J; I >= 0; I-- {
			i0, i1 := bl[I], bl[I+1]
			p := i1 - i0
			var rhs [4]float64 // rhs[r + p·c]
			for r := 0; r < p; r++ {
				for c := 0; c < q; c++ {
					rhs[r+p*c] = -w.At(i0+r, j0+c)
					if !blockDiag {
						rhs[r+p*c] -= v[2*(i0+r)+c]
					}
				}
			}
			if !blockDiag {
				// R = Σ_{k ≥ i1} T[I, k]·X[k, J]; rhs -= R·T_JJᵀ.
				for r := 0; r < p; r++ {
					trow := tt.Data[(i0+r)*tt.Stride : (i0+r)*tt.Stride+n]
					for c := 0; c < q; c++ {
						s := 0.0
						for k := i1; k < n; k++ {
							s += trow[k] * xr.Data[k*xr.Stride+j0+c]
						}
						acc[2*r+c] = s
					}
				}
				for r := 0; r < p; r++ {
					for c := 0; c < q; c++ {
						s := 0.0
						for e := 0; e < q; e++ {
							s += acc[2*r+e] * at(j0+c, j0+e)
						}
						rhs[r+p*c] -= s
					}
				}
			}
			// T_II·Y·T_JJᵀ - Y = rhs: coefficient of Y[a][b] in equation (r, c) is
			// T_II[r][a]·T_JJ[c][b] - δ.
			var m [16]float64
			for r := 0; r < p; r++ {
				for c := 0; c < q; c++ {
					row := r + p*c
					for a := 0; a < p; a++ {
						for b := 0; b < q; b++ {
							col := a + p*b
							m[row*4+col] = at(i0+r, i0+a) * at(j0+c, j0+b)
							if row == col {
								m[row*4+col]--
							}
						}
					}
				}
			}
			y, ok := smallSolve(m[:], rhs[:], p*q)
			if !ok {
				return nil, fmt.Errorf("%w: the Stein equation is singular (two poles with λᵢλⱼ = 1)", filters.ErrIllConditioned)
			}
			for r := 0; r < p; r++ {
				for c := 0; c < q; c++ {
					xr.Data[(i0+r)*xr.Stride+j0+c] = y[r+p*c]
				}
			}
		}
	}
	// Symmetrise the rounding.
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s := (x.At(i, j) + x.At(j, i)) / 2
			x.Set(i, j, s)
			x.Set(j, i, s)
		}
	}
	return x, nil
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
