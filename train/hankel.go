package train

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/internal/fft"
	"github.com/ssmlab/ssmlab/internal/vec"
)

// hankelOp applies the m×m Hankel matrix H[i][j] = c[i+j] (c has 2m-1 entries) by FFT:
// (Hx)[i] = Σⱼ c[i+j]·x[j] is entry i+m-1 of the linear convolution of c with x reversed,
// which a circular convolution of length N ≥ 2m-1 leaves unaliased at those entries. A
// product costs two real FFTs instead of m² multiply-adds.
type hankelOp struct {
	m    int
	f    *fft.Real
	c    []complex128 // the spectrum of c
	x    []float64
	spec []complex128
}

func newHankelOp(c []float64, m int) *hankelOp {
	n := 4
	for n < 2*m-1 {
		n *= 2
	}
	op := &hankelOp{m: m, f: fft.NewReal(n), x: make([]float64, n), spec: make([]complex128, n/2+1)}
	copy(op.x, c[:2*m-1])
	op.c = op.f.Coefficients(nil, op.x)
	return op
}

// apply writes Hx into dst (length m).
func (op *hankelOp) apply(dst, x []float64) {
	m := op.m
	clear(op.x)
	for j, v := range x {
		op.x[m-1-j] = v
	}
	op.f.Coefficients(op.spec, op.x)
	for k := range op.spec {
		op.spec[k] *= op.c[k]
	}
	op.f.Sequence(op.x, op.spec)
	inv := 1 / float64(len(op.x))
	for i := range dst {
		dst[i] = op.x[i+m-1] * inv
	}
}

// hankelLanczosTol is the residual ‖Hv - λv‖, relative to the largest |λ|, at which a Ritz
// pair counts as converged: ERA resolves singular values down to ~1e-13·σ₁ (below that it
// drops them), so the vectors must be accurate to about that level for the deep states of a
// near-exact realisation (Hyena kernels reach 1e-10 relative error).
const hankelLanczosTol = 1e-14

// hankelTops gives the r eigenvalues of largest magnitude of the symmetric m×m Hankel matrix
// H[i][j] = c[i+j], in decreasing |λ|, and their unit eigenvectors (top), for several r. A
// scalar sequence's Hankel matrix is symmetric, so these are its singular triplets up to
// signs. For a few pairs, Lanczos (lanczosHankelTop) costs a fraction of a full
// eigendecomposition; for many, it needs about m steps anyway and the dense solver is faster.
// The r share one Lanczos run: the run's steps do not depend on r (only where it stops
// does), so the answer at r, taken at the step where a run for r alone would stop
// (lanczosRun.top), is that run's to the bit, and a ladder's rungs of orders 4 … 64 cost the
// run of order 64 instead of five runs.
type hankelTops struct {
	c   []float64
	m   int
	run *lanczosRun // made at the first r Lanczos answers
}

func newHankelTops(c []float64, m int) *hankelTops { return &hankelTops{c: c, m: m} }

// top returns the r leading eigenpairs.
func (h *hankelTops) top(r int) ([]float64, [][]float64, error) {
	r = min(r, h.m)
	if 4*r > h.m {
		return denseHankelTop(h.c, h.m, r)
	}
	if h.run == nil {
		h.run = newLanczosRun(newHankelOp(h.c, h.m).apply, h.m)
	}
	return h.run.top(r)
}

// release hands the run's vectors back (lanczosRun.release); h must not be used after.
func (h *hankelTops) release() {
	if h.run != nil {
		h.run.release()
		h.run = nil
	}
}

