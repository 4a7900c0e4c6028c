package layouts

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// realTheta is the angle written for a real positive pole in the lru layout, whose
// exp(theta_log) cannot be 0: over 10⁵ samples the phase it adds, θ·t ≤ 1e-17, moves each
// term of the response by less than float64's rounding of it (1.1e-16 relative).
const realTheta = 1e-22

// padPole is the pole of the modes of no B and C that pad a layer to Options.StateSize.
const padPole = 0.5

// ExportMIMO writes a MIMO layer in the lru or s5 layout, named prefix + the names the
// module's parameters have: the whole layer, inputs and outputs H, which these modules hold
// with D acting on each channel's own input (D ⊙ u), so m.D must be diagonal. Options:
// none for lru; disc, conj-sym, clip-eigs, step-rescale and log-step for s5 (its module's
// settings, which the checkpoint does not record, and the step written). Options.StateSize
// pads the layer with modes of no B and C (pole 0.5). A layer of 2H outputs and H inputs
// is a bidirectional S5 layer, as Import reads one (Result.MIMO): its first H rows are
// written as C1, the next H, the reverse scan's, as C2, and they must have no D.
func ExportMIMO(m *filters.MIMO, lay Layout, o Options, prefix string) ([]arrays.Named, error) {
	if lay != LRU && lay != S5 && lay != RotRNN {
		return nil, fmt.Errorf("%w: ExportMIMO writes the layouts %s, not %s", ErrNotFound, JoinLayouts([]Layout{LRU, S5, RotRNN}), lay)
	}
	if err := o.CheckExport(lay); err != nil {
		return nil, err
	}
	if len(o.Pairs) > 0 || o.Shared != nil {
		return nil, fmt.Errorf("%w: the %s layout is written whole, from no pairs and no shared modes", ErrNotExported, lay)
	}
	if m == nil {
		return nil, invalidf("nothing to export: no MIMO layer")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	h := m.Inputs
	// The shape says bidirectional: neither module has another layer of 2H outputs.
	bidir := lay == S5 && m.Outputs == 2*h
	if m.Outputs != h && !bidir {
		return nil, invalidf("a layer of %d inputs and %d outputs: the %s layout's module has as many of each (H; s5 also 2H outputs, bidirectional)", m.Inputs, m.Outputs, lay)
	}
	d := make([]float64, h)
	for out := range m.Outputs {
		for in := range h {
			switch v := m.D[out*h+in]; {
			case out == in:
				d[out] = v
			case v != 0 && out >= h:
				return nil, invalidf("D[%d][%d] = %v: a bidirectional S5 layer's D acts on its forward outputs alone (outputs %d–%d, the reverse scan's, have none)", out, in, v, h, 2*h-1)
			case v != 0:
				return nil, invalidf("D[%d][%d] = %v: the %s layout's D acts on each channel's own input (D ⊙ u), so D must be diagonal", out, in, v, lay)
			}
		}
	}
	m = padded(m, o.StateSize)
	switch lay {
	case LRU:
		return exportLRU(m, d, prefix)
	case RotRNN:
		return exportRotRNN(m, d, prefix)
	}
	return exportS5(m, d, o, prefix)
}

// padded returns m with modes of pole padPole and no B and C up to n modes.
func padded(m *filters.MIMO, n int) *filters.MIMO {
	k := len(m.Poles)
	if n <= k {
		return m
	}
	p := append(slices.Clone(m.Poles), make([]complex128, n-k)...)
	for i := k; i < n; i++ {
		p[i] = padPole
	}
	c := make([]complex128, m.Outputs*n)
	for out := range m.Outputs {
		copy(c[out*n:], m.C[out*k:(out+1)*k])
	}
	b := append(slices.Clone(m.B), make([]complex128, (n-k)*m.Inputs)...)
	return &filters.MIMO{Poles: p, B: b, C: c, D: m.D, Inputs: m.Inputs, Outputs: m.Outputs}
}

// exportLRU writes nu_log, theta_log, gamma_log (P), B_re, B_im (P, H), C_re, C_im (H, P)
// and D (H) such that minimal-LRU lru/model.py (lines 82–93) computes m: λ =
// exp(−exp(nu_log) + i·exp(theta_log)), so nu_log = log(−log|λ|) and theta_log = log θ with
// θ = arg λ in (0, 2π) (realTheta for a real positive pole); B is scaled by exp(gamma_log),
// written as the paper's normalisation γ = sqrt(1 − |λ|²) (gamma_log_init), so B = b/γ.
func exportLRU(m *filters.MIMO, d []float64, prefix string) ([]arrays.Named, error) {
	n, h := len(m.Poles), m.Inputs
	nu, theta, gamma := make([]float64, n), make([]float64, n), make([]float64, n)
	bRe, bIm := make([]float64, n*h), make([]float64, n*h)
	cRe, cIm := make([]float64, h*n), make([]float64, h*n)
	for k, p := range m.Poles {
		r := cmplx.Abs(p)
		if r == 0 || r >= 1 {
			return nil, invalidf("mode %d: pole %v of |λ| = %.17g is outside 0 < |λ| < 1, which the lru layout cannot hold (λ = exp(−exp(nu_log) + i·exp(theta_log)))", k, p, r)
		}
		th := cmplx.Phase(p)
		if th < 0 {
			th += 2 * math.Pi
		}
		if th == 0 {
			th = realTheta
		}
		nu[k], theta[k] = math.Log(-math.Log(r)), math.Log(th)
		g := math.Sqrt((1 - r) * (1 + r)) // 1 − r² without cancelling r² near 1
		gamma[k] = math.Log(g)
		for j := range h {
			b := m.B[k*h+j] / complex(g, 0)
			bRe[k*h+j], bIm[k*h+j] = real(b), imag(b)
		}
		for out := range h {
			cRe[out*n+k], cIm[out*n+k] = real(m.C[out*n+k]), imag(m.C[out*n+k])
		}
	}
	return named(prefix, []string{"nu_log", "theta_log", "gamma_log", "B_re", "B_im", "C_re", "C_im", "D"},
		[][]int{{n}, {n}, {n}, {n, h}, {n, h}, {h, n}, {h, n}, {h}}, nu, theta, gamma, bRe, bIm, cRe, cIm, d)
}

// exportRotRNN writes a layer of modes as RotRNN heads of two states each (the RotRNN paper's
// listing, Appendix C): head q is mode q, γ = |λ| (gamma_log = log(−log γ)), one angle
// θ = arg λ (thetas (heads, 1)) and M = 0, so that P = expm(M − Mᵀ) = I and A = γR(θ) turns
// the states (a, b) = (Re z, Im z). B's rows are Re b and Im b, C's columns Re c and −Im c;
// since the module normalises B per head to ‖ξ·B‖_F = sqrt(1 − γ²) (eq. 11), C's columns
// carry the scale ‖B_q‖_F/sqrt(1 − γ²) instead. A real pole is a head of θ = 0 or π with the
// mode in its first state; a mode of no B (padding) gets B's first entry 1 and no C, so that
// ξ is defined.
func exportRotRNN(m *filters.MIMO, d []float64, prefix string) ([]arrays.Named, error) {
	n, h := len(m.Poles), m.Inputs
	gl, th := make([]float64, n), make([]float64, n)
	bs, cs := make([]float64, n*2*h), make([]float64, h*2*n)
	for q, p := range m.Poles {
		g := cmplx.Abs(p)
		if g == 0 || g >= 1 {
			return nil, invalidf("mode %d: pole %v of |λ| = %.17g is outside 0 < |λ| < 1, which the rotrnn layout cannot hold (γ = exp(−exp(gamma_log)))", q, p, g)
		}
		gl[q], th[q] = math.Log(-math.Log(g)), cmplx.Phase(p)
		row := bs[q*2*h : (q+1)*2*h] // B[q] of shape (2, d_u)
		for i := range h {
			row[i], row[h+i] = real(m.B[q*h+i]), imag(m.B[q*h+i])
		}
		norm := floats.Norm(row, 2)
		scale := 0.0
		if norm == 0 {
			row[0] = 1 // no input: any B the normalisation takes, and no C
		} else {
			scale = norm / math.Sqrt((1-g)*(1+g))
		}
		for o := range h {
			c := m.C[o*n+q]
			cs[o*2*n+2*q], cs[o*2*n+2*q+1] = scale*real(c), -scale*imag(c)
		}
	}
	return named(prefix, []string{"thetas", "gamma_log", "M", "B", "C", "D"},
		[][]int{{n, 1}, {n, 1}, {n, 2, 2}, {n, 2, h}, {h, 2 * n}, {h}}, th, gl, make([]float64, n*4), bs, cs, d)
}

// exportS5 writes Lambda_re, Lambda_im (P), B (P, H, 2), C (H, P, 2), D (H) and log_step
// (P, 1) such that lindermanlab/S5 s5/ssm.py's S5SSM (lines 152–247) computes m: every
// state's log_step the option log-step, Δ = step_rescale·exp(log_step) as the module (and
// the reader) takes it; Λ the pole's continuous mode by the disc (zoh: log(λ)/Δ; bilinear:
// (2/Δ)(λ − 1)/(λ + 1)); B = b over the factor the disc multiplies B by (discretizeMode's,
// as the reader); C = c/2 where conj_sym doubles Re(C x). A layer of 2H outputs is written
// bidirectional: C1 its first H rows, C2 the next H (s5/ssm.py lines 193–203), or side by
// side in one C of (H, 2n, 2) under c-init complex_normal (lines 183–186).
func exportS5(m *filters.MIMO, d []float64, o Options, prefix string) ([]arrays.Named, error) {
	disc := o.get(S5, "disc")
	if disc != "zoh" && disc != "bilinear" {
		return nil, invalidf("the s5 layout is written with disc zoh or bilinear, not %s", disc)
	}
	logStep := o.float(S5, "log-step")
	dt := o.float(S5, "step-rescale") * math.Exp(logStep)
	if !(dt > 0) || math.IsInf(dt, 0) {
		return nil, invalidf("Δ = step_rescale·exp(log_step) = %v·exp(%v) = %v: want a positive finite step", o.float(S5, "step-rescale"), logStep, dt)
	}
	scale := 1.0
	if o.bool(S5, "conj-sym") {
		scale = 2
	}
	clip := o.bool(S5, "clip-eigs")
	n, h := len(m.Poles), m.Inputs
	lre, lim := make([]float64, n), make([]float64, n)
	bs, cs := make([]float64, n*h*2), make([]float64, m.Outputs*n*2)
	steps := make([]float64, n)
	for k, p := range m.Poles {
		var lam complex128
		switch {
		case disc == "zoh" && p == 0:
			return nil, invalidf("mode %d: pole 0 has no logarithm, which disc zoh takes (Λ = log(λ)/Δ)", k)
		case disc == "zoh":
			lam = cmplx.Log(p) / complex(dt, 0)
		case p == -1:
			return nil, invalidf("mode %d: pole −1 is the bilinear transform's image of Λ = ∞", k)
		default:
			lam = complex(2/dt, 0) * (p - 1) / (p + 1)
		}
		if clip && real(lam) > -1e-4 {
			return nil, invalidf("mode %d: Re Λ = %.6g (pole %v, Δ = %v) is above −1e-4, where a module with clip_eigs clips it: a smaller --log-step makes Re Λ, ∝ 1/Δ, more negative", k, real(lam), p, dt)
		}
		_, fac, err := discretizeMode(disc, lam, dt, 0)
		if err != nil {
			return nil, fmt.Errorf("mode %d: %w", k, err)
		}
		if fac == 0 || cmplx.IsInf(fac) || cmplx.IsNaN(fac) {
			return nil, invalidf("mode %d: pole %v: the factor the disc multiplies B by is %v, which B cannot be found through", k, p, fac)
		}
		lre[k], lim[k], steps[k] = real(lam), imag(lam), logStep
		for j := range h {
			b := m.B[k*h+j] / fac
			bs[2*(k*h+j)], bs[2*(k*h+j)+1] = real(b), imag(b)
		}
		for out := range m.Outputs {
			c := m.C[out*n+k] / complex(scale, 0)
			cs[2*(out*n+k)], cs[2*(out*n+k)+1] = real(c), imag(c)
		}
	}
	if m.Outputs == 2*h && o.get(S5, "c-init") == "complex_normal" {
		// One C of (H, 2n, 2): row r is C1's row r, then C2's.
		stacked := make([]float64, 0, len(cs))
		for row := range h {
			stacked = append(stacked, cs[row*n*2:(row+1)*n*2]...)
			stacked = append(stacked, cs[(h+row)*n*2:(h+row+1)*n*2]...)
		}
		return named(prefix, []string{"Lambda_re", "Lambda_im", "B", "C", "D", "log_step"},
			[][]int{{n}, {n}, {n, h, 2}, {h, 2 * n, 2}, {h}, {n, 1}}, lre, lim, bs, stacked, d, steps)
	}
	if m.Outputs == 2*h {
		return named(prefix, []string{"Lambda_re", "Lambda_im", "B", "C1", "C2", "D", "log_step"},
			[][]int{{n}, {n}, {n, h, 2}, {h, n, 2}, {h, n, 2}, {h}, {n, 1}}, lre, lim, bs, cs[:h*n*2], cs[h*n*2:], d, steps)
	}
	return named(prefix, []string{"Lambda_re", "Lambda_im", "B", "C", "D", "log_step"},
		[][]int{{n}, {n}, {n, h, 2}, {h, n, 2}, {h}, {n, 1}}, lre, lim, bs, cs, d, steps)
}
