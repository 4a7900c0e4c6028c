package train

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/floats"

	"github.com/ssmlab/ssmlab/internal/underflow"
	"github.com/ssmlab/ssmlab/internal/vec"
)

// The residues of a variable-projection fit: for fixed poles they solve a linear least-squares
// problem. The normal equations (solve, in varpro.go) are cheap; refinement on the true
// residual recovers the digits they lose, and Householder QR decides where it cannot.

// refine makes the residues of solve accurate by iterative refinement on the true residual
// (as polish), from the objective f, and reports whether it converged: a step's decrease at
// most refineContraction of the one before and what it leaves (about its square over that
// one) below refineExcess·f, or the steps together moving f by less than that. It gives up
// after refineSteps steps or at a step that contracts by less than a tenth; the residues are
// then where the best step left them, and QR (exactResidues) decides.
func (v *varpro) refine(f float64) (float64, bool) {
	f0, prev := f, 0.0
	for k := 0; k < refineSteps; k++ {
		g := v.refineStep()
		if !(g <= f) {
			v.undoStep()
			return f, f0-f <= refineExcess*f
		}
		d := f - g
		f = g
		switch {
		case f0-f <= refineExcess*f:
			return f, true
		case k == 0:
		case d <= refineContraction*prev && d*d <= refineExcess*f*prev:
			return f, true
		case d > prev/10:
			return f, false
		}
		prev = d
	}
	return f, false
}

// refineContraction, refineExcess and refineSteps are refine's convergence test and budget:
// a contraction of 1e-3 in the objective's excess per step, an excess left below 1e-10 of
// the objective (Levenberg–Marquardt counts decreases below 1e-6 of it as stalls), at most
// four steps.
const (
	refineContraction = 1e-3
	refineExcess      = 1e-10
	refineSteps       = 4
)

// objective is ½‖e‖², +Inf when not finite.
func (v *varpro) objective() float64 {
	f := floats.Dot(v.e, v.e) / 2
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return math.Inf(1)
	}
	return f
}

// polish refines the residues of the last sse by iterative refinement on the true residual,
// c −= G⁻¹Φᵀ(Φc − y), while that lowers the objective (at most twice): the normal equations
// square Φ's condition, and the correction recovers the digits they lose. It returns the
// final ½‖e‖².
func (v *varpro) polish() float64 {
	v.held = false
	f := v.objective()
	for range 2 {
		g := v.refineStep()
		if !(g < f) {
			v.undoStep()
			break
		}
		f = g
	}
	return f
}

// refineStep moves the residues by one step of iterative refinement on the true residual,
// c −= G⁻¹Φᵀ(Φc − y) (the correction kept in v.rhs), and returns the new ½‖e‖².
func (v *varpro) refineStep() float64 { return v.refineStepWith(v.chol) }

// refineStepWith is refineStep with UᵀU in place of G, U upper triangular (row-major).
func (v *varpro) refineStepWith(u []float64) float64 {
	n := v.s.order()
	v.projectResidual0()
	for i := 0; i < n; i++ {
		v.rhs[i] = v.dot(v.cols[i])
	}
	cholSolve(u, n, v.rhs)
	floats.Sub(v.c, v.rhs)
	v.residual()
	return v.objective()
}

// undoStep takes back the last refineStep.
func (v *varpro) undoStep() {
	floats.Add(v.c, v.rhs)
	v.residual()
}