// denseHankelTop is hankelTops.top by a full symmetric eigendecomposition.
func denseHankelTop(c []float64, m, r int) ([]float64, [][]float64, error) {
	h := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			h.SetSym(i, j, c[i+j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(h, true) {
		return nil, nil, fmt.Errorf("ERA: the eigendecomposition of the Hankel matrix did not converge")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(vals[idx[a]]) > math.Abs(vals[idx[b]]) })
	lambda, q := make([]float64, r), make([][]float64, r)
	for k, i := range idx[:r] {
		lambda[k] = vals[i]
		q[k] = mat.Col(nil, i, &vecs)
	}
	return lambda, q, nil
}

// lanczosHankelTop is hankelTops.top by a Lanczos run of its own with full
// reorthogonalisation (classical Gram–Schmidt, twice), which converges to both ends of the
// spectrum first, exactly where the largest |λ| lie; it stops once the wanted Ritz pairs
// meet hankelLanczosTol, and at m steps it is exact. With the FFT product, k steps cost
// O(k·m log m + k²·m) instead of the O(m³) of a full eigendecomposition: ERA at n = 64 on
// the 511×511 Hankel matrix of a 1024-sample kernel takes 3–8 ms instead of ~150 ms.
func lanczosHankelTop(c []float64, m, r int) ([]float64, [][]float64, error) {
	return lanczosTop(newHankelOp(c, m).apply, m, r)
}

// lanczosRun is a Lanczos run with full reorthogonalisation (classical Gram–Schmidt, twice
// where needed) on a symmetric m×m operator: the vectors so far, and the tridiagonal matrix's
// diagonal alpha and off-diagonal beta.
type lanczosRun struct {
	apply       func(dst, x []float64)
	m           int
	qs          [][]float64
	alpha, beta []float64
	q, w, coef  []float64
	bs          []float64 // β after each step (beta holds 0 in its place after a restart)
	ended       bool      // an invariant subspace with no fresh vector left: no more steps
	// slabs hold the basis vectors, lanczosSlab at a time, from lanczosSlabs (release).
	slabs [][]float64
	free  []float64
}

// lanczosSlab is how many basis vectors a slab holds.
const lanczosSlab = 32

// lanczosSlabs keeps, per length m, the slabs of finished runs: a job runs several per
// channel (ERA, the FIR realisation, the report's bounds, each warm start), of up to a few
// hundred vectors each, and allocating every vector afresh was an eighth of what a job
// allocated.
var lanczosSlabs keyedPools[int] // by m, pools of *[]float64

// vector returns an m-vector for the basis (its entries whatever they were: every caller
// writes all of them).
func (l *lanczosRun) vector() []float64 {
	if len(l.free) < l.m {
		var slab []float64
		if p, _ := lanczosSlabs.pool(l.m).Get().(*[]float64); p != nil {
			slab = *p
		} else {
			slab = make([]float64, lanczosSlab*l.m)
		}
		l.slabs = append(l.slabs, slab)
		l.free = slab
	}
	v := l.free[:l.m:l.m]
	l.free = l.free[l.m:]
	return v
}

// release hands the run's slabs to the next run of its length; the basis must not be used
// after.
func (l *lanczosRun) release() {
	pool := lanczosSlabs.pool(l.m)
	for i := range l.slabs {
		pool.Put(&l.slabs[i])
	}
	l.slabs, l.free, l.qs = nil, nil, nil
}

func newLanczosRun(apply func(dst, x []float64), m int) *lanczosRun {
	// A fixed, dense start vector (deterministic; not orthogonal to any structured subspace
	// the way e₁ or the ones vector can be).
	q := make([]float64, m)
	for i := range q {
		q[i] = math.Sin(float64(i+1)*0.7548776662466927) + 0.5
	}
	floats.Scale(1/floats.Norm(q, 2), q)
	return &lanczosRun{apply: apply, m: m, q: q, w: make([]float64, m), coef: make([]float64, m),
		alpha: make([]float64, 0, m), beta: make([]float64, 0, m)}
}

// step adds the current vector to the basis and returns β, the norm of the next direction
// (kept in w until next or restart).
func (l *lanczosRun) step() float64 {
	l.qs = append(l.qs, l.q)
	w := l.w
	l.apply(w, l.q)
	l.alpha = append(l.alpha, vec.Dot(w, l.q))
	// Full reorthogonalisation against every Lanczos vector so far: the three-term
	// recurrence alone loses orthogonality as soon as a Ritz pair converges. A second pass
	// only where the first removed most of w (Daniel, Gragg, Kaufman and Stewart's
	// criterion: then rounding left a component along the old vectors).
	before := floats.Norm(w, 2)
	after := before
	for pass := 0; pass < 2; pass++ {
		for j, v := range l.qs {
			l.coef[j] = vec.Dot(w, v)
		}
		for j, v := range l.qs {
			vec.Axpy(-l.coef[j], v, w)
		}
		if after = floats.Norm(w, 2); after > 0.7*before {
			break
		}
		before = after
	}
	l.bs = append(l.bs, after)
	return after
}

// ensure runs the steps up to k (k ≤ m), continuing after the last one as a run does: from
// w/β, or from a fresh vector after an invariant subspace (restart); false where no step k
// can be made (the space is exhausted).
func (l *lanczosRun) ensure(k int) bool {
	for len(l.qs) < k && !l.ended {
		if n := len(l.bs); n > 0 {
			if b := l.bs[n-1]; !l.invariant(b) {
				l.next(b)
			} else if !l.restart() {
				l.ended = true
				break
			}
		}
		l.step()
	}
	return len(l.qs) >= k
}

// next continues with w/b, b the β step returned.
func (l *lanczosRun) next(b float64) {
	l.beta = append(l.beta, b)
	l.q = l.vector()
	floats.ScaleTo(l.q, 1/b, l.w)
}

// invariant reports whether β = b ends an invariant subspace.
func (l *lanczosRun) invariant(b float64) bool { return b <= 1e-15*math.Abs(l.alpha[0]) }

// restart continues, after an invariant subspace, from a fresh vector orthogonal to it (β =
// 0); false when none is left.
func (l *lanczosRun) restart() bool {
	w, k := l.w, len(l.qs)
	for i := range w {
		w[i] = math.Cos(float64(i+k)*1.3247179572447460) + 0.25
	}
	for pass := 0; pass < 2; pass++ {
		for _, v := range l.qs {
			vec.Axpy(-vec.Dot(w, v), v, w)
		}
	}
	nw := floats.Norm(w, 2)
	if nw == 0 {
		return false
	}
	l.beta = append(l.beta, 0)
	l.q = l.vector()
	floats.ScaleTo(l.q, 1/nw, w)
	return true
}

// lanczosTop is lanczosHankelTop for any symmetric m×m operator apply (dst = Mx).
func lanczosTop(apply func(dst, x []float64), m, r int) ([]float64, [][]float64, error) {
	run := newLanczosRun(apply, m)
	defer run.release()
	return run.top(r)
}

// top returns the r Ritz pairs of largest |θ| at the first step where they meet
// hankelLanczosTol (or the space is exhausted), running the steps up to it as needed; the
// steps are the run's own whatever r is asked, and everything at step k (the tridiagonal
// matrix, β, the vectors) is a prefix of what the run holds later, so r may be asked in any
// order and gets the same answer as a run for r alone.
func (run *lanczosRun) top(r int) ([]float64, [][]float64, error) {
	m := run.m
	impl := gonum.Implementation{}
	var theta, prevLead []float64
	var z [][]float64
	check := r + max(16, r/4)
	k := 1
	for ; k <= m && run.ensure(k); k++ {
		b := run.bs[k-1]
		alpha, beta := run.alpha[:k], run.beta[:k-1]
		if k == check || k == m || run.invariant(b) {
			final := k == m || run.invariant(b)
			if !final {
				// The Ritz values alone first (Dsterf, O(k²)); the residuals, from the last
				// entries of the tridiagonal matrix's eigenvectors (ritzLast, O(k²) too), only
				// once the wanted values have settled to 1e-13 since the last check (converged
				// pairs' values settle first: they move by the square of the residual); the
				// eigenvectors (tridiagTop) once, when the residuals meet the tolerance.
				vals := append([]float64(nil), alpha...)
				impl.Dsterf(k, vals, append([]float64(nil), beta...))
				lead := topAbs(vals, min(r, k))
				settled := prevLead != nil && len(prevLead) == len(lead)
				for i := range lead {
					if settled && math.Abs(lead[i]-prevLead[i]) > 1e-13*math.Abs(lead[0]) {
						settled = false
					}
				}
				prevLead = lead
				if !settled || k < r || !ritzConverged(alpha, beta, b, r) {
					check = min(m, k+max(16, k/4))
					continue
				}
			}
			var ok bool
			theta, z, ok = tridiagTop(alpha, beta, r)
			if !ok {
				return nil, nil, errLanczos
			}
			if !final || k == m {
				break
			}
			// An invariant subspace: done if it holds the wanted pairs, else continue from a
			// fresh vector orthogonal to it (ensure, at the next step; none left: done).
			if ritzConverged(alpha, beta, b, r) || !run.ensure(k+1) {
				break
			}
			check = k + 16
		}
	}
	r = min(r, len(theta))
	vecs := make([][]float64, r)
	for i := range vecs {
		v := make([]float64, m)
		for j, q := range run.qs[:len(z[i])] {
			vec.Axpy(z[i][j], q, v)
		}
		vecs[i] = v
	}
	return theta[:r], vecs, nil
}

// errLanczos is the failure of the Lanczos matrix's eigendecomposition.
var errLanczos = errors.New("ERA: the eigendecomposition of the Lanczos matrix did not converge")

// ritzConverged reports whether the r Ritz pairs of largest |θ| of the tridiagonal matrix
// (alpha, beta) of a run, β = b after its last step, meet hankelLanczosTol (converged).
func ritzConverged(alpha, beta []float64, b float64, r int) bool {
	theta, last, ok := ritzLast(alpha, beta)
	return ok && converged(theta, last, b, r)
}

// converged reports whether the r Ritz pairs of largest |θ|, with the last entries of their
// eigenvectors of the tridiagonal matrix (ritzLast) and β = b after the run's last step,
// meet hankelLanczosTol: a Ritz pair's residual is β·|last entry|.
func converged(theta, last []float64, b float64, r int) bool {
	if len(theta) < r {
		return false
	}
	idx := make([]int, len(theta))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return math.Abs(theta[idx[i]]) > math.Abs(theta[idx[j]]) })
	top := math.Abs(theta[idx[0]])
	for _, i := range idx[:r] {
		if b*math.Abs(last[i]) > hankelLanczosTol*top {
			return false
		}
	}
	return true
}

