package train

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ssmlab/ssmlab/filters"
)

// LowerBounds returns, for each order n in orders, a lower bound on the relative L2 error
// ‖ĥ − y‖₂/‖y‖₂ of every filter of order n, whatever its form or fitting method (0 where
// nothing above rounding level can be shown).
//
// The m×m Hankel matrix H(ĥ)ᵢⱼ = ĥ[1+i+j] of an order-n filter has rank ≤ n, and so has
// DH(ĥ)D for any diagonal D = diag(√uᵢ). By Eckart–Young–Mirsky, with e = ĥ − y,
// ‖DH(e)D‖_F² ≥ Σ_{i>n} σᵢ(DH(y)D)², and ‖DH(e)D‖_F² = Σₖ cₖ e[1+k]² with
// cₖ = Σ_{i+j=k} uᵢuⱼ; scaled so that every cₖ ≤ 1, the left side is at most ‖e‖₂². Uniform
// weights give √(Σ_{i>n} σᵢ(Hₘ)²/m)/‖y‖; weights falling like (i+c)^(−α), or
// uᵢ = C(2i,i)/4ⁱ (whose self-convolution is 1), count the early samples, where decaying
// kernels keep their energy, fully, and give a higher bound on such kernels (S4 kernels at
// n = 4: 0.58 where uniform weights give 0.40). The best of a few m and weightings is kept
// (boundRecipe).
//
// The tail Σ_{i>n} σᵢ² is bounded from below rigorously however the eigenvalues are
// computed: a full eigendecomposition has each |λᵢ| reduced first by m·ε·|λ|max, more than
// the solver's backward error moves it (Weyl); a Lanczos run uses its Ritz pairs with their
// residuals (boundFromRitz), so that an unconverged or missed eigenvalue lowers the bound
// instead of invalidating it.
func LowerBounds(y []float64, orders []int) []float64 {
	return lowerBounds(y, orders, reportBounds)
}

// boundWeighting is uᵢ ∝ (i+c)^(−α), or C(2i,i)/4ⁱ for c = 0.
type boundWeighting struct{ alpha, c float64 }

// boundRecipe lists the Hankel sizes and weightings a bound is the best of (every size with
// every weighting). A thorough recipe lets weightedTails take more Ritz pairs, up to a full
// eigendecomposition, where the spectrum falls slowly; otherwise one Lanczos run of
// max(orders) + 16 pairs gives what it gives (a weaker bound, never a wrong one).
type boundRecipe struct {
	sizes      []int
	weightings []boundWeighting
	thorough   bool
	// lanczosShare: a Lanczos run while lanczosShare·(top + 16) ≤ m, else a full
	// eigendecomposition (0: 4, where the report's and the thorough recipe's runs stop paying).
	lanczosShare int
}

// reportBounds is what a job's report computes, for a few milliseconds a kernel at L = 1024:
// the largest Hankel matrix by one Lanczos run (lanczosTails), and the short one that wins
// on short FIR kernels, with the two weightings that give the best bound on most kernels.
var reportBounds = boundRecipe{
	sizes:      []int{128, 512},
	weightings: []boundWeighting{{0, 0}, {0.75, 16}},
}

// allBounds is the thorough recipe the quality tests hold fits against.
var allBounds = boundRecipe{
	sizes:      []int{128, 256, 512},
	weightings: []boundWeighting{{0, 1}, {0, 0}, {0.5, 16}, {0.75, 4}, {0.75, 16}, {1, 16}},
	thorough:   true,
}

func lowerBounds(y []float64, orders []int, recipe boundRecipe) []float64 {
	out := make([]float64, len(orders))
	norm := math.Sqrt(floats.Dot(y, y))
	if norm == 0 || len(y) < 4 {
		return out
	}
	top := 0
	for _, n := range orders {
		top = max(top, n)
	}
	for _, m := range recipe.sizes {
		m = min(m, (len(y)-1)/2)
		for _, w := range recipe.weightings {
			tails := weightedTails(y, m, boundWeights(m, w), orders, top, recipe)
			for k, t := range tails {
				out[k] = math.Max(out[k], math.Sqrt(t)/norm)
			}
		}
	}
	return out
}

// weights are dᵢ = √uᵢ and cₖ = Σ_{i+j=k} uᵢuⱼ (≤ 1) of one weighting and size.
type weights struct {
	d, c []float64
}

var (
	weightsMu    sync.Mutex
	weightsCache = map[[3]float64]weights{}
)

