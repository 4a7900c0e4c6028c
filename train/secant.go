package train

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// secantTerm is the structured quasi-Newton correction of Dennis, Gay and Welsch ("An
// adaptive nonlinear least-squares algorithm", 1981: NL2SOL) for levenbergMarquardt. The
// Hessian of ½‖r‖² is A + S with A = JᵀJ, the Gauss–Newton matrix the problem forms, and
// S = Σ rᵢ∇²rᵢ, which Gauss–Newton drops and NL2SOL estimates by secant updates from
// successive gradients. The modal fit's slow phase needs it: at n = 64 on trained Hyena
// filters, Gauss–Newton steps (μ down to 1e-20 and below) are parallel, shrink by about 4%
// per iteration and decrease the objective by twice what the model predicts; that gain
// ratio is 2 − sᵀ(A+S)s / sᵀAs, so S cancels nearly all of A's curvature along the path and
// the steps are some 25 times too short. The updated S gives that curvature back.
//
// The model A + S is taken up only after a Gauss–Newton step that decreased the objective
// by more than secantEnter times its prediction, when A + S predicted that decrease better,
// and kept while it predicts better than A (NL2SOL's adaptive switch, gated): elsewhere S,
// built from steps through a strongly curved landscape, predicts worse than A, and
// switching on the comparison alone moved the path of fits that leave a plateau late
// (trained drawn-lag filters at n = 64: one channel at 0.0038 in place of 0.0026).
type secantTerm struct {
	s      *mat.SymDense // the estimate of S
	aug    *mat.SymDense // A + S
	g      []float64     // the gradient where the last accepted step began
	step   []float64     // that step
	tmp    *mat.VecDense // scratch: a matrix times step
	w, y   []float64     // scratch: y♯ − S·step and y
	ready  bool          // g and step belong to the last accepted step
	useAug bool          // the next step is taken on A + S
}

// secantEnter is the gain ratio of a Gauss–Newton step above which the augmented model may
// take over: the slow phase's steps run at 1.6 to 2.
const secantEnter = 1.5

func newSecantTerm(np int) *secantTerm {
	return &secantTerm{s: mat.NewSymDense(np, nil), aug: mat.NewSymDense(np, nil), g: make([]float64, np),
		step: make([]float64, np), tmp: mat.NewVecDense(np, nil), w: make([]float64, np), y: make([]float64, np)}
}

// model updates S from the last accepted step (if any) with the system (a, g) at its end,
// and returns the matrix the next step is taken on: a, or A + S.
func (t *secantTerm) model(a *mat.SymDense, g []float64) *mat.SymDense {
	if t.ready {
		t.update(a, g)
		t.ready = false
	}
	if !t.useAug {
		return a
	}
	t.aug.AddSym(a, t.s)
	return t.aug
}

// update is NL2SOL's update of S with y = g₊ − g and y♯ = y − A₊s, so that the updated
// model satisfies the full secant condition (A₊ + S₊)s = y: first S is sized down by
// τ = min(1, |sᵀy♯| / |sᵀSs|) (an S grown large on earlier steps would otherwise dominate,
// as in Oren and Luenberger's scaling), then
//
//	S₊ = S + (w yᵀ + y wᵀ)/(yᵀs) − (wᵀs) y yᵀ/(yᵀs)²,   w = y♯ − Ss,
//
// the symmetric rank-two update nearest S in the norm that y weights (Dennis, Gay and
// Welsch 1981, §3). It is skipped where yᵀs ≤ 0: no curvature information along s.
func (t *secantTerm) update(a *mat.SymDense, g []float64) {
	np := len(g)
	sv := mat.NewVecDense(np, t.step)
	floats.SubTo(t.y, g, t.g)
	ys := floats.Dot(t.y, t.step)
	if !(ys > 0) {
		return
	}
	t.tmp.MulVec(a, sv)
	floats.SubTo(t.w, t.y, t.tmp.RawVector().Data) // y♯
	t.tmp.MulVec(t.s, sv)
	ss := t.tmp.RawVector().Data
	if sSs := floats.Dot(t.step, ss); sSs != 0 {
		if tau := math.Abs(floats.Dot(t.step, t.w)) / math.Abs(sSs); tau < 1 {
			t.s.ScaleSym(tau, t.s)
			floats.Scale(tau, ss)
		}
	}
	floats.Sub(t.w, ss)
	ws := floats.Dot(t.w, t.step)
	yv, wv := mat.NewVecDense(np, t.y), mat.NewVecDense(np, t.w)
	t.s.RankTwo(t.s, 1/ys, wv, yv)
	t.s.SymRankOne(t.s, -ws/(ys*ys), yv)
}

// accepted records the step accepted from the system (a, g), which took the objective from f
// to ft, and chooses the next step's model by which of A and A + S (S as it was for this
// step) predicted the decrease better, gated by secantEnter.
func (t *secantTerm) accepted(a *mat.SymDense, g, step []float64, f, ft float64) {
	np := len(g)
	sv := mat.NewVecDense(np, step)
	t.tmp.MulVec(a, sv)
	predGN := -(floats.Dot(g, step) + floats.Dot(step, t.tmp.RawVector().Data)/2)
	t.tmp.MulVec(t.s, sv)
	predAug := predGN - floats.Dot(step, t.tmp.RawVector().Data)/2
	actual := f - ft
	better := math.Abs(actual-predAug) < math.Abs(actual-predGN)
	t.useAug = better && (t.useAug || actual > secantEnter*predGN)
	copy(t.g, g)
	copy(t.step, step)
	t.ready = true
}