// ritzLast returns the eigenvalues of the symmetric tridiagonal matrix with diagonal d and
// off-diagonal e (len(d) − 1 entries) and the last entries of their unit eigenvectors, in
// the same (unspecified) order: the implicit QL iteration (EISPACK's tql2, with its splitting
// test) with its rotations applied to the last row of the eigenvector matrix only (as Golub
// and Welsch do for the first row), O(n²) where the whole matrix costs O(n³). ok is false if
// an eigenvalue takes more than 60 iterations.
func ritzLast(d, e []float64) (theta, last []float64, ok bool) {
	n := len(d)
	d = append([]float64(nil), d...)
	off := make([]float64, n)
	copy(off, e)
	z := make([]float64, n)
	if n == 0 {
		return d, z, true
	}
	z[n-1] = 1
	// An off-diagonal entry below ε·‖T‖ splits the matrix (EISPACK's test): eigenvalues are
	// found to ε‖T‖, absolute, which is what the callers need of the leading ones. T is
	// scaled to norm about 1, so that √(f² + g²) needs no guard against overflow.
	norm := 0.0
	for i := range d {
		norm = math.Max(norm, math.Abs(d[i])+math.Abs(off[i]))
	}
	if norm == 0 {
		return d, z, true
	}
	floats.Scale(1/norm, d)
	floats.Scale(1/norm, off)
	defer floats.Scale(norm, d)
	for l := 0; l < n; l++ {
		for iter := 0; ; iter++ {
			m := l
			for ; m < n-1; m++ {
				if math.Abs(off[m]) <= 0x1p-53 {
					break
				}
			}
			if m == l {
				break
			}
			if iter == 60 {
				return nil, nil, false
			}
			g := (d[l+1] - d[l]) / (2 * off[l])
			r := math.Sqrt(g*g + 1)
			g = d[m] - d[l] + off[l]/(g+math.Copysign(r, g))
			s, c, p := 1.0, 1.0, 0.0
			underflow := false
			for i := m - 1; i >= l; i-- {
				f, b := s*off[i], c*off[i]
				r = math.Sqrt(f*f + g*g)
				off[i+1] = r
				if r == 0 {
					// Underflow: split here and start over.
					d[i+1] -= p
					off[m] = 0
					underflow = true
					break
				}
				s, c = f/r, g/r
				g = d[i+1] - p
				r = (d[i]-g)*s + 2*c*b
				p = s * r
				d[i+1] = g + p
				g = c*r - b
				f = z[i+1]
				z[i+1] = s*z[i] + c*f
				z[i] = c*z[i] - s*f
			}
			if underflow {
				continue
			}
			d[l] -= p
			off[l] = g
			off[m] = 0
		}
	}
	return d, z, true
}

