package tui

import (
	"errors"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/NimbleMarkets/ntcharts/linechart"

	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/presets"
)

func TestParseComplex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want complex128
	}{
		{"0.5", 0.5},
		{"-2", -2},
		{"0.5+0.25j", complex(0.5, 0.25)},
		{"0.5-0.25j", complex(0.5, -0.25)},
		{"1e-3-2e-4i", complex(1e-3, -2e-4)},
		{"j", complex(0, 1)},
		{"-j", complex(0, -1)},
		{"2.5j", complex(0, 2.5)},
		{"0.5 + 1j", complex(0.5, 1)},
		{"1@0", 1},
		{"2∠pi/2", cmplx.Rect(2, math.Pi/2)},
		{"pi", math.Pi},
		{"-pi/4", -math.Pi / 4},
		{"0.5pi", math.Pi / 2},
		{"1/3+2j", complex(1.0/3, 2)},
		{"2 * pi", 2 * math.Pi},
		{"1@pi/2", cmplx.Rect(1, math.Pi/2)},
	} {
		got, err := parseComplex(tc.in)
		if err != nil || cmplx.Abs(got-tc.want) > 1e-15 {
			t.Errorf("parseComplex(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "abc", "1+", "NaN", "Inf", "1e999", "pi/0", "1@x", "*pi", "1_0"} {
		if v, err := parseComplex(bad); err == nil {
			t.Errorf("parseComplex(%q) = %v, want an error", bad, v)
		}
	}
	// pi/Inf read as 0; it and the overflows are refused as not finite, by name.
	for _, bad := range []string{"pi/Inf", "1e308pi", "pi/1e-320", "1+pi/Infj", "1@pi/Inf"} {
		if v, err := parseComplex(bad); !errors.Is(err, presets.ErrNotFinite) || !strings.Contains(err.Error(), "not finite") {
			t.Errorf("parseComplex(%q) = %v, %v; want not finite", bad, v, err)
		}
	}
}

func TestNiceAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi      float64
		cells, gap  int
		wantStepMax float64
		whole       bool
		last        int // the width of the top tick's label, 0 for none
	}{
		{0, 1, 72, 8, 0.25, false, 0},
		{0, 63, 32, 8, 25, false, 0},
		{-0.47, 0.69, 8, 2, 0.5, false, 0},
		{-120, 13, 12, 3, 50, false, 0},
		{1e-6, 3e-6, 40, 8, 1e-6, false, 0},
		{2, 6, 100, 8, 1, true, 0},                       // a ladder's log₂ 4 … 64: at 4, 8, 16, 32, 64
		{math.Log2(3), math.Log2(40), 30, 8, 2, true, 0}, // 3 … 40 in 30 cells: not 2.5 (2^2.5)
		{3, 5, 40, 8, 1, true, 0},                        // one order, 16: at 8, 16, 32
		{1, 10, 17, 5, 5, true, 4},                       // 2 … 1024 in a narrow pane: 1024's tick labelled
		{2, 6, 17, 5, 2, true, 2},                        // 4 … 64
		{0, 1, 40, 8, 0.5, false, 3},                     // "1.0"
		{-3.99, -0.86, 7, 2, 1, true, 0},                 // 3.1 decades over 7 rows: no step fits 3 whole intervals
	} {
		var last func(float64) int
		if tc.last > 0 {
			last = func(float64) int { return tc.last }
		}
		lo, hi, step, every := niceAxis(tc.lo, tc.hi, tc.cells, tc.gap, tc.whole, last)
		if every == 0 {
			t.Errorf("niceAxis(%g, %g, %d): no ticks", tc.lo, tc.hi, tc.cells)
			continue
		}
		if lo > tc.lo || hi < tc.hi || every < tc.gap || step > tc.wantStepMax {
			t.Errorf("niceAxis(%g, %g, %d, %d) = [%g, %g] step %g every %d", tc.lo, tc.hi, tc.cells, tc.gap, lo, hi, step, every)
		}
		if tc.whole && step != math.Trunc(step) {
			t.Errorf("niceAxis(%g, %g, %d, %d, whole) step %g", tc.lo, tc.hi, tc.cells, tc.gap, step)
		}
		// ticks land on multiples of step
		if r := lo / step; math.Abs(r-math.Round(r)) > 1e-9 {
			t.Errorf("niceAxis(%g, %g): lo %g is not a multiple of %g", tc.lo, tc.hi, lo, step)
		}
		if got := (hi - lo) * float64(every) / float64(tc.cells); math.Abs(got-step) > 1e-9*step {
			t.Errorf("niceAxis(%g, %g): %d cells per tick span %g, not the step %g", tc.lo, tc.hi, every, got, step)
		}
		// the tick at or above hi is in a cell ntcharts labels (below cells), its label
		// ending by cells+1
		if top := int(math.Ceil((tc.hi-lo)/step-1e-9)) * every; tc.last > 0 && (top >= tc.cells || top+tc.last > tc.cells+1) {
			t.Errorf("niceAxis(%g, %g, %d, %d) = [%g, %g] step %g every %d: the top tick is at cell %d, its label %d wide", tc.lo, tc.hi, tc.cells, tc.gap, lo, hi, step, every, top, tc.last)
		}
	}
}

