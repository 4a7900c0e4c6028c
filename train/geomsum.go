package train

import (
	"math"
	"math/cmplx"
	"sync"
)

// geomSums evaluates the finite power sums S_k(z) = Σ_{τ=0}^{N-1} τ^k z^τ, k = 0, 1, 2, for
// |z| ≤ 1 given as z = e^w, in O(1): every entry of the Gram matrix of a modal basis
// (columns τ^k λ^τ) is one of them at a product of two poles, so the variable projection's
// Gauss–Newton system costs O(n²) instead of the O(L·n²) of forming it from the columns.
//
// With q = e^w, E = e^(Nw), A = E − 1 and B = q − 1 (each pole's by expm1, a product's from
// its poles': pairAt):
// S₀ = A/B, S₁ = (NEB − Aq)/B², S₂ = ((N²EB − Aq)B − 2(NEB − Aq)q)/B³. These cancel when
// |Nw| is small (poles near z = 1, where the sums approach the power sums Σ τ^k); there the
// Taylor series S_k = Σ_m w^m/m!·P_(k+m), P_p = Σ τ^p, converges fast and is used instead.
type geomSums struct {
	n     int
	power []float64 // P_p, p = 0 … 2 + geomTaylorTerms
}

// geomTaylorRadius is the |Nw| below which the Taylor series is used, and geomTaylorTerms
// its length: the terms fall like (|Nw|)^m/m!, 2^30/30! ≈ 4e-24.
const (
	geomTaylorRadius = 2
	geomTaylorTerms  = 30
)

func newGeomSums(n int) *geomSums {
	g := &geomSums{n: n, power: make([]float64, geomTaylorTerms+3)}
	for t := 0; t < n; t++ {
		v := 1.0
		for p := range g.power {
			g.power[p] += v
			v *= float64(t)
		}
	}
	return g
}

// special returns the sums where the closed forms do not serve (ok): by the Taylor series
// where |Nw| is small, and where z underflows.
func (g *geomSums) special(w complex128) ([3]complex128, bool) {
	nf := float64(g.n)
	if x, y := real(w)*nf, imag(w)*nf; x*x+y*y <= geomTaylorRadius*geomTaylorRadius {
		var out [3]complex128
		term := complex(1, 0) // w^m/m!
		for m := 0; m <= geomTaylorTerms; m++ {
			for k := range out {
				out[k] += term * complex(g.power[k+m], 0)
			}
			term *= w / complex(float64(m+1), 0)
		}
		return out, true
	}
	if real(w) < -700 {
		// z underflows: only the τ = 0 term remains.
		return [3]complex128{1, 0, 0}, true
	}
	return [3]complex128{}, false
}

// wrapPhase is w with its imaginary part taken into [−π, π]: z = e^w is the same, and a
// product of two poles near −1 (Im w near 2π) lies near z = 1, where the sums need the
// Taylor series and e^w − 1 its small argument (unwrapped, S₂ lost 2e-11 there).
func wrapPhase(w complex128) complex128 {
	if y := imag(w); math.Abs(y) > math.Pi {
		return complex(real(w), y-2*math.Pi*math.Round(y/(2*math.Pi)))
	}
	return w
}

// closed is the closed forms at z = e^w, given e = e^(Nw) and b = e^w − 1.
func (g *geomSums) closed(w, e, b complex128) [3]complex128 {
	nf := float64(g.n)
	a := e - 1
	if real(w)*nf > -1e-3 {
		a = expm1c(complex(nf, 0) * w)
	}
	q := b + 1
	u := complex(nf, 0)*e*b - a*q
	// One division: the reciprocal's rounding adds a unit or two to each sum's.
	ib := 1 / b
	ib2 := ib * ib
	s0 := a * ib
	s1 := u * ib2
	s2 := (complex(nf*nf, 0)*e*b - a*q - 2*u*q*ib) * ib2
	return [3]complex128{s0, s1, s2}
}

