package train

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/ssmlab/ssmlab/filters"
)

// modalFit is one channel's fitted modal filter: its poles (in s's parametrisation a), the
// residues c (Re r, Im r per pair, r per real pole, as varpro orders them), the direct term
// and the relative L2 error of the whole response (once runRung returns it, as written:
// writtenError).
type modalFit struct {
	s   poleSet
	a   []float64
	c   []float64
	h0  float64
	rel float64
}

// diagonal returns the fit as a modal filter.
func (f *modalFit) diagonal() (*filters.Diagonal, error) {
	var poles, res []complex128
	for i := 0; i < f.s.pairs; i++ {
		l := f.s.pole(f.a, i)
		r := complex(f.c[2*i], f.c[2*i+1])
		if imag(l) == 0 {
			// θ at 0 or π: the pair is 2Re(r)·λ^τ, a double real mode.
			poles = append(poles, l, l)
			res = append(res, complex(real(r), 0), complex(real(r), 0))
			continue
		}
		if filters.NearlyReal(l) {
			// θ within rounding of 0 or π, where a filter takes the pole as real (and its
			// residue must be): with λ = sρe^{iδ}, s = ±1, 2Re(rλ^τ) is s^τρ^τ(2Re r·cos τδ −
			// 2Im r·sin τδ), which the real modes sρe^{±δ} with residues Re r ∓ Im r give up to
			// O(|r|(τδ)²), |δ| ≤ 2e-12 (an order-n fit can end there, with |Im r| ~ 1e5).
			s := 1.0
			if real(l) < 0 {
				s = -1
			}
			rho, d := cmplx.Abs(l), math.Atan2(s*imag(l), s*real(l))
			poles = append(poles, complex(s*rho*math.Exp(d), 0), complex(s*rho*math.Exp(-d), 0))
			res = append(res, complex(real(r)-imag(r), 0), complex(real(r)+imag(r), 0))
			continue
		}
		poles = append(poles, l, cmplx.Conj(l))
		res = append(res, r, cmplx.Conj(r))
	}
	for i := 0; i < f.s.reals; i++ {
		poles = append(poles, f.s.pole(f.a, f.s.pairs+i))
		res = append(res, complex(f.c[2*f.s.pairs+i], 0))
	}
	return filters.NewDiagonal(poles, res, f.h0)
}

// poles returns the fit's poles, conjugate-closed.
func (f *modalFit) poles() []complex128 {
	var out []complex128
	for i := 0; i < f.s.pairs; i++ {
		l := f.s.pole(f.a, i)
		out = append(out, l, cmplx.Conj(l))
	}
	for i := 0; i < f.s.reals; i++ {
		out = append(out, f.s.pole(f.a, f.s.pairs+i))
	}
	return out
}

// projectOptions configures the modal fit of one channel.
type projectOptions struct {
	rng   *rand.Rand // the random starts' stream (the channel's own)
	rmax  float64    // every pole strictly inside this radius
	poles Poles      // the poles placed (Spec.Poles): real only, for real or positive
	iters int        // Levenberg–Marquardt iterations per order (0: the best start's residues)
	sums  sampleSums // where the sums over the samples run (nil: here, cpuSums)
}

// projectRings random starts join the ERA starts up to order projectRingOrder, where a
// start costs little: at n = 4 the basins are few and deep, and ERA's poles miss the best
// one on some S4 kernels (0.766 against 0.725 on one channel). At n = 16 they won one
// channel of the quality targets' 112 (S4, 0.443 against 0.497 from the next start: the
// set's mean 0.4236 against 0.4269) and their screening cost 5–8% of every job from n = 16
// on, more than the rung's other starts together; at n = 8, through the warm starts they
// leave, S4's means at n = 8 and 16 (0.6319 and 0.4269; 0.6347 and 0.436 without) and
// decaying noise's at n = 8 (0.7606; 0.7652), for 10–15% of the decaying-noise jobs from
// n = 8 to 32 (the means at n = 16 and 32 0.2% lower without; no other set moves, no
// order-64 fit).
const (
	projectRings     = 4
	projectRingOrder = 4
)

// ringPoles is a random start of order n: pairs on a ring (radius 0.5–0.99, angles in
// [0, π)), a random number of them replaced by two real poles in (−0.9, 0.99).
func ringPoles(n int, rng *rand.Rand) poleStart {
	var s poleStart
	reals := n % 2
	if n >= 2 {
		reals += 2 * rng.IntN(n/2+1)
	}
	for range (n - reals) / 2 {
		s.pairs = append(s.pairs, cmplx.Rect(0.5+0.49*rng.Float64(), math.Pi*rng.Float64()))
	}
	for range reals {
		s.reals = append(s.reals, -0.9+1.89*rng.Float64())
	}
	return s
}

