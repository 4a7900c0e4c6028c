package filters

import (
	"math"
	"math/cmplx"
	"slices"
)

// What a cascade's order does to its roundings. A section rounds at about 2⁻⁵³ of the signal
// x_k it outputs, and that error reaches h through ρ_k, the section's own pole and the
// sections after it, so the relative error grows with ‖x_k‖₂·‖ρ_k‖₂/‖h‖₂. On a circle about
// the unit circle (windowRadius) X_k·R_k ≈ H, and the amplification ‖X_k‖·‖H/X_k‖/(√2π·‖H‖)
// (L2 norms over that circle) is 1 for the empty and for the whole cascade, and large where a
// partial product is large anywhere or small where H is not. Leja's distances between zeros
// and between poles keep a polynomial's partial products near the whole, but see nothing of
// how a zero's factor and a pole's cancel: the zpk form of the preset HiPPO-LegS of order 64
// (real poles from 0.911 to 0.9985, zeros near the unit circle at angles up to 0.77)
// amplifies by 2e6 in Leja order (4.8e-10 relative; 3.96 with each zero, in stored order,
// taking the nearest pole), and scipy's zpk2sos order, the poles nearest the circle last,
// errs by 4e-8 (2e-7 through sosfilt's coefficients). Keeping |X_k| between 1 and |H| at
// every frequency (balancedOrder) amplifies by 2.3 and errs by 4.4e-14, below what its stored
// numbers fix (1e-12).

// maxCascadeAmp is the amplification above which cascade tries the balanced order: 2^6 costs
// at most 6 of the 52 bits. The Leja order of the zpk goldens amplifies by at most 11, except
// HiPPO-LegS of orders 32 (250), 64 (5e5 and 2e6) and 512 (1e49), HiPPO-LagT of order 384
// (3e64) and Butterworth of order 300 (8e10); the balanced order, by at most 12.
const maxCascadeAmp = 0x1p6

// balanceWindow is how many sections, the next in Leja order, balancedOrder weighs at each
// step, for n sections: O(n·balanceWindow·M) in all, O(n²·M) (within balanceBudget). The
// preset HiPPO-LegS of order 512 needs n/4 (1e-4 with n/8 = 64, 9e-14 with 128; orders 256
// and 384 likewise), Butterworth of order 300 64 (3e-11 with 32, 5e-15 with 64); n/2 leaves
// a margin.
func balanceWindow(n int) int { return max(64, n/2) }

// balanceBudget bounds balancedOrder's work, n·balanceWindow(n)·M multiply-adds for n
// sections on M frequencies (O(n²·M), once per filter and window length, cascadeOrder):
// 2²⁸, twice the preset HiPPO-LegS of order 512's on 1024 frequencies; an order of 4096
// would take 17·10⁹.
const balanceBudget = 1 << 28

// orderGrid is the points Re^{iω}, ω in (−π, π], on which cascade weighs an order: a uniform
// grid, and around each root nearer the circle than that grid's spacing the points θ, θ ± d,
// θ ± 3d (θ its angle, d its distance to the circle), where its factor changes; at most
// orderGridMax points, the roots nearest the circle first. Both signs of ω, since a partial
// product holding a zero and not its conjugate is not symmetric.
type orderGrid struct {
	cos, sin []float64 // Re^{iω}
	w        []float64 // trapezoid weights, periodic
}

const (
	orderGridBase = 256
	orderGridMax  = 1024
)

// windowRadius is the radius R of the circle on which cascade weighs an order for a window
// of length samples: H(Re^{iω}) is the transform of h[t]·R^(−t), so with R = e^(1/length)
// its L2 norms are those of the response under a window of about length samples. On the
// unit circle a pole of multiplicity 384 at 0.99927 (HiPPO-LagT), whose response needs 5e5
// samples to settle, looked balanced in an order that erred by 2e-5 over 4096 samples
// (4e-13 with R; e^(0.5/length) to e^(4/length) do as well).
func windowRadius(length int) float64 { return math.Exp(1 / float64(length)) }

func newOrderGrid(secs []zpkSection, radius float64) *orderGrid {
	step := 2 * math.Pi / orderGridBase
	omega := make([]float64, 0, orderGridMax)
	for i := range orderGridBase {
		omega = append(omega, -math.Pi+step*float64(i+1))
	}
	type near struct{ angle, d float64 }
	var roots []near
	for _, s := range secs {
		for _, r := range [2]complex128{s.zero, s.pole} {
			if d := math.Abs(cmplx.Abs(r) - radius); r != 0 && d < step {
				roots = append(roots, near{cmplx.Phase(r), d})
			}
		}
	}
	slices.SortStableFunc(roots, func(a, b near) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return 0
	})
	for _, r := range roots {
		if len(omega)+5 > orderGridMax {
			break
		}
		for _, k := range [5]float64{0, -1, 1, -3, 3} {
			w := r.angle + k*r.d
			if w <= -math.Pi {
				w += 2 * math.Pi
			} else if w > math.Pi {
				w -= 2 * math.Pi
			}
			omega = append(omega, w)
		}
	}
	slices.Sort(omega)
	omega = slices.Compact(omega)
	m := len(omega)
	g := &orderGrid{cos: make([]float64, m), sin: make([]float64, m), w: make([]float64, m)}
	for i, w := range omega {
		g.sin[i], g.cos[i] = math.Sincos(w)
		g.sin[i], g.cos[i] = radius*g.sin[i], radius*g.cos[i]
		prev, next := omega[(i+m-1)%m], omega[(i+1)%m]
		if i == 0 {
			prev -= 2 * math.Pi
		}
		if i == m-1 {
			next += 2 * math.Pi
		}
		g.w[i] = (next - prev) / 2
	}
	return g
}

