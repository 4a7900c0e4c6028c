package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
)

// H2 returns the H2 norm ‖H‖₂ = (Σ_{t≥0} h[t]²)^{1/2} = (D² + C·P·Cᵀ)^{1/2}, with P the
// controllability Gramian (A·P·Aᵀ - P + B·Bᵀ = 0). A diagonal filter uses the closed form
// Σᵢⱼ rᵢ·conj(rⱼ)/(1 - λᵢ·conj(λⱼ)) (the Gramian of the modal coordinates), O(n²); the other
// forms take P's Cholesky factor U in Schur coordinates (Hammarling's method, O(n³); O(n²) for
// modal forms) and C·P·Cᵀ = ‖Uᴴ·C‖². B and C (the residues) are scaled to unit norm first and
// the scales multiplied back at the end, so no gain inside float64's range overflows or
// underflows on the way; a norm beyond that range is a *NonFiniteError (index -1). A result
// that the rounding of a Schur form moves by more than filters.MaxRelError is an
// *AccuracyError. The norm exists only for stable filters: otherwise the error is an
// *UnstableError naming the poles on or outside the unit circle.
func H2(f filters.Filter) (float64, error) {
	if d, ok := f.(*filters.Diagonal); ok {
		return diagonalH2(d)
	}
	if err := checkCubic("the H2 norm", adviceH2, f); err != nil {
		return 0, err
	}
	sys, err := schurOf(f)
	if err != nil {
		return 0, err
	}
	if off := sys.unstablePoles(); len(off) > 0 {
		return 0, &UnstableError{What: "H2 norm", Poles: ownPoles(f, off)}
	}
	h, part, cs, u, err := sys.h2()
	if err != nil || sys.src == nil || part == 0 {
		return h, err
	}
	// The Schur form rounded A: screen with the first-order bound on that rounding's effect,
	// |δ(C·P·Cᵀ)| = 2|tr(Q·δA·P·Aᵀ)| ≤ 2ε·‖A‖·‖P‖·‖Q‖ (Frobenius norms, ‖δA‖ ≈ ε‖A‖, for unit B
	// and C), and measure it where the bound is not negligible.
	r := cs.realFactor(scaledCopy(sys.c, 1/floats.Norm(sys.c, 2)), 1, true)
	nu := 0.0
	for _, v := range u {
		nu += real(v)*real(v) + imag(v)*imag(v)
	}
	if 2*eps*mat.Norm(sys.t, 2)*nu*sq(mat.Norm(r, 2))/sq(part) < h2ScreenTol {
		return h, nil
	}
	alt, err := sys.perturbed()
	if err != nil {
		return 0, err
	}
	if len(alt.unstablePoles()) > 0 {
		// A pole within rounding of the stability limit crosses it.
		return 0, &AccuracyError{What: "the H2 norm", Rel: 1, Result: h}
	}
	h2, _, _, _, err := alt.h2()
	if err != nil {
		return 0, err
	}
	if e := roundingSafety * math.Abs(h2-h) / h; e > filters.MaxRelError {
		return 0, &AccuracyError{What: "the H2 norm", Rel: e, Result: h}
	}
	return h, nil
}

// h2 returns the H2 norm of the stable s, and for unit B and C the norm of the strictly
// proper part, the complex Schur form and P's factor U (0 and nil for order 0 or B or C zero).
func (s *schurSys) h2() (h, part float64, cs *cschur, u []complex128, err error) {
	nb, nc := floats.Norm(s.b, 2), floats.Norm(s.c, 2)
	if s.order() == 0 || nb == 0 || nc == 0 {
		return math.Abs(s.d), 0, nil, nil, nil
	}
	cs = complexSchur(s.t, s.blockDiag)
	u = cs.ctrlFactor(scaledCopy(s.b, 1/nb), 1)
	gamma := cs.zh(scaledCopy(s.c, 1/nc), 1)
	n := s.order()
	// ‖Uᴴ·γ‖ (U triangular in its order of elimination).
	sum := 0.0
	for j := 0; j < n; j++ {
		var v complex128
		for i := 0; i < n; i++ {
			v += cmplx.Conj(u[i*n+j]) * gamma[i]
		}
		sum += real(v)*real(v) + imag(v)*imag(v)
	}
	part = math.Sqrt(sum)
	if h, err = withOffset(s.d, part, nb, nc); err != nil {
		return 0, 0, nil, nil, err
	}
	return h, part, cs, u, nil
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
			s += d.Residues[i] / complex(m, 0) * cmplx.Conj(d.Residues[j]/complex(m, 0)) / oneMinus(li, cmplx.Conj(lj))
		}
	}
	return withOffset(d.H0, math.Sqrt(math.Max(real(s), 0)), m, 1)
}