// projectScreen is the number of iterations every start gets before the best goes on (but
// for those projectCuts stop).
const projectScreen = 20

// projectCuts are the screening's checkpoints: after iters iterations, the starts whose error
// is above ratio times the best one's stop there (the last checkpoint, projectScreen, keeps
// every start). Over the quality targets (TestDistillQuality, n = 4 to 64) the start that
// ends the screening best was within 21× of the best after 5 iterations and within 2.2×
// after 10 (windowed sincs at n = 4 and 8, Butterworth at n = 4; 1.06× at n = 64), so the
// cuts keep it with a margin of about 5 and every fit is the same; at n = 64 they save a
// fifth to a third of the losing starts' evaluations (S4 kernels, trained drawn lags).
var projectCuts = []screenCut{{5, 100}, {10, 10}, {projectScreen, math.Inf(1)}}

// projectTightCuts are the checkpoints from order projectTightOrder on, where an iteration
// costs most: there the winner was within 3.9× of the best after 5 iterations and 1.5× after
// 10 (n = 16, 32 and 64 on 16 channels of every quality set, 240 rungs), kept with margins
// of 2.6 and 2; every fit is the same.
var projectTightCuts = []screenCut{{5, 10}, {10, 3}, {projectScreen, math.Inf(1)}}

const projectTightOrder = 16

// screenCut is a checkpoint of the screening.
type screenCut struct {
	iters int
	ratio float64
}

// withinRatio keeps the candidates (in place) whose error is at most ratio times the least
// (+Inf keeps all).
func withinRatio(cands []*candidate, ratio float64) []*candidate {
	if math.IsInf(ratio, 1) {
		return cands
	}
	best := math.Inf(1)
	for _, c := range cands {
		best = math.Min(best, c.sse)
	}
	kept := cands[:0]
	for _, c := range cands {
		if c.sse <= ratio*ratio*best || c.sse == best {
			kept = append(kept, c)
		}
	}
	return kept
}

// projectExtend is how many times its iterations more a rung's best candidate may take
// while it still descends.
const projectExtend = 3

// extendFloor is the relative error (of y[1:]) below which a rung's best fit takes no more
// iterations than the rung's: 1e-6 is the quality bar for targets an order-n filter holds
// exactly, and float32 deployments, which round every parameter by 6e-8 and the response by
// that times the modes' amplification, keep no more. On windowed sincs at n = 64 channels
// went on to 3.4e-8 and 3.4e-7, which read back from float32 (as StripedHyena stores poles
// and residues) at 2.1e-6 and 2.2e-6; that took 65% of the set's QR residue solves.
const extendFloor = 1e-6

// realisation holds a channel's balanced realisations for the rungs up to order top, each
// truncated for its rung (a balanced realisation's truncation to order r is its leading r×r
// block): ERA on the largest square Hankel matrix of the kernel, and, made when an ERA
// truncation is unstable, the balanced truncation of the kernel's FIR realisation. A ladder
// makes one per order it fits (rungRealisations), so that a rung starts from the same
// realisation in every job and ladder that fits it, whatever their largest order.
type realisation struct {
	y    []float64
	top  int
	era  *filters.Dense
	firs map[int]*filters.Dense // FIR realisations by order, shared by a channel's rungs
	// firTops is the FIR realisation's Hankel matrix's eigenpairs (of firPad(y), held in
	// fir), shared by a channel's rungs (nil: firStart makes its own).
	fir     []float64
	firTops *hankelTops
	errs    map[int]float64 // eraError's, by order (a response of O(n²·L))
}

// eraSize is the largest square Hankel matrix a realisation's ERA takes (eraFilter's).
const eraSize = 512

func newRealisation(y []float64, n int) (*realisation, error) {
	tops := eraTops(y, eraSize)
	defer tops.release()
	r, err := realisationFrom(y, n, tops)
	if err != nil {
		return nil, err
	}
	r.firs = map[int]*filters.Dense{}
	return r, nil
}

// realisationFrom is newRealisation with ERA's eigenpairs from tops (eraTops(y, eraSize)),
// without the FIR realisations' map (the caller's: rungRealisations shares its own).
func realisationFrom(y []float64, n int, tops *hankelTops) (*realisation, error) {
	era, err := eraFrom(y, n, tops)
	if err != nil {
		return nil, err
	}
	return &realisation{y: y, top: n, era: era}, nil
}

// firPad is the kernel padded with zeros to twice its length: the Markov parameters of its
// FIR realisation, whose (L−1)×(L−1) Hankel matrix firStart truncates.
func firPad(y []float64) []float64 {
	pad := make([]float64, 2*len(y))
	copy(pad, y)
	return pad
}

