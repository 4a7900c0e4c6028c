package train

import (
	"context"
	"math"
	"math/cmplx"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/vec"
)

// poleSet is the nonlinear half of a modal fit, its poles, in a parametrisation that keeps
// every pole inside the radius rmax < 1 for every parameter value (stability by
// construction, not by rejection): a conjugate pair is λ = exp(log rmax − e^ν + iθ),
// parameters (ν, θ), a real pole is λ = rmax·tanh(u), parameter u, or with positive poles
// λ = rmax·(1 + tanh u)/2, in (0, rmax). The residues, the linear half, are not parameters:
// for given poles the best ones solve a linear least-squares problem (variable projection).
type poleSet struct {
	pairs, reals int
	rmax         float64
	poles        Poles // the job's (Spec.Poles): a real-only fit has no pairs, ever
}

// numParams is the number of pole parameters: 2 per pair, 1 per real pole.
func (s poleSet) numParams() int { return 2*s.pairs + s.reals }

// order is the number of poles (and of basis functions).
func (s poleSet) order() int { return 2*s.pairs + s.reals }

// pole returns pole i (pairs first, by their member with Im ≥ 0, then reals).
func (s poleSet) pole(a []float64, i int) complex128 {
	if i < s.pairs {
		return cmplx.Exp(complex(math.Log(s.rmax)-math.Exp(a[2*i]), a[2*i+1]))
	}
	l, _, _ := s.realPole(a[s.pairs+i])
	return complex(l, 0)
}

// realPole returns the real pole λ of parameter u, its logarithm (accurate near |λ| = 1; Im
// π for a negative pole) and dλ/du over rmax (so that the Jacobian's column is c·rmax·that,
// in the order of operations the tanh map has always had: its fits are the same bits).
func (s poleSet) realPole(u float64) (float64, complex128, float64) {
	logR := math.Log(s.rmax)
	th := math.Tanh(u)
	if s.poles == PolesPositive {
		// λ = rmax/(1 + e^{−2u}), log λ = log rmax − log1p(e^{−2u}).
		return s.rmax * (1 + th) / 2, complex(logR-math.Log1p(math.Exp(-2*u)), 0), (1 - th*th) / 2
	}
	var w complex128
	switch {
	case u == 0:
		w = complex(-800, 0)
	case u < 0:
		// log|tanh u| = log1p(−2/(e^(2|u|)+1)), accurate near |tanh u| = 1.
		w = complex(logR+math.Log1p(-2/(math.Exp(-2*u)+1)), math.Pi)
	default:
		w = complex(logR+math.Log1p(-2/(math.Exp(2*u)+1)), 0)
	}
	return s.rmax * th, w, 1 - th*th
}

// Bounds on ν and u that keep the parametrisation away from where it saturates: ν = 3 is a
// radius of rmax·1.9e-9, and tanh(19) is 1 to rounding.
const (
	varproMinNu = -40
	varproMaxNu = 3
	varproMaxU  = 19
)

// params returns the parameters of the given poles (one member of each pair, Im > 0, then the
// real poles), each moved inside rmax·(1 − 1e-12) first.
func (s poleSet) params(pairs []complex128, reals []float64) []float64 {
	a := make([]float64, s.numParams())
	logR := math.Log(s.rmax)
	for i, p := range pairs {
		// −log|λ| = −log rmax + e^ν.
		d := logR - math.Log(cmplx.Abs(p))
		a[2*i] = math.Min(math.Max(math.Log(math.Max(d, 1e-17)), varproMinNu), varproMaxNu)
		a[2*i+1] = cmplx.Phase(p)
	}
	for i, r := range reals {
		var u float64
		if s.poles == PolesPositive {
			// u = ½·logit(λ/rmax).
			x := math.Max(1e-12, math.Min(1-1e-12, r/s.rmax))
			u = 0.5 * math.Log(x/(1-x))
		} else {
			u = math.Atanh(math.Max(-1+1e-12, math.Min(1-1e-12, r/s.rmax)))
		}
		a[2*s.pairs+i] = math.Max(-varproMaxU, math.Min(varproMaxU, u))
	}
	return a
}

