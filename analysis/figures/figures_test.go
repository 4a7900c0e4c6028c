package figures

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
)

// update rewrites the golden files: go test ./analysis/figures -update. Check the new
// pictures before committing them.
var update = flag.Bool("update", false, "rewrite the golden figures in testdata/")

// pngTol is the largest difference allowed per colour channel (of 255) between a rendered PNG
// and its golden file, and pngFrac the fraction of pixels allowed to exceed it: rasterisers
// may round anti-aliased edges differently across platforms and Go versions.
const (
	pngTol  = 8
	pngFrac = 0.002
)

// resonator is H(z) = 0.5/(z² − z + 0.5), poles 0.5 ± 0.5j (docs/formats.md).
func resonator(t *testing.T) *filters.Dense {
	t.Helper()
	f, err := filters.NewDense([][]float64{{0.5, -0.5}, {0.5, 0.5}}, []float64{1, 0}, []float64{0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// notch has a zero pair on the unit circle at ω = π/3 and poles at radius 0.9 behind it.
func notch(t *testing.T) *filters.ZPK {
	t.Helper()
	q := cmplx.Rect(1, math.Pi/3)
	p := cmplx.Rect(0.9, math.Pi/3)
	f, err := filters.NewZPK([]complex128{q, cmplx.Conj(q)}, []complex128{p, cmplx.Conj(p)}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func toTF(t *testing.T, f filters.Filter) filters.Filter {
	t.Helper()
	g, _, err := filters.Convert(f, filters.FormTF)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// golden compares got with testdata/name, exactly for SVG and by decoded pixels for PNG.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./analysis/figures -run %s -update creates it)", err, t.Name())
	}
	if strings.HasSuffix(name, ".png") {
		comparePNG(t, name, got, want)
		return
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("%s differs from the golden file at line %d:\n got: %.200s\nwant: %.200s\n(go test ./analysis/figures -update rewrites it)", name, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s differs from the golden file: %d lines, want %d (go test ./analysis/figures -update rewrites it)", name, len(gl), len(wl))
}

func comparePNG(t *testing.T, name string, got, want []byte) {
	t.Helper()
	g, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatalf("rendered %s does not decode: %v", name, err)
	}
	w, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatalf("golden %s does not decode: %v", name, err)
	}
	if g.Bounds() != w.Bounds() {
		t.Fatalf("%s is %v, golden %v", name, g.Bounds(), w.Bounds())
	}
	bad, total := 0, 0
	b := g.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			total++
			r1, g1, b1, a1 := g.At(x, y).RGBA()
			r2, g2, b2, a2 := w.At(x, y).RGBA()
			for _, d := range []int{int(r1>>8) - int(r2>>8), int(g1>>8) - int(g2>>8), int(b1>>8) - int(b2>>8), int(a1>>8) - int(a2>>8)} {
				if d > pngTol || d < -pngTol {
					bad++
					break
				}
			}
		}
	}
	if float64(bad) > pngFrac*float64(total) {
		t.Fatalf("%s: %d of %d pixels differ from the golden file by more than %d (go test ./analysis/figures -update rewrites it)", name, bad, total, pngTol)
	}
}

func render(t *testing.T, f *Figure, format Format) []byte {
	t.Helper()
	out, err := f.Render(format)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Render(format)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, again) {
		t.Fatalf("rendering %s twice gave different bytes", format)
	}
	return out
}

func TestGoldenFigures(t *testing.T) {
	res := resonator(t)
	kernel := res.Impulse(48)
	for _, c := range []struct {
		name   string
		kinds  []Kind
		series []Series
		o      Options
	}{
		{"impulse-overlay", []Kind{Impulse}, []Series{{Name: "resonator (dense)", Filter: res}, {Name: "resonator (tf)", Filter: toTF(t, res)}}, Options{Length: 24}},
		{"impulse-log", []Kind{Impulse}, []Series{{Name: "notch", Filter: notch(t)}}, Options{Log: true, Length: 200}},
		{"spectrum", []Kind{Magnitude, Phase}, []Series{{Name: "notch", Filter: notch(t)}, {Name: "resonator", Filter: res}}, Options{Points: 64}},
		{"spectrum-logfreq", []Kind{Magnitude}, []Series{{Name: "notch", Filter: notch(t)}}, Options{Points: 48, Log: true}},
		{"group-delay", []Kind{GroupDelay}, []Series{{Name: "notch", Filter: notch(t)}, {Name: "kernel", Kernel: kernel}}, Options{Points: 64}},
		{"pole-zero", []Kind{PoleZero}, []Series{{Name: "notch", Filter: notch(t)}, {Name: "resonator", Filter: res}}, Options{}},
		{"all-panels", Kinds, []Series{{Name: "notch", Filter: notch(t)}}, Options{Points: 32, Length: 40, Title: "a notch: every panel"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := New(c.kinds, c.series, c.o)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".svg", render(t, f, SVG))
		})
	}
}

