package analysis

import (
	"cmp"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
)

// MIMOCondLimit is the largest condition number of the eigenvectors that diagonalise a reduced
// layer's A which ReduceMIMO accepts. The diagonal form is A's eigenvalues and the basis
// changed by those eigenvectors, so its responses carry an error of about κ·ε relative
// (backward stability of the eigensolver): at 1e8 that is 2e-8, the rounding floor of
// filters.MIMODiff (√ε), so that what a distillation reports is the truncation's error and not
// the diagonalisation's. Beyond it the reduced A is too close to a defective matrix for the
// form of a layer (one mode per eigenvalue).
const MIMOCondLimit = 1e8

// MIMOReduction is the result of ReduceMIMO.
type MIMOReduction struct {
	System    *filters.MIMO // the reduced layer, D unchanged
	Order     int           // real states kept (a conjugate pair of modes is two, a real mode one)
	HSV       []float64     // Hankel singular values of the input's real realisation, largest first
	Bound     float64       // 2·Σ_{i>Order} σᵢ: bound on the H∞ norm of the error
	Condition float64       // condition number of the eigenvectors that diagonalise the reduced A
	// Rank is the numerical rank of the Hankel operator, the most states a reduction keeps:
	// the number of σᵢ above n·ε·σ₁ for n real states (ReduceMIMO).
	Rank int
}

// Shortfall says why the reduction kept fewer than the asked real states, with the
// numbers: the numerical rank (Rank) and where it stops, or the modes a truncation to a
// higher order needed beyond the ⌈asked/2⌉ available; "" where it kept them all.
func (r *MIMOReduction) Shortfall(asked int) string {
	if r.Order >= asked {
		return ""
	}
	var why []string
	if w := rankShortfall(r.HSV, r.Rank, asked, true); w != "" {
		why = append(why, w)
	} else if n := len(r.HSV); r.Rank < asked {
		why = append(why, fmt.Sprintf("the layer has %s", plural.Count(n, "real state")))
	}
	if top := min(asked, r.Rank); r.Order < top {
		orders := fmt.Sprintf("order %d", top)
		if top > r.Order+1 {
			orders = fmt.Sprintf("orders %d to %d", r.Order+1, top)
		}
		why = append(why, fmt.Sprintf("the truncations to %s have real poles, each a mode for one state, and need more than the %s of order %d", orders, plural.Count((asked+1)/2, "mode"), asked))
	}
	return strings.Join(why, "; ")
}

// rankShortfall says why a balanced truncation asked for asked real states keeps at most
// rank of them, for the Hankel singular values hsv (largest first) of a system of len(hsv)
// real states (mimo: several inputs and outputs): all the values 0, or the values from
// σ_{rank+1} on at or below the numerical rank's threshold n·ε·σ₁ (sqrtBalanced.keep), with
// the bound 2Σσ on what they would change; "" where rank ≥ asked or rank is every state.
// MIMOReduction.Shortfall and Reduced.Shortfall share it.
func rankShortfall(hsv []float64, rank, asked int, mimo bool) string {
	n := len(hsv)
	if rank >= asked || rank >= n {
		return ""
	}
	transfer, reach := "transfer function", "reached by the input and seen at the output"
	if mimo {
		transfer, reach = "transfer matrix", "reached by the inputs and seen by the outputs"
	}
	if rank == 0 { // rank < n, so there are values, all 0
		return "its Hankel singular values are all 0: no state is both " + reach
	}
	ofSigma1 := func(v float64) string {
		if v == 0 {
			return "0"
		}
		return fmt.Sprintf("%.2g·σ₁", v/hsv[0])
	}
	first := ofSigma1(hsv[rank])
	tail := 0.0
	for _, v := range hsv[rank:] {
		tail += 2 * v
	}
	values, states := fmt.Sprintf("values from σ%d = %s on are", rank+1, first), "the states they would add change"
	if rank+1 == n {
		values = fmt.Sprintf("value σ%d = %s is", n, first)
	}
	if min(asked, n) == rank+1 {
		states = "the state it would add changes"
	}
	return fmt.Sprintf("its Hankel singular %s at or below the numerical rank's threshold n·ε·σ₁ = %.2g·σ₁ (n = %d real states): %s the %s by at most 2Σσ = %s, less than its rounding",
		values, float64(n)*eps, n, states, transfer, ofSigma1(tail))
}