// exactResidues solves the residue problem of the last sse by Householder QR: the normal
// equations square Φ's condition number, and for poles clustered near z = 1 their ridge and
// rounding cost digits that the QR solution keeps (Hyena kernels at n = 8: 2e-6 by the normal
// equations, 7e-8 by QR). Where L is long against n the QR runs on the reduced problem of
// reducedBasis and, for a final fit (polish), refines. It keeps whichever residues give the
// smaller residual and returns ½‖e‖².
//
// The iterations' evaluations (solve) do not refine: the reduced QR is backward stable, and
// its rounding moves the objective by about 1e-5 of itself (at n = 64 on noise, with the
// three-block reduction this replaced, 51.22968 against the full QR's 51.22922), far below
// what a step changes, while its two refinement steps cost four or five passes over the
// samples (the S4 n = 64 job took 12% less without them); leaving them to the final
// evaluation moved no quality cell's mean by 1% but S4 at n = 64's, whose channels change
// basins with any rounding.
func (v *varpro) exactResidues(polish bool) float64 {
	f, _ := v.qrIfBelow(polish, 1)
	return f
}

// qrIfBelow solves the residue problem of the last sse by QR (qrResidues) and keeps that
// solution where its ½‖e‖² is below ratio times the current one's, else restores the
// current residues and residual; it returns the ½‖e‖² of what it keeps and whether that is
// QR's.
func (v *varpro) qrIfBelow(polish bool, ratio float64) (float64, bool) {
	f := v.objective()
	old := append([]float64(nil), v.c...)
	g, ok := v.qrResidues(polish)
	switch {
	case !ok:
		return f, false
	case g < ratio*f:
		return g, true
	}
	copy(v.c, old)
	v.residual()
	return f, false
}

// qrResidues is exactResidues without the comparison: the QR solution's residues, residual
// and ½‖e‖²; false, with v.c and v.e untouched, where there is no QR solution (no poles, or
// a solve that fails).
func (v *varpro) qrResidues(polish bool) (float64, bool) {
	v.held = false
	n := v.s.order()
	if n == 0 {
		return 0, false
	}
	var x, cols = v.lastQR.x, v.lastQR.cols
	reduced := v.lastQR.reduced
	if !v.lastQR.valid {
		x = make([]float64, n)
		var rhs []float64
		var limit []int
		cols, rhs, limit, reduced = v.reducedBasis()
		if !reduced {
			cols, rhs = v.basisColumns(0, len(v.y), &v.qr), v.y
		}
		if len(v.rdiag) < n {
			v.rdiag = make([]float64, n)
		}
		if !householderSolve(cols, rhs, x, v.rdiag[:n], limit) {
			return 0, false
		}
		v.lastQR = lastQR{valid: true, x: x, cols: cols, reduced: reduced}
	}
	copy(v.c, x)
	v.residual()
	g := v.objective()
	if reduced && polish {
		// The reduced problem's R is Φ's: refinement on the true residual with it as the
		// preconditioner (corrected semi-normal equations) recovers what the reduction's
		// rounding costs, and more (at n = 64 on noise: 51.22968 by the reduced QR, 51.22922
		// by the full one, 51.22901 after two steps).
		if len(v.qrR) < n*n {
			v.qrR = make([]float64, n*n)
		}
		r := v.qrR[:n*n]
		for i := 0; i < n; i++ {
			r[i*n+i] = v.rdiag[i]
			for k := i + 1; k < n; k++ {
				r[i*n+k] = cols[k][i]
			}
		}
		for range exactRefineSteps {
			h := v.refineStepWith(r)
			if !(h < g) {
				v.undoStep()
				break
			}
			g = h
		}
	}
	return g, true
}

// lastQR is qrResidues' solution at the current poles, with the factored columns (R above
// the diagonal, rdiag on it) it leaves in the QR buffers: solve's QR and a final polish ask
// for the same poles' QR twice (the last fit of a rung, every refit of conditionFit), and
// the second needs only its solution and R. setPoles forgets it.
type lastQR struct {
	valid   bool
	x       []float64
	cols    [][]float64
	reduced bool
}

// exactRefineSteps is the most refinement steps exactResidues takes after a reduced QR.
const exactRefineSteps = 2