// poleExp is what the sums at a product of two poles need of each (pairAt): e^(Nw) and
// e^w − 1 (exact to rounding by expm1c), made once per pole rather than once per product.
type poleExp struct{ e, b complex128 }

func (g *geomSums) poleExp(w complex128) poleExp {
	return poleExp{e: cmplx.Exp(complex(float64(g.n), 0) * w), b: expm1c(w)}
}

// pairAt returns S₀, S₁, S₂ at z = e^(wp+wq) (Re ≤ 0), the product of two poles, from their
// exps xp and xq: e^(N(wp+wq)) = e_p·e_q and e^(wp+wq) − 1 = b_p + b_q + b_p·b_q, without a
// transcendental function; a single pole's sums are pairAt(w, 0, poleExp(w), poleExp(0)).
// The products round as the exponentials of the rounded sum wp + wq do (about ε·N·π in
// e^(Nw)'s phase either way); where Re(wp+wq) < 0 and |N(wp+wq)| > 2, e^(Nw) − 1 does not
// cancel unless the product lies on the unit circle, which no stable pair reaches.
// TestGeomSumsPairs: within 8e-13 of direct summation.
func (g *geomSums) pairAt(wp, wq complex128, xp, xq poleExp) [3]complex128 {
	w := wrapPhase(wp + wq)
	if s, ok := g.special(w); ok {
		return s
	}
	return g.closed(w, xp.e*xq.e, xp.b+xq.b+xp.b*xq.b)
}

// conj is the exps of the conjugate pole.
func (x poleExp) conj() poleExp { return poleExp{cmplx.Conj(x.e), cmplx.Conj(x.b)} }

// shifted returns T_k = Σ_{τ=s}^{N-1} τ^k z^(τ−s), k = 0, 1, 2, for s ≤ 2: the sums of a
// basis column τ^k λ^(τ−s) (a real pole's derivative column is τλ^(τ−1)), from full, the
// unshifted sums at w. Small |z| is summed directly (the terms vanish fast, and dividing S_k
// by z^s would cancel).
func (g *geomSums) shifted(w complex128, s int, full [3]complex128) [3]complex128 {
	if s == 0 {
		return full
	}
	z := cmplx.Exp(w)
	if real(w) < -700 {
		z = 0
	}
	if cmplx.Abs(z) < 0.25 {
		var out [3]complex128
		pw := complex(1, 0)
		for t := s; t < g.n; t++ {
			tf := float64(t)
			out[0] += pw
			out[1] += complex(tf, 0) * pw
			out[2] += complex(tf*tf, 0) * pw
			pw *= z
			if cmplx.Abs(pw) < 1e-19 {
				break
			}
		}
		return out
	}
	// Subtract the terms τ < s, then divide by z^s.
	pw := complex(1, 0)
	for t := 0; t < s; t++ {
		tf := float64(t)
		full[0] -= pw
		full[1] -= complex(tf, 0) * pw
		full[2] -= complex(tf*tf, 0) * pw
		pw *= z
	}
	for k := range full {
		full[k] /= pw
	}
	return full
}

// expm1c is e^w − 1 without cancellation near w = 0: its real part is
// expm1(x)·cos y − 2 sin²(y/2).
func expm1c(w complex128) complex128 {
	x, y := real(w), imag(w)
	sy, cy := math.Sincos(y)
	s := math.Sin(y / 2)
	return complex(math.Expm1(x)*cy-2*s*s, math.Exp(x)*sy)
}

var (
	geomMu    sync.Mutex
	geomCache = map[int]*geomSums{}
)

// sharedGeomSums returns the (read-only) sums for n samples, built once per n.
func sharedGeomSums(n int) *geomSums {
	geomMu.Lock()
	defer geomMu.Unlock()
	g, ok := geomCache[n]
	if !ok {
		g = newGeomSums(n)
		geomCache[n] = g
	}
	return g
}