// clamp keeps the parameters inside the ranges where the parametrisation does not saturate.
func (s poleSet) clamp(a []float64) {
	for i := 0; i < s.pairs; i++ {
		a[2*i] = math.Min(math.Max(a[2*i], varproMinNu), varproMaxNu)
	}
	for i := 2 * s.pairs; i < len(a); i++ {
		a[i] = math.Max(-varproMaxU, math.Min(varproMaxU, a[i]))
	}
}

// varproFloor is the relative error below which a fit needs no more accuracy: float32
// deployments round at 6e-8, and the quality bar for exactly representable targets is 1e-6.
const varproFloor = 1e-9

// varpro is the separable least-squares problem of a modal fit to y[1..L-1] (y[0] is the
// direct term, matched exactly): minimise over the pole parameters a the residual of the
// best residues for them, ½‖Φ(a)c(a) − y‖² with c(a) = Φ(a)⁺y (Golub and Pereyra's variable
// projection). Φ's columns are 2Re λ^τ and −2Im λ^τ per pair (coefficients Re r, Im r of
// the kernel 2Re(rλ^τ)) and λ^τ per real pole, τ = t − 1. The Gauss–Newton system uses
// Kaufman's approximation of the projected Jacobian, J ≈ P⊥·D with D = ∂(Φc)/∂a, where P⊥
// projects onto the complement of Φ's range.
//
// Every column is 2Re(β τ^k λ^τ) (pairs) or β τ^k λ^(τ−s) (real poles), so the Gram matrix of
// [Φ D] has closed-form entries (filters.PowerSums) and costs O(n²); only the products with
// the data and the residual are sums over the L samples, O(n·L) in all. The residues come
// from the normal equations ΦᵀΦc = Φᵀy by Cholesky (with a ridge of 1e-13 of the largest
// diagonal entry, for nearly coincident poles) and, once their rounding or their ridge loses them,
// from iterative refinement on the true residual or Householder QR (solve); the residual
// itself is always evaluated from the samples, so the objective is exact whatever the
// conditioning.
type varpro struct {
	s  poleSet
	y  []float64 // y[1..L-1]
	yy float64   // ‖y[1..]‖²
	// accurate is set once the normal equations' rounding approaches the residual, or their
	// ridge is seen to cost it: the residues come from refinement or QR from then on.
	accurate bool
	// ridgeChecked is set once an evaluation with the ridge near a pivot has been checked
	// against QR (solve).
	ridgeChecked bool
	sums         *filters.PowerSums
	mu           []complex128 // the poles (one member of each pair, then the real ones)
	w            []complex128 // their logarithms, exact from the parameters
	c            []float64    // residues for the last sse
	e            []float64    // Φc − y for the last sse
	chol         []float64    // Cholesky factor of ΦᵀΦ + ridge (row-major, upper)
	rhs          []float64
	cols         []basisCol
	// sums[p*poles+q] holds, for p ≤ q, the geometric sums of the pole pair's product(s):
	// [0] at λ_p·λ_q (shift 0), [1] at λ_p·λ̄_q for two pairs, else the product's sums with
	// shift 1 (for a real pole's derivative column).
	pairSums [][2][3]complex128
	exps     []filters.PoleExp // each pole's, for pairSums
	gram     *mat.SymDense     // Gram matrix of [Φ D]
	v0       []complex128      // Σ v_τ λ^τ per pole, for a vector v
	v1       []complex128      // Σ v_τ τ λ^(τ−s) per pole
	lm       lmBuffers
	qr       []float64    // exactResidues' basis
	qrs, qrb []float64    // reducedBasis' problem and block
	qrw      []float64    // its smaller workspaces (reducedBasis)
	qrp      []complex128 // the poles' powers at the blocks' starts (reducedBasis)
	qrR      []float64    // the last QR's R (row-major, upper), for refineStepWith
	rdiag    []float64    // its diagonal, as householderSolve leaves it
	xs       []float64    // normal's U⁻ᵀΦᵀD and U⁻ᵀΦᵀe
	// lastA and lastF are the parameters and value of the last sse while its residues and
	// residual are still what v holds (polish and exactResidues change them): Levenberg–
	// Marquardt and fit ask again for the point they stand on, and once QR solves every
	// residue problem a repeat costs as much as a step.
	lastA []float64
	lastF float64
	held  bool
	px    sampleSums // where the sums over the samples run
	// ev0 and ev1 are v.e's projection, made with it where px is a residualProjector;
	// eProjected says they are v.e's for the current poles.
	ev0, ev1   []complex128
	eProjected bool
	lastQR     lastQR
}