// basisColumns returns Φ's rows from..to−1 by columns (each contiguous, so the reflections
// run on unit-stride vectors), held in *buf (grown as needed).
func (v *varpro) basisColumns(from, to int, buf *[]float64) [][]float64 {
	n, rows := v.s.order(), to-from
	if len(*buf) < n*rows {
		*buf = make([]float64, n*rows)
	}
	cols := make([][]float64, n)
	for j := range cols {
		cols[j] = (*buf)[j*rows : (j+1)*rows]
	}
	// A pair's two columns (β = 1 and β = i, setPoles) from one sequence of powers.
	for i := 0; i < v.s.pairs; i++ {
		c0, c1 := v.cols[2*i], v.cols[2*i+1]
		re, im := cols[2*i], cols[2*i+1]
		l, pw := v.mu[i], v.power(i, from)
		for t := range re {
			re[t] = 2 * real(c0.beta*pw)
			im[t] = 2 * real(c1.beta*pw)
			pw *= l
			if t%underflow.Every == 0 {
				pw = underflow.Complex(pw, 1)
			}
		}
	}
	for j := 2 * v.s.pairs; j < n; j++ {
		p := v.cols[j].pole
		col, l, pw := cols[j], v.mu[p], v.power(p, from)
		for t := range col {
			col[t] = real(pw)
			pw *= l
			if t%underflow.Every == 0 {
				pw = underflow.Complex(pw, 1)
			}
		}
	}
	return cols
}

// power is λ_p^t, from the pole's logarithm (1 at t = 0, as the columns' recurrences start).
func (v *varpro) power(p, t int) complex128 {
	if t == 0 {
		return 1
	}
	z := cmplx.Exp(complex(float64(t), 0) * v.w[p])
	if p >= v.s.pairs {
		z = complex(real(z), 0) // a real pole's power, whatever rounding leaves in Im
	}
	return z
}