// topAbs returns the r values of d of largest magnitude, by decreasing magnitude.
func topAbs(d []float64, r int) []float64 {
	s := append([]float64(nil), d...)
	sort.Slice(s, func(i, j int) bool { return math.Abs(s[i]) > math.Abs(s[j]) })
	return s[:r]
}

// tridiagEigen returns the r eigenvalues of largest magnitude of the symmetric tridiagonal
// matrix with diagonal alpha and off-diagonal beta, by decreasing magnitude, and their unit
// eigenvectors (LAPACK's Dsteqr).
func tridiagEigen(alpha, beta []float64, r int) ([]float64, [][]float64, bool) {
	n := len(alpha)
	d := append([]float64(nil), alpha...)
	e := append([]float64(nil), beta...)
	z := make([]float64, n*n)
	if !(gonum.Implementation{}).Dsteqr(lapack.EVTridiag, n, d, e, z, n, make([]float64, max(1, 2*n-2))) {
		return nil, nil, false
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return math.Abs(d[idx[i]]) > math.Abs(d[idx[j]]) })
	r = min(r, n)
	vals, vecs := make([]float64, r), make([][]float64, r)
	for k, i := range idx[:r] {
		vals[k] = d[i]
		vecs[k] = make([]float64, n)
		for j := 0; j < n; j++ {
			vecs[k][j] = z[j*n+i]
		}
	}
	return vals, vecs, true
}

