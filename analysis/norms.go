package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// H2 returns the H2 norm ‖H‖₂ = (Σ_{t≥0} h[t]²)^{1/2} = (D² + C·P·Cᵀ)^{1/2}, with P the
// controllability Gramian (A·P·Aᵀ - P + B·Bᵀ = 0). A modal filter uses the closed form
// Σᵢⱼ rᵢ·conj(rⱼ)/(1 - λᵢ·conj(λⱼ)) (the Gramian of the modal coordinates), O(n²); the other
// forms solve the Stein equation in Schur coordinates (Bartels–Stewart), O(n³). B and C (the
// residues) are scaled to unit norm first and the scales multiplied back at the end, so no
// gain inside float64's range overflows or underflows on the way; a norm beyond that range is
// a *NonFiniteError (index -1). The norm exists only for stable filters: otherwise the error
// is an *UnstableError naming the poles on or outside the unit circle.
func H2(f filters.Filter) (float64, error) {
	if d, ok := f.(*filters.Diagonal); ok {
		return diagonalH2(d)
	}
	if err := checkCubic("the H2 norm", f); err != nil {
		return 0, err
	}
	sys, err := schurOf(f)
	if err != nil {
		return 0, err
	}
	if off := sys.unstablePoles(); len(off) > 0 {
		return 0, &UnstableError{What: "H2 norm", Poles: off}
	}
	n := sys.order()
	nb, nc := floats.Norm(sys.b, 2), floats.Norm(sys.c, 2)
	if n == 0 || nb == 0 || nc == 0 {
		return math.Abs(sys.d), nil
	}
	b := scaledCopy(sys.b, 1/nb)
	w := mat.NewDense(n, n, nil)
	w.Outer(1, mat.NewVecDense(n, b), mat.NewVecDense(n, b))
	p, err := stein(sys.t, w, false, sys.blockDiag)
	if err != nil {
		return 0, err
	}
	cv := mat.NewVecDense(n, scaledCopy(sys.c, 1/nc))
	return withOffset(sys.d, math.Sqrt(math.Max(mat.Inner(cv, p, cv), 0)), nb, nc)
}

// diagonalH2 is the closed form of H2 with the residues scaled by the largest.
func diagonalH2(d *filters.Diagonal) (float64, error) {
	if _, off := Classify(d.Poles); len(off) > 0 {
		return 0, &UnstableError{What: "H2 norm", Poles: filters.SortRoots(off)}
	}
	m := 0.0
	for _, r := range d.Residues {
		m = math.Max(m, cmplx.Abs(r))
	}
	if m == 0 {
		return math.Abs(d.H0), nil
	}
	var s complex128
	for i, li := range d.Poles {
		for j, lj := range d.Poles {
			s += d.Residues[i] / complex(m, 0) * cmplx.Conj(d.Residues[j]/complex(m, 0)) / (1 - li*cmplx.Conj(lj))
		}
	}
	return withOffset(d.H0, math.Sqrt(math.Max(real(s), 0)), m, 1)
}

// withOffset returns the H2 norm (d² + (x·a·b)²)^{1/2}, or a *NonFiniteError where it lies
// outside float64's range. A strictly proper part below the range is negligible next to d ≠ 0.
func withOffset(d, x, a, b float64) (float64, error) {
	v, err := inRange("the H2 norm", x, a, b)
	var nf *NonFiniteError
	if errors.As(err, &nf) && nf.Log10 < 0 && d != 0 {
		return math.Abs(d), nil
	}
	if err != nil {
		return 0, err
	}
	return math.Hypot(d, v), nil
}

// scaledCopy returns a·v.
func scaledCopy(v []float64, a float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = a * x
	}
	return out
}

// unstablePoles returns the eigenvalues of T with |λ| ≥ 1 - filters.MarginalTol, in the
// filters package's order.
func (s *schurSys) unstablePoles() []complex128 {
	var out []complex128
	bl := blocksOf(s.t)
	for k := 0; k+1 < len(bl); k++ {
		l := blockEigen(s.t, bl[k], bl[k+1]-bl[k])
		if !filters.Stable(cmplx.Abs(l)) {
			out = append(out, l)
			if imag(l) != 0 {
				out = append(out, cmplx.Conj(l))
			}
		}
	}
	return filters.SortRoots(out)
}

