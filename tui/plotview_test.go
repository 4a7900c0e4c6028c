package tui

import (
	"math"
	"math/cmplx"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
)

var pzLabel = regexp.MustCompile(`^\s*(-?[0-9.]+)│`)

// TestPoleZeroLabelsEven: the pole-zero plot's y labels, over panes of many sizes and roots
// out to 3, are 0 and the multiples of a round step (0.25, 0.5, 1, 2, 5) on rows evenly
// apart, symmetric about 0; they were 0.6, 0, -0.6 and -1.2, with no 1.2 (the top label fell
// off the chart) and 1, the unit circle's radius, labelled nowhere.
func TestPoleZeroLabelsEven(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	roots := func(r ...float64) []complex128 {
		var out []complex128
		for i, x := range r {
			p := cmplx.Rect(x, math.Pi*float64(i+1)/float64(len(r)+2))
			out = append(out, p, cmplx.Conj(p))
		}
		return out
	}
	for _, zp := range [][2][]complex128{
		{roots(0.5), roots(0.9)},
		{nil, roots(0.3)},
		{roots(1.7), roots(0.99, 0.5)},
		{roots(2.9), roots(0.8)},
	} {
		f, err := filters.NewZPK(zp[0], zp[1], 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		addFilter(t, m, "f", f)
		d := m.plots.data()
		if d.pz == nil || !d.pz.havePoles {
			t.Fatal("the pole-zero data was not computed")
		}
		for _, size := range [][2]int{{30, 9}, {40, 12}, {50, 16}, {60, 20}, {80, 30}, {120, 45}, {24, 40}} {
			view, _ := m.plots.pzChart(d, size[0], size[1], false)
			checkPZLabels(t, ansi.Strip(view), size, zp)
		}
	}
}

func checkPZLabels(t *testing.T, view string, size [2]int, zp [2][]complex128) {
	t.Helper()
	var rows []int
	var vals []float64
	for i, line := range strings.Split(view, "\n") {
		if mt := pzLabel.FindStringSubmatch(line); mt != nil {
			v, err := strconv.ParseFloat(mt[1], 64)
			if err != nil {
				t.Fatalf("%v: label %q", size, mt[1])
			}
			rows, vals = append(rows, i), append(vals, v)
		}
	}
	n := len(vals)
	if n < 3 {
		t.Errorf("%v, roots %v: labels %v, want at least 3\n%s", size, zp, vals, view)
		return
	}
	step, gap := vals[0]-vals[1], rows[1]-rows[0]
	round := false
	for _, s := range []float64{0.25, 0.5, 1, 2, 5} {
		round = round || step == s
	}
	if !round || gap < 1 {
		t.Errorf("%v, roots %v: labels %v on rows %v: the step is not round\n%s", size, zp, vals, rows, view)
		return
	}
	for k := range n {
		if vals[k] != vals[0]-float64(k)*step || rows[k] != rows[0]+k*gap || vals[k] != -vals[n-1-k] {
			t.Errorf("%v, roots %v: labels %v on rows %v are not evenly spaced about 0\n%s", size, zp, vals, rows, view)
			return
		}
	}
}

// TestOverlayIsNamed: the plots' legends keep the filters' names whole when they have room
// for them but not for the unit or the pole-zero key, which give way first, and :overlay
// on, off and NAME say on the status line what is overlaid now (they said nothing; a legend
// read "━ butte…" at 250 columns).
func TestOverlayIsNamed(t *testing.T) {
	m := newTestModel(t, 250, 60, nil)
	p, _ := pairZPK(0.9)
	addFilter(t, m, "butterworth", p)
	keys(t, m, "v")
	q, _ := pairZPK(0.7)
	addFilter(t, m, "cheby1~rtf16", q)
	s := screen(m)
	if n := strings.Count(s, "━ butterworth"); n != 4 {
		t.Errorf("%d response legends name the overlay whole, want 4:\n%s", n, s)
	}
	if !strings.Contains(s, "+ o butterworth") {
		t.Errorf("the pole-zero legend does not name the overlay whole:\n%s", s)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"overlay off", "overlay off: butterworth is not drawn"},
		{"overlay on", "overlay on: butterworth is drawn over cheby1~rtf16"},
		{"overlay cheby1~rtf16", "overlay on: cheby1~rtf16 is pinned: select another filter to compare"},
		{"overlay butterworth", "overlay on: butterworth is drawn over cheby1~rtf16"},
	} {
		runPalette(t, m, tc.cmd)
		if !strings.Contains(m.status.text, tc.want) {
			t.Errorf(":%s: status %q, want %q", tc.cmd, m.status.text, tc.want)
		}
	}
}

