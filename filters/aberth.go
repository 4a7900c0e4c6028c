package filters

import (
	"context"
	"math"
	"math/cmplx"
	"sort"
)

// Polynomial roots by the Aberth–Ehrlich iteration (O. Aberth, "Iteration methods for finding
// all zeros of a polynomial simultaneously", Math. Comp. 27 (1973); starting points and
// stopping rule after D. A. Bini, "Numerical computation of polynomial zeros by means of
// Aberth's method", Numer. Algorithms 13 (1996), the method of MPSolve). Each sweep costs
// O(n²), where the QR iteration on the companion matrix costs O(n³) in all: order 4096 in a
// few seconds instead of about an hour.

// aberthMaxSweeps bounds the sweeps; from Bini's starting points the iteration typically
// converges in 10 to 30, and clusters of nearly multiple roots, which converge linearly,
// within a hundred.
const aberthMaxSweeps = 400

// aberthRoots returns the n roots of zⁿ + a₁zⁿ⁻¹ + … + aₙ (aₙ ≠ 0), conjugate-closed,
// whether every root met the stopping rule: its residual within a few roundings of what
// Horner's rule can resolve (a backward error of a few eps in the coefficients), or a
// Newton correction at the rounding level of the root, and whether some roots are clustered
// (see aberthClusters). It stops early, returning false, when ctx is done.
//
// That stopping rule, Bini's, stops each root on its own as soon as it enters the set where
// |p| is rounding noise: for an m-fold cluster a disc of radius about ε^(1/m), which the m
// roots enter wherever they happen to be. Each root is then as good as the data allow, but
// together they are not the roots of a nearby polynomial: their mean, well conditioned,
// drifts by a fraction of that radius ((z + 1)⁶: 3e-5, (z + 1)⁴⁰: 0.07), and so does every
// product Π(z - zᵢ) away from the cluster, which is what a zpk form evaluates. In double
// precision nothing computed from values of p inside that disc can restore it (MPSolve
// raises the precision there: D. A. Bini, L. Robol, "Solving secular and polynomial
// equations: a multiprecision algorithm", J. Comput. Appl. Math. 272 (2014), sec. 3); here
// the clustered roots are shifted to restore Σzᵢ = −a₁, which fixes a single cluster's
// mean, and rootsMonicContext takes the companion matrix's eigenvalues instead where their
// O(n³) cost is small (QR's similarity transforms keep the trace and the cluster's shape).
func aberthRoots(ctx context.Context, a []float64) (roots []complex128, converged, clustered bool) {
	n := len(a)
	z := aberthStart(a)
	absA := make([]float64, n+1)
	absA[0] = 1
	for k, v := range a {
		absA[k+1] = math.Abs(v)
	}
	done := make([]bool, n)
	corr := make([]float64, n) // the last correction's size: the error estimate of a root
	left := n
	for sweep := 0; sweep < aberthMaxSweeps && left > 0; sweep++ {
		if sweep%4 == 0 && ctx.Err() != nil {
			return nil, false, false
		}
		for i := range z {
			if done[i] {
				continue
			}
			ratio, small, _ := newtonRatio(a, absA, z[i])
			if small {
				done[i], left = true, left-1
				continue
			}
			// Aberth's correction: the Newton step for p(z)/Π_{j≠i}(z - zⱼ).
			var s complex128
			zi := z[i]
			for j, zj := range z {
				if j != i {
					d := zi - zj
					m := real(d)*real(d) + imag(d)*imag(d)
					s += complex(real(d)/m, -imag(d)/m)
				}
			}
			w := ratio / (1 - ratio*s)
			if cmplx.IsNaN(w) || cmplx.IsInf(w) {
				w = ratio
			}
			z[i] = zi - w
			corr[i] = cmplx.Abs(w)
			if corr[i] <= 2*eps*cmplx.Abs(z[i]) {
				done[i], left = true, left-1
			}
		}
	}
	roots = conjugateClosed(z, corr)
	in := aberthClusters(a, absA, roots)
	if len(in) == 0 {
		return roots, left == 0, false
	}
	// Restore the trace: Σzᵢ = −a₁ (real for conjugate-closed roots), by moving only the
	// clustered roots, whose sum is what the stopping rule left loose.
	sum := a[0]
	for _, r := range roots {
		sum += real(r)
	}
	d := -sum / float64(len(in))
	for _, i := range in {
		roots[i] += complex(d, 0)
	}
	return roots, left == 0, true
}

// aberthClusters returns the indices of the roots z whose inclusion discs overlap another's:
// the disc about zᵢ of radius n(|p(zᵢ)| + rounding error)/|p′(zᵢ)| holds a root of p (the
// a-posteriori inclusion of Bini 1996, sec. 4, with the residual's rounding error added so
// that noise cannot make it small), and a root whose disc meets no other is isolated; the
// others belong to clusters that the stopping rule cannot resolve. So do roots whose disc is
// wider than √ε (relative): a double root's is about √ε, and an m-fold one's ε^(1/m).
func aberthClusters(a, absA []float64, z []complex128) []int {
	n := float64(len(a))
	rad := make([]float64, len(z))
	for i, r := range z {
		_, _, rad[i] = newtonRatio(a, absA, r)
		rad[i] *= n
	}
	clustered := make([]bool, len(z))
	for i, zi := range z {
		// A disc wider than √ε·|z| is a cluster's too: a simple root's is ε·κ, and its
		// neighbours' discs can miss it only where each is still larger than that.
		if rad[i] > math.Sqrt(eps)*math.Max(1, cmplx.Abs(zi)) {
			clustered[i] = true
		}
		for j := i + 1; j < len(z); j++ {
			d, s := zi-z[j], rad[i]+rad[j]
			if real(d)*real(d)+imag(d)*imag(d) <= s*s {
				clustered[i], clustered[j] = true, true
			}
		}
	}
	var in []int
	for i, c := range clustered {
		if c {
			in = append(in, i)
		}
	}
	return in
}