// boundWeights returns the weights of w at size m (computed once per process).
func boundWeights(m int, w boundWeighting) weights {
	key := [3]float64{float64(m), w.alpha, w.c}
	weightsMu.Lock()
	defer weightsMu.Unlock()
	if ws, ok := weightsCache[key]; ok {
		return ws
	}
	u := make([]float64, m)
	for i := range u {
		switch {
		case w.c != 0:
			u[i] = math.Pow(float64(i)+w.c, -w.alpha)
		case i == 0:
			u[i] = 1
		default:
			u[i] = u[i-1] * float64(2*i-1) / float64(2*i)
		}
	}
	c := make([]float64, 2*m-1)
	for i, ui := range u {
		floats.AddScaled(c[i:i+m], ui, u)
	}
	// Scale so that every cₖ ≤ 1, with a margin for the rounding of the sums.
	scale := 1 / (floats.Max(c) * (1 + 1e-12))
	d := make([]float64, m)
	for i := range d {
		d[i] = math.Sqrt(u[i] * math.Sqrt(scale))
	}
	floats.Scale(scale, c)
	ws := weights{d: d, c: c}
	weightsCache[key] = ws
	return ws
}

// weightedTails returns, for each order, a lower bound on Σ_{i>n} λᵢ² for the eigenvalues λ
// of M = DHD, H the m×m Hankel matrix of y[1:]; top is the largest order. thorough lets it
// take more Ritz pairs (see boundRecipe).
func weightedTails(y []float64, m int, w weights, orders []int, top int, recipe boundRecipe) []float64 {
	// ‖M‖_F² = Σₖ cₖ y[1+k]².
	frob := 0.0
	for k, ck := range w.c {
		frob += ck * y[1+k] * y[1+k]
	}
	out := make([]float64, len(orders))
	if frob == 0 {
		return out
	}
	op := newHankelOp(y[1:], m)
	scratch := make([]float64, m)
	apply := func(dst, x []float64) {
		for i, v := range x {
			scratch[i] = w.d[i] * v
		}
		op.apply(dst, scratch)
		for i := range dst {
			dst[i] *= w.d[i]
		}
	}
	share := recipe.lanczosShare
	if share == 0 {
		share = 4
	}
	if share*(top+16) > m {
		return denseTails(y, m, w, orders)
	}
	report := lanczosTails(apply, m, frob, orders, top)
	if !recipe.thorough {
		return report
	}
	// The thorough recipe is never below the report's: the best of it and of more Ritz pairs,
	// with explicit residuals, until the unexplored rest of M is below the top order's square
	// (then boundFromRitz loses only their residuals), or a full eigendecomposition costs
	// less.
	best := func(tails []float64) []float64 {
		for k, t := range report {
			tails[k] = math.Max(tails[k], t)
		}
		return tails
	}
	mv := make([]float64, m)
	for r := top + 16; ; r *= 2 {
		if 4*r > m {
			return best(denseTails(y, m, w, orders))
		}
		theta, vecs, err := lanczosTop(apply, m, r)
		if err != nil {
			return best(denseTails(y, m, w, orders))
		}
		res := make([]float64, len(vecs))
		for i, v := range vecs {
			apply(mv, v)
			floats.AddScaled(mv, -theta[i], v)
			res[i] = floats.Dot(mv, mv)
		}
		tails, enough := boundFromRitz(theta, res, frob, orders)
		if enough {
			return best(tails)
		}
	}
}