// HSV holds the Hankel singular values of a filter.
type HSV struct {
	// Values are the Hankel singular values σ₁ ≥ σ₂ ≥ … ≥ 0 of the stable part of the
	// filter, one per stable pole: the square roots of the eigenvalues of P·Q.
	Values []float64
	// Unstable lists the poles on or outside the unit circle (|p| ≥ 1 - filters.MarginalTol),
	// largest modulus first. Their modes have no Hankel singular value (the Gramians diverge);
	// they are separated from the stable part, not dropped: H = H_stable + H_unstable.
	Unstable []complex128
}

// HankelSV returns the Hankel singular values by the square-root method: the Gramians of the
// stable part are solved in Schur coordinates (closed form block by block for modal forms),
// factored as P = S·Sᵀ and Q = R·Rᵀ, and σ are the singular values of Rᵀ·S, which avoids
// forming P·Q. A filter with poles on or outside the unit circle is first split additively
// into stable and unstable parts (an ordered Schur form and a Sylvester equation); the
// unstable poles are returned in Unstable.
func HankelSV(f filters.Filter) (*HSV, error) {
	if err := checkCubic("the Hankel singular values", f); err != nil {
		return nil, err
	}
	b, err := balance(f)
	if err != nil {
		return nil, err
	}
	v, err := b.values()
	if err != nil {
		return nil, err
	}
	return &HSV{Values: v, Unstable: b.unstable}, nil
}

// balanced is the square-root balancing of a filter's stable part (T, B/nb, C/nc): its Hankel
// singular values are nb·nc·sigma.
type balanced struct {
	stable, rest *schurSys
	unstable     []complex128
	nb, nc       float64
	sqrtBalanced
}

// values returns the Hankel singular values nb·nc·σ̂ᵢ, or a *NonFiniteError where one beyond
// rounding (σ̂ᵢ > n·ε·σ̂₁) lies outside float64's range.
func (b *balanced) values() ([]float64, error) {
	out := make([]float64, len(b.sigma))
	for i, s := range b.sigma {
		v, err := inRange(fmt.Sprintf("Hankel singular value σ%d", i+1), s, b.nb, b.nc)
		if err != nil {
			if s > float64(len(b.sigma))*eps*b.sigma[0] {
				return nil, err
			}
			v = 0 // rounding noise below the range
		}
		out[i] = v
	}
	return out, nil
}

// sqrtBalanced is the square-root method on a pair of Gramians (Laub et al. 1987): the factors
// P = S·Sᵀ and Q = R·Rᵀ and the SVD Rᵀ·S = U·Σ·Vᵀ, whose singular values are the Hankel
// singular values. BalancedTruncation and ReduceMIMO share it.
type sqrtBalanced struct {
	sigma []float64
	u, v  *mat.Dense // Rᵀ·S = U·Σ·Vᵀ
	r, s  *mat.Dense // Q = R·Rᵀ, P = S·Sᵀ
}

// sqrtBalance factors the Gramians p and q (symmetric positive semi-definite, n ≥ 1) and
// takes the SVD of Rᵀ·S.
func sqrtBalance(p, q *mat.Dense) (sqrtBalanced, error) {
	for _, g := range []*mat.Dense{p, q} {
		for i := range g.RawMatrix().Rows {
			if err := checkFinite("", g.RawRowView(i)); err != nil {
				return sqrtBalanced{}, &NonFiniteError{What: "a Gramian's entry", Index: -1, Value: math.Inf(1)}
			}
		}
	}
	out := sqrtBalanced{s: psdFactor(p), r: psdFactor(q)}
	var rs mat.Dense
	rs.Mul(out.r.T(), out.s)
	var svd mat.SVD
	if !svd.Factorize(&rs, mat.SVDFull) {
		return out, fmt.Errorf("%w: the SVD of the Gramian factors did not converge", filters.ErrIllConditioned)
	}
	out.sigma = svd.Values(nil)
	out.u, out.v = &mat.Dense{}, &mat.Dense{}
	svd.UTo(out.u)
	svd.VTo(out.v)
	return out, nil
}