// logGain sets dst[i] to log |z − zero|²/|z − pole|², the section's squared gain at the
// grid's points z (each distance at least 2^-500, so that a root on a grid point stays
// finite).
func (g *orderGrid) logGain(dst []float64, s zpkSection) {
	const floor = 0x1p-1000
	zr, zi, pr, pi := real(s.zero), imag(s.zero), real(s.pole), imag(s.pole)
	for i, c := range g.cos {
		sn := g.sin[i]
		dz := max((c-zr)*(c-zr)+(sn-zi)*(sn-zi), floor)
		dp := max((c-pr)*(c-pr)+(sn-pi)*(sn-pi), floor)
		if r := dz / dp; r > 0x1p-1000 && r < 0x1p1000 {
			dst[i] = math.Log(r)
		} else { // a root beyond 2^500 (whose square overflows) or far from the other
			dst[i] = logSq(c-zr, sn-zi) - logSq(c-pr, sn-pi)
		}
	}
}

// logSq is log(x² + y²) without overflow, at least log 2^-1000.
func logSq(x, y float64) float64 { return 2 * math.Log(max(math.Hypot(x, y), 0x1p-500)) }

// logH is log |H/Gain|² at the grid's points.
func (g *orderGrid) logH(secs []zpkSection) []float64 {
	h, row := make([]float64, len(g.w)), make([]float64, len(g.w))
	for _, s := range secs {
		g.logGain(row, s)
		for i, v := range row {
			h[i] += v
		}
	}
	return h
}

// logIntegral is log Σᵢ wᵢ·e^{vᵢ}, without overflow.
func (g *orderGrid) logIntegral(v func(i int) float64) float64 {
	top := math.Inf(-1)
	for i := range g.w {
		top = max(top, v(i))
	}
	var s float64
	for i, w := range g.w {
		s += w * math.Exp(v(i)-top)
	}
	return top + math.Log(s)
}

// amplification is the largest log amplification of secs in that order (the notes above):
// max over k of (log ∫|X_k|² + log ∫|H/X_k|² − log 2π − log ∫|H|²)/2.
func (g *orderGrid) amplification(secs []zpkSection, logH []float64) float64 {
	p, row := make([]float64, len(g.w)), make([]float64, len(g.w))
	base := math.Log(2*math.Pi) + g.logIntegral(func(i int) float64 { return logH[i] })
	worst := 0.0
	for _, s := range secs[:max(len(secs)-1, 0)] { // the whole cascade's is 1
		g.logGain(row, s)
		for i, v := range row {
			p[i] += v
		}
		a := g.logIntegral(func(i int) float64 { return p[i] }) + g.logIntegral(func(i int) float64 { return logH[i] - p[i] })
		worst = max(worst, (a-base)/2)
	}
	return worst
}

// balancedOrder reorders secs (in Leja order) greedily: at each step, of the next
// balanceWindow(n) sections not yet taken, the one after which ∫|X_k|²·∫|H/X_k|² is smallest
// (the first of equals), so that the partial products follow H's shape. A conjugate pair's
// sections then mostly come one after the other, each partial product near real.
func (g *orderGrid) balancedOrder(secs []zpkSection, logH []float64) []zpkSection {
	m := len(g.w)
	type cand struct {
		i              int
		log, gain, inv []float64 // log G, G and 1/G (G clamped to [2^-600, 2^600])
	}
	load := func(i int) cand {
		c := cand{i: i, log: make([]float64, m), gain: make([]float64, m), inv: make([]float64, m)}
		g.logGain(c.log, secs[i])
		for k, v := range c.log {
			v = min(max(v, -600*math.Ln2), 600*math.Ln2)
			c.gain[k], c.inv[k] = math.Exp(v), math.Exp(-v)
		}
		return c
	}
	var window []cand
	next := 0
	for ; next < len(secs) && next < balanceWindow(len(secs)); next++ {
		window = append(window, load(next))
	}
	p := make([]float64, m) // log |X_k|²
	a, b := make([]float64, m), make([]float64, m)
	out := make([]zpkSection, 0, len(secs))
	for len(window) > 0 {
		// wᵢ|X_k|² and wᵢ|H/X_k|², each scaled to a largest term of 1.
		ta, tb := math.Inf(-1), math.Inf(-1)
		for i := range p {
			ta, tb = max(ta, p[i]), max(tb, logH[i]-p[i])
		}
		for i, w := range g.w {
			a[i], b[i] = w*math.Exp(p[i]-ta), w*math.Exp(logH[i]-p[i]-tb)
		}
		best, bestCost := 0, math.Inf(1)
		for k := range window {
			c := &window[k]
			var sa, sb float64
			for i := range a {
				sa += a[i] * c.gain[i]
				sb += b[i] * c.inv[i]
			}
			if cost := math.Log(sa) + math.Log(sb); cost < bestCost {
				best, bestCost = k, cost
			}
		}
		c := window[best]
		out = append(out, secs[c.i])
		for i, v := range c.log {
			p[i] += v
		}
		window = slices.Delete(window, best, best+1)
		if next < len(secs) {
			window = append(window, load(next))
			next++
		}
	}
	return out
}
