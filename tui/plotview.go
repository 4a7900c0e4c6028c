package tui

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/plural"
)

// render draws d in the pane's inner block (width × height), or returns the drawing it made
// last when nothing it shows changed.
func (p *plotsPane) render(d plotData, focused bool) string {
	key := plotCacheKey{w: p.width, h: p.height, resp: d.resp, ovResp: d.ovResp, pz: d.pz, ovPZ: d.ovPZ,
		enabled: p.enabled, offset: p.offset, poleSel: p.poleSel, log: p.logImpulse, overlay: p.m.overlayOn,
		stale: d.stale, focused: focused, name: d.name, ovName: d.ovName, message: d.message, length: d.length, kernel: d.kernel}
	if err := d.errOf(plotImpulse); err != nil {
		key.errTxt = err.Error()
	}
	if key == p.cacheKey && p.cacheView != "" {
		return p.cacheView
	}
	out := p.draw(d, focused)
	p.cacheKey, p.cacheView = key, out
	return out
}

func (p *plotsPane) draw(d plotData, focused bool) string {
	st := p.m.st
	if d.message != "" {
		return placeText(p.width, p.height, st.dim.Render(d.message))
	}
	kinds, cols, rows := p.visible()
	if len(kinds) == 0 {
		return placeText(p.width, p.height, st.dim.Render("no plots on: press 1-5"))
	}
	var gridRows []string
	for r := range rows {
		cellH := p.height / rows
		if r == rows-1 {
			cellH = p.height - cellH*(rows-1)
		}
		// a last row with fewer plots stretches them over the width
		n := min(cols, len(kinds)-r*cols)
		cellW := p.width / n
		var cells []string
		for c := range n {
			w := cellW
			if c == n-1 {
				w = p.width - cellW*(n-1)
			}
			cells = append(cells, p.plot(kinds[r*cols+c], d, w, cellH, focused))
		}
		gridRows = append(gridRows, lipgloss.JoinHorizontal(lipgloss.Top, cells...))
	}
	return lipgloss.JoinVertical(lipgloss.Left, gridRows...)
}

// plot renders one plot with its title line in a w×h block.
func (p *plotsPane) plot(k plotKind, d plotData, w, h int, focused bool) string {
	st := p.m.st
	title := st.bold.Render(plotNames[k])
	// the legend's parts, and which give way first when the line is too short for them
	// all: the filters' names stay, so that the overlay can be told from the filter
	var legend []string
	var spare []bool
	add := func(part string, canDrop bool) {
		legend, spare = append(legend, part), append(spare, canDrop)
	}
	overlay := p.m.overlayOn && d.ovResp != nil && d.ovResp.err == nil && (k != plotImpulse || d.ovResp.overflow == nil)
	chartW, chartH := w-1, h-1
	body, note := "", ""
	switch {
	case k != plotPZ && (d.resp == nil || d.errOf(k) != nil):
		msg := "computing…"
		if err := d.errOf(k); err != nil {
			msg = err.Error()
			body = placeText(chartW, chartH, st.err.Render(wrap(msg, chartW-2)))
		} else {
			body = placeText(chartW, chartH, st.dim.Render(msg))
		}
	case k == plotPZ:
		var extra []string
		body, extra = p.pzChart(d, chartW, chartH, overlay)
		add(st.pole.Render("×")+"pole "+st.zero.Render("○")+"zero", true)
		for _, x := range extra {
			add(x, true)
		}
	default:
		var spec chartSpec
		var unit string
		spec, unit, note = p.responseChart(k, d, overlay)
		body = drawChart(spec, chartW, chartH, st)
		if unit != "" {
			add(st.dim.Render(unit), true)
		}
	}
	if k != plotPZ {
		add(st.series.Render("━")+" "+d.name, false)
		if overlay {
			add(st.overlay.Render("━")+" "+d.ovName, false)
		}
	} else if overlay && d.ovPZ != nil {
		add(st.overlay.Render("+ o")+" "+d.ovName, false)
	}
	if note != "" { // last, so that a narrow plot cuts the note rather than the name
		add(st.warn.Render(note), false)
	}
	if d.stale {
		add(st.dim.Render("…"), false)
	}
	head := legendLine(title, legend, spare, w-1)
	return lipgloss.NewStyle().Width(w).Height(h).MaxWidth(w).MaxHeight(h).Render(head + "\n" + body)
}