// basisCol is column 2Re(β τ^k λ^τ) of pole p (a pair), or β τ^k λ^(τ−s) (a real pole).
type basisCol struct {
	pole int
	beta complex128
	k, s int
}

func newVarpro(s poleSet, y []float64) *varpro {
	n, na := s.order(), s.numParams()
	m := len(y) - 1
	poles := s.pairs + s.reals
	if v, _ := varproPools.pool(varproShape{n, na, poles, m}).Get().(*varpro); v != nil {
		v.reuse(s, y)
		return v
	}
	return &varpro{s: s, y: y[1:], yy: floats.Dot(y[1:], y[1:]), sums: filters.SharedPowerSums(m), mu: make([]complex128, poles), w: make([]complex128, poles),
		c: make([]float64, n), e: make([]float64, m), chol: make([]float64, n*n), rhs: make([]float64, n),
		cols: make([]basisCol, n+na), gram: mat.NewSymDense(n+na, nil), pairSums: make([][2][3]complex128, poles*poles),
		v0: make([]complex128, poles), v1: make([]complex128, poles), lm: newLMBuffers(na), px: cpuSums{}}
}

// varproShape is what a varpro's buffers are sized by.
type varproShape struct{ n, na, poles, m int }

// varproPools holds, per shape, the varpros released (release) for the next newVarpro: a
// ladder makes hundreds a channel (every start of every rung, every residue refit in
// conditionFit), and allocating their buffers afresh, about 0.5 MB at n = 64, kept the
// collector busy (S4 kernels at n = 64: a tenth of the job's CPU time went to allocation,
// marking and returning memory to the system).
var varproPools keyedPools[varproShape]

// keyedPools holds a sync.Pool per key (the shape of what it pools), made on first use.
type keyedPools[K comparable] struct{ pools sync.Map }

// pool returns key's pool.
func (k *keyedPools[K]) pool(key K) *sync.Pool {
	if p, ok := k.pools.Load(key); ok {
		return p.(*sync.Pool)
	}
	p, _ := k.pools.LoadOrStore(key, &sync.Pool{})
	return p.(*sync.Pool)
}

// release hands v's buffers to the next newVarpro of its shape; v must not be used after.
func (v *varpro) release() {
	varproPools.pool(varproShape{v.s.order(), v.s.numParams(), v.s.pairs + v.s.reals, len(v.y)}).Put(v)
}

// reuse makes a released v a new problem for s and y: every field as newVarpro leaves it,
// every buffer kept and zeroed (as a fresh one is: some are read where only part was
// written, such as qrR's lower triangle).
func (v *varpro) reuse(s poleSet, y []float64) {
	old := *v
	*v = varpro{s: s, y: y[1:], yy: floats.Dot(y[1:], y[1:]), sums: filters.SharedPowerSums(len(y) - 1),
		mu: old.mu, w: old.w, c: old.c, e: old.e, chol: old.chol, rhs: old.rhs, cols: old.cols,
		gram: old.gram, pairSums: old.pairSums, exps: old.exps, v0: old.v0, v1: old.v1, lm: old.lm,
		qr: old.qr, qrs: old.qrs, qrb: old.qrb, qrw: old.qrw, qrR: old.qrR, rdiag: old.rdiag,
		xs: old.xs, lastA: old.lastA[:0], px: cpuSums{}, ev0: old.ev0, ev1: old.ev1}
	clear(v.mu)
	clear(v.w)
	clear(v.c)
	clear(v.e)
	clear(v.chol)
	clear(v.rhs)
	clear(v.cols)
	clear(v.gram.RawSymmetric().Data)
	clear(v.pairSums)
	clear(v.exps)
	clear(v.v0)
	clear(v.v1)
	clear(v.qr)
	clear(v.qrs)
	clear(v.qrb)
	clear(v.qrw)
	clear(v.qrR)
	clear(v.rdiag)
	clear(v.xs)
	clear(v.ev0)
	clear(v.ev1)
	v.lm.clear()
}

