package layouts

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// Export returns the tensors of a filter or bank (a single filter is a bank of one channel,
// except in sos, which writes it as (sections, 6)) in a layout of ExportLayouts, named
// prefix + the names the module's load_state_dict expects. For rtf, channels are converted
// to the tf form (rtf.FromBank); for the modal layouts, s4d and stripedhyena, to the
// diagonal form, and the modes go to the layout as poles and residues, never through
// polynomial coefficients; for sos, to the zpk form, paired into sections (exportSOS). The
// conversions' reports are returned. Channels of lower order are padded with coefficients,
// modes or sections that change nothing.
func Export(doc filters.Document, lay Layout, o Options, prefix string) ([]arrays.Named, []filters.Report, error) {
	switch lay {
	case RTF, S4D, StripedHyena, SOS:
	default:
		return nil, nil, fmt.Errorf("%w: export writes the layouts %s, not %s", ErrNotFound, JoinLayouts(ExportLayouts), lay)
	}
	if err := o.CheckExport(lay); err != nil {
		return nil, nil, err
	}
	bank := doc.Bank
	if doc.Filter != nil {
		bank = &filters.Bank{Channels: []filters.Filter{doc.Filter}}
	}
	if bank == nil || len(bank.Channels) == 0 {
		return nil, nil, invalidf("nothing to export: the document holds no filter")
	}
	switch lay {
	case RTF:
		return exportRTF(bank, o, prefix)
	case SOS:
		return exportSOS(bank, doc.Filter != nil, prefix)
	}
	var reports []filters.Report
	if f := StoredForm(lay); bank.Form() != f {
		var err error
		if bank, reports, err = filters.ConvertBank(bank, f); err != nil {
			return nil, nil, fmt.Errorf("the %s layout holds modes: %w", lay, err)
		}
	}
	if o.Shared != nil {
		if lay != S4D {
			return nil, nil, invalidf("shared modes are written in the s4d layout, not %s", lay)
		}
		out, err := exportS4DShared(bank, o.Shared, o.StateSize, o, prefix)
		return out, reports, err
	}
	half := make([][2][]complex128, len(bank.Channels))
	width := 0
	for c, f := range bank.Channels {
		d, ok := f.(*filters.Diagonal)
		if !ok {
			return nil, nil, invalidf("channel %d is %s after conversion to diagonal", c, f.Form())
		}
		modes, res := filters.HalfModes(d)
		var p, r []complex128
		for i, pole := range modes {
			if cmplx.Abs(pole) < 1e-300 {
				// A mode at 0 is a tap at t = 1 of its residue, which has no logarithm. One
				// whose residue is rounding is an idle pole (distill pads an odd number of
				// idle poles with one at 0, and a tf keeps it as a last coefficient 0), and is
				// left out.
				if idleTap(res[i], res) {
					continue
				}
				return nil, nil, invalidf("channel %d: pole %d is 0, which the %s layout cannot hold (it takes the poles' logarithms)", c, i, lay)
			}
			p, r = append(p, pole), append(r, res[i])
		}
		half[c] = [2][]complex128{p, r}
		width = max(width, len(p))
	}
	width = max(width, o.StateSize)
	if lay == StripedHyena {
		out, err := exportStripedHyena(bank, half, width, prefix)
		return out, reports, err
	}
	out, err := exportS4D(bank, half, width, o, prefix)
	return out, reports, err
}

// StoredForm is the form layout lay stores a filter in, which Export converts each channel
// to first: rtf's polynomial coefficients are a tf filter's, the modal layouts' (s4d,
// stripedhyena) poles and residues a diagonal one's, sos's sections a zpk one's; "" for a
// layout Export does not write.
func StoredForm(lay Layout) filters.Form {
	switch lay {
	case RTF:
		return filters.FormTF
	case S4D, StripedHyena:
		return filters.FormDiagonal
	case SOS:
		return filters.FormZPK
	}
	return ""
}

// PoleLayouts are the layouts of ExportLayouts that store a filter's poles (StoredForm not
// tf: s4d's and stripedhyena's modes, sos's sections), in ExportLayouts' order: those that
// may hold a filter the rtf layout's polynomial coefficients of the whole order lose.
func PoleLayouts() []Layout {
	var out []Layout
	for _, lay := range ExportLayouts {
		if f := StoredForm(lay); f != "" && f != filters.FormTF {
			out = append(out, lay)
		}
	}
	return out
}