// reducedBasis returns a least-squares problem with the residue problem's solution and
// fewer rows, from Φ's shift structure: row t + s of Φ is row t times M(s), block-diagonal
// (per pair the 2×2 rotation and scaling of λ^s, per real pole λ^s). With K blocks of B rows
// and Φ's first block factored as Q₀R₀, block q is Q₀·R₀M(qB), so ‖Φc − y‖² is, up to a
// constant, Σ_q ‖R₀M(qB)c − (Q₀ᵀy_q)[:n]‖² plus the rows after the last whole block: a
// problem of K·n + (L − K·B) rows in place of L, whose QR is as backward stable as Φ's
// (‖M(s)‖ ≤ 1). Each R₀M(qB) is upper triangular but for a pair's 2×2 block on the diagonal,
// so column j has nonzeros only in the blocks' rows up to j + 1: with the leftover rows first
// and then row i of every block for i = 0, 1, …, they are a prefix of the column, limit[j]
// entries long, and the QR's reflections need touch no more (householderFactor). The first
// block's QR costs about 2Bn² flops and the reduced one's (2/3)Kn³, least at K = √(3L/n): at
// n = 64 and L = 1023, 7 blocks of 146 rows, 2.2 Mflop in place of Φ's own 8 (and of 4 for 3
// blocks reduced without the prefixes). ok is false where the reduction saves nothing or the
// first block is rank-deficient.
func (v *varpro) reducedBasis() (red [][]float64, rhs []float64, limit []int, ok bool) {
	n, m := v.s.order(), len(v.y)
	k := int(math.Round(math.Sqrt(3 * float64(m) / float64(n))))
	if k < 2 || m/k < 2*n {
		return nil, nil, nil, false
	}
	b := m / k
	rem := m - k*b
	rows := k*n + rem
	if len(v.qrs) < n*rows {
		v.qrs = make([]float64, n*rows)
	}
	red = make([][]float64, n)
	for j := range red {
		red[j] = v.qrs[j*rows : (j+1)*rows]
	}
	// The rows after the last whole block as they are, first.
	tail := v.basisColumns(k*b, m, &v.qrb)
	for j, c := range tail {
		copy(red[j][:rem], c)
	}
	first := v.basisColumns(0, b, &v.qrb)
	// diag, uus, rhs, the blocks of y and R₀ (dense, row-major) in one buffer kept between
	// calls: this runs at every evaluation of a fit whose residues need QR.
	need := 2*n + rows + k*b + n*n
	if len(v.qrw) < need {
		v.qrw = make([]float64, need)
	}
	w := v.qrw[:need]
	diag, uus, rhs, blocks, r0 := w[:n], w[n:2*n], w[2*n:2*n+rows], w[2*n+rows:2*n+rows+k*b], w[2*n+rows+k*b:]
	if !householderFactor(first, diag, uus, nil) {
		return nil, nil, nil, false
	}
	copy(rhs[:rem], v.y[k*b:])
	// Q₀ᵀ on every block of y at once, a reflection at a time (householderApply on each).
	copy(blocks, v.y[:k*b])
	for j := 0; j < n; j++ {
		vec.Reflect(first[j][j:], blocks[j:], b, k, uus[j])
	}
	// R₀ is diag on its diagonal and first's leading rows above it.
	clear(r0)
	for j := 0; j < n; j++ {
		r0[j*n+j] = diag[j]
		for i := 0; i < j; i++ {
			r0[i*n+j] = first[j][i]
		}
	}
	// Row i of block q is row rem + i·K + q, so a column's entries for one row of R₀ lie
	// together, one per block. R₀M(qB) is zero in column j below row j + 1 (a pair's 2×2
	// block reaches one row below the diagonal); the rows beyond limit[j] are never read, so
	// only rows up to j + 1 are written (with the zeros they hold within the limit).
	pw := v.qrp[:0]
	for i := 0; i < v.s.pairs; i++ {
		pw = pw[:0]
		for q := 0; q < k; q++ {
			pw = append(pw, v.power(i, q*b))
		}
		re, im := red[2*i], red[2*i+1]
		for row := 0; row <= min(2*i+2, n-1); row++ {
			a0, a1 := r0[row*n+2*i], r0[row*n+2*i+1]
			base := rem + row*k
			for q, p := range pw {
				c, s := real(p), imag(p)
				re[base+q] = a0*c + a1*s
				im[base+q] = -a0*s + a1*c
			}
		}
	}
	for j := 2 * v.s.pairs; j < n; j++ {
		pw = pw[:0]
		for q := 0; q < k; q++ {
			pw = append(pw, complex(real(v.power(v.cols[j].pole, q*b)), 0))
		}
		col := red[j]
		for row := 0; row <= min(j+1, n-1); row++ {
			a := r0[row*n+j]
			base := rem + row*k
			for q, p := range pw {
				col[base+q] = a * real(p)
			}
		}
	}
	v.qrp = pw
	for q := 0; q < k; q++ {
		for i := 0; i < n; i++ {
			rhs[rem+i*k+q] = blocks[q*b+i]
		}
	}
	limit = make([]int, n)
	for j := range limit {
		limit[j] = min(rows, rem+k*(j+2))
	}
	return red, rhs, limit, true
}

// householderSolve solves the least-squares problem min ‖Φx − y‖ by Householder QR, Φ given
// by its columns (overwritten), and reports false where Φ is rank-deficient or its condition
// number, as estimated by the ratio of R's diagonal entries, is above 1e16 (gonum's
// mat.ConditionTolerance, where its QR solve returned an error). R's diagonal is left in diag.
// limit (nil: none) bounds each column's nonzeros to a prefix (householderFactor).
func householderSolve(cols [][]float64, y, x, diag []float64, limit []int) bool {
	n := len(cols)
	b := append([]float64(nil), y...)
	uus := make([]float64, n)
	if !householderFactor(cols, diag, uus, limit) {
		return false
	}
	householderApply(cols, uus, b, limit)
	lo, hi := math.Inf(1), 0.0
	for _, d := range diag {
		lo, hi = math.Min(lo, math.Abs(d)), math.Max(hi, math.Abs(d))
	}
	if !(hi <= 1e16*lo) {
		return false
	}
	// R x = (Qᵀy)[:n], R's entries above the diagonal in the columns' first rows.
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < n; k++ {
			s -= cols[k][i] * x[k]
		}
		x[i] = s / diag[i]
	}
	return true
}