// ReduceMIMO reduces a MIMO layer to order real states (at most) in at most ⌈order/2⌉ modes
// by square-root balanced truncation of its real realisation and returns the result as a
// layer of modes again. A layer's cost is its modes (each a complex state), and a real pole
// takes a mode for one real state: where the truncation's poles include real ones, fewer
// states are kept, until the modes fit (an LRU layer asked for order 64 has d_hidden 32 or
// less, not 33).
//
// The real realisation has the state [Re xₖ, Im xₖ] for each mode, A = blockdiag of
// [[Re pₖ, −Im pₖ], [Im pₖ, Re pₖ]], B = [Re B; Im B], C = [Re C, −Im C] (one state [Re xₖ]
// for a real pole whose B row or C column is real: its Im xₖ is uncontrollable or
// unobservable). Its A is block diagonal, its own real Schur form, and the Cholesky factors of
// its Gramians come from Hammarling's method with B and Cᵀ of several columns, the states in
// the order of complete pivoting, P and Q never formed (cschur.realFactor, as for
// BalancedTruncation); the square-root method (Laub et al. 1987) then gives the Hankel
// singular values and the projections, with the same numerical rank (σᵢ ≤ n·ε·σ₁ are not
// kept: MIMOReduction.Rank, and Shortfall says so). The cut is not for the truncation's
// accuracy, which holds beyond it: on the layers of gen_mimo_hsv_exact.py, truncations
// keeping states down to 2.3e-21·σ₁ (a balancing of condition √(σ₁/σₖ) ≈ 2e10) are within
// 5e-15 to 1.6e-14 of the layer (filters.MIMODiff, sample by sample), near the circle
// 5e-13; but the truncations at the cut are as close (6.9e-15, 7.4e-15; 7.0e-13): the states
// below it change the responses by less than rounding, and a σ there cannot be told from a
// 0, whose Σ^{-1/2} is infinite (two modes at one pole of a one-input, one-output layer have
// σ₃ = 0). The values keep their digits far below √ε·σ₁: 1e-10 relative or better down to
// 2e-21·σ₁ on clustered poles near the circle (gen_mimo_hsv_exact.py), where the closed-form
// Gramians factored before gave 0 below 1e-13·σ₁ and 1e-3 relative at 6e-8·σ₁. Truncating
// (A, B, C) keeps the Markov sequence C·Aᵗ·B, t ≥ 0, which is the layer's h[t] − D·δ[t] in
// its state-updated-first convention, so D is kept as it is, and the error
// transfer matrix, z·C(zI − A)⁻¹B − z·C_r(zI − A_r)⁻¹B_r, has the continuous-time bound
// 2·Σ_{i>r} σᵢ on its H∞ norm (Al-Saggaf and Franklin 1987). The reduced A is then
// diagonalised (a real eigenvalue is a real mode, a conjugate pair the mode with Im λ > 0 and its
// C column doubled: c·λᵗ·b + c̄·λ̄ᵗ·b̄ = 2·Re(c·λᵗ·b)); each mode's B row and C column are
// scaled to equal norms, and the modes are sorted by decreasing modulus.
//
// It refuses order < 1 and layers of more than MaxCubicOrder/2 modes (MaxCubicOrder real
// states) with ErrInvalid (the cost is O(n²·min(n, inputs + outputs)) for the factors, n the
// real states, and O(n³) for the SVD of Rᵀ·S and the rest, which dominates: 0.37 s at 256
// modes and 128 inputs and outputs with the Gramians formed (BenchmarkReduceMIMO), 1.2 to 1.4
// times that with Hammarling's factors, whose Rᵀ·S keeps its small singular values for the
// SVD to resolve, and up to 1.9 times with 2 to 4 times as many inputs and outputs as modes
// (CPU time, the same run); 1.6 s for an LRU layer of that size with poles of radius
// 0.9–0.999, whose SVD takes longer, on a shared 2-core machine), a pole on or outside the
// unit circle (|p| ≥ 1 − filters.MarginalTol, where the Gramians do not exist) with an
// *UnstableError naming the mode and its radius, Hankel singular values beyond float64's range
// with a *NonFiniteError, and a reduced A whose eigenvector basis has a condition number above
// MIMOCondLimit with a *filters.ConditionError (ErrIllConditioned).
func ReduceMIMO(m *filters.MIMO, order int) (*MIMOReduction, error) {
	if order < 1 {
		return nil, fmt.Errorf("%w: reduction to order %d: want at least 1", filters.ErrInvalid, order)
	}
	b, err := balanceMIMO(m)
	if err != nil {
		return nil, err
	}
	return b.reduce(order)
}