// rungRealisations makes a channel's realisations, one per order asked (each ERA's Lanczos
// run to that many pairs), sharing their FIR realisations. A realisation made to a larger
// order and truncated differs at rounding level from one of the rung's own order (Lanczos
// stops once the pairs asked for converge, so the leading ones come out differently), and a
// fit that ends where its start's poles put it keeps that difference: on the Hyena preset's
// channel 2 (of 4) Levenberg–Marquardt sees 2.4e-9 all around ERA's order-4 poles (the
// rounding of residues from the normal equations), and the refined residues give those
// poles' own error, 6.11577e-11 from ERA's order-8 realisation (the job of order 8) and
// 6.13941e-11 from its order-16 one (the job of order 16, which then ended above the job of
// order 8; the basin's floor, with residues from QR throughout, is 6.1105e-11).
//
// The realisations' Lanczos runs are shared too (hankelTops): ERA's of every order from one
// run, the FIR realisation's of every order from another, each order's answer the same to
// the bit as a run of its own (on decaying noise, where Lanczos converges slowly, ERA's runs
// for orders 4 … 64 were a quarter of the order-64 job).
type rungRealisations struct {
	y                []float64
	firs             map[int]*filters.Dense
	byTop            map[int]*realisation
	fir              []float64 // firPad(y)
	eraTops, firTops *hankelTops
}

func newRungRealisations(y []float64) *rungRealisations {
	rr := &rungRealisations{y: y, firs: map[int]*filters.Dense{}, byTop: map[int]*realisation{},
		eraTops: eraTops(y, eraSize)}
	if len(y) <= firShareLength {
		rr.fir = firPad(y)
		rr.firTops = eraTops(rr.fir, len(y)-1)
	}
	return rr
}

// firShareLength is the longest kernel whose FIR realisation's Lanczos run a channel keeps
// for all its rungs (firStart makes and releases its own beyond it): the run holds its
// vectors, about 200 of L − 1 samples each, while the channel's fits run (13 MB at 8192
// samples; 1.6 GB at 2²⁰, once per channel fitted in parallel).
const firShareLength = 8192

// release hands the shared runs' vectors back; rr's realisations must not make FIR starts
// after.
func (rr *rungRealisations) release() {
	rr.eraTops.release()
	if rr.firTops != nil {
		rr.firTops.release()
	}
}

// at returns the realisation of order n.
func (rr *rungRealisations) at(n int) (*realisation, error) {
	if r, ok := rr.byTop[n]; ok {
		return r, nil
	}
	r, err := realisationFrom(rr.y, n, rr.eraTops)
	if err != nil {
		return nil, err
	}
	r.firs, r.fir, r.firTops = rr.firs, rr.fir, rr.firTops
	rr.byTop[n] = r
	return r, nil
}

// starts returns the rung's starts of order n: ERA's poles with the unstable ones reflected
// (λ → 1/λ̄, which keeps the shape of the magnitude response) and, where some lie beyond the
// radius bound, ERA's poles clipped to it instead.
func (r *realisation) starts(n int, rmax float64) []poleStart {
	k := min(n, r.era.Order())
	poles, err := filters.Poles(leading(r.era, k))
	if err != nil {
		return nil
	}
	out := []poleStart{startFromPoles(poles, n, rmax)}
	clipped := make([]complex128, len(poles))
	moved := false
	for i, p := range poles {
		if a := cmplx.Abs(p); a > rmax {
			p *= complex(rmax/a, 0)
			moved = true
		}
		clipped[i] = p
	}
	if moved {
		out = append(out, startFromPoles(clipped, n, rmax))
	}
	return out
}

// withinRank reports whether ERA's realisation, of the kernel's numerical rank, has every
// pole within rmax, so that a fit of that many poles can follow it (fitLadder).
func (r *realisation) withinRank(rmax float64) bool {
	p, err := filters.Poles(r.era)
	if err != nil {
		return true
	}
	for _, x := range p {
		if cmplx.Abs(x) > rmax {
			return false
		}
	}
	return true
}

// eraError is the relative error of ERA's order-n truncation as a state-space model.
func (r *realisation) eraError(n int) float64 {
	if e, ok := r.errs[n]; ok {
		return e
	}
	e := filters.RelDiff(r.y, leading(r.era, min(n, r.era.Order())).Impulse(len(r.y)))
	if math.IsNaN(e) {
		e = math.Inf(1)
	}
	if r.errs == nil {
		r.errs = map[int]float64{}
	}
	r.errs[n] = e
	return e
}

