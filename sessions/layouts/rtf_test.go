package layouts_test

import (
	"errors"
	"math"
	"math/cmplx"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/filtertest"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// moduleTol bounds max|k_module − h| / max|h| when the RTF module's FFT kernel is emulated in
// float64: FFT round-off (a few eps·log M) times the condition of the denominator on the
// unit circle, max|A(e^{jω})|/min|A(e^{jω})|, which is below 1e3 for the test filters
// (poles of modulus ≤ 0.9). Measured: about 1e-14.
const moduleTol = 1e-10

// neumannTol bounds the relative error of numerators after the truncation correction is
// applied and undone: the series' rounding grows with the condition of I − A^M, close to 1
// here. Measured: about 1e-15.
const neumannTol = 1e-12

// moduleKernel computes what the RTF reference module's get_k returns for a bank exported
// in its layout: for each channel, the zero-padded coefficients [1, a₁…a_N, 0…] and
// [0, b₁…b_N, 0…] of length M = L + L mod 2 are transformed with a real FFT, the kernel
// spectrum is B/A + h_0, and its inverse FFT is cut to L samples.
func moduleKernel(t *testing.T, ab, h0 *arrays.Array, L int) [][]float64 {
	t.Helper()
	m := L + L%2
	d, n := h0.Shape[0], ab.Shape[1]
	fft := fourier.NewFFT(m)
	rows := ab.Rows()
	out := make([][]float64, d)
	for c := range d {
		a, b := make([]float64, m), make([]float64, m)
		a[0] = 1
		copy(a[1:], rows[c][:n])
		copy(b[1:], rows[d+c][:n])
		A := fft.Coefficients(nil, a)
		B := fft.Coefficients(nil, b)
		K := make([]complex128, len(A))
		for i := range K {
			K[i] = B[i]/A[i] + complex(h0.Data[c], 0)
		}
		k := fft.Sequence(nil, K)
		for i := range k {
			k[i] /= float64(m)
		}
		out[c] = k[:L]
	}
	return out
}

func relMaxDiff(got, want []float64) float64 {
	d, s := 0.0, 0.0
	for i := range want {
		d = math.Max(d, math.Abs(got[i]-want[i]))
		s = math.Max(s, math.Abs(want[i]))
	}
	return d / s
}

// TestRTFTruncationMatchesModule exports banks with and without the truncation correction
// and runs the reference module's kernel algorithm on the tensors. With the correction the
// module reproduces the filters' impulse responses exactly for 0 ≤ t < L, for even and odd
// trunc_len: the algorithm folds h[M] onto t = 0, which the h_0 written takes off; without
// it, every sample carries the aliased tail.
func TestRTFTruncationMatchesModule(t *testing.T) {
	bank := filtertest.TFBank(11, 4, 6)
	for _, L := range []int{32, 33, 64, 200} {
		named, _ := must2(exportRTF(filters.Document{Bank: bank}, "", L))
		k := moduleKernel(t, named[0].Array, named[1].Array, L)
		raw, _ := must2(exportRTF(filters.Document{Bank: bank}, "", 0))
		kRaw := moduleKernel(t, raw[0].Array, raw[1].Array, L)
		for c, f := range bank.Channels {
			h := f.Impulse(L)
			if e := relMaxDiff(k[c], h); e > moduleTol {
				t.Errorf("L=%d channel %d: module kernel with the correction differs from h by %.3g", L, c, e)
			}
			if L == 32 {
				if e := relMaxDiff(kRaw[c], h); e < 1e-6 {
					t.Errorf("L=%d channel %d: without the correction the kernel should show the tail, differs by only %.3g", L, c, e)
				}
			}
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func truncOpt(l int) layouts.Options {
	return layouts.Options{Values: map[string]string{"trunc-len": strconv.Itoa(l)}}
}

func exportRTF(doc filters.Document, prefix string, l int) ([]arrays.Named, []filters.Report, error) {
	return layouts.Export(doc, layouts.RTF, truncOpt(l), prefix)
}

func importRTF(ab, h0, scalar *arrays.Array, l int) (*filters.Bank, error) {
	src := layouts.NamedSource{{Name: "ab", Array: ab}, {Name: "h_0", Array: h0}}
	if scalar != nil {
		src = append(src, arrays.Named{Name: "scalar", Array: scalar})
	}
	r, err := layouts.Import(src, layouts.Layer{Layout: layouts.RTF}, truncOpt(l))
	return r.Bank, err
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

func TestRTFRoundTrip(t *testing.T) {
	bank := filtertest.TFBank(12, 8, 16)
	for _, L := range []int{0, 128, 1001} {
		named, reports := must2(exportRTF(filters.Document{Bank: bank}, "layers.3.", L))
		if reports != nil {
			t.Error("a tf bank was converted")
		}
		if named[0].Name != "layers.3.ab" || named[1].Name != "layers.3.h_0" || !slices.Equal(named[0].Array.Shape, []int{16, 16}) || !slices.Equal(named[1].Array.Shape, []int{8}) {
			t.Fatalf("tensors %s %v, %s %v", named[0].Name, named[0].Array.Shape, named[1].Name, named[1].Array.Shape)
		}
		back := must(importRTF(named[0].Array, named[1].Array, nil, L))
		for c := range bank.Channels {
			want, got := bank.Channels[c].(*filters.TransferFunction), back.Channels[c].(*filters.TransferFunction)
			if L == 0 {
				// Without the correction the coefficients are stored as they are: exact.
				if !slices.Equal(got.Den, want.Den) || !slices.Equal(got.Num, want.Num) || got.H0 != want.H0 {
					t.Errorf("channel %d changed", c)
				}
				continue
			}
			if !slices.Equal(got.Den, want.Den) || got.H0 != want.H0 {
				t.Errorf("L=%d channel %d: a or h0 changed", L, c)
			}
			if e := relMaxDiff(got.Num, want.Num); e > neumannTol {
				t.Errorf("L=%d channel %d: numerator differs by %.3g after the correction and its inverse", L, c, e)
			}
		}
	}
}

// TestRTFRoundTripSlowDecay undoes the correction where ρ^M is near 1, as for LRU poles
// initialised at |λ| up to 0.99999 with trunc_len 4096 (ρ^M = 0.96): the Neumann series would
// need about 900 terms, so the numerator comes from solving with I − A^M.
func TestRTFRoundTripSlowDecay(t *testing.T) {
	const L = 4096
	var chans []filters.Filter
	for c, rho := range []float64{0.999, 0.9999, 0.99999} {
		var poles, residues []complex128
		for k := range 3 {
			p := cmplx.Rect(rho*(1-1e-4*float64(k)), 0.7*float64(k+1))
			poles = append(poles, p, cmplx.Conj(p))
			r := complex(1, float64(k+c))
			residues = append(residues, r, cmplx.Conj(r))
		}
		tf, _ := must2(filters.ToTF(must(filters.NewDiagonal(poles, residues, 0.5))))
		chans = append(chans, tf)
	}
	bank := must(filters.NewBank(chans))
	named, _ := must2(exportRTF(filters.Document{Bank: bank}, "", L))
	back, err := importRTF(named[0].Array, named[1].Array, nil, L)
	if err != nil {
		t.Fatal(err)
	}
	for c, f := range bank.Channels {
		// The condition number of I − A^M is about 1/(1 − ρ^M) times that of the companion
		// basis. Measured differences: 5e-15 to 1e-14.
		if e := filters.RelDiff(f.Impulse(2*L), back.Channels[c].Impulse(2*L)); !(e < 1e-9) {
			t.Errorf("channel %d: impulse response differs by %.3g after the correction and its inverse", c, e)
		}
	}
}

func TestRTFExportConvertsAndPads(t *testing.T) {
	// A bank of dense filters is converted to tf; a lower-order channel is padded.
	d3 := filtertest.Dense()
	d1 := must(filters.NewDense([][]float64{{0.5}}, []float64{1}, []float64{2}, 0.25))
	bank := must(filters.NewBank([]filters.Filter{d3, d1}))
	named, reports := must2(exportRTF(filters.Document{Bank: bank}, "", 0))
	if len(reports) != 2 {
		t.Errorf("%d reports, want 2", len(reports))
	}
	ab := named[0].Array
	if !slices.Equal(ab.Shape, []int{4, 3}) {
		t.Fatalf("ab shape %v", ab.Shape)
	}
	if row := ab.Rows()[1]; row[1] != 0 || row[2] != 0 || row[0] != -0.5 {
		t.Errorf("the order-1 denominator is %v, want [-0.5 0 0]", row)
	}
	back := must(importRTF(ab, named[1].Array, nil, 0))
	for c, f := range bank.Channels {
		if e := relMaxDiff(back.Channels[c].Impulse(64), f.Impulse(64)); e > 1e-12 {
			t.Errorf("channel %d: impulse differs by %.3g", c, e)
		}
	}
	// A single filter is a bank of one channel.
	named, _ = must2(exportRTF(filters.Document{Filter: d1}, "", 0))
	if !slices.Equal(named[0].Array.Shape, []int{2, 1}) || named[1].Array.Data[0] != 0.25 {
		t.Errorf("single filter: %v %v", named[0].Array.Shape, named[1].Array.Data)
	}
}

func TestRTFSharedDenominatorsAndMontel(t *testing.T) {
	// num_a = 2 denominators for D = 4 channels: channels 0 and 1 share row 0.
	ab := must(arrays.FromRows([][]float64{
		{-0.5, 0.1}, {0.2, 0.3}, // denominators
		{1, 0}, {0, 1}, {1, 1}, {2, 0}, // numerators
	}))
	h0 := arrays.Vector([]float64{0, 0.1, 0.2, 0.3})
	bank := must(importRTF(ab, h0, nil, 0))
	want := [][]float64{{-0.5, 0.1}, {-0.5, 0.1}, {0.2, 0.3}, {0.2, 0.3}}
	for c, f := range bank.Channels {
		tf := f.(*filters.TransferFunction)
		if !slices.Equal(tf.Den, want[c]) || tf.H0 != h0.Data[c] || !slices.Equal(tf.Num, ab.Rows()[2+c]) {
			t.Errorf("channel %d = %+v", c, tf)
		}
	}
	// The l1_montel constraint divides each denominator by Σ|a| + |scalar| + 1e-6.
	scalar := arrays.Vector([]float64{0.4, -1})
	bank = must(importRTF(ab, h0, scalar, 0))
	if got, want := bank.Channels[2].(*filters.TransferFunction).Den[1], 0.3/(0.5+1+1e-6); got != want {
		t.Errorf("constrained a₂ = %v, want %v", got, want)
	}
}

func TestRTFImportErrors(t *testing.T) {
	ab := must(arrays.FromRows([][]float64{{0.1}, {0.2}, {1}, {2}, {3}}))
	for _, tc := range []struct {
		name       string
		ab, h0, sc *arrays.Array
		o          int
		want       string
	}{
		{"rows not D + num_a", ab, arrays.Vector([]float64{1, 2}), nil, 0, "num_a dividing D"},
		{"num_a not dividing", ab, arrays.Vector([]float64{1, 2, 3}), nil, 0, "num_a dividing D"},
		{"1-D ab", arrays.Vector([]float64{1, 2}), arrays.Vector([]float64{1}), nil, 0, "want ab of shape (num_a + D, N)"},
		{"2-D h_0", ab, ab, nil, 0, "want (D)"},
		{"scalar shape", ab, arrays.Vector([]float64{1, 2, 3, 4}), arrays.Vector([]float64{1, 2}), 0, "want (num_a) = (1)"},
	} {
		_, err := importRTF(tc.ab, tc.h0, tc.sc, tc.o)
		if !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
		// Tensors without a prefix: the layer is not named as "" (it was `rtf layer "": …`).
		if err != nil && !strings.HasPrefix(err.Error(), "rtf layer: ") {
			t.Errorf("%s: %q, want it to start with \"rtf layer: \"", tc.name, err)
		}
	}
	// A pole on the unit circle: the correction cannot be undone.
	marginal := must(arrays.FromRows([][]float64{{-1}, {1}}))
	if _, err := importRTF(marginal, arrays.Vector([]float64{0}), nil, 16); !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), "condition number") {
		t.Errorf("marginal pole: %v", err)
	}
	// An unstable filter's correction overflows.
	unstable := must(filters.NewTransferFunction([]float64{-1e10}, []float64{1}, 0))
	if _, _, err := exportRTF(filters.Document{Filter: unstable}, "", 1000); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("unstable export: %v", err)
	}
}

func TestFindRTF(t *testing.T) {
	infos := func(names ...string) []arrays.Info {
		var out []arrays.Info
		for _, n := range names {
			shape := []int{2}
			if strings.HasSuffix(n, "ab") {
				shape = []int{4, 3}
			}
			out = append(out, arrays.Info{Name: n, DType: "<f8", Shape: shape, Supported: true})
		}
		return out
	}
	names := infos("step", "layers.0.filter.ab", "layers.0.filter.h_0", "layers.1.filter.ab", "layers.1.filter.h_0", "layers.1.norm.weight", "lonely.ab")
	if _, err := layouts.Find(names, "", ""); err == nil {
		t.Error("two layers without a choice should be ambiguous")
	} else if ce := (*layouts.ChoiceError)(nil); !errors.As(err, &ce) || len(ce.Layers) != 2 {
		t.Errorf("ChoiceError: %v", err)
	}
	for _, want := range []string{"layers.1.filter.", "layers.1.filter", "layers.1.filter.ab", "layers.1.filter.h_0"} {
		if l, err := layouts.Find(names, "", want); l.Prefix != "layers.1.filter." || l.Layout != layouts.RTF || err != nil {
			t.Errorf("Find(%q) = %+v %v", want, l, err)
		}
	}
	if _, err := layouts.Find(names, "", "layers.1.norm.weight"); err == nil {
		t.Error("a plain tensor was taken for a layer")
	}
	if l, err := layouts.Find(infos("ab", "h_0"), "", ""); l.Prefix != "" || err != nil {
		t.Error("the bare layout was not found")
	}
	if _, err := layouts.Find(infos("xab", "xh_0"), "", ""); err == nil {
		t.Error(`"xab" is not a layer's "ab"`)
	}
}

// ReadBack measures the tensors as written: exact for a well-conditioned bank in float64,
// float32's rounding when asked for float32, and a failure or a large error for a stable
// filter whose transfer function float64 cannot hold.
// TestRTFExportUnderHyenaOperator exports a bank under a Hyena operator's prefix, where
// import counts h_0 twice (safari's Hyena-RTF wrapper): export halves it unless --h0 once
// says otherwise, so that the tensors read back as the bank. It wrote h_0 whole, and the
// read-back check refused its own tensors (0.29 off on ssmlab's golden rtf layer).
func TestRTFExportUnderHyenaOperator(t *testing.T) {
	doc := filters.Document{Bank: filtertest.TFBank(43, 3, 4)}
	const prefix = "backbone.layers.0.mixer.filter_fn."
	for _, h0 := range []string{"", "once", "twice"} {
		o := layouts.Options{Values: map[string]string{}}
		if h0 != "" {
			o.Values["h0"] = h0
		}
		tensors, _, err := layouts.Export(doc, layouts.RTF, o, prefix)
		if err != nil {
			t.Fatal(err)
		}
		c, err := layouts.ReadBack(doc, tensors, arrays.Float64, layouts.RTF, o, prefix)
		if err != nil || !(c.RelError <= neumannTol) {
			t.Errorf("--h0 %q: read back to %.3g (%v)", h0, c.RelError, err)
		}
	}
}

func TestReadBack(t *testing.T) {
	const L = 256
	doc := filters.Document{Bank: filtertest.TFBank(31, 4, 6)}
	for _, tc := range []struct {
		dt       arrays.DType
		trunc    int
		min, max float64
	}{
		{arrays.Float64, L, 0, neumannTol},
		{arrays.Float64, 0, 0, neumannTol},
		// float32 keeps 2^-24 ≈ 6e-8 of each coefficient; the denominators' condition on
		// the unit circle amplifies it (measured: 4e-6)
		{arrays.Float32, L, 1e-9, 1e-4},
	} {
		tensors, _ := must2(exportRTF(doc, "", tc.trunc))
		c, err := layouts.ReadBack(doc, tensors, tc.dt, layouts.RTF, truncOpt(tc.trunc), "")
		worst, n := c.RelError, c.Length
		if err != nil || worst < tc.min || worst > tc.max {
			t.Errorf("%v, trunc_len %d: read back to %.3g (err %v), want it in [%g, %g]", tc.dt, tc.trunc, worst, err, tc.min, tc.max)
		}
		if tc.trunc > 0 && n != tc.trunc {
			t.Errorf("measured over %d samples, want trunc_len %d", n, tc.trunc)
		}
	}

	// 16 real poles crowded in [0.95, 0.99]: stable, but their polynomial's float64
	// coefficients put roots outside the unit circle.
	poles := make([]complex128, 16)
	res := make([]complex128, 16)
	for i := range poles {
		poles[i] = complex(0.95+0.04*float64(i)/15, 0)
		res[i] = complex(1/float64(i+1), 0)
	}
	crowded := filters.Document{Filter: must(filters.NewDiagonal(poles, res, 0))}
	for _, trunc := range []int{0, 1024} {
		tensors, reports, err := exportRTF(crowded, "", trunc)
		if err != nil {
			continue // refusing is as good as saying so
		}
		c, err := layouts.ReadBack(crowded, tensors, arrays.Float64, layouts.RTF, truncOpt(trunc), "")
		worst := c.RelError
		if err == nil && worst < 1e-3 {
			t.Errorf("trunc_len %d: crowded poles read back to %.3g; the conversion reported %.3g", trunc, worst, reports[0].RelError)
		}
	}
}

// TestRTFTruncLenWarning: an RTF layer read with no trunc_len given, whose poles lie near the
// unit circle, warns that a module's trunc_len changes what the numerators mean (its FFT
// keeps b̃ = b(I − A^L)); one whose trunc_len is given, or whose poles are far inside, does
// not.
func TestRTFTruncLenWarning(t *testing.T) {
	slow := must(filters.NewTransferFunction([]float64{-0.999}, []float64{1}, 0)) // pole 0.999
	fast := must(filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0))
	for _, c := range []struct {
		f    filters.Filter
		opts layouts.Options
		warn bool
	}{
		{slow, layouts.Options{}, true},
		{slow, truncOpt(1024), false},
		{slow, truncOpt(0), false}, // given: the user says the module stores b itself
		{fast, layouts.Options{}, false},
	} {
		named, _ := must2(exportRTF(filters.Document{Bank: &filters.Bank{Channels: []filters.Filter{c.f}}}, "", 0))
		r, err := layouts.Import(layouts.NamedSource(named), layouts.Layer{Layout: layouts.RTF}, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(r.Warnings, "\n")
		if got := strings.Contains(w, "no trunc_len given") && strings.Contains(w, "radius up to 0.999 ") && strings.Contains(w, "(0.36 at L = 1024)"); got != c.warn {
			t.Errorf("%v, options %v: warnings %q, want the trunc_len warning: %v", c.f, c.opts.Values, r.Warnings, c.warn)
		}
	}
}