// ReduceMIMOWithin reduces m, as ReduceMIMO does and then refitted (RefitMIMO), to the
// smallest order up to maxOrder at which every output's relative error over length samples
// (filters.MIMODiff) is at most tol,
// found by bisection over the orders (the errors fall with the order but for rounding), and
// returns it with those errors; reached is false, and the reduction is to maxOrder, where
// maxOrder does not reach tol. The layer is balanced once; each order tried costs a
// truncation, an eigendecomposition of its A and a MIMODiff.
func ReduceMIMOWithin(m *filters.MIMO, tol float64, length, maxOrder int) (red *MIMOReduction, errs []float64, reached bool, err error) {
	if maxOrder < 1 || !(tol > 0) {
		return nil, nil, false, fmt.Errorf("%w: reduction within relative error %g up to order %d: want a positive error and order", filters.ErrInvalid, tol, maxOrder)
	}
	b, err := balanceMIMO(m)
	if err != nil {
		return nil, nil, false, err
	}
	try := func(order int) (*MIMOReduction, []float64, bool, error) {
		r, err := b.reduce(order)
		if err != nil {
			return nil, nil, false, err
		}
		var e []float64
		if r.System, e, err = RefitMIMO(m, r.System, length); err != nil {
			return nil, nil, false, err
		}
		return r, e, !(slices.Max(e) > tol), nil
	}
	hi := maxOrder // an order asked: the modes' budget may keep fewer states (reduce)
	red, errs, ok, err := try(hi)
	if err != nil || !ok {
		return red, errs, false, err
	}
	lo := 0 // orders ≤ lo do not reach tol; hi does
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		r, e, ok, err := try(mid)
		if err != nil {
			return nil, nil, false, err
		}
		if ok {
			hi, red, errs = mid, r, e
		} else {
			lo = mid
		}
	}
	return red, errs, true, nil
}

// mimoBalancing is a MIMO layer's real realisation and its square-root balancing, from which
// reductions to any order are taken.
type mimoBalancing struct {
	m   *filters.MIMO
	rl  *realLayer
	sb  sqrtBalanced
	hsv []float64 // the Hankel singular values, nb·nc·σ
}

func balanceMIMO(m *filters.MIMO) (*mimoBalancing, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	n := len(m.Poles)
	if n > MaxCubicOrder/2 {
		return nil, fmt.Errorf("%w: a MIMO layer of %d modes: balanced truncation is refused above %d modes (O(n³) in its %d real states)",
			filters.ErrInvalid, n, MaxCubicOrder/2, 2*n)
	}
	for k, p := range m.Poles {
		if !filters.Stable(cmplx.Abs(p)) {
			return nil, fmt.Errorf("mode %d: %w", k, &UnstableError{What: "balanced truncation of a MIMO layer", Poles: []complex128{p}})
		}
	}
	b := &mimoBalancing{m: m, rl: newRealLayer(m), hsv: []float64{}}
	if b.rl.order() == 0 {
		return b, nil
	}
	cs, ct := b.rl.schur()
	var err error
	if b.sb, err = sqrtBalance(cs, b.rl.b.RawMatrix().Data, m.Inputs, ct, m.Outputs, true); err != nil {
		return nil, err
	}
	if b.hsv, err = b.sb.values(); err != nil {
		return nil, err
	}
	return b, nil
}

// reduce truncates the balanced layer to at most order real states in at most ⌈order/2⌉
// modes (ReduceMIMO).
func (b *mimoBalancing) reduce(order int) (*MIMOReduction, error) {
	m, rl, sb := b.m, b.rl, b.sb
	out := &MIMOReduction{HSV: b.hsv, Condition: 1, Rank: sb.keep(len(sb.sigma))}
	bound := func(r int) (float64, error) { return inRange("the error bound", sb.tail(r), sb.nb, sb.nc) }
	budget := (order + 1) / 2
	for r := sb.keep(order); r > 0 && rl.order() > 0; r-- {
		tl, tr := sb.projections(r) // they balance (A, B/nb, C/nc); T_l·B and C·T_r keep the scales
		var ar, br, cr mat.Dense
		ar.Mul(tl, rl.mulA(tr))
		br.Mul(tl, rl.b)
		cr.Mul(rl.c, tr)
		sys, cond, err := modalLayer(&ar, &br, &cr, m)
		if err != nil {
			return nil, err
		}
		if len(sys.Poles) <= budget {
			out.Order, out.Condition, out.System = r, cond, sys
			out.Bound, err = bound(r)
			return out, err
		}
	}
	if rl.order() > 0 {
		var err error
		if out.Bound, err = bound(0); err != nil {
			return nil, err
		}
	}
	out.System = &filters.MIMO{Poles: []complex128{}, B: []complex128{}, C: []complex128{}, D: slices.Clone(m.D), Inputs: m.Inputs, Outputs: m.Outputs}
	return out, nil
}