// householderFactor reduces the columns (in place) to R, R's diagonal in diag and above it in
// the columns' leading rows, the reflections' vectors below, and their uᵀu in uus; false
// where a column is zero. Where limit is not nil, column j is zero from row limit[j] on and
// limit is non-decreasing (with limit[j] > j): reflection j then mixes rows j…limit[j]−1
// only, which every column's later reflections leave zero below their own limits.
func householderFactor(cols [][]float64, diag, uus []float64, limit []int) bool {
	data, stride, strided := columnBuffer(cols)
	for j, col := range cols {
		end := len(col)
		if limit != nil {
			end = limit[j]
		}
		v := col[j:end]
		alpha := vec.Norm(v)
		if alpha == 0 {
			return false
		}
		if v[0] > 0 {
			alpha = -alpha
		}
		// H = I − 2uuᵀ/uᵀu with u = v − αe₁ maps v to αe₁; uᵀu = 2α(α − v₀).
		v[0] -= alpha
		uus[j] = 2 * alpha * (alpha - (v[0] + alpha))
		switch {
		case j+1 == len(cols):
		case strided:
			vec.Reflect(v, data[(j+1)*stride+j:], stride, len(cols)-j-1, uus[j])
		default:
			for _, other := range cols[j+1:] {
				vec.Reflect(v, other[j:end], end-j, 1, uus[j])
			}
		}
		diag[j] = alpha
	}
	return true
}

// columnBuffer returns the buffer the columns lie in back to back, column j at
// data[j·stride:] with stride their common length, and false where they do not (then
// householderFactor reflects them one by one, with the same result).
func columnBuffer(cols [][]float64) (data []float64, stride int, ok bool) {
	if len(cols) == 0 || len(cols[0]) == 0 {
		return nil, 0, false
	}
	stride = len(cols[0])
	data = cols[0][:cap(cols[0])]
	if len(data) < len(cols)*stride {
		return nil, 0, false
	}
	for j, c := range cols {
		if len(c) != stride || &c[0] != &data[j*stride] {
			return nil, 0, false
		}
	}
	return data[:len(cols)*stride], stride, true
}

// householderApply applies householderFactor's reflections (with its limit) to b: b ← Qᵀb.
func householderApply(cols [][]float64, uus, b []float64, limit []int) {
	for j, col := range cols {
		end := len(col)
		if limit != nil {
			end = limit[j]
		}
		vec.Reflect(col[j:end], b[j:end], end-j, 1, uus[j])
	}
}

// forwardU solves Uᵀx = b in place for the k right-hand sides stored as the columns of the
// n×k row-major b, with U the upper Cholesky factor choleskySolve leaves (row-major).
func forwardU(u []float64, n int, b []float64, k int) {
	for i := 0; i < n; i++ {
		d := u[i*n+i]
		bi := b[i*k : i*k+k]
		floats.Scale(1/d, bi)
		if i+1 < n {
			vec.SubOuter(u[i*n+i+1:i*n+n], bi, b[(i+1)*k:], k)
		}
	}
}

// cholSolve solves UᵀUx = b in place with the factor choleskySolve left in u.
func cholSolve(u []float64, n int, x []float64) {
	forwardU(u, n, x, 1)
	for i := n - 1; i >= 0; i-- {
		ri := u[i*n+i : i*n+n]
		x[i] = (x[i] - vec.Dot(ri[1:], x[i+1:n])) / ri[0]
	}
}