// firStart is the start from the balanced truncation of the kernel's FIR realisation (order
// L−1, every pole at 0, whose Hankel matrix is the kernel's padded with zeros), stable by
// Pernebo and Silverman's theorem. It costs a Lanczos run on the (L−1)×(L−1) matrix, made
// once for each order asked, the largest the rung fits: its top, or ERA's rank where that is
// smaller (fitLadder fits no more poles than the rank; S4 kernels of rank 36–63 took 3–11%
// less, Butterworth kernels of order 2–8 a fifth less at n = 64); rungs of one rank share it.
func (r *realisation) firStart(n int, rmax float64) (poleStart, bool) {
	size := min(r.top, max(r.era.Order(), 1))
	fir, ok := r.firs[size]
	if !ok {
		pad, tops := r.fir, r.firTops
		if tops == nil {
			pad = firPad(r.y)
			tops = eraTops(pad, len(r.y)-1)
			defer tops.release()
		}
		var err error
		if fir, err = eraFrom(pad, size, tops); err != nil {
			return poleStart{}, false
		}
		r.firs[size] = fir
	}
	p, err := filters.Poles(leading(fir, min(n, fir.Order())))
	if err != nil {
		return poleStart{}, false
	}
	return startFromPoles(p, n, rmax), true
}

// conditionedStart is the start, where ERA's order-n truncation fits but its poles do not
// (the best start so far, at relative error start, above firStartRatio × ERA's error), from
// ERA's largest shorter truncation, by up to conditionedDepth states, whose eigenvector basis
// the diagonal form holds (condition within filters.DiagonalizeCondLimit, as convert asks):
// a kernel of exact order 64 can need a basis of condition 1e13–1e17 for all of its modes,
// beyond what float64 residues resolve, while 61 of them are within 1e10 and fit to 1e-9
// (S4 kernels at n = 64: ERA's poles start at 0.58–0.71 on four channels, its truncations'
// at 4e-9–5e-6, and the set's mean ended at 2.7e-4 in place of 8.0e-4 when this was added).
func (r *realisation) conditionedStart(n int, rmax, start float64) (poleStart, bool) {
	k := min(n, r.era.Order())
	if e := r.eraError(n); !(e < 1 && start > firStartRatio*e) {
		return poleStart{}, false
	}
	for kk := k - 1; kk >= max(1, k-conditionedDepth); kk-- {
		// ToDiagonal refuses a basis beyond the limit.
		if d, _, err := filters.ToDiagonal(leading(r.era, kk)); err == nil {
			return startFromPoles(d.Poles, n, rmax), true
		}
	}
	return poleStart{}, false
}

// conditionedDepth bounds conditionedStart's search: each step down costs an eigenvector
// decomposition (at n = 64, 1–12 ms per channel for the 1–5 steps S4 kernels take).
const conditionedDepth = 8

// firStartRatio is how far above ERA's own (state-space) error its poles with least-squares
// residues must start for the FIR realisation's truncation to join the starts: the
// realisation fits, but its poles do not, because its eigenvectors are ill-conditioned (S4
// HiPPO-LegS kernels at n = 64: ERA's poles start at 3e-4 and 0.67, the FIR truncation's at
// 6e-7 and 1e-6, on kernels that ERA itself fits to 1e-9).
const firStartRatio = 10

// firWanted reports whether the FIR realisation's truncation joins the starts of order n,
// the best start so far at relative error start: where ERA's own truncation fits but its
// poles do not (start above firStartRatio × ERA's error), and where that truncation is
// unstable (ERA's error 1 or more), so that its poles, reflected or clipped, are a guess
// (trained Hyena filters at n = 64: 0.0091 from ERA's poles, 0.0037 from the FIR's).
func (r *realisation) firWanted(n int, start float64) bool {
	e := r.eraError(n)
	return start > firStartRatio*e || !(e < 1)
}

// candidate is a start being refined.
type candidate struct {
	v   *varpro
	a   []float64
	st  lmState
	sse float64
}

// rungStarts are a rung's candidates from its own starts (ERA's, the random rings, the
// conditioned and the FIR realisation's), refined by runRung, with the order below's warm
// start where it joins them. Their varpros go back to the pool when runRung ends (release).
type rungStarts struct {
	n     int
	y     []float64
	o     projectOptions
	cands []*candidate
	warm  bool // whether the warm start is among them
}