// realLayer is the real realisation of a MIMO layer: mode k's states are re[k] and, where it
// has one, im[k] (−1 otherwise).
type realLayer struct {
	poles  []complex128
	re, im []int
	n      int        // real states
	b, c   *mat.Dense // order × inputs, outputs × order
}

func (r *realLayer) order() int { return r.n }

func newRealLayer(m *filters.MIMO) *realLayer {
	n, in, out := len(m.Poles), m.Inputs, m.Outputs
	r := &realLayer{poles: m.Poles, re: make([]int, n), im: make([]int, n)}
	s := 0
	for k, p := range m.Poles {
		r.re[k], r.im[k] = s, -1
		s++
		if imag(p) != 0 || (!realRow(m.B[k*in:(k+1)*in]) && !realCol(m.C, n, k)) {
			r.im[k] = s
			s++
		}
	}
	r.n = s
	r.b = mat.NewDense(max(s, 1), in, nil)
	r.c = mat.NewDense(out, max(s, 1), nil)
	if s == 0 {
		r.b, r.c = &mat.Dense{}, &mat.Dense{}
		return r
	}
	for k := range m.Poles {
		for i := 0; i < in; i++ {
			v := m.B[k*in+i]
			r.b.Set(r.re[k], i, real(v))
			if r.im[k] >= 0 {
				r.b.Set(r.im[k], i, imag(v))
			}
		}
		for o := 0; o < out; o++ {
			v := m.C[o*n+k]
			r.c.Set(o, r.re[k], real(v))
			if r.im[k] >= 0 {
				r.c.Set(o, r.im[k], -imag(v))
			}
		}
	}
	return r
}

func realRow(v []complex128) bool {
	for _, z := range v {
		if imag(z) != 0 {
			return false
		}
	}
	return true
}

func realCol(c []complex128, n, k int) bool {
	for i := k; i < len(c); i += n {
		if imag(c[i]) != 0 {
			return false
		}
	}
	return true
}

// schur returns the real realisation's A in complex Schur form, which it is in real Schur
// form already (block diagonal, a rotation block per pair of states), and Cᵀ (n × outputs,
// row-major).
func (r *realLayer) schur() (*cschur, []float64) {
	n := r.order()
	t := mat.NewDense(n, n, nil)
	for k, p := range r.poles {
		t.Set(r.re[k], r.re[k], real(p))
		if r.im[k] >= 0 {
			t.Set(r.re[k], r.im[k], -imag(p))
			t.Set(r.im[k], r.re[k], imag(p))
			t.Set(r.im[k], r.im[k], real(p))
		}
	}
	out, _ := r.c.Dims()
	ct := make([]float64, n*out)
	for o := 0; o < out; o++ {
		for i := 0; i < n; i++ {
			ct[i*out+o] = r.c.At(o, i)
		}
	}
	return complexSchur(t, true), ct
}

// mulA returns A·x for the block-diagonal real A: Re x' = Re p·Re x − Im p·Im x,
// Im x' = Im p·Re x + Re p·Im x.
func (r *realLayer) mulA(x *mat.Dense) *mat.Dense {
	s, c := x.Dims()
	y := mat.NewDense(s, c, nil)
	for k, p := range r.poles {
		a, b := real(p), imag(p)
		for j := 0; j < c; j++ {
			xr := x.At(r.re[k], j)
			if r.im[k] < 0 {
				y.Set(r.re[k], j, a*xr)
				continue
			}
			xi := x.At(r.im[k], j)
			y.Set(r.re[k], j, a*xr-b*xi)
			y.Set(r.im[k], j, b*xr+a*xi)
		}
	}
	return y
}