// DefaultExportLayouts are the layouts to try, in order, for a filter of form f whose user
// named none: those of ModuleLayouts (the layouts a model's module loads) that store f as it
// is (StoredForm), so that nothing is converted, then rtf, which converts any form to tf. A
// tf filter's is rtf alone, a diagonal one's s4d, stripedhyena, then rtf: the rtf layout
// turns poles and residues into polynomial coefficients, which may not hold them (a distilled
// fit written as poles and residues is one whose tf coefficients do not).
func DefaultExportLayouts(f filters.Form) []Layout {
	var out []Layout
	for _, lay := range ModuleLayouts {
		if StoredForm(lay) == f {
			out = append(out, lay)
		}
	}
	if !slices.Contains(out, RTF) {
		out = append(out, RTF)
	}
	return out
}

// idleTapTol is the largest residue of a mode at 0, relative to the sum of the magnitudes
// of its channel's residues, that the modal layouts leave out as rounding (idleTap).
const idleTapTol = 1e-12

// idleTap reports whether a mode at 0 of residue r, among a channel's residues res (its
// own included), is idle: its residue rounding where it lands. Such a mode adds r to h[1]
// alone, which the residues sum to (h[1] = Σ r for modes of h[t] = Σ r·p^(t−1)), so r is
// measured against their magnitudes, the size of that sum's rounding; against the whole
// response's norm a real tap is rounding next to an unstable filter's growth (poles {0, 1.5},
// residues {1, 2}: 1 against 1e90 over 512 samples).
func idleTap(r complex128, res []complex128) bool {
	scale := 0.0
	for _, x := range res {
		scale += cmplx.Abs(x)
	}
	return cmplx.Abs(r) <= idleTapTol*scale
}

// ModalStateSize is the number of modes per channel of a modal layout's tensors as Export
// writes them (S4D's A_real, StripedHyena's poles: (channels, modes, …)), or of a layer's
// as ExportMIMO writes them (LRU's nu_log, S5's Lambda_re: (modes); RotRNN's gamma_log:
// (heads, 1), a mode a head), 0 for another layout or tensors without them.
func ModalStateSize(lay Layout, tensors []arrays.Named) int {
	if name := map[Layout]string{LRU: "nu_log", S5: "Lambda_re", RotRNN: "gamma_log"}[lay]; name != "" {
		for _, t := range tensors {
			if strings.HasSuffix(t.Name, name) && len(t.Array.Shape) >= 1 {
				return t.Array.Shape[0]
			}
		}
		return 0
	}
	names := map[Layout][]string{S4D: {"kernel.A_real", "kernel.log_A_real"}, StripedHyena: {"poles"}}[lay]
	for _, t := range tensors {
		for _, name := range names {
			if strings.HasSuffix(t.Name, name) && len(t.Array.Shape) >= 2 {
				return t.Array.Shape[1]
			}
		}
	}
	return 0
}

// exportStripedHyena writes poles and residues (hidden, state_size, 1, 2) and D (hidden),
// for a ParallelHyenaFilter with hyena_filter_groups = 1: its kernel is Re Σ r·pᵗ from t = 0,
// so r = r½/p for each half mode, and D takes the rest of h[0].
func exportStripedHyena(bank *filters.Bank, half [][2][]complex128, width int, prefix string) ([]arrays.Named, error) {
	h := len(bank.Channels)
	poles := make([]float64, h*width*2)
	res := make([]float64, h*width*2)
	d := make([]float64, h)
	for c, hm := range half {
		d[c] = bank.Channels[c].(*filters.Diagonal).H0
		for k := range width {
			p, r := complex(0.5, 0), complex(0, 0) // padding: a mode with no residue
			if k < len(hm[0]) {
				p = hm[0][k]
				r = hm[1][k] / p
				d[c] -= real(r)
			}
			i := (c*width + k) * 2
			poles[i], poles[i+1] = real(p), imag(p)
			res[i], res[i+1] = real(r), imag(r)
		}
	}
	return named(prefix, []string{"poles", "residues", "D"},
		[][]int{{h, width, 1, 2}, {h, width, 1, 2}, {h}}, poles, res, d)
}

