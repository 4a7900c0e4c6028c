package analysis

import (
	"cmp"
	"math"
	"math/cmplx"
	"slices"

	"github.com/ssmlab/ssmlab/filters"
)

// HInf returns the H∞ norm ‖H‖∞ = max over ω of |H(e^{jω})| of a stable filter, and a
// frequency ω ∈ [0, π] at which it is attained (|H| is even in ω; where several peaks are
// equal, as a Chebyshev filter's ripples, the one found first).
//
// |H| is sampled where its peaks can be: on a uniform grid of max(1024, 16n) points, which
// resolves the features of width 2π/n that n roots make, and, for each pole p, at its angle
// θ (Bruinsma and Steinbuch, "A fast algorithm to compute the H∞-norm of a transfer function
// matrix", Systems & Control Letters 14, 1990, sec. 3, take the poles' angles as the first
// candidates) and at θ ± (1 − |p|)·2^(k/2) for k ≥ 0 up to π, since the peak a pole makes is
// 1 − |p| wide. Each local maximum within a factor 8 of the largest sample (at most 32, largest
// first) is then refined by golden-section search (Kiefer, "Sequential minimax search for a
// maximum", Proc. AMS 4, 1953) between its neighbours, until they are a few ulps apart: near
// the peak |H| changes with the square of the distance to it, so the value comes out to the
// samples' rounding although the frequency carries only about half the digits. H is evaluated
// as FreqResponse evaluates it (products for zpk, the modal sum for diagonal), each sample
// off by about ε·Σ|q|/|e^{jω} − q| relative over the roots q (e^{jω} and the roots rounded):
// 1e-12 for poles 1e-4 inside the circle, below filters.MaxRelError for any farther than
// filters.MarginalTol (mpmath references: TestHInfGolden). The symplectic eigenvalue test of
// Boyd–Balakrishnan and Bruinsma–Steinbuch would need a state-space realisation, whose
// Hamiltonian matrix rounds clustered poles apart. A sample grid can miss a peak that no
// pole explains, narrower than the uniform grid's spacing; the result is then a lower bound.
//
// A filter that is not stable has no H∞ norm: the error is an *UnstableError naming its poles
// on or outside the unit circle. A norm beyond float64's range is a *NonFiniteError.
func HInf(f filters.Filter) (norm, omega float64, err error) {
	poles, err := Poles(f)
	if err != nil {
		return 0, 0, err
	}
	if v, off := Classify(poles); v != Stable {
		return 0, 0, &UnstableError{What: "H∞ norm", Poles: ownPoles(f, off)}
	}
	grid := hinfGrid(poles)
	// A diagonal filter's modes paired and a dense A reduced to Hessenberg form (a rotation
	// form's B and C in its block coordinates) once, not at each of the refinement's ~2,000
	// points: O(n³) each for a dense A, where the point's own evaluation is O(n²).
	respond := responder(f)
	mag := func(w []float64) []float64 {
		h := respond(w)
		out := make([]float64, len(h))
		for i, v := range h {
			out[i] = cmplx.Abs(v)
		}
		return out
	}
	m := mag(grid)
	best := 0
	for i, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, &NonFiniteError{What: "the H∞ norm", Index: -1, Value: v}
		}
		if v > m[best] {
			best = i
		}
	}
	var peaks []int
	for i := range m {
		left, right := i == 0 || m[i] >= m[i-1], i == len(m)-1 || m[i] >= m[i+1]
		if left && right && m[i] >= m[best]/hinfRefineRatio {
			peaks = append(peaks, i)
		}
	}
	slices.SortStableFunc(peaks, func(a, b int) int { return cmp.Compare(m[b], m[a]) })
	norm, omega = m[best], grid[best]
	at := func(w float64) float64 { return mag([]float64{w})[0] }
	for _, i := range peaks[:min(len(peaks), hinfMaxRefine)] {
		lo, hi := grid[max(i-1, 0)], grid[min(i+1, len(grid)-1)]
		if w, v := goldenMax(at, lo, hi, grid[i], m[i]); v > norm {
			norm, omega = v, w
		}
	}
	return norm, omega, nil
}

const (
	// hinfRefineRatio: a sample within this factor of the largest may stand on the flank of
	// the highest peak (the pole grid samples each pole's peak at least at 1/√2 of its width).
	hinfRefineRatio = 8
	// hinfMaxRefine bounds the local maxima refined, the largest first.
	hinfMaxRefine = 32
)

// hinfGrid returns the sorted frequencies in [0, π] at which HInf samples |H|.
func hinfGrid(poles []complex128) []float64 {
	grid := LinearGrid(max(1024, 16*len(poles)))
	fold := func(w float64) float64 { // |H(e^{jω})| is even and 2π-periodic
		w = math.Abs(w)
		if w > math.Pi {
			w = 2*math.Pi - w
		}
		return max(0, min(math.Pi, w))
	}
	for _, p := range poles {
		if imag(p) < 0 {
			continue // its conjugate's angle, mirrored
		}
		theta, d := cmplx.Phase(p), 1-cmplx.Abs(p)
		grid = append(grid, theta)
		for off := d; off < math.Pi; off *= math.Sqrt2 {
			grid = append(grid, fold(theta-off), fold(theta+off))
		}
	}
	slices.Sort(grid)
	return slices.Compact(grid)
}

// goldenMax maximises g on [lo, hi] by golden-section search from the sample (x, gx) inside
// it, and returns the best point it evaluated (x itself when none is higher).
func goldenMax(g func(float64) float64, lo, hi, x, gx float64) (float64, float64) {
	const phi = 0.6180339887498949 // (√5 − 1)/2
	bestX, bestG := x, gx
	a, b := lo, hi
	c, d := b-phi*(b-a), a+phi*(b-a)
	gc, gd := g(c), g(d)
	for range 200 {
		for _, p := range [2][2]float64{{c, gc}, {d, gd}} {
			if p[1] > bestG {
				bestX, bestG = p[0], p[1]
			}
		}
		if b-a <= 4*eps*max(1, math.Abs(a)) {
			break
		}
		if gc >= gd {
			b, d, gd = d, c, gc
			c = b - phi*(b-a)
			gc = g(c)
		} else {
			a, c, gc = c, d, gd
			d = a + phi*(b-a)
			gd = g(d)
		}
	}
	return bestX, bestG
}
