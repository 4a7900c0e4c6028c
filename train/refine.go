package train

import (
	"context"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/fft"
	"github.com/ssmlab/ssmlab/internal/vec"
)

// MaxRefineOrder bounds the orders the Levenberg–Marquardt refinement runs on: each iteration
// factors a (2n+1)² system, 45 MFlop at n = 256 but 3 GFlop at the largest order.
const MaxRefineOrder = 256

// refinable reports whether the job's channels (kernels of length samples) get the
// Levenberg–Marquardt refinement: distillation under a squared-error loss, for an RTF (whose
// Gauss–Newton system has the circulant structure below) up to MaxRefineOrder, and for modal
// and rotation models while their dense system stays small (modalRefinable).
func (s *Spec) refinable(task bool, length int) bool {
	if s.Refine <= 0 || task || s.Order < 1 || (s.Loss != "mse" && s.Loss != "relative") {
		return false
	}
	if s.Model == "rtf" {
		return s.Constraint != "l1_montel" && s.Order <= MaxRefineOrder
	}
	return modalRefinable(s.Order, length)
}

// refineWork holds one channel's buffers for refineRTF.
type refineWork struct {
	m        *rtfModel
	fft      *fft.Real
	ws       workspace
	k, e, x  []float64
	gA, q    []float64    // circular impulse responses of 1/A and B̃/A²
	rgg, rqq []float64    // their circular autocorrelations
	rqg      []float64    // and cross-correlation
	spec     []complex128 // scratch spectrum for inverse
	ga, qs   []complex128 // 1/A and B̃/A² on the FFT grid
	ef       []complex128 // the residual's spectrum
	lm       lmBuffers
}

func newRefineWork(m *rtfModel) *refineWork {
	l := m.length
	w := &refineWork{m: m, fft: fft.NewReal(l), ws: m.newWorkspace(), lm: newLMBuffers(m.numParams())}
	for _, b := range []*[]float64{&w.k, &w.e, &w.x, &w.gA, &w.q, &w.rgg, &w.rqq, &w.rqg} {
		*b = make([]float64, l)
	}
	for _, b := range []*[]complex128{&w.spec, &w.ga, &w.qs, &w.ef} {
		*b = make([]complex128, l/2+1)
	}
	return w
}

// sse returns ½‖k(p) - y‖² and leaves the residual in w.e.
func (w *refineWork) sse(p, y []float64) float64 {
	w.m.kernel(w.ws, p, w.k)
	s := 0.0
	for i, v := range w.k {
		w.e[i] = v - y[i]
		s += w.e[i] * w.e[i]
	}
	return s / 2
}

// inverse writes the inverse real FFT of w.spec, divided by L, into dst.
func (w *refineWork) inverse(dst []float64) {
	w.fft.Sequence(dst, w.spec)
	inv := 1 / float64(len(dst))
	for i := range dst {
		dst[i] *= inv
	}
}

// normal fills the Gauss–Newton system H = JᵀJ and g = Jᵀe of the circular kernel at p (after
// sse(p) has left the residual in w.e). The Jacobian's columns are circular shifts:
// ∂k/∂b̃ⱼ = Sʲ·IFFT(1/A) and ∂k/∂aⱼ = -Sʲ·IFFT(B̃/A²) (RTF paper, eq. 10 differentiated), so
// every entry of JᵀJ is a circular correlation at lag j-i. Eight FFTs of length L give all of
// them and Jᵀe: the system costs O(L log L + n²), not the O(L·n²) of forming J.
func (w *refineWork) normal(h *mat.SymDense, g []float64) {
	ws := w.ws.(*rtfWork) // kernel left A = FFT(1, a) in fa and B̃/A in g
	n, l := w.m.n, w.m.length
	at := func(v []float64, lag int) float64 { return v[((lag%l)+l)%l] }
	ga, qs := w.ga, w.qs
	for i := range ga {
		ga[i] = 1 / ws.fa[i]
		qs[i] = ws.g[i] * ga[i]
	}
	// Spectra: 1/A → gA, B̃/A² → q, and their (cross) power spectra → correlations.
	corr := func(dst []float64, f func(i int) complex128) {
		for i := range w.spec {
			w.spec[i] = f(i)
		}
		w.inverse(dst)
	}
	corr(w.gA, func(i int) complex128 { return ga[i] })
	corr(w.q, func(i int) complex128 { return qs[i] })
	corr(w.rgg, func(i int) complex128 { return complex(sq(ga[i]), 0) })
	corr(w.rqq, func(i int) complex128 { return complex(sq(qs[i]), 0) })
	corr(w.rqg, func(i int) complex128 { return cmplx.Conj(qs[i]) * ga[i] })
	// Jᵀe: correlations of the residual with gA and q.
	ef := w.fft.Coefficients(w.ef, w.e)
	corr(w.x, func(i int) complex128 { return cmplx.Conj(ga[i]) * ef[i] })
	for j := 1; j <= n; j++ {
		g[n+j-1] = w.x[j]
	}
	corr(w.x, func(i int) complex128 { return cmplx.Conj(qs[i]) * ef[i] })
	for j := 1; j <= n; j++ {
		g[j-1] = -w.x[j]
	}
	g[2*n] = w.e[0]
	for j := 1; j <= n; j++ {
		for k := j; k <= n; k++ {
			h.SetSym(j-1, k-1, at(w.rqq, k-j))
			h.SetSym(n+j-1, n+k-1, at(w.rgg, k-j))
		}
		for k := 1; k <= n; k++ {
			h.SetSym(j-1, n+k-1, -at(w.rqg, j-k))
		}
		h.SetSym(j-1, 2*n, -at(w.q, -j))
		h.SetSym(n+j-1, 2*n, at(w.gA, -j))
	}
	h.SetSym(2*n, 2*n, 1)
}