func TestGoldenDistillation(t *testing.T) {
	// Two channels: the resonator's kernel fitted exactly by itself, and a decay fitted by
	// a slightly different pole.
	res := resonator(t)
	decay, err := filters.NewTransferFunction([]float64{-0.8}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fit, err := filters.NewTransferFunction([]float64{-0.78}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := Distillation{Targets: [][]float64{res.Impulse(40), decay.Impulse(40)}, Fitted: []filters.Filter{res, fit}}
	f, err := NewDistillation(d, Options{Title: "a distillation"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "distillation.svg", render(t, f, SVG))
	small, err := NewDistillation(d, Options{Title: "a distillation", DPI: 60})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "distillation.png", render(t, small, PNG))
}

// TestDistillationOfALayer draws the distillation of a layer of 16 channels with the default
// options, as plot --target --result does: its four columns and the legend came to 22 in,
// and the figure was refused as wider than MaxSide.
func TestDistillationOfALayer(t *testing.T) {
	var d Distillation
	for i := range 16 {
		pole := 0.5 + 0.03*float64(i)
		target, err := filters.NewTransferFunction([]float64{-pole}, []float64{1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := filters.NewTransferFunction([]float64{-pole * 0.99}, []float64{1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		d.Targets = append(d.Targets, target.Impulse(64))
		d.Fitted = append(d.Fitted, fit)
	}
	f, err := NewDistillation(d, Options{Title: "a layer"})
	if err != nil {
		t.Fatal(err)
	}
	if w, h := f.Size(); w > MaxSide || h > MaxSide {
		t.Errorf("%.3g × %.3g in, above %g in", w/vg.Inch, h/vg.Inch, MaxSide/vg.Inch)
	}
	render(t, f, SVG)
}

func TestGoldenPNG(t *testing.T) {
	f, err := New([]Kind{Impulse, PoleZero}, []Series{{Name: "notch", Filter: notch(t)}}, Options{Length: 40, DPI: 60, Columns: 2})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "impulse-pz.png", render(t, f, PNG))
}

func TestPDF(t *testing.T) {
	f, err := New([]Kind{Magnitude}, []Series{{Name: "notch → ω", Filter: notch(t)}}, Options{Points: 16})
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, f, PDF)
	if !bytes.HasPrefix(out, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.20q", out)
	}
	dates := regexp.MustCompile(`/(CreationDate|ModDate) \(D:(\d+)\)`).FindAllSubmatch(out, -1)
	if len(dates) != 2 {
		t.Fatalf("found %d dates, want CreationDate and ModDate", len(dates))
	}
	for _, d := range dates {
		if string(d[2]) != FixedDate {
			t.Errorf("%s is %s, want %s", d[1], d[2], FixedDate)
		}
	}
	// The xref table still points at the objects: each offset starts "N 0 obj".
	xref := regexp.MustCompile(`(?m)^(\d{10}) 00000 n`).FindAllSubmatch(out, -1)
	if len(xref) == 0 {
		t.Fatal("no xref entries")
	}
	for _, m := range xref {
		off := 0
		for _, c := range m[1] {
			off = off*10 + int(c-'0')
		}
		if !regexp.MustCompile(`^\d+ 0 obj`).Match(out[off:min(len(out), off+20)]) {
			t.Fatalf("xref offset %d does not start an object: %.20q", off, out[off:])
		}
	}
}

func TestPDFText(t *testing.T) {
	for in, want := range map[string]string{
		"ω/π":           "omega/pi",
		"dense → tf":    "dense -> tf",
		"phase / π":     "phase / pi",
		"naïve 日本":      "na?ve ??",
		"plain ascii ~": "plain ascii ~",
	} {
		if got := pdfText(in); got != want {
			t.Errorf("pdfText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{"a.svg": SVG, "dir/b.PDF": PDF, "c.png": PNG} {
		if got, err := FormatOf(path); err != nil || got != want {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, path := range []string{"a.jpg", "noext", "x.svg.gz"} {
		if _, err := FormatOf(path); !errors.Is(err, ErrFormat) {
			t.Errorf("FormatOf(%q): %v, want ErrFormat", path, err)
		}
	}
	f, err := New([]Kind{Impulse}, []Series{{Filter: resonator(t)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Render("gif"); !errors.Is(err, ErrFormat) {
		t.Errorf("Render(gif): %v, want ErrFormat", err)
	}
}

func TestBadInput(t *testing.T) {
	res := resonator(t)
	unstable, err := filters.NewTransferFunction([]float64{-1.5}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ok := []Series{{Name: "ok", Filter: res}}
	for _, c := range []struct {
		name   string
		kinds  []Kind
		series []Series
		o      Options
		index  int // the SeriesError's index, -1 for none
		is     error
	}{
		{"no panels", nil, ok, Options{}, -1, ErrInvalid},
		{"twice", []Kind{Impulse, Impulse}, ok, Options{}, -1, ErrInvalid},
		{"unknown", []Kind{"bode"}, ok, Options{}, -1, ErrInvalid},
		{"no series", []Kind{Impulse}, nil, Options{}, -1, ErrInvalid},
		{"NaN kernel", []Kind{Impulse}, []Series{{Filter: res}, {Kernel: []float64{1, math.NaN()}}}, Options{}, 1, ErrInvalid},
		{"empty kernel", []Kind{Impulse}, []Series{{Kernel: []float64{}}}, Options{}, 0, ErrInvalid},
		{"both", []Kind{Impulse}, []Series{{Filter: res, Kernel: []float64{1}}}, Options{}, 0, ErrInvalid},
		{"kernels have no poles", []Kind{PoleZero}, []Series{{Kernel: []float64{1, 2}}}, Options{}, -1, ErrInvalid},
		{"overflow", []Kind{Impulse}, []Series{{Filter: res}, {Name: "unstable", Filter: unstable}}, Options{Length: 4000}, 1, nil},
		{"too long", []Kind{Impulse}, ok, Options{Length: MaxLength + 1}, -1, ErrInvalid},
		{"one point", []Kind{Magnitude}, ok, Options{Points: 1}, -1, ErrInvalid},
		{"too wide", []Kind{Impulse}, ok, Options{Width: 30 * vg.Inch}, -1, ErrInvalid},
		{"too many pixels", []Kind{Impulse}, ok, Options{Width: 19 * vg.Inch, Height: 19 * vg.Inch, DPI: 600}, -1, ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.kinds, c.series, c.o)
			if err == nil {
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v does not wrap %v", err, c.is)
			}
			var se *SeriesError
			if got := errors.As(err, &se); got != (c.index >= 0) || (got && se.Index != c.index) {
				t.Errorf("%v: SeriesError %v, want index %d", err, se, c.index)
			}
			if c.name == "overflow" {
				var nf *analysis.NonFiniteError
				if !errors.As(err, &nf) || !strings.HasPrefix(err.Error(), "unstable: ") {
					t.Errorf("%v: want a NonFiniteError of series \"unstable\"", err)
				}
			}
		})
	}
	if _, err := NewDistillation(Distillation{Targets: [][]float64{{1}}, Fitted: nil}, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("mismatched distillation: %v", err)
	}
	if _, err := NewDistillation(Distillation{Targets: [][]float64{{1}}, Fitted: []filters.Filter{res}, RelErrors: []float64{math.Inf(1)}}, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("infinite error: %v", err)
	}
}

func TestDistillationErrors(t *testing.T) {
	fit, err := filters.NewTransferFunction([]float64{-0.5}, []float64{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	target := []float64{0, 1, 0.5, 0.25, 0.125, 0} // fit's response with its last sample 0.0625 cut
	f, err := NewDistillation(Distillation{Targets: [][]float64{target}, Fitted: []filters.Filter{fit}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0625 / math.Sqrt(1+0.25+0.0625+0.015625)
	title := f.cells[0][0].p.Title.Text
	if got := filters.RelDiff(target, fit.Impulse(len(target))); math.Abs(got-want) > 1e-15 {
		t.Errorf("relError = %g, want %g", got, want)
	}
	if !strings.Contains(title, "0.054") {
		t.Errorf("panel title %q does not show the error %.2g", title, want)
	}
	if f.Panels() != 3 {
		t.Errorf("%d panels, want 3 (one channel, errors, poles)", f.Panels())
	}
}

func TestSquarePoleZero(t *testing.T) {
	f, err := New([]Kind{Impulse, PoleZero}, []Series{{Filter: notch(t)}}, Options{Width: 10 * vg.Inch, Height: 3 * vg.Inch, Columns: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := f.cells[0][1].p
	c := draw.New(vgimg.New(6*vg.Inch, 3*vg.Inch))
	d := p.DataCanvas(squareData(p, c))
	if w, h := d.Size().X, d.Size().Y; math.Abs(float64(w-h)) > 1e-6 || w <= 0 {
		t.Errorf("data area %v × %v, want square", w, h)
	}
}

func TestIntTicks(t *testing.T) {
	var labels []string
	for _, tk := range (intTicks{}).Ticks(-0.5, 3.5) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0 1 2 3" {
		t.Errorf("ticks %q, want \"0 1 2 3\"", got)
	}
	if n := len((intTicks{}).Ticks(-0.5, 255.5)); n < 5 || n > 21 {
		t.Errorf("%d ticks for 256 channels", n)
	}
}

func TestAutoLength(t *testing.T) {
	res := resonator(t)
	f, err := New([]Kind{Impulse}, []Series{{Filter: res}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// ρ = √0.5: the response falls to 1e-6 in log(1e-6)/log(√0.5) ≈ 40 samples.
	if got := f.cells[0][0].p.X.Max; got < 39 || got > 41 {
		t.Errorf("automatic length: x axis ends at %g, want about 40", got)
	}
	k := make([]float64, 300)
	k[0] = 1
	f, err = New([]Kind{Impulse}, []Series{{Filter: res}, {Kernel: k}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.cells[0][0].p.X.Max; got != 299 {
		t.Errorf("with a kernel of 300 samples the x axis ends at %g, want 299", got)
	}
}

func TestPNGDecodes(t *testing.T) {
	f, err := New([]Kind{Impulse}, []Series{{Filter: resonator(t)}}, Options{DPI: 72})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(render(t, f, PNG)))
	if err != nil {
		t.Fatal(err)
	}
	w, h := f.Size()
	want := image.Rect(0, 0, int(math.Ceil(float64(w/vg.Inch)*72)), int(math.Ceil(float64(h/vg.Inch)*72)))
	if b := img.Bounds(); b.Dx() < want.Dx()-1 || b.Dx() > want.Dx()+1 || b.Dy() < want.Dy()-1 || b.Dy() > want.Dy()+1 {
		t.Errorf("PNG is %v, want about %v", b, want)
	}
}

func TestTicks(t *testing.T) {
	labels := func(ts []plot.Tick) string {
		var s []string
		for _, tk := range ts {
			if tk.Label != "" {
				s = append(s, tk.Label)
			}
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{-0.1, 1, "0.00 0.25 0.50 0.75 1.00"},
		{-120, 0, "-100 -75 -50 -25 0"},
		{-1.2, 1.2, "-1.0 -0.5 0.0 0.5 1.0"},
		{0.5, 12.8, "2.5 5.0 7.5 10.0 12.5"},
	} {
		if got := labels((linTicks{}).Ticks(c.lo, c.hi)); got != c.want {
			t.Errorf("linTicks(%g, %g) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{1e-3, 1, "0.001 0.01 0.1 1"},
		{1e-17, 1, "1e-16 1e-14 1e-12 1e-10 1e-8 1e-6 1e-4 0.01 1"},
		{2e-9, 3e-4, "1e-9 1e-8 1e-7 1e-6 1e-5 1e-4 0.001"},
	} {
		if got := labels((logTicks{}).Ticks(c.lo, c.hi)); got != c.want {
			t.Errorf("logTicks(%g, %g) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// TestPhaseGaps: the phase panel leaves a gap where the phase is undefined (a zero on the
// unit circle at a grid point) instead of drawing the previous point's value: every
// high-pass filter's phase was drawn from 0 at ω = 0, and the notch's line ran through its
// zero at ω = π/3 (grid point 21 of 64).
func TestPhaseGaps(t *testing.T) {
	hp, err := filters.NewZPK([]complex128{1, 1}, []complex128{0.5, -0.3}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, _ := seriesStyle(0).Color.RGBA()
	stroke := fmt.Sprintf("stroke:#%02X%02X%02X", r>>8, g>>8, b>>8)
	path := regexp.MustCompile(`<path d="([^"]*)" style="[^"]*` + stroke)
	for _, c := range []struct {
		name  string
		f     filters.Filter
		lines int // the lines drawn: one per run of points off the zero
	}{{"high-pass", hp, 1}, {"notch", notch(t), 2}} {
		f, err := New([]Kind{Phase}, []Series{{Name: c.name, Filter: c.f}}, Options{Points: 64})
		if err != nil {
			t.Fatal(err)
		}
		lines, points := 0, 0
		for _, m := range path.FindAllStringSubmatch(string(render(t, f, SVG)), -1) {
			lines++
			points += strings.Count(m[1], "M") + strings.Count(m[1], "L")
		}
		if lines != c.lines || points != 63 {
			t.Errorf("%s: %d lines through %d points, want %d through the 63 off the zero", c.name, lines, points, c.lines)
		}
	}
}

// TestLongTitleWraps: a title wider than the figure is broken into lines at spaces that fit
// it; a preset's name, which records its recipe, ran off both edges of a 4.8 in figure.
func TestLongTitleWraps(t *testing.T) {
	title := "cheby1 order=5 band=bandpass wlo=0.7853981633974483 whi=1.5707963267948966 ripple=1"
	f, err := New([]Kind{Impulse}, []Series{{Name: title, Filter: resonator(t)}}, Options{Length: 16})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := f.Size()
	st := titleStyle()
	lines := strings.Split(f.title, "\n")
	if len(lines) < 2 || strings.Join(lines, " ") != title {
		t.Fatalf("title %q, want %q in lines", f.title, title)
	}
	for _, l := range lines {
		if st.Width(l) > w-2*gap {
			t.Errorf("title line %q is %.3g in wide in a figure of %.3g in", l, st.Width(l)/vg.Inch, w/vg.Inch)
		}
	}
	// The panels keep their height: the title's lines add to the figure's.
	g, err := New([]Kind{Impulse}, []Series{{Name: "short", Filter: resonator(t)}}, Options{Length: 16})
	if err != nil {
		t.Fatal(err)
	}
	_, h := f.Size()
	_, hg := g.Size()
	if d := h - hg; d < st.Height("x")*vg.Length(len(lines)-1)*0.99 {
		t.Errorf("the figure grew by %.3g in for %d more title lines", d/vg.Inch, len(lines)-1)
	}
}

// TestZeroResponseNotDrawn: a series whose h (on a log axis) or H is 0 throughout is left out
// of the panel, whose title says so, instead of drawn at the floor as if measured: the zero
// filter's magnitude lay at −400 dB (analysis.MagFloorDB) and its |h| at 1e-16 on an axis from
// 1e-16 to 1e-15 (analysis QA N5). Beside another series, that one is drawn as before.
func TestZeroResponseNotDrawn(t *testing.T) {
	zero, err := filters.NewZPK(nil, []complex128{0.5}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []Kind{Impulse, Magnitude, Phase, GroupDelay}
	stroke := func(i int) *regexp.Regexp {
		r, g, b, _ := seriesStyle(i).Color.RGBA()
		return regexp.MustCompile(fmt.Sprintf(`<path d="[^"]*" style="[^"]*stroke:#%02X%02X%02X`, r>>8, g>>8, b>>8))
	}
	f, err := New(kinds, []Series{{Name: "zero", Filter: zero}}, Options{Log: true, Points: 64, Length: 32})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(stroke(0).FindAll(render(t, f, SVG), -1)); n != 0 {
		t.Errorf("the zero filter drawn in %d paths", n)
	}
	for i, row := range f.cells {
		for _, c := range row {
			if c.p != nil && !strings.Contains(c.p.Title.Text, "= 0 throughout: not drawn") {
				t.Errorf("row %d: panel title %q", i, c.p.Title.Text)
			}
		}
	}
	f, err = New(kinds, []Series{{Name: "zero", Filter: zero}, {Name: "resonator", Filter: resonator(t)}}, Options{Log: true, Points: 64, Length: 32})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(stroke(1).FindAll(render(t, f, SVG), -1)); n < len(kinds) {
		t.Errorf("the resonator drawn in %d paths, want one per panel at least", n)
	}
	for _, row := range f.cells {
		for _, c := range row {
			if c.p != nil && !strings.Contains(c.p.Title.Text, "(zero: ") {
				t.Errorf("panel title %q does not name the zero filter", c.p.Title.Text)
			}
		}
	}
}

// TestUnstableFrequencyNote: the frequency panels of a filter that is not stable say, on a
// second title line, that H on the unit circle is not its steady-state response
// (analysis.SteadyStateNote), naming the series when there are several; a stable filter's do
// not, nor does its impulse panel (analysis QA N6).
func TestUnstableFrequencyNote(t *testing.T) {
	unstable, err := filters.NewZPK(nil, []complex128{1.2}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []Kind{Impulse, Magnitude, Phase, GroupDelay}
	titles := func(s []Series) []string {
		f, err := New(kinds, s, Options{Points: 32, Length: 16})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, row := range f.cells {
			for _, c := range row {
				if c.p != nil {
					out = append(out, c.p.Title.Text)
				}
			}
		}
		return out
	}
	note := analysis.SteadyStateNote(unstable)
	for i, title := range titles([]Series{{Name: "u", Filter: unstable}}) {
		if has := strings.HasSuffix(title, "\n"+note); has != (i > 0) {
			t.Errorf("panel %q: the note %v", title, has)
		}
	}
	for i, title := range titles([]Series{{Name: "r", Filter: resonator(t)}, {Name: "u", Filter: unstable}}) {
		if has := strings.HasSuffix(title, "\nu: "+note); has != (i > 0) {
			t.Errorf("two series, panel %q: the note %v", title, has)
		}
	}
	for _, title := range titles([]Series{{Name: "r", Filter: resonator(t)}}) {
		if strings.Contains(title, "\n") {
			t.Errorf("a stable filter's panel %q", title)
		}
	}
}