// exportS4D writes an S4D layer with Δt = 1 and B = 1 (variant ssm: SSMKernelDiag in FFTConv,
// names kernel.inv_dt, kernel.A_real, kernel.A_imag, kernel.B, kernel.C and D; variant
// minimal: models/s4/s4d.py, kernel.log_dt, kernel.log_A_real, kernel.A_imag, kernel.C and
// D). The layer keeps the member q of each pair with Im q ≤ 0 (S4's convention) and adds
// its conjugate: K[t] = 2·Re Σ C̃·qᵗ with C̃ = conj(r½)/(2q), and C = C̃ / factor(disc).
// With is-real (SSMKernelDiag with is_real=True) A, B and C are real and there is no A_imag:
// the module's kernel is the same sum over real modes (ssm.py lines 526-545, 597-604, with
// log_vandermonde_naive's 2·Re), which holds poles in (0, 1) only: e^{ΔA} for zoh, and for
// bilinear (1 + ΔA/2)/(1 − ΔA/2), whose logarithm the module takes (NaN below 0).
func exportS4D(bank *filters.Bank, half [][2][]complex128, width int, o Options, prefix string) ([]arrays.Named, error) {
	variant := o.get(S4D, "variant")
	disc := o.get(S4D, "disc")
	if disc == "dss" || variant == "minimal" && disc != "zoh" {
		return nil, invalidf("export writes the s4d layout with disc zoh or bilinear (the minimal variant: zoh only), not %s", disc)
	}
	isReal := o.bool(S4D, "is-real")
	if isReal && variant == "minimal" {
		return nil, invalidf("models/s4/s4d.py's S4D (variant minimal) has no is_real")
	}
	reT, imT, dtT := o.get(S4D, "real-transform"), o.get(S4D, "imag-transform"), o.get(S4D, "dt-transform")
	if variant == "minimal" {
		reT, imT, dtT = "exp", "none", "exp"
	}
	const dt = 1.0
	h := len(bank.Channels)
	aRe := make([]float64, h*width)
	aIm := make([]float64, h*width)
	cs := make([]float64, h*width*2)
	d := make([]float64, h)
	for c, hm := range half {
		d[c] = bank.Channels[c].(*filters.Diagonal).H0
		for k := range width {
			lam, ct := complex(-1, 0), complex(0, 0) // padding: a mode with no residue
			if k < len(hm[0]) {
				q := cmplx.Conj(hm[0][k])
				if isReal && !(imag(q) == 0 && real(q) > 0) {
					return nil, invalidf("channel %d, mode %d: pole %v is not real and positive, which a module built with is_real cannot hold (its poles are e^{Δ·A} with A real and negative): fit with real positive poles (train.PolesPositive)", c, k, q)
				}
				if imag(q) == 0 && real(q) < 0 {
					lam = complex(math.Log(-real(q)), -math.Pi)
				} else {
					lam = cmplx.Log(q)
				}
				if disc == "bilinear" {
					lam = 2 * (q - 1) / (q + 1)
				}
				ct = cmplx.Conj(hm[1][k]) / (2 * q)
				d[c] -= 2 * real(ct)
			}
			_, fac, err := discretizeMode(disc, lam, dt, 0)
			if err != nil {
				return nil, fmt.Errorf("channel %d, mode %d: %w", c, k, err)
			}
			cv := ct / fac
			i := c*width + k
			switch {
			case isReal:
			case variant == "minimal":
				aIm[i] = imag(lam) // A = −exp(log_A_real) + i·A_imag
			default:
				aIm[i], err = inverseTransform(-imag(lam), imT)
			}
			if err != nil {
				return nil, invalidf("channel %d, mode %d: −Im A = %v", c, k, err)
			}
			if aRe[i], err = inverseTransform(-real(lam), reT); err != nil {
				return nil, invalidf("channel %d, mode %d: −Re A = %v (a pole on or outside the unit circle; --real-transform none holds any sign)", c, k, err)
			}
			if isReal {
				cs[i] = real(cv)
			} else {
				cs[2*i], cs[2*i+1] = real(cv), imag(cv)
			}
		}
	}
	invDt, err := inverseTransform(dt, dtT)
	if err != nil {
		return nil, invalidf("Δt = 1: %v", err)
	}
	dts := make([]float64, h)
	for i := range dts {
		dts[i] = invDt
	}
	if variant == "minimal" {
		return named(prefix, []string{"kernel.log_dt", "kernel.log_A_real", "kernel.A_imag", "kernel.C", "D"},
			[][]int{{h}, {h, width}, {h, width}, {h, width, 2}, {h}}, dts, aRe, aIm, cs, d)
	}
	if isReal {
		ones := make([]float64, h*width)
		for i := range ones {
			ones[i] = 1
		}
		return named(prefix, []string{"kernel.inv_dt", "kernel.A_real", "kernel.B", "kernel.C", "D"},
			[][]int{{h, 1}, {h, width}, {1, h, width}, {1, h, width}, {1, h}}, dts, aRe, ones, cs[:h*width], d)
	}
	ones := make([]float64, h*width*2)
	for i := 0; i < len(ones); i += 2 {
		ones[i] = 1
	}
	return named(prefix, []string{"kernel.inv_dt", "kernel.A_real", "kernel.A_imag", "kernel.B", "kernel.C", "D"},
		[][]int{{h, 1}, {h, width}, {h, width}, {1, h, width, 2}, {1, h, width, 2}, {1, h}}, dts, aRe, aIm, ones, cs, d)
}