// TestNiceTicksLogFraction: a log y axis spanning a decade on which no whole-decade ticks
// fit (1e-10 … 1e-9 over 4 rows: one step of a decade is too few cells) gets round ticks at
// fractions of a decade instead, labelled with their values (logFormat of that step), rather
// than ntcharts' ticks wherever the rows fall.
func TestNiceTicksLogFraction(t *testing.T) {
	spec := chartSpec{xmin: 0, xmax: 1, ymin: -10, ymax: -9, logY: true, yfmt: logFormat(0)}
	lc := linechart.New(40, 6, spec.xmin, spec.xmax, spec.ymin, spec.ymax,
		linechart.WithXYSteps(12, 2), linechart.WithYLabelFormatter(spec.yfmt))
	cells := lc.GraphHeight()
	if cells != 4 {
		t.Fatalf("the chart has %d rows, want 4 (2 rows between ticks)", cells)
	}
	if _, _, _, every := niceAxis(spec.ymin, spec.ymax, cells, 2, true, nil); every != 0 {
		t.Fatalf("whole decades fit over %d rows (every %d): the case does not test the fallback", cells, every)
	}
	if !niceTicks(&lc, &spec, true) {
		t.Fatalf("no round ticks over %d rows", cells)
	}
	step := (spec.ymax - spec.ymin) * float64(lc.YStep()) / float64(cells)
	if spec.ymin > -10 || spec.ymax < -9 || !(step < 1) || math.Abs(spec.ymin/step-math.Round(spec.ymin/step)) > 1e-9 {
		t.Fatalf("y range [%g, %g] with a tick every %d of %d rows: want a fraction of a decade, the range on its multiples", spec.ymin, spec.ymax, lc.YStep(), cells)
	}
	if v := spec.ymin + step; spec.yfmt(0, v) != logFormat(step)(0, v) || lc.YLabelFormatter(0, v) != spec.yfmt(0, v) {
		t.Errorf("the tick at %g reads %q (the chart's %q), want logFormat's %q", v, spec.yfmt(0, v), lc.YLabelFormatter(0, v), logFormat(step)(0, v))
	}
}

// TestNiceAxisTinyRange: a range narrower than 1e-9 of a step, with the top tick's label
// width given, gets no ticks instead of a division by zero intervals (the tick at or above hi
// is l itself).
func TestNiceAxisTinyRange(t *testing.T) {
	if _, _, _, every := niceAxis(3-5e-10, 3-4e-10, 20, 5, true, func(float64) int { return 1 }); every < 0 {
		t.Errorf("every %d", every)
	}
}