// lanczosTails is weightedTails' report recipe: one Lanczos run on M (apply, m×m, ‖M‖_F² =
// frob) whose Ritz pairs give the bound at every check, the residuals from the last entries
// of the tridiagonal matrix's eigenvectors (ritzLast, O(k²) after k steps: no eigenvectors,
// no products with M beyond the run's), the best of its checks kept. It stops once no
// order's bound rose by more than boundSettle since the last check, once boundFromRitz has
// enough, or once the top + 16 leading pairs have converged to hankelLanczosTol (where the
// report's run stopped before: it never takes more steps). "Enough" includes residuals small
// enough to leave the bound at least half the Ritz values' own tail: with large residuals the
// rest looks empty while the bound stays low (boundFromRitz). Against a thorough bound, it
// keeps 93–99% of the dense bound at n = 64 on the trained filters and decaying noise where
// stopping at converged pairs and measuring their residuals kept 64–80%, in a third of the
// time.
func lanczosTails(apply func(dst, x []float64), m int, frob float64, orders []int, top int) []float64 {
	run := newLanczosRun(apply, m)
	defer run.release()
	r := min(top+16, m)
	check := r
	var prev []float64
	out := make([]float64, len(orders))
	// The run continues (lanczosRun.ensure) after an invariant subspace from a fresh vector,
	// and ends where none is left.
	for k := 1; k <= m && run.ensure(k); k++ {
		b := run.bs[k-1]
		invariant := run.invariant(b)
		if k == check || k == m || invariant {
			theta, last, ok := ritzLast(run.alpha[:k], run.beta[:k-1])
			if !ok {
				return out
			}
			// A residual is β·|last entry| where the Lanczos relation MQ = QT + βqeₖᵀ holds;
			// in floating point each column of it is off by about ε(√k + log₂ 2m)·‖M‖ (the
			// reorthogonalisation's sums and the FFT product), which each residual is raised by
			// (four times over).
			norm := 0.0
			for _, t := range theta {
				norm = math.Max(norm, math.Abs(t))
			}
			slack := 4 * 0x1p-52 * (math.Sqrt(float64(k)) + math.Log2(2*float64(m))) * norm
			res := make([]float64, k)
			for i, z := range last {
				r := math.Abs(b*z) + slack
				res[i] = r * r
			}
			tails, enough := boundFromRitz(theta, res, frob, orders)
			for i, t := range tails {
				out[i] = math.Max(out[i], t)
			}
			if enough || k == m || settledTails(prev, tails) || converged(theta, last, b, r) {
				return out
			}
			prev = tails
			if invariant {
				check = k + 16
				continue
			}
			check = min(m, k+max(16, k/4))
		}
	}
	return out
}

// boundSettle is the rise of a squared tail between two checks of lanczosTails below which
// the run stops: 1%, half a percent of the bound.
const boundSettle = 0.01

// settledTails reports whether no tail rose by more than boundSettle of itself from prev
// (the check before) to tails, and every tail is positive (a bound still at zero is waiting
// for its Ritz pairs to converge).
func settledTails(prev, tails []float64) bool {
	if prev == nil {
		return false
	}
	for i, t := range tails {
		if !(t > 0) || t > prev[i]*(1+boundSettle) {
			return false
		}
	}
	return true
}

// boundFromRitz bounds the tails Σ_{i>n} λᵢ² of a symmetric M from below, given Ritz
// values θ (by decreasing |θ|) of orthonormal Ritz vectors, the squared norms res[i] of their
// residuals Mvᵢ − θᵢvᵢ, and frob = ‖M‖_F². For the first p Ritz vectors V, in the basis
// [V V⊥], M is block-diagonal diag(Θ, C) plus off-diagonal blocks E with ‖E‖_F² = 2Σres, and
// ‖C‖_F² = frob − Σθ² − 2Σres. √(Σ_{i≤n} σᵢ²) is a unitarily invariant norm, so it is at
// most its value on diag(Θ, C) plus ‖E‖_F, and on diag(Θ, C) the n largest squares are at
// most θ₁² + … + θ²_{n−1} + max(θₙ², ‖C‖_F²): C may hold one eigenvalue as large as its
// Frobenius norm. Each order takes the best p ≥ n. enough reports whether, at every order,
// ‖C‖_F² falls below θₙ² (or to rounding level) for some p: more Ritz pairs would gain little.
func boundFromRitz(theta, res []float64, frob float64, orders []int) ([]float64, bool) {
	type pair struct{ sq, res float64 }
	ps := make([]pair, len(theta))
	for i, t := range theta {
		ps[i] = pair{t * t, res[i]}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].sq > ps[j].sq })
	// Rounding: a margin of 1e-13 of frob on every squared norm (frob and the sums of
	// squares), and of 1e-13·√frob on the residuals' norm (each is measured to about
	// ε‖M‖√m).
	margin := 1e-13 * frob
	resMargin := 1e-13 * math.Sqrt(frob)
	head := make([]float64, len(ps)+1) // Σθ² over the first p
	resSum := make([]float64, len(ps)+1)
	for i, p := range ps {
		head[i+1] = head[i] + p.sq
		resSum[i+1] = resSum[i] + p.res
	}
	out := make([]float64, len(orders))
	enough := true
	for k, n := range orders {
		if n < 1 || n > len(ps) {
			enough = enough && n < 1
			continue
		}
		best := 0.0
		below := false
		for p := n; p <= len(ps); p++ {
			rest := math.Max(frob-head[p]-2*resSum[p], 0) + margin
			// Below θₙ², or at rounding level: no more pairs can raise the bound much.
			below = below || rest < ps[n-1].sq || rest <= 1e3*margin
			kyFan := math.Sqrt(head[n-1]+math.Max(ps[n-1].sq, rest)) + math.Sqrt(2*resSum[p]) + resMargin
			best = math.Max(best, frob-kyFan*kyFan-margin)
		}
		out[k] = best
		// Nor while the residuals hold the bound far below the Ritz values' own tail (which
		// overstates the true tail while the run has not converged): subtracting large
		// residuals clamps the rest to zero, which looks like "below" but is not (a trained
		// Hyena kernel's bound at n = 64 stopped at 1.6e-6 where more steps give 1.5e-3).
		tail := math.Max(frob-head[n], 0)
		explained := best >= tail/2 || tail <= 1e3*margin
		enough = enough && below && explained
	}
	return out, enough
}