// setPoles computes the poles and their logarithms from a, and Φ's columns.
func (v *varpro) setPoles(a []float64) {
	v.eProjected = false
	v.lastQR = lastQR{}
	s := v.s
	logR := math.Log(s.rmax)
	for i := 0; i < s.pairs; i++ {
		v.w[i] = complex(logR-math.Exp(a[2*i]), a[2*i+1])
		v.mu[i] = cmplx.Exp(v.w[i])
		v.cols[2*i] = basisCol{pole: i, beta: 1}
		v.cols[2*i+1] = basisCol{pole: i, beta: 1i}
	}
	for i := 0; i < s.reals; i++ {
		p := s.pairs + i
		l, w, _ := s.realPole(a[2*s.pairs+i])
		v.mu[p], v.w[p] = complex(l, 0), w
		v.cols[2*s.pairs+i] = basisCol{pole: p, beta: 1}
	}
}

func (v *varpro) isPair(p int) bool { return p < v.s.pairs }

// fillSums evaluates the geometric sums of every product of two poles (setPoles first),
// from each pole's exps (PowerSums.AtProduct).
func (v *varpro) fillSums() {
	np := len(v.mu)
	if len(v.exps) < np {
		v.exps = make([]filters.PoleExp, np)
	}
	for p := range np {
		v.exps[p] = v.sums.PoleExp(v.w[p])
	}
	for p := 0; p < np; p++ {
		for q := p; q < np; q++ {
			ps := &v.pairSums[p*np+q]
			wp, wq := v.w[p], v.w[q]
			ps[0] = v.sums.AtProduct(wp, wq, v.exps[p], v.exps[q])
			switch {
			case v.isPair(p) && v.isPair(q):
				ps[1] = v.sums.AtProduct(wp, cmplx.Conj(wq), v.exps[p], v.exps[q].Conj())
			default:
				ps[1] = v.sums.Shifted(wp+wq, 1, ps[0])
			}
		}
	}
}

// gramEntry is the inner product of columns a and b over τ = 0…N−1, from fillSums.
func (v *varpro) gramEntry(a, b *basisCol) float64 {
	k := a.k + b.k
	if a.pole > b.pole {
		a, b = b, a
	}
	np := len(v.mu)
	ps := &v.pairSums[a.pole*np+b.pole]
	pa, pb := v.isPair(a.pole), v.isPair(b.pole)
	switch {
	case pa && pb:
		// 2Re(x)·2Re(y) = 2Re(xy) + 2Re(xȳ).
		return 2*real(a.beta*b.beta*ps[0][k]) + 2*real(a.beta*cmplx.Conj(b.beta)*ps[1][k])
	case pa || pb:
		if pb {
			a, b = b, a
		}
		// Σ 2Re(β_a τ^k λ_a^τ)·β_b x^(τ−s) = 2Re(β_a β_b λ_a^s T_k^s(λ_a x)).
		f := a.beta * b.beta
		if b.s == 1 {
			return 2 * real(f*v.mu[a.pole]*ps[1][k])
		}
		return 2 * real(f*ps[0][k])
	default:
		s := max(a.s, b.s)
		f := real(a.beta) * real(b.beta)
		if s > a.s {
			f *= real(v.mu[a.pole])
		}
		if s > b.s {
			f *= real(v.mu[b.pole])
		}
		return f * real(ps[s][k])
	}
}