func sq(z complex128) float64 { return real(z)*real(z) + imag(z)*imag(z) }

// refineRTF runs up to iters Levenberg–Marquardt iterations on the RTF parameters p (no
// Montel map) against the target y, in place, accepting only steps that lower the squared
// error and keep every pole strictly inside bound (bound ≤ 0: no check). Adam's first-order
// steps stall orders of magnitude above the least-squares optimum on the ill-conditioned
// coefficient landscape; Gauss–Newton steps with Marquardt's diagonal scaling reach it in
// tens of iterations. st carries the damping and convergence state from an earlier call on
// the same p (nil starts afresh). It returns the final ½‖k - y‖², or ctx.Err().
func refineRTF(ctx context.Context, w *refineWork, p, y []float64, bound float64, iters int, st *lmState) (float64, error) {
	return levenbergMarquardt(ctx, rtfLM{w, y, bound}, &w.lm, p, iters, st)
}

// rtfLM is the RTF refinement's problem for levenbergMarquardt.
type rtfLM struct {
	w     *refineWork
	y     []float64
	bound float64
}

func (r rtfLM) sse(p []float64) float64                          { return r.w.sse(p, r.y) }
func (r rtfLM) normal(_ []float64, h *mat.SymDense, g []float64) { r.w.normal(h, g) }

// admit shortens a step that leaves the radius bound before the damping is raised: the
// optimum of a decaying target often lies near the bound, and raising μ alone would leave
// only ever smaller gradient steps along it.
func (r rtfLM) admit(p, trial, step []float64) bool {
	if r.bound <= 0 {
		return true
	}
	for cut := 0; cut < 6 && !r.w.m.within(trial, r.bound); cut++ {
		for i := range p {
			step[i] /= 2
			trial[i] = p[i] + step[i]
		}
	}
	return r.w.m.within(trial, r.bound)
}

// lmProblem is what levenbergMarquardt needs from a model fitted to a target.
type lmProblem interface {
	// sse returns ½‖k(p) - y‖² and keeps what normal needs.
	sse(p []float64) float64
	// normal fills the Gauss–Newton system H = JᵀJ and g = Jᵀe at p, after sse(p).
	normal(p []float64, h *mat.SymDense, g []float64)
	// admit makes trial = p + step admissible (shortening the step, or projecting trial and
	// updating step to match), or reports that it cannot.
	admit(p, trial, step []float64) bool
}

// lmBuffers are a Levenberg–Marquardt run's system, its damped copy, gradient, step, trial
// point and H·step.
type lmBuffers struct {
	h, damped   *mat.SymDense
	g, step     []float64
	trial       []float64
	stepVec, hs *mat.VecDense
}

func newLMBuffers(np int) lmBuffers {
	b := lmBuffers{h: mat.NewSymDense(np, nil), damped: mat.NewSymDense(np, nil),
		g: make([]float64, np), step: make([]float64, np), trial: make([]float64, np), hs: mat.NewVecDense(np, nil)}
	b.stepVec = mat.NewVecDense(np, b.step)
	return b
}