// legendLine is a plot's title and legend in w cells. When they do not fit but the parts
// that may not be spared do, spared parts give way, first ones first, until the line fits;
// otherwise (a name too long anyway) the line is cut at its end.
func legendLine(title string, legend []string, spare []bool, w int) string {
	join := func(keep func(i int) bool) string {
		var parts []string
		for i, l := range legend {
			if keep(i) {
				parts = append(parts, l)
			}
		}
		return title + "  " + strings.Join(parts, "  ")
	}
	head := join(func(int) bool { return true })
	if lipgloss.Width(head) > w && lipgloss.Width(join(func(i int) bool { return !spare[i] })) <= w {
		dropped := 0
		for lipgloss.Width(head) > w {
			for !spare[dropped] {
				dropped++
			}
			dropped++
			head = join(func(i int) bool { return !spare[i] || i >= dropped })
		}
	}
	return ansi.Truncate(head, w, "…")
}

// responseChart builds the chart of a response plot and names its unit, with a note where the
// shown filter's response has nothing to draw, or where H on the unit circle is not its
// steady-state response (Responses.SteadyState).
func (p *plotsPane) responseChart(k plotKind, d plotData, overlay bool) (spec chartSpec, unit, note string) {
	st := p.m.st
	var main, ov []float64
	r := d.resp
	pick := func(rd *respData) []float64 {
		switch k {
		case plotImpulse:
			h := rd.r.Impulse
			if !p.logImpulse {
				return h
			}
			out := make([]float64, len(h))
			for i, v := range h {
				out[i] = math.Log10(math.Abs(v))
			}
			return out
		case plotMagnitude:
			out := make([]float64, len(rd.r.H))
			for i, v := range rd.r.H {
				out[i] = 20 * math.Log10(cmplx.Abs(v))
			}
			return out
		case plotPhase:
			out := make([]float64, len(rd.r.H))
			for i, v := range rd.r.H {
				out[i] = cmplx.Phase(v) / math.Pi
				if rd.r.Masked != nil && rd.r.Masked[i] {
					// Undefined (H stored as 0 at a zero or pole on the circle): a gap, not
					// the 0 that arg 0 gives, from which every high-pass phase started.
					out[i] = math.NaN()
				}
			}
			return out
		}
		if analysis.ZeroThroughout(rd.r.H, rd.r.Masked) {
			// τ of H ≡ 0 is undefined, stored as 0: not a delay to draw.
			out := make([]float64, len(rd.r.Delay))
			for i := range out {
				out[i] = math.NaN()
			}
			return out
		}
		return rd.r.Delay
	}
	main = pick(r)
	if overlay {
		ov = pick(d.ovResp)
	}
	mk := func(y []float64, rd *respData, style lipgloss.Style) series {
		if k == plotImpulse {
			return series{y: y, x0: 0, dx: 1, style: style}
		}
		s := series{y: y, xs: scaleOmega(rd.omega), style: style}
		if k == plotPhase {
			s.jump = 1 // a wrap from π to -π is not a step of the response
		}
		return s
	}
	if overlay {
		spec.series = append(spec.series, mk(ov, d.ovResp, st.overlay))
	}
	spec.series = append(spec.series, mk(main, r, st.series))
	spec.xmin, spec.xmax = 0, 1
	spec.niceX, spec.xfmtStep = true, true
	spec.niceY = !(k == plotImpulse && p.logImpulse)
	switch k {
	case plotImpulse:
		spec.xmax = float64(max(1, len(main)-1))
		if p.logImpulse {
			unit = "log₁₀|h[t]|"
			lo, hi := niceRange(false, main, ov)
			lo = math.Max(lo, hi-16)
			spec.ymin, spec.ymax = lo, hi
			spec.logY = true
		} else {
			unit = "h[t]"
			spec.ymin, spec.ymax = niceRange(false, main, ov)
		}
	case plotMagnitude:
		unit = "dB vs ω/π"
		// Show the top 120 dB: clip first, so that a stopband zero (-2000 dB at a zero on
		// the unit circle) does not widen the margin niceRange adds.
		top := math.Inf(-1)
		for _, y := range [][]float64{main, ov} {
			for _, v := range y {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					top = math.Max(top, v)
				}
			}
		}
		spec.ymin, spec.ymax = niceRange(false, clipBelow(main, top-120), clipBelow(ov, top-120))
	case plotPhase:
		unit = "∠H/π vs ω/π"
	case plotDelay:
		unit = "samples vs ω/π"
		spec.ymin, spec.ymax = niceRange(true, main, ov)
	}
	if k == plotPhase {
		spec.ymin, spec.ymax = -1, 1
	}
	// Nothing to draw is said, not drawn at a floor (analysis.MagFloorDB, 1e-16), as the
	// figures do: the zero filter's magnitude, phase, delay and log impulse.
	switch {
	case k != plotImpulse && analysis.ZeroThroughout(r.r.H, r.r.Masked):
		note = "H = 0 throughout: not drawn"
	case k != plotImpulse:
		note = r.r.SteadyState
	case k == plotImpulse && p.logImpulse && !slices.ContainsFunc(r.r.Impulse, func(v float64) bool { return v != 0 }):
		note = "h = 0 throughout: not drawn"
	}
	return spec, unit, note
}