// scaledCopy returns a·v.
func scaledCopy(v []float64, a float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = a * x
	}
	return out
}

func sq(x float64) float64 { return x * x }

// The rounding of a Schur form: a result whose screen (a first-order estimate of the
// rounding's effect, relative) is below its tolerance is taken as it is; otherwise the result
// is computed again on a perturbed A (schurSys.perturbed) and roundingSafety times the change
// is its estimated error. Against mpmath on Jordan blocks, companion matrices of repeated
// poles, Butterworth denominators and random systems, the H2 screen (a bound) was never below
// the measured error and the Hankel singular values' (an estimate) at most 7× below, so the
// tolerances leave two and four orders of magnitude to filters.MaxRelError; one random
// direction measured at least 1/15 of the error there, so roundingSafety is 10.
const (
	h2ScreenTol    = 1e-8
	screenTol      = 1e-10
	roundingSafety = 10
)

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

// HankelSV returns the Hankel singular values by the square-root method: the Cholesky
// factors P = S·Sᵀ and Q = R·Rᵀ of the stable part's Gramians come from Hammarling's method in
// Schur coordinates (block by block for modal forms), for B and C scaled to unit norm, and σ
// are the singular values of Rᵀ·S times the scales; neither P·Q nor P itself is formed, so σ
// far below √ε·σ₁ keep their digits. A filter with poles on or outside the unit circle is
// first split additively into stable and unstable parts (an ordered Schur form and a
// Sylvester equation); the unstable poles are returned in Unstable. Values the rounding of a
// Schur form moves by more than filters.MaxRelError·σ₁ are an *AccuracyError; values beyond
// float64's range a *NonFiniteError.
func HankelSV(f filters.Filter) (*HSV, error) {
	if err := checkCubic("the Hankel singular values", adviceGramian, f); err != nil {
		return nil, err
	}
	b, err := balance(f, false)
	if err != nil {
		return nil, err
	}
	v, err := b.values()
	if b.spread > filters.MaxRelError {
		ae := &AccuracyError{What: "the Hankel singular values", Rel: b.spread, OfLargest: true}
		if err == nil {
			ae.Result = &HSV{Values: v, Unstable: b.unstable}
		}
		return nil, ae
	}
	if err != nil {
		return nil, err
	}
	return &HSV{Values: v, Unstable: b.unstable}, nil
}

// balanced is the square-root balancing of a filter's stable part.
type balanced struct {
	stable, rest *schurSys
	unstable     []complex128
	sqrtBalanced
	// spread estimates the error of sigma relative to sigma[0] from the rounding of a Schur
	// form: 0 where T holds the filter's own numbers.
	spread float64
}

