package filters

import (
	"math"
	"math/cmplx"
	"sync"
)

// PowerSums evaluates the finite power sums S_k(z) = Σ_{τ=0}^{N-1} τ^k z^τ, k = 0, 1, 2, for
// |z| ≤ 1 given as z = e^w, in O(1): every entry of the Gram matrix of a modal basis
// (columns τ^k λ^τ) is one of them at a product of two poles, so a least-squares fit of
// modes (train's variable projection) forms its Gauss–Newton system in O(n²) instead of the
// O(L·n²) of forming it from the columns.
//
// With q = e^w, E = e^(Nw), A = E − 1 and B = q − 1 (each pole's by expm1, a product's from
// its poles': AtProduct):
// S₀ = A/B, S₁ = (NEB − Aq)/B², S₂ = ((N²EB − Aq)B − 2(NEB − Aq)q)/B³. These cancel when
// |Nw| is small (poles near z = 1, where the sums approach the power sums Σ τ^k); there the
// Taylor series S_k = Σ_m w^m/m!·P_(k+m), P_p = Σ τ^p, converges fast and is used instead.
// S₀ alone needs no series (GeomSum).
type PowerSums struct {
	n     int
	power []float64 // P_p, p = 0 … 2 + powerSumTaylorTerms
}

// powerSumTaylorRadius is the |Nw| below which the Taylor series is used, and
// powerSumTaylorTerms its length: the terms fall like (|Nw|)^m/m!, 2^30/30! ≈ 4e-24.
const (
	powerSumTaylorRadius = 2
	powerSumTaylorTerms  = 30
)

func newPowerSums(n int) *PowerSums {
	g := &PowerSums{n: n, power: make([]float64, powerSumTaylorTerms+3)}
	for t := 0; t < n; t++ {
		v := 1.0
		for p := range g.power {
			g.power[p] += v
			v *= float64(t)
		}
	}
	return g
}

var (
	powerSumsMu    sync.Mutex
	powerSumsCache = map[int]*PowerSums{}
)

// SharedPowerSums returns the (read-only, safe for concurrent use) sums over n samples,
// built once per n: the table of P_p costs O(n), and a fit asks for the same n thousands of
// times.
func SharedPowerSums(n int) *PowerSums {
	powerSumsMu.Lock()
	defer powerSumsMu.Unlock()
	g, ok := powerSumsCache[n]
	if !ok {
		g = newPowerSums(n)
		powerSumsCache[n] = g
	}
	return g
}

// special returns the sums where the closed forms do not serve (ok): by the Taylor series
// where |Nw| is small, and where z underflows.
func (g *PowerSums) special(w complex128) ([3]complex128, bool) {
	nf := float64(g.n)
	if x, y := real(w)*nf, imag(w)*nf; x*x+y*y <= powerSumTaylorRadius*powerSumTaylorRadius {
		var out [3]complex128
		term := complex(1, 0) // w^m/m!
		for m := 0; m <= powerSumTaylorTerms; m++ {
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
// Taylor series and e^w − 1 its small argument (unwrapped, S₂ lost 2e-11 there, and
// e^(Lw) − 1 in GeomSum would be taken near 2πL rather than near 0).
func wrapPhase(w complex128) complex128 {
	if y := imag(w); math.Abs(y) > math.Pi {
		return complex(real(w), y-2*math.Pi*math.Round(y/(2*math.Pi)))
	}
	return w
}

// closed is the closed forms at z = e^w, given e = e^(Nw) and b = e^w − 1.
func (g *PowerSums) closed(w, e, b complex128) [3]complex128 {
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

// At returns S₀, S₁, S₂ at z = e^w (Re w ≤ 0).
func (g *PowerSums) At(w complex128) [3]complex128 {
	w = wrapPhase(w)
	if s, ok := g.special(w); ok {
		return s
	}
	return g.closed(w, cmplx.Exp(complex(float64(g.n), 0)*w), expm1c(w))
}

// PoleExp is what the sums at a product of two poles need of each (AtProduct): e^(Nw) and
// e^w − 1 (exact to rounding by expm1c), made once per pole rather than once per product.
type PoleExp struct{ e, b complex128 }

// PoleExp returns the exps of the pole e^w.
func (g *PowerSums) PoleExp(w complex128) PoleExp {
	return PoleExp{e: cmplx.Exp(complex(float64(g.n), 0) * w), b: expm1c(w)}
}

// Conj returns the exps of the conjugate pole.
func (x PoleExp) Conj() PoleExp { return PoleExp{cmplx.Conj(x.e), cmplx.Conj(x.b)} }

// AtProduct returns S₀, S₁, S₂ at z = e^(wp+wq) (Re ≤ 0), the product of two poles, from
// their exps xp and xq: e^(N(wp+wq)) = e_p·e_q and e^(wp+wq) − 1 = b_p + b_q + b_p·b_q,
// without a transcendental function. The products round as the exponentials of the rounded
// sum wp + wq do (about ε·N·π in e^(Nw)'s phase either way); where Re(wp+wq) < 0 and
// |N(wp+wq)| > 2, e^(Nw) − 1 does not cancel unless the product lies on the unit circle,
// which no stable pair reaches. TestPowerSumsAtProduct: within 8e-13 of direct summation.
func (g *PowerSums) AtProduct(wp, wq complex128, xp, xq PoleExp) [3]complex128 {
	w := wrapPhase(wp + wq)
	if s, ok := g.special(w); ok {
		return s
	}
	return g.closed(w, xp.e*xq.e, xp.b+xq.b+xp.b*xq.b)
}

// Shifted returns T_k = Σ_{τ=s}^{N-1} τ^k z^(τ−s), k = 0, 1, 2, for s ≤ 2: the sums of a
// basis column τ^k λ^(τ−s) (a real pole's derivative column is τλ^(τ−1)), from full, the
// unshifted sums at w. Small |z| is summed directly (the terms vanish fast, and dividing S_k
// by z^s would cancel).
func (g *PowerSums) Shifted(w complex128, s int, full [3]complex128) [3]complex128 {
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

// GeomSum returns S₀ = Σ_{t<L} zᵗ for z = e^w (any Re w) as expm1(L·w)/expm1(w): the ratio
// A/B of PowerSums, which keeps its digits for z near 1 where (1 − z^L)/(1 − z) would divide
// two cancelled differences, so S₀ alone needs neither the Taylor series nor a table per L;
// L at w = 0 and 1 for z = 0 (Re w = −Inf, 0⁰ = 1). Im w is first taken into [−π, π]
// (wrapPhase), so that two poles near −1, whose angles add to about 2π, give L·Im w near 0
// and not near 2πL.
func GeomSum(w complex128, length int) complex128 {
	if math.IsInf(real(w), -1) {
		return 1
	}
	w = wrapPhase(w)
	if w == 0 {
		return complex(float64(length), 0)
	}
	return expm1c(complex(float64(length), 0)*w) / expm1c(w)
}

// expm1c is e^w − 1 without cancellation near w = 0: its real part is
// expm1(x)·cos y − 2 sin²(y/2).
func expm1c(w complex128) complex128 {
	x, y := real(w), imag(w)
	sy, cy := math.Sincos(y)
	s := math.Sin(y / 2)
	return complex(math.Expm1(x)*cy-2*s*s, math.Exp(x)*sy)
}
