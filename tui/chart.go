package tui

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/lipgloss"
)

// Charts are drawn with ntcharts' linechart for the axes and labels, and braille grids filled
// here: one grid per series, every segment between consecutive samples rasterised into it,
// then drawn once. (linechart.DrawBrailleLine allocates a full grid per segment, which costs
// O(L·W·H) for a response of L samples.) ntcharts has no scatter type, so pole–zero markers
// are single runes placed on the canvas.

// series is one curve: y[i] at x0 + i·dx, or at xs[i] when xs is set.
type series struct {
	y      []float64
	xs     []float64
	x0, dx float64
	style  lipgloss.Style
	jump   float64 // when > 0, steps larger than this are not joined (a wrapped phase)
}

func (s series) x(i int) float64 {
	if s.xs != nil {
		return s.xs[i]
	}
	return s.x0 + float64(i)*s.dx
}

// marker is one rune at a point.
type marker struct {
	x, y  float64
	r     rune
	style lipgloss.Style
}

// chartSpec is everything one chart shows.
type chartSpec struct {
	xmin, xmax, ymin, ymax float64
	xfmt, yfmt             func(int, float64) string
	series                 []series
	markers                []marker
	unitCircle             bool
	xstep, ystep           int
	niceX, niceY           bool // round tick values (the range grows to fit them)
	square                 bool // after niceY, set the x range so that x and y have one scale
	xfmtStep               bool // with niceX: label x with the tick step's decimals
	xwhole                 bool // with niceX: x ticks at whole numbers (a log₂ axis's powers of two)
	xgap                   int  // with niceX: the fewest columns between x ticks (0: 8)
	// xlast, with niceX: the x tick at or above xmax is on the chart and its label (xfmt's)
	// fits, so that the axis names its top (a ladder's top order): ntcharts labels no tick
	// in the last column, nor one whose label would run past the chart's right edge.
	xlast bool
	// logY: y is log₁₀ of what is drawn. Its ticks are at whole decades where the range spans
	// one (niceAxis with whole steps), else at rounded fractions of a decade, and each is
	// labelled with its value (logFormat): "1e%.0f" of every few rows named a decade half a
	// decade off, and a loss from 2.4e-6 to 1.7e-6 read "1e-6" alone.
	logY bool
}