// dot returns the inner product of column a with the vector project last saw.
func (v *varpro) dot(a basisCol) float64 {
	x := v.v0[a.pole]
	if a.k == 1 {
		x = v.v1[a.pole]
	}
	if v.isPair(a.pole) {
		return 2 * real(a.beta*x)
	}
	return real(a.beta) * real(x)
}

func (v *varpro) sse(a []float64) float64 {
	if v.held && floats.Same(a, v.lastA) {
		return v.lastF
	}
	f := v.solve(a)
	v.lastA = append(v.lastA[:0], a...)
	v.lastF, v.held = f, true
	return f
}

// solve is sse without the memory of the last point.
func (v *varpro) solve(a []float64) float64 {
	v.setPoles(a)
	v.fillSums()
	n := v.s.order()
	top := 0.0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v.chol[i*n+j] = v.gramEntry(&v.cols[i], &v.cols[j])
		}
		top = math.Max(top, v.chol[i*n+i])
	}
	for i := 0; i < n; i++ {
		v.chol[i*n+i] += 1e-13 * top
	}
	factored := choleskyFactor(v.chol, n)
	lo, hi := math.Inf(1), 0.0
	for i := 0; i < n; i++ {
		d := v.chol[i*n+i]
		lo, hi = math.Min(lo, d), math.Max(hi, d)
	}
	epsKappa := 0x1p-52 * (hi / lo) * (hi / lo)
	if v.accurate && factored && epsKappa > refineLimit {
		// Residues from QR, as at every evaluation since the normal equations lost them: their
		// solution and its residual (two passes over the samples) would only be the fallback.
		if g, ok := v.qrResidues(false); ok {
			return g
		}
	}
	v.project0(v.y)
	for i := 0; i < n; i++ {
		v.c[i] = v.dot(v.cols[i])
	}
	if factored {
		choleskySubstitute(v.chol, n, v.c)
	} else {
		clear(v.c)
	}
	v.residual()
	f := v.objective()
	// The normal equations move Φc by about ε·κ(ΦᵀΦ)·‖y‖ (their ridge drops the directions of
	// ΦᵀΦ below 1e-13 of its largest eigenvalue, which a near-exact fit may need); once that
	// is no longer well below the residual (or below varproFloor·‖y‖, beneath which no
	// deployment can tell fits apart), the residues are made accurate (for this problem from
	// now on, so that the optimiser compares values of one function).
	if !v.accurate && !(epsKappa*math.Sqrt(v.yy) <= math.Max(1e-2*math.Sqrt(2*f), varproFloor*math.Sqrt(v.yy))) {
		v.accurate = true
	}
	// That estimate cannot see what the ridge itself costs: where the ridge is near a pivot it
	// also caps hi/lo (ε·κ ≤ about 2e-3), whatever the residual. On ERA's poles for S4
	// kernels at n = 64 the ridged residues leave 0.25–0.71 of ‖y‖ where QR's leave
	// 8e-8–7e-5 on four channels of 16, and that start ranked last. So the first evaluation
	// whose ridge is within ridgeCheck of the smallest pivot (or whose factorisation fails) is
	// also solved by QR, and where that at least halves the residual, the residues come from
	// QR from then on. Once per problem: checking every such evaluation changed no fit, and
	// on the sets where no check succeeds the n = 64 jobs' checks already cost 18–28 ms (1–2%).
	if !v.accurate && !v.ridgeChecked && (!factored || lo*lo <= ridgeCheck*1e-13*top) {
		v.ridgeChecked = true
		if g, byQR := v.qrIfBelow(false, 1.0/4); byQR {
			v.accurate = true
			return g
		}
	}
	if !v.accurate {
		return f
	}
	if epsKappa <= refineLimit {
		if g, ok := v.refine(f); ok {
			return g
		}
	}
	return v.exactResidues(false)
}