// prepareRung makes rung n's candidates from its own starts and, when prev is not nil, the
// warm start from prev, each with its start's error.
func prepareRung(y []float64, n int, o projectOptions, real *realisation, prev *modalFit) *rungStarts {
	rs := &rungStarts{n: n, y: y, o: o}
	starts := real.starts(n, o.rmax)
	if n <= projectRingOrder {
		for range projectRings {
			starts = append(starts, ringPoles(n, o.rng))
		}
	}
	for _, st := range starts {
		rs.add(st)
	}
	if prev != nil {
		rs.add(warmStart(y, n, prev, o.rmax))
		rs.warm = true
	}
	if len(rs.cands) > 0 {
		if start := math.Sqrt(2 * rs.cands[0].sse / rs.cands[0].v.yy); real.firWanted(n, start) {
			// The conditioned start first: where it is already at extendFloor it goes on alone
			// (runRung), and the FIR realisation, a Lanczos run on the (L−1)×(L−1) Hankel
			// matrix, is not needed. Over the quality targets no fit changed, and the Hyena
			// preset's n = 64 job, whose ERA starts are at 1e-10 from n = 8 on, is 15% faster.
			atFloor := false
			if st, ok := real.conditionedStart(n, o.rmax, start); ok {
				last := rs.add(st)
				atFloor = last.sse <= extendFloor*extendFloor*last.v.yy/2
			}
			if !atFloor {
				if st, ok := real.firStart(n, o.rmax); ok {
					rs.add(st)
				}
			}
		}
	}
	return rs
}

// add makes the candidate of start st, at its least-squares residues.
func (rs *rungStarts) add(st poleStart) *candidate {
	st = st.realOnly(rs.o.poles)
	s := poleSet{pairs: len(st.pairs), reals: len(st.reals), rmax: rs.o.rmax, poles: rs.o.poles}
	c := &candidate{v: newVarpro(s, rs.y), a: s.params(st.pairs, st.reals)}
	if rs.o.sums != nil {
		c.v.px = rs.o.sums
	}
	c.sse = c.v.sse(c.a)
	rs.cands = append(rs.cands, c)
	return c
}

// release returns the candidates' varpros to the pool.
func (rs *rungStarts) release() {
	for _, c := range rs.cands {
		c.v.release()
	}
	rs.cands = nil
}

// runRung fits order rs.n from rs's candidates and, when prev is not nil, the lower order's
// fit with its residual's ERA poles added (a warm start, which begins at prev's error or
// below; added here where rs was made without it), and returns the best fit, never worse
// than prev; it releases rs.
func runRung(ctx context.Context, rs *rungStarts, prev *modalFit) (*modalFit, error) {
	defer rs.release()
	y, n, o := rs.y, rs.n, rs.o
	if prev != nil && !rs.warm {
		rs.add(warmStart(y, n, prev, o.rmax))
		rs.warm = true
	}
	cands := append([]*candidate(nil), rs.cands...)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].sse < cands[j].sse })
	// Every start gets projectScreen iterations, unless far behind at a checkpoint
	// (projectCuts): the best basin is not always ahead at the start (S4 kernels at n = 4;
	// trained Hyena filters at n = 64, where the FIR's poles start at 0.030 and end at 0.0175,
	// ERA's clipped poles start at 0.085 and end at 0.0088).
	keep, screen := len(cands), min(projectScreen, o.iters)
	if cands[0].sse <= extendFloor*extendFloor*cands[0].v.yy/2 {
		// A start already at extendFloor, what a float32 deployment keeps, needs no screening:
		// it goes on alone (as many iterations as the winner of a screening takes, and no
		// extension). Over the 1,396 rungs of the quality targets the ten whose best start was
		// between varproFloor and extendFloor (S4 kernels at n = 64: six channels at 4e-9 to
		// 7e-7) each ended where that start leads; the other starts' screening was 4–5% of the
		// S4 job.
		keep, screen = 1, 0
	}
	cands = cands[:min(keep, len(cands))]
	done := 0
	cuts := projectCuts
	if n >= projectTightOrder {
		cuts = projectTightCuts
	}
	for _, cut := range cuts {
		it := min(cut.iters, screen)
		for _, c := range cands {
			f, err := c.v.fit(ctx, c.a, it-done, &c.st, false)
			if err != nil {
				return nil, err
			}
			c.sse = f
		}
		done = it
		cands = withinRatio(cands, cut.ratio)
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].sse < cands[j].sse })
	best := cands[0]
	f, err := best.v.fit(ctx, best.a, o.iters-screen, &best.st, false)
	if err != nil {
		return nil, err
	}
	// A fit still descending goes on, until Levenberg–Marquardt converges, up to
	// projectExtend times the iterations more, or down to extendFloor: from ERA's or the
	// FIR's poles, trained Hyena filters at n = 64 can take 150 iterations to their basin's
	// floor (0.0081 after 50, 0.0035 after 150). This slow phase is where Gauss–Newton's
	// model misses the Hessian's second-order term, and the run takes Dennis, Gay and
	// Welsch's secant estimate of it (secantTerm) from here on.
	if _, _, err := best.extend(ctx, f, projectExtend*o.iters); err != nil {
		return nil, err
	}
	f, err = best.v.fit(ctx, best.a, 0, &best.st, true)
	if err != nil {
		return nil, err
	}
	norm := math.Sqrt(sumSquares(y))
	fit := &modalFit{s: best.v.s, a: best.a, c: append([]float64(nil), best.v.c...), h0: y[0],
		rel: math.Sqrt(2*f) / norm}
	if norm == 0 {
		fit.rel = math.Sqrt(2 * f)
	}
	fit = conditionFit(y, fit)
	// The fits are compared as written (writtenError): the objective and the diagonal form's
	// response round differently, and a fit below prev's objective could be written above
	// prev's error, where prev padded is written to the bit as prev was.
	fit.rel = writtenError(y, fit)
	if prev != nil && prev.rel <= fit.rel {
		return padFit(prev, n), nil
	}
	return fit, nil
}