// modalLayer diagonalises the real system (A, B, C) with D = m.D into a MIMO layer. With
// unit eigenvectors v = vr + i·vi, the real basis W of columns √2·vr, √2·vi per pair (and v per
// real eigenvalue) is V times a block-unitary matrix, so κ₂(W) = κ₂(V); the pair's B row is
// (X_q − i·X_{q+1})/√2 with X = W⁻¹B and its C column (Y_q + i·Y_{q+1})/√2 with Y = C·W, which
// the layer's real part doubles.
func modalLayer(a, b, c *mat.Dense, m *filters.MIMO) (*filters.MIMO, float64, error) {
	r, _ := a.Dims()
	in, out := m.Inputs, m.Outputs
	var eig mat.Eigen
	if !eig.Factorize(a, mat.EigenRight) {
		return nil, math.Inf(1), &filters.ConditionError{What: "the reduced A (the QR iteration did not converge)", Condition: math.Inf(1), Limit: MIMOCondLimit, Kind: filters.ErrIllConditioned}
	}
	vals := eig.Values(nil)
	var vecs mat.CDense
	eig.VectorsTo(&vecs)
	w := mat.NewDense(r, r, nil)
	var poles []complex128
	var first []int // the first column of each mode in w
	col := 0
	for j, l := range vals {
		if imag(l) < 0 {
			continue
		}
		nv := 0.0
		for i := 0; i < r; i++ {
			nv = math.Hypot(nv, cmplx.Abs(vecs.At(i, j)))
		}
		poles, first = append(poles, l), append(first, col)
		if imag(l) == 0 {
			for i := 0; i < r; i++ {
				w.Set(i, col, real(vecs.At(i, j))/nv)
			}
			col++
			continue
		}
		for i := 0; i < r; i++ {
			v := vecs.At(i, j) / complex(nv, 0)
			w.Set(i, col, math.Sqrt2*real(v))
			w.Set(i, col+1, math.Sqrt2*imag(v))
		}
		col += 2
	}
	if col != r {
		// The eigensolver returns conjugate pairs together; anything else is a failure of it.
		return nil, math.Inf(1), &filters.ConditionError{What: "the reduced A (eigenvalues not in conjugate pairs)", Condition: math.Inf(1), Limit: MIMOCondLimit, Kind: filters.ErrIllConditioned}
	}
	cond := mat.Cond(w, 2)
	if math.IsNaN(cond) || cond > MIMOCondLimit {
		return nil, cond, &filters.ConditionError{What: fmt.Sprintf("the eigenvectors of the reduced A (order %d)", r), Condition: cond, Limit: MIMOCondLimit, Kind: filters.ErrIllConditioned}
	}
	var x, y mat.Dense
	if err := x.Solve(w, b); err != nil {
		return nil, cond, &filters.ConditionError{What: fmt.Sprintf("the eigenvectors of the reduced A (order %d)", r), Condition: math.Inf(1), Limit: MIMOCondLimit, Kind: filters.ErrIllConditioned}
	}
	y.Mul(c, w)
	type mode struct {
		p    complex128
		b, c []complex128
	}
	modes := make([]mode, len(poles))
	for k, l := range poles {
		md := mode{p: l, b: make([]complex128, in), c: make([]complex128, out)}
		q := first[k]
		for i := 0; i < in; i++ {
			if imag(l) == 0 {
				md.b[i] = complex(x.At(q, i), 0)
			} else {
				md.b[i] = complex(x.At(q, i), -x.At(q+1, i)) / math.Sqrt2
			}
		}
		for o := 0; o < out; o++ {
			if imag(l) == 0 {
				md.c[o] = complex(y.At(o, q), 0)
			} else {
				md.c[o] = complex(y.At(o, q), y.At(o, q+1)) * math.Sqrt2
			}
		}
		// Equal norms of B row and C column: the products are unchanged and neither side
		// carries the scale of the other.
		nb, nc := normC(md.b), normC(md.c)
		if nb > 0 && nc > 0 {
			s := complex(math.Sqrt(nc/nb), 0)
			for i := range md.b {
				md.b[i] *= s
			}
			for o := range md.c {
				md.c[o] /= s
			}
		}
		modes[k] = md
	}
	slices.SortStableFunc(modes, func(u, v mode) int {
		return cmp.Compare(cmplx.Abs(v.p), cmplx.Abs(u.p))
	})
	nm := len(modes)
	ps := make([]complex128, nm)
	bs := make([]complex128, nm*in)
	cs := make([]complex128, out*nm)
	for k, md := range modes {
		ps[k] = md.p
		copy(bs[k*in:], md.b)
		for o := 0; o < out; o++ {
			cs[o*nm+k] = md.c[o]
		}
	}
	sys, err := filters.NewMIMO(ps, bs, cs, slices.Clone(m.D), in, out)
	if err != nil {
		return nil, cond, fmt.Errorf("%w: the reduced layer is not finite: %v", filters.ErrIllConditioned, err)
	}
	return sys, cond, nil
}

func normC(v []complex128) float64 {
	s := 0.0
	for _, z := range v {
		s = math.Hypot(s, cmplx.Abs(z))
	}
	return s
}