// refineLimit is the ε·κ(ΦᵀΦ) (κ from the Cholesky factor's diagonal) up to which accurate
// residues are first sought by iterative refinement: each step shrinks the error of the
// normal equations' solution by about that factor (when the estimate holds: refine checks)
// and costs O(n·L), a twentieth of a QR solve at n = 64. Of the QR solves a 16-channel S4
// job made at n = 64, 45% were at 1e-4 or below (refinement converged on 55% of them), on
// windowed sincs 80% (76%); above it the ridge bounds the contraction and QR is needed.
const refineLimit = 1e-4

// ridgeCheck is how many times the normal equations' ridge the smallest Cholesky pivot may
// be before solve checks their residues against QR (1e2 to 1e5 gave the same fits on the 35
// quality cells but one channel's 2e-6 of its error).
const ridgeCheck = 1e2

// normal forms Kaufman's Gauss–Newton system for the pole parameters at a (after sse(a)):
// with D = ∂(Φc)/∂a, H = DᵀP⊥D = DᵀD − DᵀΦ(ΦᵀΦ)⁻¹ΦᵀD and g = DᵀP⊥e.
func (v *varpro) normal(a []float64, h *mat.SymDense, g []float64) {
	s := v.s
	n, na := s.order(), s.numParams()
	for i := 0; i < s.pairs; i++ {
		r := complex(v.c[2*i], v.c[2*i+1])
		// ∂/∂ν 2Re(rλ^τ) = 2Re(−e^ν r·τλ^τ); ∂/∂θ = 2Re(i r·τλ^τ).
		v.cols[n+2*i] = basisCol{pole: i, beta: -complex(math.Exp(a[2*i]), 0) * r, k: 1}
		v.cols[n+2*i+1] = basisCol{pole: i, beta: 1i * r, k: 1}
	}
	for i := 0; i < s.reals; i++ {
		_, _, d := s.realPole(a[2*s.pairs+i])
		// ∂/∂u r·λ^τ = r·(dλ/du)·τλ^(τ−1).
		v.cols[n+2*s.pairs+i] = basisCol{pole: s.pairs + i, beta: complex(v.c[2*s.pairs+i]*s.rmax*d, 0), k: 1, s: 1}
	}
	gr := v.gram.RawSymmetric()
	for i := 0; i < n+na; i++ {
		row := gr.Data[i*gr.Stride : (i+1)*gr.Stride]
		for j := max(i, n); j < n+na; j++ {
			row[j] = v.gramEntry(&v.cols[i], &v.cols[j])
		}
	}
	v.projectResidual()
	// X = U⁻ᵀΦᵀD and U⁻ᵀΦᵀe, with U the Cholesky factor sse left (ridge included).
	if len(v.xs) < n*na+n {
		v.xs = make([]float64, n*na+n)
	}
	x, pe := v.xs[:n*na], v.xs[n*na:n*na+n]
	for k := 0; k < na; k++ {
		for i := 0; i < n; i++ {
			x[i*na+k] = v.gram.At(i, n+k)
		}
	}
	for i := 0; i < n; i++ {
		pe[i] = v.dot(v.cols[i])
	}
	forwardU(v.chol, n, x, na)
	forwardU(v.chol, n, pe, 1)
	// H's upper triangle and g, each entry less its terms i = 0, 1, … in turn, a row of X at
	// a time (unit stride; the same operations in the same order as entry by entry).
	hr := h.RawSymmetric()
	for k := 0; k < na; k++ {
		g[k] = v.dot(v.cols[n+k])
		copy(hr.Data[k*hr.Stride+k:k*hr.Stride+na], gr.Data[(n+k)*gr.Stride+n+k:(n+k)*gr.Stride+n+na])
	}
	for i := 0; i < n; i++ {
		xi := x[i*na : (i+1)*na]
		vec.Axpy(-pe[i], xi, g)
		vec.SubOuterUpper(xi, hr.Data, hr.Stride)
	}
}