// values returns the Hankel singular values nb·nc·σ̂ᵢ, or a *NonFiniteError where one beyond
// rounding (σ̂ᵢ > n·ε·σ̂₁) lies outside float64's range.
func (b *sqrtBalanced) values() ([]float64, error) {
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
// P = S·Sᵀ and Q = R·Rᵀ of the Gramians of (A, B/nb, C/nc) and the SVD Rᵀ·S = U·Σ·Vᵀ, whose
// singular values times nb·nc are the Hankel singular values. BalancedTruncation and
// ReduceMIMO share it.
type sqrtBalanced struct {
	sigma  []float64
	u, v   *mat.Dense // Rᵀ·S = U·Σ·Vᵀ (nil when only the values were asked for)
	r, s   *mat.Dense // Q = R·Rᵀ, P = S·Sᵀ
	nb, nc float64    // the Frobenius norms of B and C
}

// sqrtBalance balances (T, B, C), T of order n ≥ 1 in complex Schur form cs, B n×in and Cᵀ
// n×out (row-major): Hammarling's factors (cschur.realFactor) of the Gramians of B and C scaled
// to unit norm, so that no gain inside float64's range overflows or underflows on the way,
// and the SVD of Rᵀ·S, with the singular vectors when vectors is set.
func sqrtBalance(cs *cschur, b []float64, in int, ct []float64, out int, vectors bool) (sqrtBalanced, error) {
	n := cs.n
	nb, nc := floats.Norm(b, 2), floats.Norm(ct, 2)
	if nb == 0 || nc == 0 {
		// No input or no output reaches the states: every σ is 0.
		sb := sqrtBalanced{sigma: make([]float64, n), s: mat.NewDense(n, n, nil), r: mat.NewDense(n, n, nil), nb: nb, nc: nc}
		if vectors {
			sb.u, sb.v = identity(n), identity(n)
		}
		return sb, nil
	}
	s := cs.realFactor(scaledCopy(b, 1/nb), in, false)
	r := cs.realFactor(scaledCopy(ct, 1/nc), out, true)
	sb, err := factorBalance(s, r, vectors)
	sb.nb, sb.nc = nb, nc
	return sb, err
}

// factorBalance takes the SVD of Rᵀ·S for the Gramian factors s and r, with the singular
// vectors when vectors is set.
func factorBalance(s, r *mat.Dense, vectors bool) (sqrtBalanced, error) {
	out := sqrtBalanced{s: s, r: r}
	var rs mat.Dense
	rs.Mul(out.r.T(), out.s)
	kind := mat.SVDNone
	if vectors {
		kind = mat.SVDFull
	}
	var svd mat.SVD
	if !svd.Factorize(&rs, kind) {
		return out, fmt.Errorf("%w: the SVD of the Gramian factors did not converge", filters.ErrIllConditioned)
	}
	out.sigma = svd.Values(nil)
	if vectors {
		out.u, out.v = &mat.Dense{}, &mat.Dense{}
		svd.UTo(out.u)
		svd.VTo(out.v)
	}
	return out, nil
}

// keep returns how many states truncation to order r keeps: at most r, and no state whose σᵢ
// is at or below the numerical rank's threshold n·eps·σ₁ (neither controllable nor observable
// to working accuracy: the states beyond it change the response by less than rounding, and
// a σ there may be a 0, whose Σ^{-1/2} is infinite; ReduceMIMO gives the measurements).
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

// balance balances f's stable part, with the singular vectors when vectors is set; where T
// comes from a Schur decomposition that rounded A, it estimates what that rounding did to the
// Hankel singular values (spread).
func balance(f filters.Filter, vectors bool) (*balanced, error) {
	sys, err := schurOf(f)
	if err != nil {
		return nil, err
	}
	b, err := balanceSchur(sys, vectors)
	if err != nil {
		return nil, err
	}
	b.unstable = ownPoles(f, b.unstable)
	if sys.src == nil || len(b.sigma) == 0 || b.sigma[0] == 0 {
		return b, nil
	}
	// Screen: a rounding δA of size ε‖A‖ moves σ by about ε·‖A‖·‖S‖·‖R‖/(1 - ρ²) (the change
	// of the Hankel matrix, summed over the response's length), relative to σ₁.
	gmin := math.Inf(1)
	for _, g := range complexSchur(b.stable.t, b.stable.blockDiag).gap {
		gmin = math.Min(gmin, g)
	}
	b.spread = eps * mat.Norm(b.stable.t, 2) * mat.Norm(b.s, 2) * mat.Norm(b.r, 2) / (b.sigma[0] * gmin)
	if b.spread < screenTol {
		return b, nil
	}
	p, err := sys.perturbed()
	if err != nil {
		return nil, err
	}
	alt, err := balanceSchur(p, false)
	if err != nil {
		return nil, err
	}
	if len(alt.sigma) != len(b.sigma) {
		// A pole within rounding of the stability limit crossed it.
		b.spread = 1
		return b, nil
	}
	ratio := alt.nb / b.nb * (alt.nc / b.nc)
	d := 0.0
	for i, s := range b.sigma {
		d = math.Max(d, math.Abs(alt.sigma[i]*ratio-s))
	}
	b.spread = roundingSafety * d / b.sigma[0]
	return b, nil
}

// balanceSchur balances the stable part of sys for unit B and C.
func balanceSchur(sys *schurSys, vectors bool) (*balanced, error) {
	st, rest, un, err := sys.split()
	if err != nil {
		return nil, err
	}
	out := &balanced{stable: st, rest: rest, unstable: filters.SortRoots(un), sqrtBalanced: sqrtBalanced{sigma: []float64{}}}
	if st.order() == 0 {
		return out, nil
	}
	if out.sqrtBalanced, err = sqrtBalance(complexSchur(st.t, st.blockDiag), st.b, 1, st.c, 1, vectors); err != nil {
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
	// Rank is the numerical rank of the stable part's Hankel operator, the most of its states
	// a truncation keeps: the number of σᵢ above n·ε·σ₁ for its n states.
	Rank int
}

// Shortfall says why the reduction kept fewer than the asked states although the filter has
// more, with the numbers: the numerical rank (Rank) and the first σ it drops against the
// threshold; "" where it kept them all, or every state of the filter.
func (r *Reduced) Shortfall(asked int) string {
	if r.Order >= asked {
		return ""
	}
	return rankShortfall(r.HSV, r.Rank, asked-len(r.Unstable), false)
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
	if err := checkCubic("balanced truncation", adviceGramian, f); err != nil {
		return nil, err
	}
	b, err := balance(f, true)
	if err != nil {
		return nil, err
	}
	out, err := b.truncate(r)
	if b.spread > filters.MaxRelError {
		ae := &AccuracyError{What: "the Hankel singular values that bound its error", Rel: b.spread, OfLargest: true}
		if err == nil {
			ae.Result = out
		}
		return nil, ae
	}
	return out, err
}

// truncate is BalancedTruncation of the balanced b to order r, whatever b.spread.
func (b *balanced) truncate(r int) (*Reduced, error) {
	hsv, err := b.values()
	if err != nil {
		return nil, err
	}
	nu := b.rest.order()
	if r < nu {
		return nil, fmt.Errorf("%w: order %d is below the %s on or outside the unit circle, which balanced truncation keeps: %s there%s",
			filters.ErrInvalid, r, plural.Count(nu, "pole"), describePoles(b.unstable), marginNote(b.unstable))
	}
	rs := b.keep(r - nu)
	// The bound takes each dropped σ as computed plus its estimated error.
	bound := 0.0
	if rs < len(b.sigma) {
		if bound, err = inRange("the error bound", b.tail(rs)+2*float64(len(b.sigma)-rs)*b.spread*b.sigma[0], b.nb, b.nc); err != nil {
			return nil, err
		}
	}
	out := &Reduced{Order: rs + nu, HSV: hsv, Unstable: b.unstable, Bound: bound, Rank: b.keep(len(b.sigma))}
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
	// RelError is the measured ‖h - h_min‖₂/‖h‖₂ over Length samples: the window a
	// conversion's report would compare (filters.CompareBanks: from filters.ReportLength
	// samples until both responses have decayed for good).
	RelError float64 `json:"rel_error"`
	Length   int     `json:"length"`
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
	if err := checkCubic("a minimal realisation", adviceGramian, f); err != nil {
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
	// No work budget: the window holds at most max(MaxReportLength, 2(n + 1)) samples of
	// O(n²) each, and finding it costs at most twice that again.
	rep.RelError, _, rep.Length, _ = filters.CompareBanks(nil, []filters.Filter{d}, []filters.Filter{out}, 0, math.MaxInt)
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