// keep returns how many states truncation to order r keeps: at most r, and no state whose σᵢ
// is at or below the numerical rank's threshold n·eps·σ₁ (neither controllable nor observable
// to working accuracy: its Σ^{-1/2} would only scale rounding up).
func (b *sqrtBalanced) keep(r int) int {
	rs := min(r, len(b.sigma))
	for rs > 0 && b.sigma[rs-1] <= float64(len(b.sigma))*eps*b.sigma[0] {
		rs--
	}
	return rs
}

// tail is 2·Σ_{i>rs} σᵢ, the bound on the H∞ norm of the truncation error.
func (b *sqrtBalanced) tail(rs int) float64 {
	t := 0.0
	for _, s := range b.sigma[rs:] {
		t += 2 * s
	}
	return t
}

// projections returns T_l = Σᵣ^{-1/2}·Uᵣᵀ·Rᵀ (rs×n) and T_r = S·Vᵣ·Σᵣ^{-1/2} (n×rs), rs ≥ 1,
// with T_l·T_r = I: the reduced system is (T_l·A·T_r, T_l·B, C·T_r, D).
func (b *sqrtBalanced) projections(rs int) (tl, tr *mat.Dense) {
	n, _ := b.s.Dims()
	tl = mat.NewDense(rs, n, nil)
	tr = mat.NewDense(n, rs, nil)
	tl.Mul(b.u.Slice(0, n, 0, rs).T(), b.r.T())
	tr.Mul(b.s, b.v.Slice(0, n, 0, rs))
	for i := 0; i < rs; i++ {
		w := 1 / math.Sqrt(b.sigma[i])
		for j := 0; j < n; j++ {
			tl.Set(i, j, tl.At(i, j)*w)
			tr.Set(j, i, tr.At(j, i)*w)
		}
	}
	return tl, tr
}

func balance(f filters.Filter) (*balanced, error) {
	sys, err := schurOf(f)
	if err != nil {
		return nil, err
	}
	st, rest, un, err := sys.split()
	if err != nil {
		return nil, err
	}
	out := &balanced{stable: st, rest: rest, unstable: filters.SortRoots(un), sqrtBalanced: sqrtBalanced{sigma: []float64{}}}
	n := st.order()
	out.nb, out.nc = floats.Norm(st.b, 2), floats.Norm(st.c, 2)
	if n == 0 {
		return out, nil
	}
	if out.nb == 0 || out.nc == 0 {
		// No input or no output reaches the stable part: every σ is 0.
		out.sigma = make([]float64, n)
		out.s, out.r = mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
		out.u, out.v = identity(n), identity(n)
		return out, nil
	}
	// The Gramians of unit B and C: their entries are B's and C's squares.
	unit := &schurSys{t: st.t, b: scaledCopy(st.b, 1/out.nb), c: scaledCopy(st.c, 1/out.nc), blockDiag: st.blockDiag}
	p, q, err := unit.gramians()
	if err != nil {
		return nil, err
	}
	if out.sqrtBalanced, err = sqrtBalance(p, q); err != nil {
		return nil, err
	}
	return out, nil
}

func identity(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, 1)
	}
	return m
}

// psdFactor returns S with X = S·Sᵀ for a symmetric positive semi-definite X: the Cholesky
// factorisation with complete pivoting, Pᵀ·X·P = L·Lᵀ, stopped at the first pivot at or below
// n·ε·max Xᵢᵢ (LAPACK's dpstrf), so S = P·L with zero columns beyond that rank. Unlike plain
// Cholesky it accepts the singular Gramians of non-minimal systems, and it costs n³/3 flops
// where the symmetric eigendecomposition it replaces (S = V·Λ^{1/2}) took 13× longer on a
// 512-state Gramian.
func psdFactor(x *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	a := mat.DenseCopyOf(x).RawMatrix()
	piv := make([]int, n)
	_, rank, _ := lapack64.Pstrf(blas64.Symmetric{N: n, Data: a.Data, Stride: a.Stride, Uplo: blas.Lower}, piv, -1, make([]float64, 2*n))
	s := mat.NewDense(n, n, nil)
	for j := 0; j < rank; j++ {
		for i := j; i < n; i++ {
			s.Set(piv[i], j, a.Data[i*a.Stride+j])
		}
	}
	return s
}