// TestPhaseGapOnTheCircle: the phase chart leaves out the frequencies where the phase is
// undefined (a zero on the unit circle at a grid point, analysis's mask), as the figures do;
// arg of the H = 0 stored there drew every high-pass filter's phase from 0 at ω = 0.
func TestPhaseGapOnTheCircle(t *testing.T) {
	m := newTestModel(t, 160, 48, nil)
	hp, err := filters.NewZPK([]complex128{1, 1}, []complex128{0.5, -0.3}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "highpass", hp)
	d := m.plots.data()
	if d.resp == nil || len(d.resp.r.Masked) == 0 || !d.resp.r.Masked[0] {
		t.Fatal("the response at ω = 0 is not marked as on a zero")
	}
	spec, _, _ := m.plots.responseChart(plotPhase, d, false)
	y := spec.series[len(spec.series)-1].y
	if !math.IsNaN(y[0]) {
		t.Errorf("the phase at ω = 0, on the zero, is drawn at %g·π", y[0])
	}
	for i, v := range y[1:] {
		if math.IsNaN(v) {
			t.Errorf("the phase at grid point %d is missing", i+1)
		}
	}
}

// TestZeroFilterPlots: the zero filter's frequency plots and log impulse say that there is
// nothing to draw instead of drawing a floor, as the figures do (analysis.ZeroThroughout): its
// group delay, undefined and stored as 0, was drawn as a line at 0 (analysis QA N5).
func TestZeroFilterPlots(t *testing.T) {
	m := newTestModel(t, 200, 50, nil)
	zero, err := filters.NewZPK(nil, []complex128{0.5}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	addFilter(t, m, "zero", zero)
	d := m.plots.data()
	for _, k := range []plotKind{plotMagnitude, plotPhase, plotDelay} {
		spec, _, note := m.plots.responseChart(k, d, false)
		if note != "H = 0 throughout: not drawn" {
			t.Errorf("plot %d: note %q", k, note)
		}
		for _, v := range spec.series[len(spec.series)-1].y {
			if !math.IsNaN(v) && !math.IsInf(v, -1) {
				t.Errorf("plot %d draws %g", k, v)
				break
			}
		}
	}
	if _, _, note := m.plots.responseChart(plotImpulse, d, false); note != "" {
		t.Errorf("the linear impulse response (zeros, drawn) has the note %q", note)
	}
	m.setFocus(panePlots)
	keys(t, m, "s")
	if s := screen(m); strings.Count(s, "= 0 throughout: not drawn") != 4 {
		t.Errorf("the log impulse and the frequency plots do not all say so:\n%s", s)
	}
}

// TestUnstablePlotNote: the frequency plots of a filter that is not stable say that H on the
// unit circle is not its steady-state response (analysis.SteadyStateNote), as the figures do;
// the impulse plot and a stable filter's plots do not (analysis QA N6).
func TestUnstablePlotNote(t *testing.T) {
	m := newTestModel(t, 200, 50, nil)
	unstable, err := filters.NewZPK(nil, []complex128{1.2}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    filters.Filter
		note string
	}{{"unstable", unstable, analysis.SteadyStateNote(unstable)}, {"stable", pairAt(t, 0.9, 1), ""}} {
		addFilter(t, m, c.name, c.f)
		d := m.plots.data()
		for _, k := range []plotKind{plotImpulse, plotMagnitude, plotPhase, plotDelay} {
			want := c.note
			if k == plotImpulse {
				want = ""
			}
			if _, _, note := m.plots.responseChart(k, d, false); note != want {
				t.Errorf("%s, plot %d: note %q, want %q", c.name, k, note, want)
			}
		}
	}
	m.setFocus(panePlots)
	if s := screen(m); strings.Contains(s, "steady-state") {
		t.Errorf("the stable filter's plots carry the note:\n%s", s)
	}
}