// newtonRatio returns p(z)/p'(z), whether |p(z)| is within the rounding error of its
// evaluation (Horner's rule on the reversed polynomial where |z| > 1, so that nothing
// overflows), and (|p(z)| + that error)/|p′(z)|, n times which is the radius of a disc about z
// that holds a root.
func newtonRatio(a, absA []float64, z complex128) (ratio complex128, small bool, radius float64) {
	n := len(a)
	r := cmplx.Abs(z)
	if r <= 1 {
		p, dp := complex(1, 0), complex(0, 0)
		bound := 1.0
		for k, v := range a {
			dp = dp*z + p
			p = p*z + complex(v, 0)
			bound = bound*r + absA[k+1]
		}
		return p / dp, cmplx.Abs(p) <= 4*eps*bound, (cmplx.Abs(p) + 4*eps*bound) / cmplx.Abs(dp)
	}
	// p(z) = zⁿ q(w) with w = 1/z and q(w) = 1 + a₁w + … + aₙwⁿ;
	// p/p' = z q / (n q - w q').
	w := 1 / z
	rw := 1 / r
	q, dq := complex(a[n-1], 0), complex(0, 0)
	bound := absA[n]
	for k := n - 2; k >= -1; k-- {
		c, ac := 1.0, 1.0
		if k >= 0 {
			c, ac = a[k], absA[k+1]
		}
		dq = dq*w + q
		q = q*w + complex(c, 0)
		bound = bound*rw + ac
	}
	dp := complex(float64(n), 0)*q - w*dq // p′(z)/zⁿ⁻¹
	return z * q / dp, cmplx.Abs(q) <= 4*eps*bound, r * (cmplx.Abs(q) + 4*eps*bound) / cmplx.Abs(dp)
}

// aberthStart returns Bini's starting points: for each edge of the upper convex hull of the
// points (k, log|cₖ|), cₖ the coefficient of zᵏ, as many points as the edge is long, spread
// on the circle whose radius the edge's slope gives (the moduli of the roots, roughly).
func aberthStart(a []float64) []complex128 {
	n := len(a)
	logc := make([]float64, n+1) // logc[k] = log|cₖ|, c₀ = aₙ, …, cₙ = 1
	for k := 0; k <= n; k++ {
		c := 1.0
		if k < n {
			c = a[n-1-k]
		}
		if c == 0 {
			logc[k] = math.Inf(-1)
		} else {
			logc[k] = math.Log(math.Abs(c))
		}
	}
	// Upper hull of the points with finite logarithm (c₀ and cₙ are nonzero).
	var hull []int
	for k := 0; k <= n; k++ {
		if math.IsInf(logc[k], -1) {
			continue
		}
		for len(hull) >= 2 {
			i, j := hull[len(hull)-2], hull[len(hull)-1]
			// Drop j when it lies on or below the segment from i to k.
			if (logc[j]-logc[i])*float64(k-i) <= (logc[k]-logc[i])*float64(j-i) {
				hull = hull[:len(hull)-1]
				continue
			}
			break
		}
		hull = append(hull, k)
	}
	const sigma = 0.7 // Bini's offset, so that no start lies on the real axis
	z := make([]complex128, 0, n)
	for e := 0; e+1 < len(hull); e++ {
		i, k := hull[e], hull[e+1]
		m := k - i
		radius := math.Exp((logc[i] - logc[k]) / float64(m))
		for j := 0; j < m; j++ {
			theta := 2*math.Pi*float64(j)/float64(m) + 2*math.Pi*float64(i)/float64(n) + sigma
			z = append(z, cmplx.Rect(radius, theta))
		}
	}
	return z
}

// conjugateClosed makes the roots of a real polynomial exactly conjugate-closed: a root within
// its error estimate of the real axis becomes real, and each remaining root in the upper
// half-plane is paired with the nearest one in the lower (their mean and its conjugate).
func conjugateClosed(z []complex128, errs []float64) []complex128 {
	out := make([]complex128, 0, len(z))
	var up, down []int
	for i, r := range z {
		tol := math.Max(4*eps*cmplx.Abs(r), 2*errs[i])
		switch {
		case math.Abs(imag(r)) <= tol:
			out = append(out, complex(real(r), 0))
		case imag(r) > 0:
			up = append(up, i)
		default:
			down = append(down, i)
		}
	}
	// Unequal halves: the roots closest to the axis are real ones not recognised as such.
	byImag := func(ix []int) {
		sort.Slice(ix, func(p, q int) bool { return math.Abs(imag(z[ix[p]])) < math.Abs(imag(z[ix[q]])) })
	}
	byImag(up)
	byImag(down)
	for len(up) > len(down) {
		out = append(out, complex(real(z[up[0]]), 0))
		up = up[1:]
	}
	for len(down) > len(up) {
		out = append(out, complex(real(z[down[0]]), 0))
		down = down[1:]
	}
	used := make([]bool, len(down))
	// Pair the roots farthest from the axis first: they are the best separated.
	for p := len(up) - 1; p >= 0; p-- {
		u := z[up[p]]
		best, bestD := -1, math.Inf(1)
		for q, d := range down {
			if !used[q] {
				if dist := cmplx.Abs(cmplx.Conj(z[d]) - u); dist < bestD {
					best, bestD = q, dist
				}
			}
		}
		used[best] = true
		m := (u + cmplx.Conj(z[down[best]])) / 2
		out = append(out, m, cmplx.Conj(m))
	}
	return out
}
