package layouts

import (
	"fmt"
	"math/cmplx"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// SharedModes are the modes of an S4D layer with n_ssm SSMs below its H channels
// (state-spaces/s4's default layer configs have n_ssm 1): each SSM's modes Aₙ shared by its
// channels (channel h uses SSM h mod n_ssm), a step Δₕ per channel (inv_dt of (H, 1)), and,
// for a fit to write, each channel's residue per mode: its kernel is
// h[t] = 2·Re Σₙ Residues[h][n]·λₕₙ^(t−1) for t ≥ 1, h[0] the bank's direct term, with
// λₕₙ = exp(Δₕ·Aₙ) (disc zoh) or (1 + Δₕ·Aₙ/2)/(1 − Δₕ·Aₙ/2) (bilinear).
type SharedModes struct {
	Group    []int
	A        [][]complex128
	Dt       []float64
	Residues [][]complex128
}

// SharesModes reports whether l is a layer of n_ssm SSMs below its channels that Export
// writes in the s4d layout from shared modes (Options.Shared), for a module that keeps them
// shared: an S4D layer that is causal, complex, of one Δt per channel and disc zoh or
// bilinear, or an S4 (DPLR) layer (bilinear), whose module built with mode diag
// (SSMKernelDiag) and disc bilinear loads it.
func SharesModes(l Layer) bool {
	switch l.Layout {
	case S4:
		return l.Options["n_ssm"] != ""
	case S4D:
		return l.Options["n_ssm"] != "" && notSharedBecause(l) == ""
	}
	return false
}

// notSharedBecause names what keeps an S4D layer's shared modes from being written in the
// s4d layout ("" where nothing does).
func notSharedBecause(l Layer) string {
	o := l.Options
	switch {
	case o["bidirectional"] == "true":
		return "bidirectional"
	case o["dt_tie"] == "false":
		return "dt_tie false"
	case o["is-real"] == "true":
		return "is_real"
	case o["disc"] != "" && o["disc"] != "zoh" && o["disc"] != "bilinear":
		return "disc " + o["disc"] + " (shared modes are written for zoh or bilinear)"
	case o["variant"] != "" && o["variant"] != "ssm":
		return "variant " + o["variant"]
	}
	return ""
}

// exportS4DShared writes a bank fitted with shared modes (m) in the s4d layout of its n_ssm
// SSMs: A_real and A_imag of (n_ssm, width) from each SSM's modes (the member with Im A ≤ 0,
// as S4 keeps), inv_dt of (H, 1) from each channel's step, B = 1 and C = C̃/f(ΔA) (the disc's
// factor), with C̃ = r/λ (r conjugated with its mode) so that 2·Re(C̃·λ^t) is the fit's
// 2·Re(r·λ^{t−1}); padding modes have A = −1 and no C.
func exportS4DShared(bank *filters.Bank, m *SharedModes, width int, o Options, prefix string) ([]arrays.Named, error) {
	disc := o.get(S4D, "disc")
	if o.get(S4D, "variant") != "ssm" || disc != "zoh" && disc != "bilinear" || o.bool(S4D, "is-real") {
		return nil, invalidf("shared modes are written for SSMKernelDiag with disc zoh or bilinear and complex modes, not variant %s, disc %s, is-real %v", o.get(S4D, "variant"), disc, o.bool(S4D, "is-real"))
	}
	h, s := len(bank.Channels), len(m.A)
	if len(m.Group) != h || len(m.Dt) != h || len(m.Residues) != h || s == 0 {
		return nil, invalidf("shared modes of %d channels (%d steps, %d residue rows) for a bank of %d", len(m.Group), len(m.Dt), len(m.Residues), h)
	}
	for c, g := range m.Group {
		if g != c%s {
			return nil, invalidf("channel %d uses SSM %d: the layout tiles %d SSMs (channel h uses SSM h mod %d)", c, g, s, s)
		}
	}
	modes := len(m.A[0])
	width = max(width, modes)
	reT, imT, dtT := o.get(S4D, "real-transform"), o.get(S4D, "imag-transform"), o.get(S4D, "dt-transform")
	aRe, aIm := make([]float64, s*width), make([]float64, s*width)
	flip := make([][]bool, s)
	for g, as := range m.A {
		if len(as) != modes {
			return nil, invalidf("SSM %d has %d modes, SSM 0 %d", g, len(as), modes)
		}
		flip[g] = make([]bool, modes)
		for k := range width {
			lam := complex(-1, 0)
			if k < modes {
				lam = as[k]
				if imag(lam) > 0 {
					lam, flip[g][k] = cmplx.Conj(lam), true
				}
			}
			var err error
			if aRe[g*width+k], err = inverseTransform(-real(lam), reT); err != nil {
				return nil, invalidf("SSM %d, mode %d: −Re A = %v", g, k, err)
			}
			if aIm[g*width+k], err = inverseTransform(-imag(lam), imT); err != nil {
				return nil, invalidf("SSM %d, mode %d: −Im A = %v", g, k, err)
			}
		}
	}
	invDt := make([]float64, h)
	cs := make([]float64, h*width*2)
	d := make([]float64, h)
	for c, f := range bank.Channels {
		diag, ok := f.(*filters.Diagonal)
		if !ok {
			return nil, invalidf("channel %d is %s, not diagonal", c, f.Form())
		}
		var err error
		if invDt[c], err = inverseTransform(m.Dt[c], dtT); err != nil {
			return nil, invalidf("channel %d: Δt = %v", c, err)
		}
		d[c] = diag.H0
		g := m.Group[c]
		if len(m.Residues[c]) != modes {
			return nil, invalidf("channel %d has %d residues for %d modes", c, len(m.Residues[c]), modes)
		}
		for k := range modes {
			lam, r := m.A[g][k], m.Residues[c][k]
			if flip[g][k] {
				lam, r = cmplx.Conj(lam), cmplx.Conj(r)
			}
			q, fac, err := discretizeMode(disc, lam, m.Dt[c], 0)
			if err != nil {
				return nil, fmt.Errorf("channel %d, mode %d: %w", c, k, err)
			}
			if cmplx.Abs(q) < 1e-300 || fac == 0 {
				// The pole is 0 (e^{ΔA} underflows, or ΔA = −2 bilinear): the mode is a tap at
				// t = 1 of its residue, which the
				// module's 2·Re(C̃·e^{ΔA·t}) cannot make; an idle one (its residue rounding,
				// as the plain export leaves idle poles at 0 out) is written with no C.
				if idleTap(r, m.Residues[c]) {
					continue
				}
				return nil, invalidf("channel %d, mode %d: its pole e^{ΔA} is 0 (Δ·A = %v) with residue %v, which the s4d layout cannot hold", c, k, complex(m.Dt[c], 0)*lam, r)
			}
			ct := r / q
			d[c] -= 2 * real(ct)
			cv := ct / fac
			i := c*width + k
			// +0, not the −0 that r/λ and ·/f give a residue +0 (a zero channel's), as the
			// other writers keep a zero
			cs[2*i], cs[2*i+1] = real(cv)+0, imag(cv)+0
		}
		d[c] += 0
	}
	ones := make([]float64, s*width*2)
	for i := 0; i < len(ones); i += 2 {
		ones[i] = 1
	}
	return named(prefix, []string{"kernel.inv_dt", "kernel.A_real", "kernel.A_imag", "kernel.B", "kernel.C", "D"},
		[][]int{{h, 1}, {s, width}, {s, width}, {1, s, width, 2}, {1, h, width, 2}, {1, h}}, invDt, aRe, aIm, ones, cs, d)
}