// denseTails is weightedTails by a full eigendecomposition.
func denseTails(y []float64, m int, w weights, orders []int) []float64 {
	h := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			h.SetSym(i, j, w.d[i]*w.d[j]*y[1+i+j])
		}
	}
	out := make([]float64, len(orders))
	var eig mat.EigenSym
	if !eig.Factorize(h, false) {
		return out
	}
	sq := eig.Values(nil)
	top := math.Max(math.Abs(sq[0]), math.Abs(sq[len(sq)-1])) // ascending
	slack := float64(m) * 0x1p-52 * top
	for i, v := range sq {
		v = math.Max(math.Abs(v)-slack, 0)
		sq[i] = v * v
	}
	sort.Float64s(sq) // ascending: the tail beyond the n largest is the first m − n
	for k, n := range orders {
		out[k] = floats.Sum(sq[:max(m-n, 0)])
	}
	return out
}

// kernelGrowth is the RMS of y's last quarter over the largest of the three quarters before
// it (+Inf where those are zero and the last is not, 0 for an empty or all-zero y). Above 1
// the kernel grows over its length, which a stable filter's response does only in part and
// LowerBounds, holding for every filter, stable or not, does not see (growingNote); a
// constant tail (an integrator's 0, 1, 1, …) is 1, not growth.
func kernelGrowth(y []float64) float64 {
	q := len(y) / 4
	if q == 0 {
		return 0
	}
	last := floats.Norm(y[len(y)-q:], 2)
	if last == 0 {
		return 0
	}
	before := 0.0
	for i := range 3 {
		before = math.Max(before, floats.Norm(y[i*q:(i+1)*q], 2))
	}
	return last / before
}

// noteRatio is how far above its lower bound (or above 1e-6, where the bound is below that) a
// fit must end for the report to look for why (growingNote, radiusNote): the factor issue
// 23's bar allows.
const noteRatio = 3

// farAboveBound reports whether a fit of relative error rel ends more than noteRatio above
// its lower bound.
func farAboveBound(rel, bound float64) bool { return rel > noteRatio*math.Max(bound, 1e-6) }

// growingNote explains the report's channels whose kernel grows over its length and whose
// fit ends more than noteRatio above its lower bound (as the deployed errors rel and
// bounds bound say), or returns "" where there are none: a stable filter's response decays,
// and the bound does not assume stability. Every quality target's last quarter is at most
// 0.34 of its first in RMS (so of the largest before it too).
func growingNote(targets [][]float64, rel, bound []float64) string {
	var chans []int
	worst := 0.0
	for ch, y := range targets {
		g := kernelGrowth(y)
		if !(g > 1) || !farAboveBound(rel[ch], bound[ch]) {
			continue
		}
		chans = append(chans, ch)
		worst = math.Max(worst, g)
	}
	if len(chans) == 0 {
		return ""
	}
	fits := "its fit ends"
	if len(chans) > 1 {
		fits = "their fits end"
	}
	how := fmt.Sprintf("the last quarter's RMS up to %.3g× that of any quarter before it", worst)
	if math.IsInf(worst, 1) {
		how = "three quarters of zeros, a last one that is not"
	}
	return fmt.Sprintf("%s from start to end (%s) and %s more than %d× above the lower bound, which holds for unstable filters too: a stable filter's response decays, so it follows a growing kernel only in part", channelsGrow(chans), how, fits, noteRatio)
}