// drawChart renders spec in a w×h block. Labels use formatters suited to the range (ntcharts'
// default "%.0f" would print 0 for every tick of a small signal). ntcharts labels the value
// at every xstep-th column, wherever it falls: niceX widens the range so that those columns
// hold round values.
func drawChart(spec chartSpec, w, h int, st *styles) string {
	if w < 8 || h < 3 {
		return blank(w, h)
	}
	if !(spec.xmax > spec.xmin) {
		spec.xmax = spec.xmin + 1
	}
	if !(spec.ymax > spec.ymin) || math.IsInf(spec.ymax-spec.ymin, 0) {
		c := spec.ymin
		if math.IsNaN(c) || math.IsInf(c, 0) {
			c = 0
		}
		spec.ymin, spec.ymax = c-1, c+1
	}
	if spec.xfmt == nil {
		spec.xfmt = tick(spec.xmin, spec.xmax)
	}
	switch {
	case spec.logY:
		spec.niceY, spec.yfmt = true, logFormat(0)
	case spec.yfmt == nil:
		spec.yfmt = tick(spec.ymin, spec.ymax)
	}
	xs := spec.xstep
	switch xs {
	case 0:
		xs = 12
	case -1:
		xs = 0 // no x axis
	}
	ys := spec.ystep
	if ys == 0 {
		ys = max(2, h/4)
	}
	lc := linechart.New(w, h, spec.xmin, spec.xmax, spec.ymin, spec.ymax,
		linechart.WithXYSteps(xs, ys),
		linechart.WithStyles(st.axis, st.label, st.series),
		linechart.WithXLabelFormatter(spec.xfmt),
		linechart.WithYLabelFormatter(spec.yfmt),
	)
	// Widen the ranges so that ticks fall on round values (0.25, 0.5, …), then let the label
	// formatters print exactly those. The graph size depends on the y labels' width, so the y
	// axis goes first.
	if spec.niceY && lc.GraphHeight() > 1 && niceTicks(&lc, &spec, true) && spec.square {
		squareX(&lc, &spec)
	}
	if spec.niceX && lc.GraphWidth() > 1 {
		niceTicks(&lc, &spec, false)
	}
	lc.DrawXYAxisAndLabel()
	gw, gh := lc.GraphWidth(), lc.GraphHeight()
	if gw < 2 || gh < 1 {
		return lc.View()
	}
	start := canvas.Point{X: lc.Origin().X + 1, Y: 0}
	if spec.unitCircle {
		g := graph.NewBrailleGrid(gw, gh, spec.xmin, spec.xmax, spec.ymin, spec.ymax)
		steps := 8 * (gw + gh)
		for k := range steps {
			t := 2 * math.Pi * float64(k) / float64(steps)
			g.Set(g.GridPoint(canvas.Float64Point{X: math.Cos(t), Y: math.Sin(t)}))
		}
		// the axes through the origin, dotted
		for k := 0; k <= 4*gw; k += 3 {
			x := spec.xmin + (spec.xmax-spec.xmin)*float64(k)/float64(4*gw)
			g.Set(g.GridPoint(canvas.Float64Point{X: x, Y: 0}))
		}
		for k := 0; k <= 8*gh; k += 3 {
			y := spec.ymin + (spec.ymax-spec.ymin)*float64(k)/float64(8*gh)
			g.Set(g.GridPoint(canvas.Float64Point{X: 0, Y: y}))
		}
		graph.DrawBraillePatterns(&lc.Canvas, start, g.BraillePatterns(), st.circle)
	}
	for _, s := range spec.series {
		g := graph.NewBrailleGrid(gw, gh, spec.xmin, spec.xmax, spec.ymin, spec.ymax)
		plotSeries(g, s, spec)
		graph.DrawBraillePatterns(&lc.Canvas, start, g.BraillePatterns(), s.style)
	}
	for _, m := range spec.markers {
		if m.x < spec.xmin || m.x > spec.xmax || m.y < spec.ymin || m.y > spec.ymax {
			continue
		}
		lc.DrawRuneWithStyle(canvas.Float64Point{X: m.x, Y: m.y}, m.r, m.style)
	}
	return lc.View()
}

// niceTicks widens spec's range along one axis (the y axis where y is set) to round ticks
// (niceAxis) and sets lc's range, step and labels to them; it leaves both as they are and
// returns false where none fit. The y axis: 2 or 3 rows between ticks, whole decades on a
// log axis that spans one (else round fractions of one), labelled with the step's decimals
// (logFormat's values on a log axis). The x axis: spec.xgap columns (0: 8), whole steps where
// spec.xwhole, the top tick's label given room where spec.xlast, labelled with the step's
// decimals where spec.xfmtStep.
func niceTicks(lc *linechart.Model, spec *chartSpec, y bool) bool {
	lo, hi, format, labels := &spec.xmin, &spec.xmax, &spec.xfmt, &lc.XLabelFormatter
	setRange, setView, setStep := lc.SetXRange, lc.SetViewXRange, lc.SetXStep
	cells, gap, whole, relabel := lc.GraphWidth(), spec.xgap, spec.xwhole, spec.xfmtStep
	var last func(float64) int
	if y {
		lo, hi, format, labels = &spec.ymin, &spec.ymax, &spec.yfmt, &lc.YLabelFormatter
		setRange, setView, setStep = lc.SetYRange, lc.SetViewYRange, lc.SetYStep
		cells, relabel = lc.GraphHeight(), true
		gap, whole = min(3, max(2, cells/3)), spec.logY && spec.ymax-spec.ymin >= 1
	} else {
		if gap == 0 {
			gap = 8
		}
		if spec.xlast {
			last = func(v float64) int { return len(spec.xfmt(0, v)) } // ntcharts' measure
		}
	}
	nlo, nhi, step, every := niceAxis(*lo, *hi, cells, gap, whole, last)
	if every == 0 && y && whole { // a log axis without whole decades: fractions of one
		nlo, nhi, step, every = niceAxis(*lo, *hi, cells, gap, false, last)
	}
	if every == 0 {
		return false
	}
	*lo, *hi = nlo, nhi
	if relabel {
		*format = stepFormat(step)
		if y && spec.logY {
			*format = logFormat(step)
		}
		*labels = *format
	}
	setRange(nlo, nhi)
	setView(nlo, nhi)
	setStep(every)
	return true
}