// clear zeroes every buffer, as newLMBuffers leaves them.
func (b *lmBuffers) clear() {
	clear(b.h.RawSymmetric().Data)
	clear(b.damped.RawSymmetric().Data)
	clear(b.g)
	clear(b.step)
	clear(b.trial)
	clear(b.hs.RawVector().Data)
}

// levenbergMarquardt runs up to iters iterations on p, in place, with Marquardt's diagonal
// scaling and Nielsen's damping update, accepting only steps that lower the squared error.
// st carries the damping and convergence state between calls on the same p (nil: afresh).
func levenbergMarquardt(ctx context.Context, prob lmProblem, b *lmBuffers, p []float64, iters int, st *lmState) (float64, error) {
	if st == nil {
		st = &lmState{}
	}
	np := len(p)
	h, damped, g, step, trial := b.h, b.damped, b.g, b.step, b.trial
	f := prob.sse(p)
	if st.nu == 0 {
		st.mu, st.nu = 1e-6, 2
	}
	mu, nu, stalls := st.mu, st.nu, st.stalls
	defer func() { st.mu, st.nu, st.stalls = mu, nu, stalls }()
	for it := 0; it < iters && f > 0 && !st.done; it++ {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		prob.normal(p, h, g)
		model := h
		if st.secant != nil {
			model = st.secant.model(h, g)
		}
		maxDiag := 0.0
		for i := 0; i < np; i++ {
			maxDiag = math.Max(maxDiag, h.At(i, i))
		}
		accepted := false
		for !accepted && mu < 1e16 {
			damped.CopySym(model)
			for i := 0; i < np; i++ {
				// Marquardt's scaling makes the step invariant to the scale of each parameter;
				// the floor keeps columns that barely move the kernel from blowing up.
				d := h.At(i, i) + 1e-12*maxDiag
				damped.SetSym(i, i, model.At(i, i)+mu*d)
				step[i] = -g[i]
			}
			if !solveDamped(prob, damped, np, step) {
				mu *= nu
				nu *= 2
				continue
			}
			for i := range p {
				trial[i] = p[i] + step[i]
			}
			if !prob.admit(p, trial, step) {
				mu *= nu
				nu *= 2
				continue
			}
			ft := prob.sse(trial)
			// Predicted decrease of the model (Gauss–Newton's, or with the secant term):
			// -(gᵀs + ½sᵀHs).
			b.hs.MulVec(model, b.stepVec)
			pred := -floats.Dot(step, g) - floats.Dot(step, b.hs.RawVector().Data)/2
			if ft < f && pred > 0 {
				rho := (f - ft) / pred
				mu *= math.Max(1.0/3, 1-math.Pow(2*rho-1, 3))
				nu = 2
				// A stall counts only for Gauss–Newton-like steps: with heavy damping, small
				// decreases mean a slow phase, not convergence.
				if f-ft < 1e-6*f && mu < 1e-2 {
					stalls++
				} else {
					stalls = 0
				}
				if st.secant != nil {
					st.secant.accepted(h, g, step, f, ft)
				}
				copy(p, trial)
				f = ft
				accepted = true
			} else {
				mu *= nu
				nu *= 2
			}
		}
		// The accepted trial was the last point evaluated: what sse kept belongs to p for the
		// next system.
		if !accepted || stalls >= 3 {
			st.done = true
		}
	}
	return f, nil
}

// dampedSolver is an lmProblem that solves its damped Gauss–Newton system itself, through a
// structure a dense factorisation does not see (sharedProblem).
type dampedSolver interface {
	// solveDamped overwrites step (−g on entry) with the damped system's solution, or
	// reports that the system is not positive definite.
	solveDamped(damped *mat.SymDense, step []float64) bool
}

// solveDamped solves the damped system by prob's own solver where it has one, else by a dense
// Cholesky factorisation.
func solveDamped(prob lmProblem, damped *mat.SymDense, np int, step []float64) bool {
	if ds, ok := prob.(dampedSolver); ok {
		return ds.solveDamped(damped, step)
	}
	return choleskySolve(damped.RawSymmetric().Data, np, step)
}

// lmState is a Levenberg–Marquardt run's damping (μ, ν), its count of stalled steps,
// whether it has finished (converged, or no damping gives a decrease), and the secant term
// of the Hessian when the run uses one (nil: Gauss–Newton's model alone, as the RTF
// refinement runs).
type lmState struct {
	mu, nu float64
	stalls int
	done   bool
	secant *secantTerm
}

