package layouts

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/filters/rtf"
	"github.com/ssmlab/ssmlab/internal/plural"
	"github.com/ssmlab/ssmlab/sessions/arrays"
)

// The RTF layout (ruke1ire/RTF rtf.py; the RTF paper, eq. 4 and Algorithm 1): ab
// (num_a + D, N) and h_0 (D), with scalar (num_a) under the l1_montel constraint; package
// rtf holds its numerics (the truncation correction of eq. 13 and its inverse).

func init() { impls[RTF] = rtfLayout{} }

type rtfLayout struct{}

func (rtfLayout) params() []string { return []string{rtf.NameAB, rtf.NameH0, rtf.NameScalar} }

func (rtfLayout) detect(in map[string]arrays.Info, p string) (Layer, bool) {
	ab, h0 := shapeOf(in, p+rtf.NameAB, 2), shapeOf(in, p+rtf.NameH0, 1)
	if ab == nil || h0 == nil {
		return Layer{}, false
	}
	l := Layer{Channels: h0[0], Order: ab[1], DType: in[p+rtf.NameAB].DType, Options: map[string]string{"h0": "once", "trunc-len": "0"}}
	if SafariHyenaRTF(p) {
		l.Options["h0"] = "twice"
	}
	if _, ok := in[p+rtf.NameScalar]; ok {
		l.Options["constraint"] = "l1_montel"
	}
	if ab[0] != 2*h0[0] { // shared denominators: WriteBackVariant
		l.Options["num_a"] = fmt.Sprint(ab[0] - h0[0])
	}
	return l, true
}

// h0Twice reports whether the layer's direct term is 2·h_0: the caller's --h0, else what
// detection found.
func h0Twice(l Layer, o Options) bool {
	if v, ok := o.Values["h0"]; ok {
		return v == "twice"
	}
	return l.Options["h0"] == "twice" || l.Options["h0"] == "" && SafariHyenaRTF(l.Prefix)
}

// readLayer reads the layer's tensors, h_0 doubled where the layer counts it twice (the
// kernel's direct term, before the truncation correction's fold is added to it).
func readLayer(t *tensors, l Layer, o Options) (*rtf.Layer, error) {
	abShape := []int{-1, -1}
	ab, err := t.get(rtf.NameAB, "(num_a + D, N)", abShape)
	if err != nil {
		return nil, err
	}
	h0Shape := []int{-1}
	h0, err := t.get(rtf.NameH0, "(D)", h0Shape)
	if err != nil {
		return nil, err
	}
	layer := &rtf.Layer{AB: ab.Data, H0: h0.Data, NumA: abShape[0] - h0Shape[0], Order: abShape[1]}
	if t.has(rtf.NameScalar) {
		sc, err := t.get(rtf.NameScalar, "(num_a)", []int{max(layer.NumA, 0)})
		if err != nil {
			return nil, err
		}
		layer.Scalar = sc.Data
	}
	if h0Twice(l, o) {
		layer.H0 = slices.Clone(layer.H0)
		for i := range layer.H0 {
			layer.H0[i] *= 2
		}
	}
	return layer, nil
}

func (rtfLayout) read(t *tensors, l Layer, o Options) (Result, error) {
	layer, err := readLayer(t, l, o)
	if err != nil {
		return Result{}, err
	}
	truncLen := o.int(RTF, "trunc-len")
	bank, err := layer.Bank(truncLen)
	if err != nil {
		return Result{}, invalidRTF(err)
	}
	parts := []string{}
	if layer.Scalar != nil {
		parts = append(parts, "l1_montel constraint applied")
	}
	if truncLen > 0 {
		parts = append(parts, fmt.Sprintf("truncation correction for trunc_len %d undone, h[%d] folded onto t = 0 as the module's FFT kernel does", truncLen, rtf.FFTLen(truncLen)))
	}
	if h0Twice(l, o) {
		parts = append(parts, "h_0 counted twice (safari's Hyena-RTF wrapper; --h0 once reads it as rtf.py does)")
	}
	what := fmt.Sprintf("bank of %s of order %d", plural.Count(len(bank.Channels), "tf channel"), layer.Order)
	if len(parts) > 0 {
		what += " (" + strings.Join(parts, "; ") + ")"
	}
	r := Result{Bank: bank, Note: t.note(what)}
	if _, given := o.Values["trunc-len"]; !given {
		if w := truncLenWarning(bank); w != "" {
			r.Warnings = append(r.Warnings, w)
		}
	}
	return r, nil
}

// truncLenWarning says, where no trunc_len was given or recorded, that the numerators were
// read as stored although the module's trunc_len L may have corrected them: an RTF module
// computes its kernel by an L-point FFT, which keeps b̃ = b(I − A^L) (RTF paper, eq. 13),
// and poles near the unit circle make b̃ differ from b by up to ρ^L. "" where the poles make
// that negligible (ρ^1024 below 1e-6).
func truncLenWarning(bank *filters.Bank) string {
	rho := 0.0
	for _, f := range bank.Channels {
		if r, err := filters.SpectralRadius(f); err == nil {
			rho = math.Max(rho, r)
		}
	}
	if aliased := math.Pow(rho, 1024); !(aliased > 1e-6) {
		return ""
	}
	return fmt.Sprintf("no trunc_len given: the numerators were read as stored, but a module built with trunc_len L keeps b̃ = b(I − A^L) (RTF paper, eq. 13), and poles of radius up to %.6g make that differ from b by up to ρ^L (%.2g at L = 1024): give --trunc-len L, the module's trunc_len", rho, math.Pow(rho, 1024))
}

func invalidRTF(err error) error { return &kindError{ErrInvalid, err} }

// exportRTF writes ab (2·D, N) and h_0 (D) by rtf.FromBank (with trunc_len, h_0 less the
// h[M] the module's FFT kernel folds onto t = 0), h_0 halved for a layer that counts it
// twice: by default one under a Hyena operator's prefix, as import reads it.
func exportRTF(bank *filters.Bank, o Options, prefix string) ([]arrays.Named, []filters.Report, error) {
	l, reports, err := rtf.FromBank(bank, o.int(RTF, "trunc-len"))
	if err != nil {
		return nil, nil, invalidRTF(err)
	}
	h0 := l.H0
	if h0Twice(Layer{Prefix: prefix}, o) {
		h0 = make([]float64, len(l.H0))
		for i, v := range l.H0 {
			h0[i] = v / 2
		}
	}
	out, err := named(prefix, []string{rtf.NameAB, rtf.NameH0}, [][]int{{l.NumA + l.Channels(), l.Order}, {l.Channels()}}, l.AB, h0)
	return out, reports, err
}

// SafariHyenaRTF reports whether an RTF layer's prefix is that of a Hyena operator's filter
// (safari's Hyena-RTF wrapper, experiments/safari/src/models/sequence/ssm/rtf_wrapper.py in
// ruke1ire/RTF): its kernel includes h_0 (rtf.py get_k adds it to the spectrum) and its
// convolution adds h_0 again as the bias (fftconv_ref(x, k, bias) with bias = h_0), so the
// layer's direct term is 2·h_0.
func SafariHyenaRTF(prefix string) bool {
	return strings.HasSuffix(prefix, "filter_fn.") || strings.HasSuffix(prefix, "filter_fn/")
}