// squareX sets spec's and lc's x range, about its middle, to the y range's scale.
func squareX(lc *linechart.Model, spec *chartSpec) {
	// cells are about twice as tall as wide
	mid := (spec.xmin + spec.xmax) / 2
	half := (spec.ymax - spec.ymin) / 2 * float64(lc.GraphWidth()) / float64(2*lc.GraphHeight())
	spec.xmin, spec.xmax = mid-half, mid+half
	lc.SetXRange(spec.xmin, spec.xmax)
	lc.SetViewXRange(spec.xmin, spec.xmax)
}

// plotSeries rasterises s, joining consecutive finite samples; values far outside the range
// are clamped first so that a spike does not rasterise a million-dot segment.
func plotSeries(g *graph.BrailleGrid, s series, spec chartSpec) {
	span := spec.ymax - spec.ymin
	lo, hi := spec.ymin-span, spec.ymax+span
	xspan := spec.xmax - spec.xmin
	var prev canvas.Point
	havePrev := false
	for i, y := range s.y {
		x := s.x(i)
		if math.IsNaN(y) || math.IsInf(y, 0) || x < spec.xmin-xspan || x > spec.xmax+xspan {
			havePrev = false
			continue
		}
		y = math.Min(math.Max(y, lo), hi)
		p := g.GridPoint(canvas.Float64Point{X: x, Y: y})
		if s.jump > 0 && i > 0 && math.Abs(y-s.y[i-1]) > s.jump {
			havePrev = false
		}
		if havePrev && p != prev {
			for _, q := range graph.GetLinePoints(prev, p) {
				g.Set(q)
			}
		} else {
			g.Set(p)
		}
		prev, havePrev = p, true
	}
}