func named(prefix string, names []string, shapes [][]int, data ...[]float64) ([]arrays.Named, error) {
	out := make([]arrays.Named, len(names))
	for i, n := range names {
		a, err := arrays.New(shapes[i], data[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out[i] = arrays.Named{Name: prefix + n, Array: a}
	}
	return out, nil
}

// WriteBackVariant names the variant of a layer's module whose tensors Export does not write
// in the layer's own layout (other names or shapes, which that module would not load), from
// what detection recorded in its Options, and the layouts that hold its filters in another
// module; "" where Export writes what the layer's module loads. Export writes an rtf layer
// with one denominator per channel and no constraint, an s4d layer (variant ssm) complex or
// real (is-real), causal, with one SSM and one Δt per channel, and a stripedhyena layer with
// one system per channel; ExportMIMO every lru and s5 layer (bidirectional too).
func WriteBackVariant(l Layer) (variant string, others []Layout) {
	var why []string
	switch l.Layout {
	case RTF:
		if n := l.Options["num_a"]; n != "" {
			why = append(why, fmt.Sprintf("shared denominators (num_a: %s denominator rows for %d channels)", n, l.Channels))
		}
		if l.Options["constraint"] == "l1_montel" {
			why = append(why, "the l1_montel constraint (its scalar parameter)")
		}
	case S4D:
		if l.Options["bidirectional"] == "true" {
			why = append(why, "bidirectional (C's anti-causal rows share A with the causal ones)")
		}
		if n := l.Options["n_ssm"]; n != "" {
			w := fmt.Sprintf("n_ssm %s (A and B shared among the %d channels)", n, l.Channels)
			// The shared modes are written but for b; a reason listed already is not repeated.
			if b := notSharedBecause(l); b != "" && !slices.ContainsFunc(why, func(w string) bool { return strings.HasPrefix(w, b) }) {
				w += " with " + b
			}
			why = append(why, w)
		}
		if l.Options["dt_tie"] == "false" {
			why = append(why, "dt_tie false (inv_dt of (H, N/2))")
		}
	case StripedHyena:
		if n := l.Options["num_systems"]; n != "" {
			why = append(why, fmt.Sprintf("hyena_filter_groups > 1 (%s systems for %d channels)", n, l.Channels))
		}
	}
	if len(why) == 0 {
		return "", nil
	}
	for _, lay := range ModuleLayouts {
		if lay != l.Layout && NotHeldBy(l, lay) == "" {
			others = append(others, lay)
		}
	}
	return strings.Join(why, ", "), others
}

// NotHeldBy says why layout lay's module would not run layer l's filters as l's module does,
// or "" (WriteBackVariant covers l's own layout). A bidirectional S4D layer (FFTConv
// bidirectional=True: C's first H rows causal, the next H anti-causal, k1[j] applied to
// x[t+1+j]) is held only by RTF(bidirectional=True) (ruke1ire/RTF rtf.py: get_k's first H
// kernels causal, the next H flipped, applied the same way), which loads the rtf layout's ab
// and h_0 of 2·H channels in that order; a stripedhyena layer's filters are causal.
func NotHeldBy(l Layer, lay Layout) string {
	if l.Layout == S4D && l.Options["bidirectional"] == "true" && lay == StripedHyena {
		return "bidirectional: the stripedhyena layout holds causal filters only"
	}
	return ""
}

// BidirectionalRTF is what a bidirectional layer written in the rtf layout is built as, or ""
// for any other layer (NotHeldBy).
func BidirectionalRTF(l Layer) string {
	if l.Layout != S4D || l.Options["bidirectional"] != "true" {
		return ""
	}
	return fmt.Sprintf("build it as RTF(d_model=%d, bidirectional=True): ab's and h_0's channels 0–%d are causal, %d–%d anti-causal", l.Channels/2, l.Channels/2-1, l.Channels/2, l.Channels-1)
}
