package layouts_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions/arrays"
	"github.com/ssmlab/ssmlab/sessions/layouts"
)

// randomModal returns a bank of stable diagonal channels with complex pairs and real poles of
// both signs, of different orders.
func randomModal(t *testing.T, seed uint64, channels int) *filters.Bank {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	chans := make([]filters.Filter, channels)
	for c := range chans {
		n := 2 + rng.IntN(4)
		var p, r []complex128
		for range n {
			p = append(p, cmplx.Rect(0.3+0.65*rng.Float64(), 3*rng.Float64()))
			r = append(r, complex(rng.NormFloat64(), rng.NormFloat64()))
		}
		p = append(p, complex(0.8*rng.Float64(), 0), complex(-0.9*rng.Float64()-0.05, 0))
		r = append(r, complex(rng.NormFloat64(), 0), complex(rng.NormFloat64(), 0))
		f, err := filters.NewDiagonalRealPart(p, r, rng.NormFloat64())
		if err != nil {
			t.Fatal(err)
		}
		chans[c] = f
	}
	b, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roundTripTol: the modes pass through log, exp and a division in float64.
const roundTripTol = 1e-12

func TestExportImportRoundTrip(t *testing.T) {
	bank := randomModal(t, 7, 5)
	for _, c := range []struct {
		lay layouts.Layout
		o   map[string]string
	}{
		{layouts.StripedHyena, nil},
		{layouts.S4D, nil},
		{layouts.S4D, map[string]string{"disc": "bilinear"}},
		{layouts.S4D, map[string]string{"variant": "minimal"}},
		{layouts.SOS, nil},
	} {
		o := layouts.Options{Values: c.o}
		named, _, err := layouts.Export(filters.Document{Bank: bank}, c.lay, o, "layers.1.mixer.")
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), c.lay, "layers.1.mixer")
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		ro := layouts.Options{Values: map[string]string{}}
		if v, ok := c.o["disc"]; ok {
			ro.Values["disc"] = v
		}
		r, err := layouts.Import(src, l, ro)
		if err != nil {
			t.Fatalf("%s %v: %v", c.lay, c.o, err)
		}
		for ch, f := range bank.Channels {
			if e := filters.RelDiff(f.Impulse(200), r.Bank.Channels[ch].Impulse(200)); e > roundTripTol {
				t.Errorf("%s %v: channel %d comes back off by %.3g", c.lay, c.o, ch, e)
			}
			// The channels differ in order, and the layer's state is the widest one's: the
			// others' padding (modes of no residue) is no pole of theirs (QA: an order-4
			// channel read back as order 5, with a pole at e^{-1}).
			if got := r.Bank.Channels[ch].Order(); got != f.Order() {
				t.Errorf("%s %v: channel %d of order %d comes back of order %d", c.lay, c.o, ch, f.Order(), got)
			}
		}
	}
}