// tridiagTop is tridiagEigen by inverse iteration (tridiagInverse), which costs O(k·r + r²·k)
// in place of Dsteqr's O(k³) (a Lanczos run of k = 156 steps at r = 64 spent more in Dsteqr
// than in its reorthogonalisation), or by Dsteqr where that does not converge.
func tridiagTop(alpha, beta []float64, r int) ([]float64, [][]float64, bool) {
	if vals, vecs, ok := tridiagInverse(alpha, beta, r); ok {
		return vals, vecs, true
	}
	return tridiagEigen(alpha, beta, r)
}

// tridiagInverse returns what tridiagEigen does: the eigenvalues by Dsterf and, for each
// wanted one, its eigenvector by inverse iteration (LAPACK's dstein, with every vector
// orthogonalised against those before it, twice, rather than only within clusters). ok is
// false where Dsterf fails or a vector's residual ‖Tz − θz‖ stays above tridiagResidual·‖T‖.
func tridiagInverse(alpha, beta []float64, r int) ([]float64, [][]float64, bool) {
	n := len(alpha)
	r = min(r, n)
	vals := append([]float64(nil), alpha...)
	if !(gonum.Implementation{}).Dsterf(n, vals, append([]float64(nil), beta...)) {
		return nil, nil, false
	}
	sort.SliceStable(vals, func(i, j int) bool { return math.Abs(vals[i]) > math.Abs(vals[j]) })
	vals = vals[:r]
	norm := tridiagNorm1(alpha, beta)
	if norm == 0 {
		return nil, nil, false
	}
	lu := newTridiagLU(n)
	vecs := make([][]float64, r)
	res := make([]float64, n)
	for k, theta := range vals {
		lu.factor(alpha, beta, theta, 0x1p-52*norm)
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Sin(float64(i+1)*0.7548776662466927+float64(k)*0.5698402909980532) + 0.5
		}
		// Dstein's test: the solve's growth shows the shift is an eigenvalue to rounding; one
		// more iteration after it, at most five.
		grown := false
		for it := 0; it < 5; it++ {
			lu.solve(x)
			for range 2 {
				for _, v := range vecs[:k] {
					floats.AddScaled(x, -floats.Dot(x, v), v)
				}
			}
			g := floats.Norm(x, 2)
			if !(g > 0) || math.IsInf(g, 0) {
				return nil, nil, false
			}
			floats.Scale(1/g, x)
			if grown {
				break
			}
			grown = g >= math.Sqrt(0.1/float64(n))/(0x1p-52*norm)
		}
		// ‖Tx − θx‖
		for i := range x {
			s := (alpha[i] - theta) * x[i]
			if i > 0 {
				s += beta[i-1] * x[i-1]
			}
			if i < n-1 {
				s += beta[i] * x[i+1]
			}
			res[i] = s
		}
		if !(floats.Norm(res, 2) <= tridiagResidual*norm) {
			return nil, nil, false
		}
		vecs[k] = x
	}
	return vals, vecs, true
}