func (v *varpro) admit(_, trial, step []float64) bool {
	before := append([]float64(nil), trial...)
	v.s.clamp(trial)
	for i := range step {
		step[i] += trial[i] - before[i]
	}
	return true
}

// fit runs up to iters Levenberg–Marquardt iterations of the variable projection from the
// pole parameters a (in place), stopping once the relative error is below varproFloor, and
// returns the final ½‖Φc − y[1:]‖²; v.c then holds the residues for a. The residues of a final
// fit are polished by iterative refinement (and where the normal equations are not accurate
// enough, sse already took them from QR).
func (v *varpro) fit(ctx context.Context, a []float64, iters int, st *lmState, final bool) (float64, error) {
	if st == nil {
		st = &lmState{}
	}
	floor := varproFloor * varproFloor * v.yy / 2
	if v.sse(a) <= floor {
		iters = 0
	}
	for done := 0; done < iters && !st.done; done += varproChunk {
		f, err := levenbergMarquardt(ctx, v, &v.lm, a, min(varproChunk, iters-done), st)
		if err != nil {
			return f, err
		}
		if f <= floor {
			break
		}
	}
	f := v.sse(a)
	if !final {
		return f, nil
	}
	if f = v.polish(); !v.accurate {
		return f, nil
	}
	return v.exactResidues(true), nil
}

// varproChunk is how many iterations run between checks of varproFloor.
const varproChunk = 5

// poleStart is a start of the modal fit: one member (Im > 0) of each conjugate pair, and the
// real poles.
type poleStart struct {
	pairs []complex128
	reals []float64
}

// startRealTol is the imaginary part, relative to 1 + |λ|, below which a start's pole counts
// as real.
const startRealTol = 1e-9

// startFromPoles makes a start of order n from a conjugate-closed pole set: unstable poles
// reflected inside the unit circle (λ → 1/λ̄); missing poles (a realisation smaller than n)
// are added as idle pairs at radius 1/2 and, for odd n, a real pole at 0. The poles are moved
// inside rmax when the start is turned into parameters (poleSet.params).
func startFromPoles(poles []complex128, n int, rmax float64) poleStart {
	var s poleStart
	for _, p := range poles {
		if r := cmplx.Abs(p); r > 1 {
			p = 1 / cmplx.Conj(p)
		}
		switch {
		case math.Abs(imag(p)) <= startRealTol*(1+cmplx.Abs(p)):
			s.reals = append(s.reals, real(p))
		case imag(p) > 0:
			s.pairs = append(s.pairs, p)
		}
	}
	for 2*len(s.pairs)+len(s.reals) > n {
		if len(s.reals) > 0 {
			s.reals = s.reals[:len(s.reals)-1]
		} else {
			s.pairs = s.pairs[:len(s.pairs)-1]
		}
	}
	for k := 0; 2*len(s.pairs)+len(s.reals)+2 <= n; k++ {
		s.pairs = append(s.pairs, cmplx.Rect(0.5, math.Pi*(float64(k)+0.5)/float64(n)))
	}
	if 2*len(s.pairs)+len(s.reals) < n {
		s.reals = append(s.reals, 0)
	}
	return s
}

// realOnly returns the start for a fit that places real poles only (poles real or positive):
// each pair p = ρe^{iθ} becomes the real poles ±ρ (the sign of Re p) and Re p, the decay of
// its envelope and its projection on the axis (against ±ρ with ±ρ² and with ±ρ(1 − 10⁻³)
// over seven target families at n = 2 to 16, none was better on all), and for positive
// poles every one is taken by its modulus; the start itself for any other fit.
func (st poleStart) realOnly(poles Poles) poleStart {
	if !poles.realOnly() {
		return st
	}
	out := poleStart{reals: append([]float64(nil), st.reals...)}
	for _, p := range st.pairs {
		out.reals = append(out.reals, math.Copysign(cmplx.Abs(p), real(p)), real(p))
	}
	if poles == PolesPositive {
		for i, r := range out.reals {
			out.reals[i] = math.Abs(r)
		}
	}
	return out
}