// TestExportIsReal: with is-real, Export writes an S4D layer for SSMKernelDiag(is_real=True)
// (kernel.inv_dt (H, 1), A_real (H, N), B (1, H, N), C (1, H, N), D (1, H), no A_imag),
// which import detects as such and reads back to the bank, for zoh and bilinear; a pole that
// is not real and positive, which that module cannot hold, and the minimal variant, which
// has no is_real, are refused. Export wrote no real layer: is-real was no option.
func TestExportIsReal(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	chans := make([]filters.Filter, 3)
	for c := range chans {
		var p, r []complex128
		for range 2 + c {
			p = append(p, complex(0.05+0.94*rng.Float64(), 0))
			r = append(r, complex(rng.NormFloat64(), 0))
		}
		f, err := filters.NewDiagonal(p, r, rng.NormFloat64())
		if err != nil {
			t.Fatal(err)
		}
		chans[c] = f
	}
	bank, err := filters.NewBank(chans)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"p.kernel.inv_dt": {3, 1}, "p.kernel.A_real": {3, 4}, "p.kernel.B": {1, 3, 4}, "p.kernel.C": {1, 3, 4}, "p.D": {1, 3}}
	for _, disc := range []string{"zoh", "bilinear"} {
		o := layouts.Options{Values: map[string]string{"is-real": "true", "disc": disc}}
		named, _, err := layouts.Export(filters.Document{Bank: bank}, layouts.S4D, o, "p.")
		if err != nil {
			t.Fatalf("%s: %v", disc, err)
		}
		if len(named) != len(want) {
			t.Errorf("%s: %d tensors, want %d", disc, len(named), len(want))
		}
		for _, n := range named {
			if s, ok := want[n.Name]; !ok || !slices.Equal(n.Array.Shape, s) {
				t.Errorf("%s: tensor %s of shape %v, want %v", disc, n.Name, n.Array.Shape, s)
			}
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), layouts.S4D, "p.")
		if err != nil || l.Options["is-real"] != "true" {
			t.Fatalf("%s: %v, options %v", disc, err, l.Options)
		}
		r, err := layouts.Import(src, l, layouts.Options{Values: map[string]string{"disc": disc}})
		if err != nil {
			t.Fatalf("%s: %v", disc, err)
		}
		for ch, f := range bank.Channels {
			if e := filters.RelDiff(f.Impulse(200), r.Bank.Channels[ch].Impulse(200)); e > roundTripTol {
				t.Errorf("%s: channel %d comes back off by %.3g", disc, ch, e)
			}
		}
	}
	for _, c := range []struct {
		poles []complex128
		o     map[string]string
		want  string
	}{
		{[]complex128{complex(0.5, 0.2), complex(0.5, -0.2)}, nil, "is not real and positive"},
		{[]complex128{-0.5}, map[string]string{"disc": "bilinear"}, "is not real and positive"},
		{[]complex128{0.5}, map[string]string{"variant": "minimal"}, "has no is_real"},
	} {
		res := make([]complex128, len(c.poles))
		for i, p := range c.poles {
			res[i] = complex(1, imag(p))
		}
		f, err := filters.NewDiagonal(c.poles, res, 0)
		if err != nil {
			t.Fatal(err)
		}
		o := layouts.Options{Values: map[string]string{"is-real": "true"}}
		maps.Copy(o.Values, c.o)
		if _, _, err := layouts.Export(filters.Document{Filter: f}, layouts.S4D, o, ""); !errors.Is(err, layouts.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("poles %v, %v: %v, want %q", c.poles, c.o, err, c.want)
		}
	}
}

// TestExportKeepsTapOfUnstableFilter: a mode at 0 is a tap at t = 1 of its residue, left out
// of the modal layouts only where that residue is rounding next to what h[1] sums (the
// channel's residues), not next to the whole response's norm: the diagonal filter of poles
// {0, 1.5} and residues {1, 2} grows to 1e90 over the report's window, and its h[1] tap was
// left out of both layouts as rounding. A residue of 1e-17 at 0 is still idle, and left out.
func TestExportKeepsTapOfUnstableFilter(t *testing.T) {
	for _, lay := range []layouts.Layout{layouts.StripedHyena, layouts.S4D} {
		o := layouts.Options{}
		if lay == layouts.S4D {
			o.Values = map[string]string{"real-transform": "none"} // a pole outside the unit circle
		}
		tap := filters.Document{Filter: must(filters.NewDiagonal([]complex128{0, 1.5}, []complex128{1, 2}, 0))}
		if _, _, err := layouts.Export(tap, lay, o, ""); err == nil || !strings.Contains(err.Error(), "pole 0 is 0") {
			t.Errorf("%s: a tap of residue 1 at t = 1: %v, want it refused", lay, err)
		}
		idle := filters.Document{Filter: must(filters.NewDiagonal([]complex128{0, 1.5}, []complex128{1e-17, 2}, 0))}
		tensors, _, err := layouts.Export(idle, lay, o, "")
		if err != nil {
			t.Errorf("%s: an idle pole at 0: %v", lay, err)
			continue
		}
		if n := layouts.ModalStateSize(lay, tensors); n != 1 {
			t.Errorf("%s: an idle pole at 0 written as %d modes, want 1", lay, n)
		}
	}
}

// TestReadBackCatchesDroppedTap: tensors of an unstable filter that lack its tap at t = 1
// (the filter of poles {0, 1.5} and residues {1, 2} written without the mode at 0) read back
// far from it: the relative error over the whole window is the last samples' (2.2e-16 where
// the response grows to 1e90), so the first samples are measured on their own too.
func TestReadBackCatchesDroppedTap(t *testing.T) {
	doc := filters.Document{Filter: must(filters.NewDiagonal([]complex128{0, 1.5}, []complex128{1, 2}, 0))}
	noTap := filters.Document{Filter: must(filters.NewDiagonal([]complex128{1.5}, []complex128{2}, 0))}
	for _, lay := range []layouts.Layout{layouts.StripedHyena, layouts.SOS} {
		tensors, _, err := layouts.Export(noTap, lay, layouts.Options{}, "")
		if err != nil {
			t.Fatalf("%s: %v", lay, err)
		}
		// h = 0, 3, 3, 4.5, 6.75, 10.125 against 0, 2, 3, …: 1/‖h‖ = 0.073 over the first
		// 2(N + 1) samples, far above the 1e-6 float64 tensors are held to.
		c, err := layouts.ReadBack(doc, tensors, arrays.Float64, lay, layouts.Options{}, "")
		if err != nil || !(c.RelError > 0.05) {
			t.Errorf("%s: the filter without its tap reads back to %.3g (%v), want above 0.05", lay, c.RelError, err)
		}
		// The filter it is reads back to rounding.
		if c, err := layouts.ReadBack(noTap, tensors, arrays.Float64, lay, layouts.Options{}, ""); err != nil || !(c.RelError <= roundTripTol) {
			t.Errorf("%s: reads back to %.3g (%v) from the filter written", lay, c.RelError, err)
		}
	}
}