// tridiagResidual is the residual ‖Tz − θz‖, relative to ‖T‖₁, above which tridiagInverse
// fails: inverse iteration meets about n·ε.
const tridiagResidual = 1e-12

// tridiagLU is the LU factorisation with partial pivoting of a shifted symmetric
// tridiagonal matrix T − σI (LAPACK's dgttrf: U has two superdiagonals), for dgtts2's solve.
type tridiagLU struct {
	d, dl, du, du2 []float64
	swap           []bool
}

func newTridiagLU(n int) *tridiagLU {
	return &tridiagLU{d: make([]float64, n), dl: make([]float64, max(n-1, 0)), du: make([]float64, max(n-1, 0)),
		du2: make([]float64, max(n-2, 0)), swap: make([]bool, max(n-1, 0))}
}

// factor factorises T − σI, T with diagonal alpha and off-diagonal beta, with zero pivots
// replaced by tiny (inverse iteration's perturbation of an exact eigenvalue).
func (f *tridiagLU) factor(alpha, beta []float64, sigma, tiny float64) {
	n := len(alpha)
	for i := range f.d {
		f.d[i] = alpha[i] - sigma
	}
	copy(f.dl, beta)
	copy(f.du, beta)
	clear(f.du2)
	for i := 0; i < n-1; i++ {
		if math.Abs(f.d[i]) >= math.Abs(f.dl[i]) {
			f.swap[i] = false
			if f.d[i] == 0 {
				f.d[i] = tiny
			}
			l := f.dl[i] / f.d[i]
			f.dl[i] = l
			f.d[i+1] -= l * f.du[i]
			continue
		}
		f.swap[i] = true
		l := f.d[i] / f.dl[i]
		f.d[i], f.dl[i] = f.dl[i], l
		t := f.du[i]
		f.du[i] = f.d[i+1]
		f.d[i+1] = t - l*f.d[i+1]
		if i < n-2 {
			f.du2[i] = f.du[i+1]
			f.du[i+1] = -l * f.du[i+1]
		}
	}
	if n > 0 && f.d[n-1] == 0 {
		f.d[n-1] = tiny
	}
}

// solve overwrites b with (T − σI)⁻¹b.
func (f *tridiagLU) solve(b []float64) {
	n := len(b)
	for i := 0; i < n-1; i++ {
		if f.swap[i] {
			b[i], b[i+1] = b[i+1], b[i]-f.dl[i]*b[i+1]
		} else {
			b[i+1] -= f.dl[i] * b[i]
		}
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		if i < n-1 {
			s -= f.du[i] * b[i+1]
		}
		if i < n-2 {
			s -= f.du2[i] * b[i+2]
		}
		b[i] = s / f.d[i]
	}
}

// tridiagNorm1 is ‖T‖₁ of the symmetric tridiagonal matrix with diagonal alpha and
// off-diagonal beta.
func tridiagNorm1(alpha, beta []float64) float64 {
	norm := 0.0
	for i := range alpha {
		s := math.Abs(alpha[i])
		if i > 0 {
			s += math.Abs(beta[i-1])
		}
		if i < len(alpha)-1 {
			s += math.Abs(beta[i])
		}
		norm = math.Max(norm, s)
	}
	return norm
}
