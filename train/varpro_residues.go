package train

import (
	"math"

	"gonum.org/v1/gonum/floats"
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
func (v *varpro) refineStep() float64 {
	n := v.s.order()
	v.project0(v.e)
	for i := 0; i < n; i++ {
		v.rhs[i] = v.dot(v.cols[i])
	}
	cholSolve(v.chol, n, v.rhs)
	floats.Sub(v.c, v.rhs)
	v.residual()
	return v.objective()
}

// undoStep takes back the last refineStep.
func (v *varpro) undoStep() {
	floats.Add(v.c, v.rhs)
	v.residual()
}

// exactResidues solves the residue problem of the last sse by Householder QR of the dense
// basis (O(L·n²), once per fit): the normal equations square Φ's condition number, and for
// poles clustered near z = 1 their ridge and rounding cost digits that the QR solution keeps
// (Hyena kernels at n = 8: 2e-6 by the normal equations, 7e-8 by QR). It keeps whichever
// residues give the smaller residual and returns ½‖e‖².
func (v *varpro) exactResidues() float64 {
	v.held = false
	n := v.s.order()
	f := v.objective()
	if n == 0 {
		return f
	}
	// Φ by columns (each contiguous, so the reflections run on unit-stride vectors).
	if len(v.qr) < n*len(v.y) {
		v.qr = make([]float64, n*len(v.y))
	}
	cols := make([][]float64, n)
	for j := range cols {
		cols[j] = v.qr[j*len(v.y) : (j+1)*len(v.y)]
	}
	// A pair's two columns (β = 1 and β = i, setPoles) from one sequence of powers.
	for i := 0; i < v.s.pairs; i++ {
		c0, c1 := v.cols[2*i], v.cols[2*i+1]
		re, im := cols[2*i], cols[2*i+1]
		l := v.mu[i]
		pw := complex(1, 0)
		for t := range re {
			re[t] = 2 * real(c0.beta*pw)
			im[t] = 2 * real(c1.beta*pw)
			pw *= l
		}
	}
	for j := 2 * v.s.pairs; j < n; j++ {
		col, l := cols[j], v.mu[v.cols[j].pole]
		pw := complex(1, 0)
		for t := range col {
			col[t] = real(pw)
			pw *= l
		}
	}
	x := make([]float64, n)
	if !householderSolve(cols, v.y, x) {
		return f
	}
	old := append([]float64(nil), v.c...)
	copy(v.c, x)
	v.residual()
	if g := v.objective(); g < f {
		return g
	}
	copy(v.c, old)
	v.residual()
	return f
}

// householderSolve solves the least-squares problem min ‖Φx − y‖ by Householder QR, Φ given
// by its columns (overwritten), and reports false where Φ is rank-deficient or its condition
// number, as estimated by the ratio of R's diagonal entries, is above 1e16 (gonum's
// mat.ConditionTolerance, where its QR solve returned an error).
func householderSolve(cols [][]float64, y, x []float64) bool {
	n := len(cols)
	b := append([]float64(nil), y...)
	diag := make([]float64, n)
	for j, col := range cols {
		v := col[j:]
		alpha := floats.Norm(v, 2)
		if alpha == 0 {
			return false
		}
		if v[0] > 0 {
			alpha = -alpha
		}
		// H = I − 2uuᵀ/uᵀu with u = v − αe₁ maps v to αe₁; uᵀu = 2α(α − v₀).
		v[0] -= alpha
		uu := 2 * alpha * (alpha - (v[0] + alpha))
		for _, other := range cols[j+1:] {
			u := other[j:]
			floats.AddScaled(u, -2*floats.Dot(v, u)/uu, v)
		}
		floats.AddScaled(b[j:], -2*floats.Dot(v, b[j:])/uu, v)
		diag[j] = alpha
	}
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

// forwardU solves Uᵀx = b in place for the k right-hand sides stored as the columns of the
// n×k row-major b, with U the upper Cholesky factor choleskySolve leaves (row-major).
func forwardU(u []float64, n int, b []float64, k int) {
	for i := 0; i < n; i++ {
		d := u[i*n+i]
		bi := b[i*k : i*k+k]
		floats.Scale(1/d, bi)
		for j := i + 1; j < n; j++ {
			if uij := u[i*n+j]; uij != 0 {
				floats.AddScaled(b[j*k:j*k+k], -uij, bi)
			}
		}
	}
}

// cholSolve solves UᵀUx = b in place with the factor choleskySolve left in u.
func cholSolve(u []float64, n int, x []float64) {
	forwardU(u, n, x, 1)
	for i := n - 1; i >= 0; i-- {
		ri := u[i*n+i : i*n+n]
		x[i] = (x[i] - floats.Dot(ri[1:], x[i+1:n])) / ri[0]
	}
}