// TestPoleLayouts: the layouts PoleLayouts offers in place of rtf are those of ExportLayouts
// whose tensors read back as poles (a diagonal or zpk filter), not as the polynomial
// coefficients of the whole order rtf reads back as (a tf filter).
func TestPoleLayouts(t *testing.T) {
	bank := randomModal(t, 11, 2)
	var want []layouts.Layout
	for _, lay := range layouts.ExportLayouts {
		named, _, err := layouts.Export(filters.Document{Bank: bank}, lay, layouts.Options{}, "layers.0.")
		if err != nil {
			t.Fatalf("%s: %v", lay, err)
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), lay, "layers.0")
		if err != nil {
			t.Fatalf("%s: %v", lay, err)
		}
		r, err := layouts.Import(src, l, layouts.Options{Values: map[string]string{}})
		if err != nil {
			t.Fatalf("%s: %v", lay, err)
		}
		if f := r.Bank.Channels[0].Form(); f != filters.FormTF {
			want = append(want, lay)
		}
	}
	if got := layouts.PoleLayouts(); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("PoleLayouts() = %v, want %v", got, want)
	}
}

// TestNegativeRealPoleRounded: export writes a negative real pole in the s4d layout as
// A = log|p| − iπ, and π rounded to float32 or bfloat16 is not π: the module's pole is a
// pair ε from the real axis whose kernel is the real pole's to that rounding. Read back from
// a file of that dtype, the channel keeps its order (QA: an order-4 fit read back as order
// 5, its real pole at −0.584 a pair ±5.1e-8i) and its response is the module's, computed
// here from the file's values by SSMKernelDiag's zoh formula (models/s4/s4d.py's for the
// minimal variant): K[t] = 2·Re Σ C·B·(e^{ΔA} − 1)/A·e^{ΔA·t}, D added at t = 0.
func TestNegativeRealPoleRounded(t *testing.T) {
	p := []complex128{cmplx.Rect(0.6, 1.2), -0.584, 0.7, -0.97}
	r := []complex128{complex(0.8, -0.3), 1.1, -0.4, 0.25}
	f, err := filters.NewDiagonalRealPart(p, r, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	const length = 400
	for _, dt := range []arrays.DType{arrays.Float32, arrays.BFloat16} {
		for _, variant := range []string{"ssm", "minimal"} {
			src, got := s4dFileRead(t, f, dt, variant)
			if got.Order() != f.Order() {
				t.Errorf("%s %s: order %d read back as %d", dt, variant, f.Order(), got.Order())
			}
			want := s4dModuleKernel(t, src, variant, length)
			// The snap moves each mode's kernel by at most u·2|c| (snapNegativeReal).
			if e := filters.RelDiff(want, got.Impulse(length)); !(e <= 10*dt.UnitRoundoff()) {
				t.Errorf("%s %s: read back %.3g from the module's kernel, want ≤ %.3g", dt, variant, e, 10*dt.UnitRoundoff())
			}
		}
	}
}

// TestSlowNegativePoleKeepsItsPair: a negative real pole so slow that its rounded angle's
// rotation shows within its decay (−0.99999 in bfloat16: the module's pair ε ≈ 1e-3 from the
// real axis turns by a radian over 1000 samples, the pole decays over 1e5) is not snapped:
// it reads back as the module's pair, whose kernel is the module's.
func TestSlowNegativePoleKeepsItsPair(t *testing.T) {
	f, err := filters.NewDiagonalRealPart([]complex128{-0.99999}, []complex128{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	const length = 4000
	for _, variant := range []string{"ssm", "minimal"} {
		src, got := s4dFileRead(t, f, arrays.BFloat16, variant)
		if got.Order() != 2 {
			t.Errorf("%s: read back of order %d, want the module's pair (2)", variant, got.Order())
		}
		want := s4dModuleKernel(t, src, variant, length)
		if e := filters.RelDiff(want, got.Impulse(length)); !(e <= 10*arrays.BFloat16.UnitRoundoff()) {
			t.Errorf("%s: read back %.3g from the module's kernel", variant, e)
		}
	}
}

// s4dFileRead exports f in the s4d layout (variant), writes it as safetensors in dtype dt,
// and imports it from that file: the file and the channel read.
func s4dFileRead(t *testing.T, f filters.Filter, dt arrays.DType, variant string) (layouts.Source, filters.Filter) {
	t.Helper()
	o := layouts.Options{Values: map[string]string{"variant": variant}}
	named, _, err := layouts.Export(filters.Document{Filter: f}, layouts.S4D, o, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := arrays.EncodeSafetensors(named, arrays.SafetensorsOptions{DType: dt})
	if err != nil {
		t.Fatal(err)
	}
	src, err := arrays.OpenReader(bytes.NewReader(b), int64(len(b)), "x.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	l, err := layouts.Find(src.Arrays(), layouts.S4D, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := layouts.Import(src, l, layouts.Options{Values: map[string]string{"dt-transform": "exp"}})
	if err != nil {
		t.Fatal(err)
	}
	return src, res.Bank.Channels[0]
}

// s4dModuleKernel is one channel's kernel of an s4d layer (zoh, exp transforms, imag
// transform none) as the module computes it from src's values.
func s4dModuleKernel(t *testing.T, src layouts.Source, variant string, length int) []float64 {
	t.Helper()
	read := func(name string) []float64 {
		a, err := src.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		return a.Data
	}
	var a, cb []complex128
	var dt float64
	if variant == "minimal" {
		re, im, c := read("kernel.log_A_real"), read("kernel.A_imag"), read("kernel.C")
		dt = math.Exp(read("kernel.log_dt")[0])
		for n := range re {
			a = append(a, complex(-math.Exp(re[n]), im[n]))
			cb = append(cb, complex(c[2*n], c[2*n+1]))
		}
	} else {
		re, im, b, c := read("kernel.A_real"), read("kernel.A_imag"), read("kernel.B"), read("kernel.C")
		dt = math.Exp(read("kernel.inv_dt")[0])
		for n := range re {
			a = append(a, complex(-math.Exp(re[n]), -im[n]))
			cb = append(cb, complex(c[2*n], c[2*n+1])*complex(b[2*n], b[2*n+1]))
		}
	}
	k := make([]float64, length)
	k[0] = read("D")[0]
	for n := range a {
		x := complex(dt, 0) * a[n]
		cn := cb[n] * (cmplx.Exp(x) - 1) / a[n]
		for l := range k {
			k[l] += 2 * real(cn*cmplx.Exp(x*complex(float64(l), 0)))
		}
	}
	return k
}

// TestNoteOrders: an s4d or stripedhyena layer's channels read back of their own orders (modes
// of residue 0 left out, a real pole one state), and the note says so, "order up to" the
// widest; the s4d note gave channel 0's order as the bank's ("of order 6" for channels of
// orders 6, 8 and 6), the stripedhyena note twice its state size (the bound, "order up to 14"
// where the widest channel, with two real poles, is of order 12).
func TestNoteOrders(t *testing.T) {
	for _, c := range []struct {
		lay        layouts.Layout
		variant    string
		importOpts map[string]string
	}{
		{layouts.S4D, "ssm", map[string]string{"dt-transform": "exp"}},
		{layouts.S4D, "minimal", map[string]string{"dt-transform": "exp"}},
		{layouts.StripedHyena, "", nil},
	} {
		variant := string(c.lay) + " " + c.variant
		bank := randomModal(t, 1, 3)
		o := layouts.Options{}
		if c.variant != "" {
			o.Values = map[string]string{"variant": c.variant}
		}
		named, _, err := layouts.Export(filters.Document{Bank: bank}, c.lay, o, "")
		if err != nil {
			t.Fatal(err)
		}
		src := layouts.NamedSource(named)
		l, err := layouts.Find(src.Arrays(), c.lay, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := layouts.Import(src, l, layouts.Options{Values: c.importOpts})
		if err != nil {
			t.Fatal(err)
		}
		top, differ := 0, false
		for _, f := range r.Bank.Channels {
			top = max(top, f.Order())
			differ = differ || f.Order() != r.Bank.Channels[0].Order()
		}
		if !differ {
			t.Fatalf("%s: channels of orders all %d; the test wants them to differ", variant, top)
		}
		if want := fmt.Sprintf("channels of order up to %d (", top); !strings.Contains(r.Note, want) {
			t.Errorf("%s: note %q, want %q", variant, r.Note, want)
		}
	}
}
