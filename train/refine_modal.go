package train

import (
	"context"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/internal/underflow"
)

// maxModalRefineWork bounds L·P², the multiply-adds of one Gauss–Newton system of the modal
// refinement (P = 2n + 1 parameters, a dense L×P Jacobian): 1.7e7 at n = 64, L = 1024 (about
// 7 ms per iteration); larger jobs keep what the optimiser made.
const maxModalRefineWork = 1 << 26

// modalRefinable reports whether a modal or rotation model of this size gets the refinement.
func modalRefinable(n, length int) bool {
	p := float64(2*n + 1)
	return float64(length)*p*p <= maxModalRefineWork
}

// modalRefineWork holds one channel's buffers for refineModal. It works on the modal
// parametrisation (ν, θ, Re r, Im r per pair; u, r per real pole; h0); a rotation model's
// parameters are mapped to it and back, since its input and output vectors enter the kernel
// only through their product r.
type modalRefineWork struct {
	m        *modalModel // the modal form (rotation false) of the channel's model
	original *modalModel
	y        []float64
	k, e     []float64
	jt       *mat.Dense // the Jacobian, transposed: one row per parameter
	lm       lmBuffers
}

func newModalRefineWork(m *modalModel, y []float64) *modalRefineWork {
	mm := *m
	mm.rotation = false
	np := mm.numParams()
	return &modalRefineWork{m: &mm, original: m, y: y, k: make([]float64, m.length), e: make([]float64, m.length),
		jt: mat.NewDense(np, m.length, nil), lm: newLMBuffers(np)}
}

// toModal returns p (in the original model's parametrisation) as modal parameters.
func (w *modalRefineWork) toModal(p []float64) []float64 {
	o := w.original
	if !o.rotation {
		return append([]float64(nil), p...)
	}
	q := make([]float64, w.m.numParams())
	for i := 0; i < o.pairs; i++ {
		_, r, src := o.pairAt(p, i)
		copy(q[4*i:], []float64{src[0], src[1], real(r), imag(r)})
	}
	for i := 0; i < o.reals; i++ {
		_, r, src := o.realAt(p, i)
		q[4*o.pairs+2*i], q[4*o.pairs+2*i+1] = src[0], r
	}
	q[len(q)-1] = p[len(p)-1]
	return q
}

// fromModal writes modal parameters q back into p in the original parametrisation: a
// rotation pair gets b = (β, 0), c = (2 Re r, -2 Im r)/β with β = √(2|r|), which gives the
// same r = (c₁ - ic₂)(b₁ + ib₂)/2.
func (w *modalRefineWork) fromModal(q, p []float64) {
	o := w.original
	if !o.rotation {
		copy(p, q)
		return
	}
	for i := 0; i < o.pairs; i++ {
		r := complex(q[4*i+2], q[4*i+3])
		beta := math.Max(math.Sqrt(2*cmplx.Abs(r)), 1e-300)
		copy(p[6*i:], []float64{q[4*i], q[4*i+1], beta, 0, 2 * real(r) / beta, -2 * imag(r) / beta})
	}
	off := 6 * o.pairs
	for i := 0; i < o.reals; i++ {
		r := q[4*o.pairs+2*i+1]
		b := math.Max(math.Sqrt(math.Abs(r)), 1e-300)
		copy(p[off+3*i:], []float64{q[4*o.pairs+2*i], b, r / b})
	}
	p[len(p)-1] = q[len(q)-1]
}

// sse returns ½‖k(q) - y‖² and leaves the residual in w.e.
func (w *modalRefineWork) sse(q []float64) float64 {
	w.m.kernel(nil, q, w.k)
	s := 0.0
	for i, v := range w.k {
		w.e[i] = v - w.y[i]
		s += w.e[i] * w.e[i]
	}
	return s / 2
}

// jacobian writes ∂k/∂q into w.jt, one row per parameter: with λ = exp(-e^ν + iθ) and
// k[t] = Σ 2Re(r λ^(t-1)) + Σ r_real tanh(u)^(t-1) for t ≥ 1, ∂k[t]/∂ν = -2e^ν Re(r(t-1)λ^(t-1)),
// ∂k[t]/∂θ = -2 Im(r(t-1)λ^(t-1)), ∂k[t]/∂r = 2λ^(t-1) (real and imaginary part), and for a
// real pole ∂k[t]/∂u = r(t-1)λ^(t-2)(1 - λ²), ∂k[t]/∂r = λ^(t-1).
func (w *modalRefineWork) jacobian(q []float64) {
	m := w.m
	l := m.length
	raw := w.jt.RawMatrix()
	row := func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+l] }
	for i := 0; i < m.pairs; i++ {
		lam, r, qi := m.pairAt(q, i)
		en := math.Exp(qi[0])
		rn, rt, rr, ri := row(4*i), row(4*i+1), row(4*i+2), row(4*i+3)
		rn[0], rt[0], rr[0], ri[0] = 0, 0, 0, 0
		pw := complex(1, 0)
		for t := 1; t < l; t++ {
			s := complex(float64(t-1), 0) * r * pw
			rn[t] = -2 * en * real(s)
			rt[t] = -2 * imag(s)
			rr[t] = 2 * real(pw)
			ri[t] = -2 * imag(pw)
			pw *= lam
			if t%underflow.Every == 0 {
				pw = underflow.Complex(pw, 1)
			}
		}
	}
	off := 4 * m.pairs
	for i := 0; i < m.reals; i++ {
		lam, r, _ := m.realAt(q, i)
		ru, rr := row(off+2*i), row(off+2*i+1)
		ru[0], rr[0] = 0, 0
		pw, prev := 1.0, 0.0
		for t := 1; t < l; t++ {
			ru[t] = r * float64(t-1) * prev * (1 - lam*lam)
			rr[t] = pw
			prev, pw = pw, pw*lam
			if t%underflow.Every == 0 {
				pw = underflow.Real(pw, 1)
			}
		}
	}
	h0 := row(m.numParams() - 1)
	clear(h0)
	h0[0] = 1
}

// normal forms JᵀJ and Jᵀe from the dense Jacobian at q (after sse(q) left e).
func (w *modalRefineWork) normal(q []float64, h *mat.SymDense, g []float64) {
	w.jacobian(q)
	h.SymOuterK(1, w.jt)
	for i := range g {
		g[i] = floats.Dot(w.jt.RawRowView(i), w.e)
	}
}

// admit clamps the trial point into the radius constraint (project), so every trial is
// stable, and makes the step match.
func (w *modalRefineWork) admit(q, trial, step []float64) bool {
	w.m.project(trial)
	for i := range q {
		step[i] = trial[i] - q[i]
	}
	return true
}

// refineModal runs up to iters Levenberg–Marquardt iterations (levenbergMarquardt) on a modal
// or rotation model's parameters p against w.y, in place, on a dense Jacobian: the modal
// kernel has no circulant structure. Adam rarely moves a good hankel init of these models
// (S4 kernels at n = 64: 0.057 before and after 1000 steps); Gauss–Newton steps halve that
// error. It returns the final ½‖k - y‖², or ctx.Err().
func refineModal(ctx context.Context, w *modalRefineWork, p []float64, iters int, st *lmState) (float64, error) {
	q := w.toModal(p)
	defer w.fromModal(q, p)
	return levenbergMarquardt(ctx, w, &w.lm, q, iters, st)
}