// TestApplyEditEveryForm edits one value of each form and checks the filter's response
// moved as the edit says.
func TestApplyEditEveryForm(t *testing.T) {
	z, _ := pairZPK(0.9)
	for _, to := range filters.Forms {
		f, _, err := filters.Convert(z, to)
		if err != nil {
			t.Fatal(err)
		}
		tables := tablesFor(f)
		if len(tables) == 0 {
			t.Fatalf("%s: no tables", to)
		}
		// every editable cell's text reads back as the value shown
		for _, tb := range tables {
			for r := range tb.rows {
				for c := 1; c < len(tb.cols); c++ {
					_, ref := tb.cell(r, c)
					if ref == nil {
						continue
					}
					text := editText(f, *ref)
					g, err := applyEdit(f, *ref, text)
					if err != nil {
						t.Errorf("%s %+v: writing back %q: %v", to, *ref, text, err)
						continue
					}
					a, b := f.Impulse(32), g.Impulse(32)
					for i := range a {
						if math.Abs(a[i]-b[i]) > 1e-12 {
							t.Errorf("%s %+v: writing back %q moved h[%d] by %g", to, *ref, text, i, a[i]-b[i])
							break
						}
					}
				}
			}
		}
	}
	// the direct term of every form moves h[0] only
	for _, to := range filters.Forms {
		f, _, _ := filters.Convert(z, to)
		field := "h0"
		if to == filters.FormDense || to == filters.FormRotation {
			field = "D"
		}
		old, _ := parseReal(editText(f, cellRef{field: field}))
		g, err := applyEdit(f, cellRef{field: field}, "0.25")
		if err != nil {
			t.Fatalf("%s: %v", to, err)
		}
		h, h0 := g.Impulse(2), f.Impulse(2)
		if math.Abs(h[0]-h0[0]-(0.25-old)) > 1e-15 || math.Abs(h[1]-h0[1]) > 1e-15 {
			t.Errorf("%s: h = %v after setting %s (was %v)", to, h, field, h0)
		}
	}
}

// TestNudge checks a move of each kind of pole: a pair by radius and angle, kept off the real
// axis; a real pole along the axis by the radius step, whichever the key.
func TestNudge(t *testing.T) {
	s := stepLevel{r: 0.01, th: 0.1}
	p := cmplx.Rect(0.9, 0.5)
	if q := nudge(p, s, 1, -1); math.Abs(cmplx.Abs(q)-0.91) > 1e-15 || math.Abs(cmplx.Phase(q)-0.4) > 1e-15 {
		t.Errorf("pair: %v, want 0.91∠0.4", q)
	}
	if q := nudge(cmplx.Rect(0.9, 0.05), s, 0, -1); cmplx.Phase(q) != minAngle {
		t.Errorf("a pair moved onto the real axis: %v", q)
	}
	for _, tc := range []struct {
		p               float64
		radial, angular int
		want            float64
	}{
		{0.9, 0, 1, 0.91}, {0.9, 0, -1, 0.89}, {0.9, 1, 0, 0.91}, {-0.9, 1, 0, -0.91}, {-0.9, 0, 1, -0.89}, {0.005, -1, 0, 0},
	} {
		if q := nudge(complex(tc.p, 0), s, tc.radial, tc.angular); imag(q) != 0 || math.Abs(real(q)-tc.want) > 1e-15 {
			t.Errorf("nudge(%v, %d, %d) = %v, want %v", tc.p, tc.radial, tc.angular, q, tc.want)
		}
	}
}

// TestMagnitudeRangeIgnoresStopbandZero: a zero on the unit circle gives -2000 dB at one
// frequency; the magnitude axis must still end near the 0 dB passband, not 100 dB above it.
func TestMagnitudeRangeIgnoresStopbandZero(t *testing.T) {
	omega := []float64{0, 1, 2, 3.14159}
	h := []complex128{1, 0.5, 1e-3, 1e-100}
	p := newTestModel(t, 80, 24, nil).plots
	spec, _, _ := p.responseChart(plotMagnitude, plotData{resp: &respData{omega: omega, r: Responses{H: h}}}, false)
	if spec.ymax > 10 || spec.ymin > -100 || spec.ymin < -130 {
		t.Errorf("magnitude axis [%v, %v], want about [-120, 0]", spec.ymin, spec.ymax)
	}
}