// writtenError is the relative error of f's diagonal form (diagonal), measured on its
// response as a job's report measures the filter written (filters.RelDiff); +Inf where that
// form cannot be made or its response is not finite. Zero-residue modes add exact zeros to
// the response, so padFit(f)'s is f's to the bit.
func writtenError(y []float64, f *modalFit) float64 {
	d, err := f.diagonal()
	if err != nil {
		return math.Inf(1)
	}
	if e := filters.RelDiff(y, d.Impulse(len(y))); !math.IsNaN(e) {
		return e
	}
	return math.Inf(1)
}

// extend runs up to iters more Levenberg–Marquardt iterations on c, from objective f, in
// chunks of varproChunk while it descends and is above extendFloor, with the secant term;
// it returns the objective and the chunks run.
func (c *candidate) extend(ctx context.Context, f float64, iters int) (float64, int, error) {
	if c.st.secant == nil {
		c.st.secant = newSecantTerm(c.v.s.numParams())
	}
	floor := extendFloor * extendFloor * c.v.yy / 2
	chunks := 0
	for more := 0; more < iters && !c.st.done && f > floor; more += varproChunk {
		var err error
		if f, err = c.v.fit(ctx, c.a, varproChunk, &c.st, false); err != nil {
			return f, chunks, err
		}
		chunks++
	}
	return f, chunks, nil
}

func sumSquares(y []float64) float64 {
	s := 0.0
	for _, v := range y {
		s += v * v
	}
	return s
}

// warmStart returns prev's poles and, for the n − order(prev) more, the poles of the ERA
// realisation of prev's residual (what prev misses), or idle poles where that realisation
// is smaller.
func warmStart(y []float64, n int, prev *modalFit, rmax float64) poleStart {
	poles := prev.poles()
	extra := n - len(poles)
	if extra > 0 {
		d, err := prev.diagonal()
		if err == nil {
			k := d.Impulse(len(y))
			res := make([]float64, len(y))
			for i := range y {
				res[i] = y[i] - k[i]
			}
			if era, err := eraRows(res, extra, max(extra+64, 128)); err == nil {
				if p, err := filters.Poles(era); err == nil {
					poles = append(poles, p...)
				}
			}
		}
	}
	return startFromPoles(poles, n, rmax)
}

// isZero reports whether every sample of y is zero (±0).
func isZero(y []float64) bool {
	for _, v := range y {
		if v != 0 {
			return false
		}
	}
	return true
}

// zeroFit is the fit of order n to a kernel that is zero at every sample: the zero filter,
// exactly, its residues and h0 zero and its error 0, with every pole idle at 0 (u = 0), a
// factor 1 of the transfer function's denominator, so that its poles say that the filter
// has no dynamics; variable projection would place them where its starts fell (a pair at
// radius 1/2) under residues of −0. A positive real-only fit's poles cannot be 0: they idle
// in (0, 1/2) as padFit's do.
func zeroFit(n int, o projectOptions) *modalFit {
	s := poleSet{reals: n, rmax: o.rmax, poles: o.poles}
	if o.poles == PolesPositive {
		return padFit(&modalFit{s: poleSet{rmax: o.rmax, poles: o.poles}}, n)
	}
	return &modalFit{s: s, a: make([]float64, s.numParams()), c: make([]float64, n)}
}

// zeroFilter is zeroFit deployed in the form of the spec's model, for a distillation its
// optimiser trains (finish): a transfer function over a = 0 and b = +0 (tfFromPoles), the
// diagonal form, or the rotation form of the same modes, so that every recipe fits a zero
// kernel as variable projection does; the optimiser would leave its poles where the init put
// them. y is the zero kernel.
func zeroFilter(spec *Spec, y []float64) (filters.Filter, error) {
	f := zeroFit(spec.Order, projectOptions{rmax: spec.poleBound(len(y)), poles: spec.Poles})
	switch spec.Model {
	case ModelRTF:
		if tf, _ := tfFromPoles(f.poles(), y); tf != nil {
			return tf, nil
		}
		return nil, fmt.Errorf("the zero filter of order %d has no transfer function", spec.Order)
	case ModelRotation:
		d, err := f.diagonal()
		if err != nil {
			return nil, err
		}
		r, _, err := filters.ToRotation(d)
		return r, err
	}
	return f.diagonal()
}