// refineStarts is the number of random starts the refinement adds per channel up to
// refineSmallOrder: poles on a ring of radius 0.5–0.99 at random angles, zero numerator. They
// rarely win now that the ERA orders are starts too (S4 kernels and decaying noise at n = 4:
// 0.752 against 0.758, 0.849 against 0.855 without them), and at n = 64 they cost a fifth of
// the job for a difference in the third digit, so larger orders go without.
const refineStarts = 4

// refineScreen and refineKeep shape the multi-start: every start gets refineScreen
// iterations, then only the best go on to the full count. Most starts' fates are clear after
// a few Gauss–Newton steps, and the (2n+1)³/3 Cholesky factorisations dominate a job's time
// at n = 64, where only the best start goes on. Up to refineSmallOrder an iteration costs
// little more than its FFTs, and the best refineKeep go on: the start that ends best is not
// always ahead after a few steps (Butterworth at n = 16: 1e-10 with one, 3e-11 with three).
const (
	refineScreen     = 6
	refineKeep       = 3
	refineSmallOrder = 16
)

// refineChannels polishes every channel's trained parameters, its initial ones and their
// alternatives (a hankel init that Adam left behind can still be the better basin, and so
// can a lower ERA order) and, at small orders, refineStarts random starts, screening them
// (refineScreen), and keeps per channel whichever ends with the lower relative error.
// Channels run in parallel; the random starts are drawn from the channel's own stream, so
// the result does not depend on scheduling.
func refineChannels(ctx context.Context, spec Spec, models []model, obj objective, params [][]float64, starts [][][]float64, targets [][]float64) ([][]float64, error) {
	out := make([][]float64, len(params))
	errs := make([]error, len(params))
	filters.ForEachChannel(len(params), func(ch int) {
		if mm, ok := models[ch].(*modalModel); ok {
			var init []float64
			if ch < len(starts) && len(starts[ch]) > 0 {
				init = starts[ch][0]
			}
			out[ch], errs[ch] = refineModalChannel(ctx, spec, mm, obj, ch, params[ch], init, targets[ch])
			return
		}
		m := models[ch].(*rtfModel)
		y := targets[ch]
		w := newRefineWork(m)
		inits := [][]float64{append([]float64(nil), params[ch]...)}
		if ch < len(starts) {
			inits = append(inits, starts[ch]...)
		}
		rng := channelRNG(spec.Seed^0x5ee0, ch)
		rings := refineStarts
		if m.n > refineSmallOrder {
			rings = 0
		}
		for range rings {
			inits = append(inits, ringStart(m, y, rng))
		}
		type candidate struct {
			p     []float64
			bound float64
			st    lmState
			rel   float64
		}
		var cands []*candidate
		for _, p := range inits {
			bound := 0.0
			switch {
			case spec.Constraint == "radius":
				bound = spec.poleBound(len(y))
			case m.within(p, 1):
				bound = 1
			}
			if bound > 0 && !m.within(p, bound) {
				continue
			}
			cands = append(cands, &candidate{p: p, bound: bound})
		}
		run := func(c *candidate, iters int) error {
			if _, err := refineRTF(ctx, w, c.p, y, c.bound, iters, &c.st); err != nil {
				return err
			}
			m.kernel(w.ws, c.p, w.k)
			c.rel = obj.relError(ch, w.k)
			if math.IsNaN(c.rel) {
				c.rel = math.Inf(1)
			}
			return nil
		}
		screen := min(spec.Refine, refineScreen)
		for _, c := range cands {
			if errs[ch] = run(c, screen); errs[ch] != nil {
				return
			}
		}
		// The stable sort keeps the candidates' order among equals: deterministic.
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].rel < cands[j].rel })
		keep := 1
		if m.n <= refineSmallOrder {
			keep = refineKeep
		}
		for _, c := range cands[:min(keep, len(cands))] {
			if errs[ch] = run(c, spec.Refine-screen); errs[ch] != nil {
				return
			}
		}
		out[ch] = params[ch]
		bestRel := math.Inf(1)
		for _, c := range cands {
			if c.rel < bestRel {
				out[ch], bestRel = c.p, c.rel
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// refineModalChannel refines a modal or rotation channel from its trained parameters and
// from its initial ones (when the optimiser moved them): both get refineScreen iterations,
// the better goes on to the full count, and the best parameters seen are returned.
func refineModalChannel(ctx context.Context, spec Spec, m *modalModel, obj objective, ch int, trained, init, y []float64) ([]float64, error) {
	w := newModalRefineWork(m, y)
	type candidate struct {
		p   []float64
		st  lmState
		rel float64
	}
	cands := []*candidate{{p: append([]float64(nil), trained...)}}
	if init != nil && !floats.Equal(init, trained) {
		cands = append(cands, &candidate{p: append([]float64(nil), init...)})
	}
	k := make([]float64, m.length)
	relError := func(p []float64) float64 {
		m.kernel(nil, p, k)
		if e := obj.relError(ch, k); !math.IsNaN(e) {
			return e
		}
		return math.Inf(1)
	}
	measure := func(c *candidate) { c.rel = relError(c.p) }
	trainedRel := relError(trained)
	screen := min(spec.Refine, refineScreen)
	for _, c := range cands {
		if _, err := refineModal(ctx, w, c.p, screen, &c.st); err != nil {
			return nil, err
		}
		measure(c)
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if c.rel < best.rel {
			best = c
		}
	}
	if _, err := refineModal(ctx, w, best.p, spec.Refine-screen, &best.st); err != nil {
		return nil, err
	}
	// Accepted steps only lower the error, but the init may start above the trained
	// parameters and stay there.
	if measure(best); trainedRel <= best.rel {
		return trained, nil
	}
	return best.p, nil
}

// ringStart returns RTF parameters with conjugate poles on a random ring (radius 0.5–0.99,
// angles in [0, π)), a real pole for odd n, b̃ = 0 and h0 = y[0]. Multiplying out the real
// quadratic factors is exact enough at these radii.
func ringStart(m *rtfModel, y []float64, rng *rand.Rand) []float64 {
	var poles []complex128
	for range m.n / 2 {
		z := cmplx.Rect(0.5+0.49*rng.Float64(), math.Pi*rng.Float64())
		poles = append(poles, z, cmplx.Conj(z))
	}
	if m.n%2 == 1 {
		poles = append(poles, complex(0.9*rng.Float64(), 0))
	}
	p := make([]float64, m.numParams())
	copy(p, polyFromPoles(poles))
	p[2*m.n] = y[0]
	return p
}

// choleskySolve overwrites the upper triangle of the n×n symmetric positive definite matrix a
// (row-major, upper triangle read, as mat.SymDense stores it) with the factor U of a = UᵀU,
// and x with a⁻¹x; false when a is not positive definite. The right-looking form touches
// only contiguous row segments (an axpy per trailing row), so it needs no mirroring of the
// triangle and no strided column access; at the refinement's sizes (n ≤ 513) it beats LAPACK's
// blocked routines, and unlike mat.Cholesky it does not estimate the condition number, which
// costs as much again.
func choleskySolve(a []float64, n int, x []float64) bool {
	if !choleskyFactor(a, n) {
		return false
	}
	choleskySubstitute(a, n, x)
	return true
}

// choleskyFactor is choleskySolve's factorisation alone.
func choleskyFactor(a []float64, n int) bool {
	for i := 0; i < n; i++ {
		ri := a[i*n+i : i*n+n]
		d := ri[0]
		if !(d > 0) {
			return false
		}
		d = math.Sqrt(d)
		ri[0] = d
		floats.Scale(1/d, ri[1:])
		// Trailing update: row j of the remaining triangle loses U[i][j]·U[i][j:].
		if i+1 < n {
			vec.SubOuterUpper(ri[1:], a[(i+1)*n+i+1:], n)
		}
	}
	return true
}

// choleskySubstitute is choleskySolve's solve with the factor choleskyFactor left in a.
func choleskySubstitute(a []float64, n int, x []float64) {
	// Uᵀy = x (column-oriented: an axpy per row of U), then Ux = y (a dot per row).
	for i := 0; i < n; i++ {
		ri := a[i*n+i : i*n+n]
		x[i] /= ri[0]
		vec.Axpy(-x[i], ri[1:], x[i+1:n])
	}
	for i := n - 1; i >= 0; i-- {
		ri := a[i*n+i : i*n+n]
		x[i] = (x[i] - vec.Dot(ri[1:], x[i+1:n])) / ri[0]
	}
}