// scaleOmega returns ω/π.
func scaleOmega(omega []float64) []float64 {
	out := make([]float64, len(omega))
	for i, w := range omega {
		out[i] = w / math.Pi
	}
	return out
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// pzLimit is the largest radius the pole-zero plot extends to; farther zeros are counted.
const pzLimit = 3.0

// pzChart draws the unit circle, poles (×) and zeros (○), the selected pole as ⊗, and the
// overlay's poles (+) and zeros (o). The x range is widened so that the circle is round in
// cells twice as tall as they are wide.
func (p *plotsPane) pzChart(d plotData, w, h int, overlay bool) (string, []string) {
	st := p.m.st
	if d.kernel {
		return placeText(w, h, st.dim.Render(wrap("a kernel has no poles or zeros: distil it into a filter (D)", w-2))), nil
	}
	if d.pz == nil {
		return placeText(w, h, st.dim.Render("computing…")), nil
	}
	if d.pz.err != nil {
		return placeText(w, h, st.err.Render(wrap(d.pz.err.Error(), w-2))), nil
	}
	R := 1.15
	grow := func(roots []complex128) (off int) {
		for _, r := range roots {
			a := cmplx.Abs(r)
			if a > pzLimit || math.IsNaN(a) {
				off++
				continue
			}
			R = math.Max(R, 1.08*a)
		}
		return off
	}
	// what lies beyond the plot, named: "1 off-plot" did not say whether a pole or a zero
	var off []string
	if n := grow(d.pz.poles); n > 0 {
		off = append(off, plural.Count(n, "pole"))
	}
	if n := grow(d.pz.zeros); n > 0 {
		off = append(off, plural.Count(n, "zero"))
	}
	if overlay && d.ovPZ != nil {
		if n := grow(d.ovPZ.poles) + grow(d.ovPZ.zeros); n > 0 {
			off = append(off, fmt.Sprintf("%d of the overlay", n))
		}
	}
	// Cells are about twice as tall as wide: a round circle needs a graph twice as many
	// columns as rows. Shrink whichever side is too long and centre the chart.
	const labelW = 5
	gw, gh := max(4, w-labelW-1), max(1, h-1)
	c, every, step := pzAxis(R, min(gh, gw/2))
	q := step / float64(every) // the value of one row
	gh = 2*c + 1
	gw = min(gw, 2*gh+2)
	R = (float64(c) + 0.5) * q
	cw, ch := gw+labelW+1, gh // no x axis (the circle is the scale), so the graph is ch rows
	Rx := R * float64(gw) / float64(2*gh)
	label := stepFormat(step)
	spec := chartSpec{xmin: -Rx, xmax: Rx, ymin: -R, ymax: R, unitCircle: true, ystep: 1, xstep: -1,
		// ntcharts asks for a label for every row i from the bottom (giving the value at the
		// row's lower edge); the rows `every` apart from 0's, row c, get their centre's value,
		// padded to labelW so that the graph is gw columns wide, and the others none.
		yfmt: func(i int, _ float64) string {
			if (i-c)%every != 0 || i > 2*c {
				return ""
			}
			return fmt.Sprintf("%*s", labelW, label(i, float64((i-c)/every)*step))
		}}
	if overlay && d.ovPZ != nil {
		for _, z := range d.ovPZ.zeros {
			spec.markers = append(spec.markers, marker{real(z), imag(z), 'o', st.overlay})
		}
		for _, q := range d.ovPZ.poles {
			spec.markers = append(spec.markers, marker{real(q), imag(q), '+', st.overlay})
		}
	}
	for _, z := range d.pz.zeros {
		spec.markers = append(spec.markers, marker{real(z), imag(z), '○', st.zero})
	}
	for _, q := range d.pz.poles {
		spec.markers = append(spec.markers, marker{real(q), imag(q), '×', st.pole})
	}
	// the title's notes, in the order they give way when it is short of room: what lies
	// off the plot stays longest (the status line names the selected pole too)
	var extra []string
	if !d.pz.haveZeros {
		extra = append(extra, st.dim.Render("zeros…"))
	}
	if sel, ok := p.selectedPole(d.pz); ok {
		q := d.pz.poles[sel]
		spec.markers = append(spec.markers, marker{real(q), imag(q), '⊗', st.poleSel})
		if j := filters.Partner(d.pz.poles, sel); j >= 0 {
			c := d.pz.poles[j]
			spec.markers = append(spec.markers, marker{real(c), imag(c), '⊗', st.poleSel})
		}
		extra = append(extra, st.accent.Render(fmt.Sprintf("⊗ %s∠%.3gπ", filters.FormatModulus(cmplx.Abs(q)), cmplx.Phase(q)/math.Pi)))
	}
	if len(off) > 0 {
		extra = append(extra, st.dim.Render(strings.Join(off, ", ")+" off-plot"))
	}
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Top, drawChart(spec, cw, ch, st)), extra
}