// padFit returns f as a fit of order n: the missing poles idle (zero residues), pairs at
// radius 1/2 and, for an odd difference, a real pole at 0 (a factor 1 of a transfer
// function's denominator, which no numerator has to cancel); in a real-only fit, real poles
// apart in (0, 1/2).
func padFit(f *modalFit, n int) *modalFit {
	extra := n - f.s.order()
	if extra <= 0 {
		return f
	}
	var idle []complex128
	var idleReals []float64
	if f.s.poles.realOnly() {
		for k := range extra {
			idleReals = append(idleReals, 0.5*(float64(k)+0.5)/float64(extra))
		}
	} else {
		for k := 0; k < extra/2; k++ {
			idle = append(idle, cmplx.Rect(0.5, math.Pi*(float64(k)+0.5)/float64(extra)))
		}
		if extra%2 == 1 {
			idleReals = []float64{0}
		}
	}
	s := poleSet{pairs: f.s.pairs + len(idle), reals: f.s.reals + len(idleReals), rmax: f.s.rmax, poles: f.s.poles}
	ip := s.params(idle, idleReals)
	out := &modalFit{s: s, h0: f.h0, rel: f.rel, c: make([]float64, s.order())}
	out.a = append(out.a, f.a[:2*f.s.pairs]...)
	out.a = append(out.a, ip[:2*len(idle)]...)
	out.a = append(out.a, f.a[2*f.s.pairs:]...)
	out.a = append(out.a, ip[2*s.pairs:2*s.pairs+len(idleReals)]...)
	copy(out.c, f.c[:2*f.s.pairs])
	copy(out.c[2*s.pairs:], f.c[2*f.s.pairs:])
	return out
}

// freeOrder is the lowest order whose rung may be fitted without the order below (free):
// its fit from its own starts alone (ERA's, the conditioned and the FIR realisation's) is
// made first, and where that ends below the lower bound of the order below (the report's
// LowerBounds, which no filter of that order beats), it is below anything that order can
// reach, the ladder stays monotone without the warm start, and a job of this order need not
// fit the orders below. Elsewhere the orders below are fitted and the rung again from the
// warm start alone, the better of the two kept. At n = 64 this frees 14 channels of 16 of S4
// kernels, 15 of decaying noise's and every one of the trained layers' and windowed sincs'
// (where a rung was free only if its starts began below half that bound: 11, 1, 30 of 32 and
// 4): the jobs of decaying noise and windowed sincs a third faster, four channels of 128
// moved by at most 0.6% and one by 10% (windowed sinc's channel 8, 6.32e-4 → 6.95e-4). At
// n = 32 the warm start won a channel whose own fit ends below the order-16 bound (trained
// drawn lags, channel 5: 0.013 against 0.022), so rungs below 64 always start from the
// order below.
const freeOrder = 64

// ladderFit is a channel's fit at one order of a ladder; fit is nil where a job of a higher
// order did not need it.
type ladderFit struct {
	fit   *modalFit
	free  bool    // fitted without the order below: its own starts' fit ended below floor
	floor float64 // on a free order, freeBound: the lower bound of the order below it
}

// freeBound is the lower bound of order orders[k−1] (ascending) that rung k's fit from its
// own starts must end below for the rung to be free: the report's of a job of order
// orders[k], LowerBounds over chainOrders(orders[k]) (below[k−1] itself, below the report's
// bounds of orders, where orders is that chain), or over the two orders where the one below
// is not the chain's. A Lanczos run's bounds depend on every order it is asked for, and a
// job of order 128 judged its rung 64 by another bound than the job of order 64: whether a
// rung is free, and so its fit, depends on the kernel and the two orders alone.
func freeBound(y []float64, orders []int, below []float64, k int) float64 {
	c := chainOrders(orders[k])
	if len(c) < 2 || c[len(c)-2] != orders[k-1] {
		return LowerBounds(y, orders[k-1:k+1])[0]
	}
	if slices.Equal(c, orders) {
		return below[k-1]
	}
	return LowerBounds(y, c)[len(c)-2]
}