// onBound reports whether a pole of radius rho sits on the radius bound rmax: within 1% of
// its distance from the unit circle (the projection keeps poles strictly inside rmax).
func onBound(rho, rmax float64) bool { return 1-rho <= 1.01*(1-rmax) }

// RadiusText writes a radius bound r in (0, 1) with at least 6 digits and those that show
// its distance from the unit circle: 0.9999, 0.999969 (1 − 1/32768), 0.9999924 (1 − 1/131072).
func RadiusText(r float64) string {
	return strconv.FormatFloat(r, 'g', max(6, int(math.Ceil(-math.Log10(1-r)))+1), 64)
}

// widerBound is the radius bound radiusNote suggests in place of rmax: a tenth as far from
// the unit circle, and no further out than a MaxRadius may be.
func widerBound(rmax float64) float64 { return math.Min(1-(1-rmax)/10, 1-filters.MarginalTol) }

// radiusProbe is what boundProbe found: the relative error of a fit allowed the wider
// radius bound, and how it got there.
type radiusProbe struct {
	rel float64
	how probeHow
}

// probeHow is how boundProbe reached its error within the wider bound: the fit's poles on
// the bound moved out (residues refitted), the fit's poles refined, or the job's ERA start
// refined.
type probeHow int

const (
	probeMoved probeHow = iota
	probeRefined
	probeFromStart
)

// noProbe is the probe of a channel boundProbe did not run on, or that found nothing.
var noProbe = radiusProbe{rel: math.Inf(1)}

// boundProbe returns what channel ch's fit (target y, poles, relative error rel, real or
// positive poles only as kind says) reaches with the radius bound widened to
// widerBound(rmax): its poles on the bound moved out to it, the residues refitted in least
// squares (lsResidues); where that does not end boundProbeRatio below rel over a kernel long
// enough for the move to change a pole's power by more than a factor e, its poles refined
// within the wider bound (probeIters iterations of variable projection); and where that does
// not either, the job's ERA starts of the fit's order (realisation.starts) made within the
// wider bound and refined there as much, whichever ends lowest. noProbe where no pole is on
// the bound, rmax cannot widen or the refits fail. The wider bound admits these poles, so a
// probe well below the fit's error says that the bound, not the search, is what stops it.
// Over a long kernel the move alone changes the poles' decay too much to say so: on the
// Hyena preset of 32768 samples at order 4, from poles on 0.9999 at 0.045 the move ends at
// 0.54, the refinement within 0.99999 at 0.016. And a fit that traded the mode the bound
// hides for another does not find it again from its own poles: 0.5·0.9ᵗ + (1 − 3/L)ᵗ over
// 32768 samples at order 2 ends at 0.014 under 0.9999 and its poles refined within 0.99999
// at 0.0139, ERA's start (poles near 0.9 and 1 − 3/L) refined there at 1e-11. Once ctx
// is done it refines nothing more and returns what it has.
func boundProbe(ctx context.Context, obj objective, ch int, y []float64, poles []complex128, rmax float64, kind Poles, rel float64) radiusProbe {
	wider := widerBound(rmax)
	if !(wider > rmax) {
		return noProbe
	}
	moved := slices.Clone(poles)
	found := false
	for i, p := range moved {
		if r := cmplx.Abs(p); onBound(r, rmax) {
			moved[i] = p * complex(wider/r, 0) // conjugates stay conjugate
			found = true
		}
	}
	if !found {
		return noProbe
	}
	out := noProbe
	if res, err := lsResidues(moved, y); err == nil {
		if d, err := filters.NewDiagonal(moved, res, y[0]); err == nil {
			out.rel = obj.relError(ch, d.Impulse(len(y)))
		}
	}
	if out.rel*boundProbeRatio <= rel || float64(len(y))*(wider-rmax) <= 1 {
		// Found; or a short kernel, where the poles moved out are what a refit would start
		// from (L = 1024 under 0.9999: their powers change by 9% at most; refining there
		// cost the quality targets' S4 jobs of order 64 seventeen refinements).
		return out
	}
	// Refined without screening or extension: a probe, not a fit. The job's ERA starts
	// (a Lanczos run on a Hankel matrix of eraSize) only where the fit's own poles fall
	// short.
	n := len(poles)
	rs := &rungStarts{n: n, y: y, o: projectOptions{rmax: wider, poles: kind}}
	defer rs.release()
	refine := func(st poleStart, how probeHow) {
		c := rs.add(st)
		if _, err := c.v.fit(ctx, c.a, probeIters, &c.st, true); err != nil {
			return
		}
		d, err := (&modalFit{s: c.v.s, a: c.a, c: c.v.c, h0: y[0]}).diagonal()
		if err != nil {
			return
		}
		if e := obj.relError(ch, d.Impulse(len(y))); e < out.rel {
			out = radiusProbe{rel: e, how: how}
		}
	}
	refine(startFromPoles(poles, n, wider), probeRefined)
	if out.rel*boundProbeRatio <= rel || ctx.Err() != nil {
		return out
	}
	if real, err := newRealisation(y, n); err == nil {
		for _, st := range real.starts(n, wider) {
			refine(st, probeFromStart)
		}
	}
	return out
}