// pzAxis chooses the pole-zero chart's y axis for roots within radius R over at most rows
// rows: 2c+1 rows, the middle one 0 and each row's value at its centre, labelled every
// `every` rows from 0 with the multiples of a round step (0.25, 0.5, 1, 2 or 5). A row's
// value is as small as R allows (the largest circle), with labels at least 3 rows apart
// where the rows allow (else 2, else 1), and at equal size the smaller step.
func pzAxis(R float64, rows int) (c, every int, step float64) {
	c = (rows - 1) / 2
	if c < 1 {
		return 0, 1, niceStep(2 * R) // one row: 0 alone
	}
	best := math.Inf(1)
	for _, gap := range []int{3, 2, 1} {
		for _, s := range []float64{0.25, 0.5, 1, 2, 5} {
			for e := gap; e <= c; e++ {
				if q := s / float64(e); (float64(c)+0.5)*q >= R && q < best*(1-1e-9) {
					best, every, step = q, e, s
				}
			}
		}
		if every > 0 {
			break
		}
	}
	return c, every, step
}

// selectedPole returns the index in pz.poles of the selected pole.
func (p *plotsPane) selectedPole(pz *pzData) (int, bool) {
	if pz == nil || !pz.havePoles {
		return 0, false
	}
	return p.selectedIn(pz.poles)
}

// selectedIn returns the index in poles of the selected pole.
func (p *plotsPane) selectedIn(poles []complex128) (int, bool) {
	reps := poleReps(poles)
	if len(reps) == 0 {
		return 0, false
	}
	if p.poleSel >= len(reps) {
		p.poleSel = len(reps) - 1
	}
	if p.poleSel < 0 {
		p.poleSel = 0
	}
	return reps[p.poleSel], true
}

// placeText centres text in a w×h block.
func placeText(w, h int, text string) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, text)
}

// wrap breaks text into lines of at most width cells.
func wrap(text string, width int) string {
	if width < 8 {
		return text
	}
	return lipgloss.NewStyle().Width(width).Render(text)
}

// clipBelow returns v with every value below floor raised to floor.
func clipBelow(v []float64, floor float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Max(x, floor)
	}
	return out
}