// fitLadder fits the orders (ascending) to y, each warm-started from the one before unless
// it is free (freeOrder): so the errors (as written: writtenError) never increase with the
// order, and a free order's error is below the lower bound of the order before it (freeBound;
// below, the report's bounds of orders, nil: no order is free). Each order's fit depends on
// y, the orders up to it and o alone, not on the orders above it: a job of order n and the
// rung n of a job or ladder whose orders up to n are the same (chainOrders) fit the same
// filter, to the bit, so that the job of the higher order never ends above the lower one.
// With topOnly only the last order is asked for, and the orders below the highest free one
// it needs are left out. rungDone (if not nil) is told of each order's fit (its index in
// orders) as it ends.
func fitLadder(ctx context.Context, y []float64, orders []int, below []float64, o projectOptions, topOnly bool, rungDone func(k int, f *modalFit)) ([]ladderFit, error) {
	if isZero(y) {
		// No pole says anything of a zero kernel: each order's fit is the zero filter.
		out := make([]ladderFit, len(orders))
		for k, n := range orders {
			out[k].fit = zeroFit(n, o)
			if rungDone != nil {
				rungDone(k, out[k].fit)
			}
		}
		return out, nil
	}
	reals := newRungRealisations(y)
	defer reals.release()
	// A kernel of numerical rank r < n (ERA's order: its Hankel matrix's singular values
	// beyond r below 1e-13 of the largest, so its truncation to r costs below 1e-12) is
	// fitted with r poles and the others idle: more only leave the residue problem singular
	// and the fit to a lottery of basins (S4 kernels at n = 64, of rank 36–63: mean 2.75e-4
	// with 64 poles, 7.2e-5 with r, in 20% less time).
	// Not so a kernel that does not decay over its length (kernelGrowth at least 1) with
	// ERA poles beyond the bound: its stable fits need more poles than its rank, clustered
	// under the bound (1.01ᵗ over 100 samples, of rank 1, ended at 0.27 for every order to 8
	// with one pole on the bound; with n poles 0.036 at n = 2, 2e-4 at 4, 3e-7 at 8). The
	// quality targets all decay (kernelGrowth at most 0.34), so their fits are the same.
	decays := kernelGrowth(y) < 1
	// rung returns order k's realisation and the number of poles it fits.
	rung := func(k int) (*realisation, int, error) {
		n := orders[k]
		real, err := reals.at(n)
		if err != nil {
			return nil, 0, err
		}
		if r := real.era.Order(); r >= 1 && r < n && (decays || real.withinRank(o.rmax)) {
			return real, r, nil
		}
		return real, n, nil
	}
	out := make([]ladderFit, len(orders))
	// prepare fits order k from its own starts alone, once, where it may be free, and marks it
	// free where that fit ends below the bound of order k−1: a fit of its own (more poles than
	// order k−1) at or above freeOrder, with that bound above varproFloor (below it the order
	// below may already be at the floor, and go on padded). Where it is not free, the rung is
	// fitted again from the order below's warm start alone, and the better of the two kept.
	checked := make([]bool, len(orders))
	own := make([]*modalFit, len(orders))
	prepare := func(k int) error {
		if k == 0 || below == nil || orders[k] < freeOrder || checked[k] {
			return nil
		}
		checked[k] = true
		real, m, err := rung(k)
		if err != nil || m <= orders[k-1] {
			return err
		}
		if out[k].floor = freeBound(y, orders, below, k); out[k].floor > varproFloor {
			if own[k], err = runRung(ctx, prepareRung(y, m, o, real, nil), nil); err != nil {
				return err
			}
			out[k].free = own[k].rel < out[k].floor
		}
		return nil
	}
	lo := 0
	if topOnly {
		// From the top down to the first free order: what lies below it is not needed.
		for k := len(orders) - 1; k > 0 && orders[k] >= freeOrder; k-- {
			if err := prepare(k); err != nil {
				return nil, err
			}
			if out[k].free {
				lo = k
				break
			}
		}
	}
	var prev *modalFit
	for k := lo; k < len(orders); k++ {
		n := orders[k]
		if err := ctx.Err(); err != nil { // before the rung's realisation and starts
			return nil, err
		}
		if err := prepare(k); err != nil {
			return nil, err
		}
		real, m, err := rung(k)
		if err != nil {
			return nil, err
		}
		var f *modalFit
		switch {
		case out[k].free:
			f = padFit(own[k], n)
		case prev != nil && m <= prev.s.order():
			f = padFit(prev, n)
		case prev != nil && prev.rel <= varproFloor:
			// Already below what any deployment can resolve: more poles cannot help.
			f = padFit(padFit(prev, m), n)
		case own[k] != nil:
			// The own starts' fit is made (prepare): the warm start alone, the better kept.
			if f, err = runRung(ctx, &rungStarts{n: m, y: y, o: o}, prev); err != nil {
				return nil, err
			}
			if own[k].rel < f.rel {
				f = own[k]
			}
			f = padFit(f, n)
		default:
			if f, err = runRung(ctx, prepareRung(y, m, o, real, prev), prev); err != nil {
				return nil, err
			}
			f = padFit(f, n)
		}
		out[k].fit = f
		prev = f
		if rungDone != nil {
			rungDone(k, f)
		}
	}
	return out, nil
}