// probeIters is the iterations boundProbe refines a fit within the wider bound: enough to
// show the bound's hold (the Hyena preset above: 0.045 → 0.016 within 20), not to finish.
const probeIters = projectScreen

// boundProbeRatio is how far below a channel's error its boundProbe must end for
// radiusNote to blame the radius bound.
const boundProbeRatio = 2

// radiusNote explains the report's channels whose fit ends more than noteRatio above its
// lower bound (the deployed errors rel and bounds bound) with poles on the radius bound
// rmax whose move to widerBound(rmax) alone (probe, boundProbe's) at least halves the
// error, or returns "" where there are none: the bound, which the lower bound does not
// assume, is what stops the fit (a kernel decaying as 0.99999ᵗ ended at 0.05 at order 1
// under 0.9999). constrained says whether rmax is the job's MaxRadius (else the bound of
// the fit without the constraint, AutoRadius of the kernels' length, which the radius
// constraint replaces).
func radiusNote(rel, bound []float64, probe []radiusProbe, rmax float64, constrained bool) string {
	var chans []int
	worst := -1
	for ch := range rel {
		if !farAboveBound(rel[ch], bound[ch]) || !(probe[ch].rel*boundProbeRatio <= rel[ch]) {
			continue
		}
		chans = append(chans, ch)
		if worst < 0 || rel[ch] > rel[worst] {
			worst = ch
		}
	}
	if len(chans) == 0 {
		return ""
	}
	w := RadiusText(widerBound(rmax))
	// what the probe found, in a sentence of its own and inside the list's parentheses
	e := fmt.Sprintf("%.3g", probe[worst].rel)
	found, foundListed := "moved out to "+w+" (residues refitted), its poles give "+e, "moved out to "+w+", residues refitted, its poles give "+e
	switch probe[worst].how {
	case probeRefined:
		found = "refined within " + w + ", its poles give " + e
		foundListed = found
	case probeFromStart:
		found = "the fit from its ERA start refined within " + w + " gives " + e
		foundListed = found
	}
	which := fmt.Sprintf("channel %d's fit ends at %.3g, far above its lower bound %.3g, with a pole on the radius bound %s: %s",
		worst, rel[worst], bound[worst], RadiusText(rmax), found)
	if len(chans) > 1 {
		which = fmt.Sprintf("the fits of %s end far above their lower bounds with poles on the radius bound %s (worst channel %d: %.3g against %.3g; %s)",
			channelsList(chans), RadiusText(rmax), worst, rel[worst], bound[worst], foundListed)
	}
	fix := fmt.Sprintf("a --max-radius closer to 1, e.g. %s, lets the fit place them there", w)
	if !constrained {
		fix = fmt.Sprintf("--constraint radius with a --max-radius closer to 1, e.g. %s, lets the fit place them there", w)
	}
	return fmt.Sprintf("%s, so the bound, not the order, limits the fit; %s", which, fix)
}

// channelsList names channels: "channel 3", "channels 0, 1".
func channelsList(chans []int) string {
	if len(chans) == 1 {
		return fmt.Sprintf("channel %d", chans[0])
	}
	names := make([]string, len(chans))
	for i, c := range chans {
		names[i] = strconv.Itoa(c)
	}
	return "channels " + strings.Join(names, ", ")
}

// channelsGrow names growing kernels: "the kernel of channel 3 grows", "the kernels of
// channels 0, 1 grow".
func channelsGrow(chans []int) string {
	if len(chans) == 1 {
		return fmt.Sprintf("the kernel of channel %d grows", chans[0])
	}
	return "the kernels of " + channelsList(chans) + " grow"
}