// Reduced is the result of BalancedTruncation.
type Reduced struct {
	Filter *filters.Dense // the reduced filter, of order Order
	Order  int
	// HSV are the Hankel singular values of the input's stable part; the first
	// Order - len(Unstable) were kept.
	HSV []float64
	// Unstable lists the input's poles on or outside the unit circle, kept exactly.
	Unstable []complex128
	// Bound = 2·Σ_{i > r} σᵢ bounds the error: max_ω |H(e^{jω}) - H_r(e^{jω})| ≤ Bound (the
	// discrete-time balanced truncation bound, which holds as in continuous time).
	Bound float64
}

// BalancedTruncation returns a realisation of order r (at most) of f by square-root balanced
// truncation of its stable part: with Rᵀ·S = U·Σ·Vᵀ, T_l = Σᵣ^{-1/2}·Uᵣᵀ·Rᵀ and
// T_r = S·Vᵣ·Σᵣ^{-1/2} give (T_l·A·T_r, T_l·B, C·T_r, D), which is stable and balanced.
// The unstable part (poles on or outside the unit circle) is kept exactly, so r must be at
// least its order; the stable part keeps r minus that many states, fewer when its Gramians
// have lower numerical rank (σᵢ ≤ n·eps·σ₁: those states are neither controllable nor
// observable). It panics if r < 0.
func BalancedTruncation(f filters.Filter, r int) (*Reduced, error) {
	if r < 0 {
		panic("analysis: negative order")
	}
	if err := checkCubic("balanced truncation", f); err != nil {
		return nil, err
	}
	b, err := balance(f)
	if err != nil {
		return nil, err
	}
	nu := b.rest.order()
	if r < nu {
		return nil, fmt.Errorf("%w: order %d is below the %d poles on or outside the unit circle, which balanced truncation keeps (%s)",
			filters.ErrInvalid, r, nu, describePoles(b.unstable))
	}
	hsv, err := b.values()
	if err != nil {
		return nil, err
	}
	rs := b.keep(r - nu)
	bound := 0.0
	if rs < len(b.sigma) {
		if bound, err = inRange("the error bound", b.tail(rs), b.nb, b.nc); err != nil {
			return nil, err
		}
	}
	out := &Reduced{Order: rs + nu, HSV: hsv, Unstable: b.unstable, Bound: bound}
	n := rs + nu
	a := mat.NewDense(max(n, 1), max(n, 1), nil)
	bv := make([]float64, n)
	cv := make([]float64, n)
	if rs > 0 {
		ns := b.stable.order()
		tl, tr := b.projections(rs)
		var at, ar mat.Dense
		at.Mul(b.stable.t, tr)
		ar.Mul(tl, &at)
		a.Slice(0, rs, 0, rs).(*mat.Dense).Copy(&ar)
		// T_l and T_r balance (T, B/nb, C/nc); T_l·B = T_l·(B/nb)·nb keeps B's scale.
		mat.NewVecDense(rs, bv[:rs]).MulVec(tl, mat.NewVecDense(ns, b.stable.b))
		mat.NewVecDense(rs, cv[:rs]).MulVec(tr.T(), mat.NewVecDense(ns, b.stable.c))
	}
	if nu > 0 {
		a.Slice(rs, n, rs, n).(*mat.Dense).Copy(b.rest.t)
		copy(bv[rs:], b.rest.b)
		copy(cv[rs:], b.rest.c)
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = mat.Row(nil, i, a)[:n]
	}
	d, err := filters.NewDense(rows, bv, cv, b.stable.d+b.rest.d)
	if err != nil {
		return nil, fmt.Errorf("%w: the reduced realisation is not finite: %v", filters.ErrIllConditioned, err)
	}
	out.Filter = d
	return out, nil
}

// DefaultMinimalTol is the tolerance Minimal uses when given 0: a direction counts as
// uncontrollable (unobservable) when the staircase leaves it coupled by less than 1e-10·‖A‖_F.
const DefaultMinimalTol = 1e-10

// MinimalReport says what Minimal removed and with what tolerance.
type MinimalReport struct {
	Tol            float64 `json:"tol"` // relative to ‖A‖_F
	Order          int     `json:"order"`
	Uncontrollable int     `json:"uncontrollable"` // states removed as uncontrollable
	Unobservable   int     `json:"unobservable"`   // then as unobservable
	// RelError is the measured ‖h - h_min‖₂/‖h‖₂ over filters.ReportLength samples.
	RelError float64 `json:"rel_error"`
}