// blank is a w×h block of spaces.
func blank(w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	line := strings.Repeat(" ", w)
	lines := make([]string, h)
	for i := range lines {
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}

// niceRange returns [lo, hi] covering the finite values of ys with a little margin; values
// beyond the q and 1-q quantiles are ignored when robust is set (group delay spikes at zeros
// on the unit circle would flatten everything else).
func niceRange(robust bool, ys ...[]float64) (float64, float64) {
	var v []float64
	for _, y := range ys {
		for _, x := range y {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				v = append(v, x)
			}
		}
	}
	if len(v) == 0 {
		return -1, 1
	}
	lo, hi := v[0], v[0]
	if robust && len(v) > 20 {
		s := append([]float64(nil), v...)
		slices.Sort(s)
		lo, hi = s[len(s)*2/100], s[len(s)-1-len(s)*2/100]
	} else {
		for _, x := range v {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if hi-lo < 1e-12*math.Max(1, math.Abs(hi)) {
		d := math.Max(math.Abs(hi)*0.1, 1e-9)
		return lo - d, hi + d
	}
	m := 0.05 * (hi - lo)
	return lo - m, hi + m
}

// niceAxis chooses a round tick step for [lo, hi] drawn over cells rows or columns, with at
// least minGap cells between ticks, and returns the widened range whose ticks, every `every`
// cells, land exactly on multiples of step. every is 0 when no round ticks fit. whole keeps
// to steps of whole numbers (1, 2, 5, 10, …). A non-nil last is the width of the label of a
// tick at a value: the tick at or above hi is then within the first cells-1 cells with room
// for its label (ntcharts' labels of an x axis, at cells 0, every, 2·every, … below cells,
// each shown only where it ends by cells+1), the range widened for it.
func niceAxis(lo, hi float64, cells, minGap int, whole bool, last func(float64) int) (nlo, nhi, step float64, every int) {
	if !(hi > lo) || cells < 2 {
		return lo, hi, 0, 0
	}
	best := math.Inf(1)
	// The steps tried start from the one that fits cells/minGap whole intervals; where none
	// fits, from the one that fits a partial interval at the top too (3.1 decades over 7
	// rows: a tick every 2 rows, 1 decade apart, which the first start, 2 decades, skips).
	for _, n := range []float64{float64(max(1, cells/minGap)), max(1, float64(cells)/float64(minGap))} {
		s := niceStep((hi - lo) / n)
		if whole {
			s = max(s, 1)
		}
		for tried := 0; tried < 8; s = niceStep(s * 1.01) {
			if whole && s != math.Trunc(s) {
				continue // 2.5
			}
			tried++
			l := math.Floor(lo/s+1e-9) * s
			e := int(math.Floor(float64(cells) * s / (hi - l)))
			if last != nil {
				top := math.Ceil((hi-l)/s - 1e-9) // ticks from l to the one at or above hi
				if top < 1 {
					continue // hi within 1e-9 steps of l: no interval to label
				}
				e = min(cells-1, cells+1-last(l+top*s)) / int(top)
			}
			// at least two intervals when there is room for them, each at least minGap wide
			if e >= minGap && (2*e <= cells || cells < 2*minGap) {
				h := l + s*float64(cells)/float64(e)
				// the least widening wins; at equal widening, more ticks
				if score := (h - l) / (hi - lo); score < best-0.03 {
					best, nlo, nhi, step, every = score, l, h, s, e
				}
			}
		}
		if every > 0 {
			break
		}
	}
	return nlo, nhi, step, every // every == 0: no round ticks fit
}

// niceStep rounds x up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// logFormat labels a log₁₀ axis whose ticks are step apart (0: not known) with the values
// there: "1e-6" at a whole decade, elsewhere the value to as many significant digits as
// ticks step apart need to differ, at least 2 ("1.8e-6", "2e-6", "2.2e-6" for 0.05 decades).
// The labels are ASCII: ntcharts measures them in bytes.
func logFormat(step float64) func(int, float64) string {
	digits := 2
	if step > 0 {
		digits = max(2, 1+int(math.Ceil(-math.Log10(math.Pow(10, step)-1))))
	}
	return func(_ int, v float64) string {
		if r := math.Round(v); math.Abs(v-r) < 1e-9 {
			return "1e" + strconv.Itoa(int(r))
		}
		m, e, _ := strings.Cut(strconv.FormatFloat(math.Pow(10, v), 'e', digits-1, 64), "e") // "2.24e-06"
		exp, _ := strconv.Atoi(e)
		return trimZeros(m) + "e" + strconv.Itoa(exp)
	}
}

// stepFormat labels multiples of step with just enough decimals.
func stepFormat(step float64) func(int, float64) string {
	dec := 0
	for s := step; dec < 8 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, math.Abs(s)); s *= 10 {
		dec++
	}
	big := step >= 1e5 || (step < 1e-4 && step > 0)
	return func(_ int, v float64) string {
		if math.Abs(v) < step*1e-6 {
			return "0"
		}
		if big {
			return strconv.FormatFloat(v, 'g', 2, 64)
		}
		return trimZeros(strconv.FormatFloat(v, 'f', dec, 64))
	}
}