// Minimal returns a minimal realisation of f: the uncontrollable states are removed, then the
// unobservable ones, each by an orthogonal staircase (for one input, the controller
// Hessenberg form: a Householder reflection maps B to β·e₁ and a Hessenberg reduction that
// keeps e₁ follows, so that the controllable subspace is spanned by the leading states up to
// the first subdiagonal entry with |h_{k+1,k}| ≤ tol·‖A‖_F). tol ≤ 0 means DefaultMinimalTol.
// It works for unstable filters too (no Gramians are needed).
func Minimal(f filters.Filter, tol float64) (*filters.Dense, MinimalReport, error) {
	if tol <= 0 {
		tol = DefaultMinimalTol
	}
	if err := checkCubic("a minimal realisation", f); err != nil {
		return nil, MinimalReport{}, err
	}
	d, ok := f.(*filters.Dense)
	if !ok {
		var err error
		if d, _, err = filters.ToDense(f); err != nil {
			return nil, MinimalReport{}, err
		}
	}
	rep := MinimalReport{Tol: tol}
	n := d.Order()
	if n == 0 {
		return d, rep, nil
	}
	scale := mat.Norm(d.A, 2)
	a1, b1, c1 := staircase(mat.DenseCopyOf(d.A), d.B, d.C, tol*scale)
	rep.Uncontrollable = n - len(b1)
	// Observability: the staircase of the dual (Aᵀ, Cᵀ, Bᵀ), transposed back.
	var a2 *mat.Dense
	var b2, c2 []float64
	if len(b1) > 0 {
		var at *mat.Dense
		at, c2, b2 = staircase(mat.DenseCopyOf(a1.T()), c1, b1, tol*scale)
		if len(c2) > 0 {
			a2 = mat.DenseCopyOf(at.T())
		}
	}
	rep.Unobservable = len(b1) - len(b2)
	rep.Order = len(b2)
	rows := make([][]float64, len(b2))
	for i := range rows {
		rows[i] = mat.Row(nil, i, a2)
	}
	out, err := filters.NewDense(rows, b2, c2, d.D)
	if err != nil {
		return nil, rep, err
	}
	rho, _ := filters.SpectralRadius(d)
	l := filters.ReportLength(rho, d.Order())
	if rep.RelError = filters.RelDiff(d.Impulse(l), out.Impulse(l)); math.IsNaN(rep.RelError) || math.IsInf(rep.RelError, 0) {
		rep.RelError = math.MaxFloat64
	}
	return out, rep, nil
}

// staircase returns the controllable part (A₁, B₁, C₁) of (A, B, C) in controller Hessenberg
// coordinates: QᵀAQ upper Hessenberg, QᵀB = β·e₁, cut at the first subdiagonal entry of
// magnitude ≤ tol.
func staircase(a *mat.Dense, b, c []float64, tol float64) (*mat.Dense, []float64, []float64) {
	n := len(b)
	beta := floats.Norm(b, 2)
	if beta == 0 {
		return nil, []float64{}, []float64{}
	}
	// Householder H = I - 2vvᵀ/vᵀv with H·b = -sign(b₀)·β·e₁.
	v := append([]float64(nil), b...)
	sgn := 1.0
	if v[0] < 0 {
		sgn = -1
	}
	v[0] += sgn * beta
	vv := floats.Dot(v, v)
	house := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x := -2 * v[i] * v[j] / vv
			if i == j {
				x++
			}
			house.Set(i, j, x)
		}
	}
	var ha, hah mat.Dense
	ha.Mul(house, a)
	hah.Mul(&ha, house)
	ct := make([]float64, n)
	mat.NewVecDense(n, ct).MulVec(house.T(), mat.NewVecDense(n, c))
	// Hessenberg reduction; its reflectors act on rows 1…n-1 and keep e₁.
	h, q := filters.Hessenberg(&hah)
	hah = *h
	c2 := make([]float64, n)
	mat.NewVecDense(n, c2).MulVec(q.T(), mat.NewVecDense(n, ct))
	ct = c2
	k := n
	for j := 1; j < n; j++ {
		if math.Abs(hah.At(j, j-1)) <= tol {
			k = j
			break
		}
	}
	a1 := mat.DenseCopyOf(hah.Slice(0, k, 0, k))
	b1 := make([]float64, k)
	b1[0] = -sgn * beta
	return a1, b1, ct[:k]
}
