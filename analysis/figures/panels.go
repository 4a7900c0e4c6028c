package figures

import (
	"fmt"
	"image/color"
	"math"
	"math/cmplx"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
)

// Kind names a panel.
type Kind string

// The panels New draws.
const (
	Impulse    Kind = "impulse"     // h[t] against t (|h[t]| on a log axis with Options.Log)
	Magnitude  Kind = "magnitude"   // 20·log₁₀|H(e^{jω})| in dB against ω/π
	Phase      Kind = "phase"       // the unwrapped phase of H in units of π against ω/π
	GroupDelay Kind = "group-delay" // τ(ω) = -dφ/dω in samples against ω/π
	PoleZero   Kind = "pole-zero"   // poles (×) and zeros (○) with the unit circle
)

// Kinds lists the panels in the order figures lay them out by default.
var Kinds = []Kind{Impulse, Magnitude, Phase, GroupDelay, PoleZero}

// ParseKind returns the Kind named s; "delay", "pz" and "polezero" are accepted too.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(s)); k {
	case Impulse, Magnitude, Phase, GroupDelay, PoleZero:
		return k, nil
	case "delay", "groupdelay", "group_delay":
		return GroupDelay, nil
	case "pz", "polezero", "poles":
		return PoleZero, nil
	}
	return "", fmt.Errorf("%w: no panel %q (want impulse, magnitude, phase, group-delay or pole-zero)", ErrInvalid, s)
}

// Series is one filter of a figure: a filter, or a raw kernel (an impulse response given as
// samples, such as a distillation target). Exactly one of Filter and Kernel is set.
type Series struct {
	Name   string // the legend's text; "series i" when empty
	Filter filters.Filter
	Kernel []float64
}

// Options choose what a figure shows and its size. The zero value is a good default.
type Options struct {
	// Length is the number of impulse-response samples. 0 chooses: the longest kernel when
	// there is one, otherwise enough samples for the slowest filter's response to decay to
	// DisplayTol of its start (1e-12 with Log; analysis.AutoLength), within
	// [MinAutoLength, DefaultMaxLength].
	Length int
	// Points is the number of frequencies of the frequency panels (DefaultPoints when 0).
	Points int
	// Log draws |h[t]| on a logarithmic axis and the frequency panels against a logarithmic
	// frequency axis.
	Log bool
	// Title is the figure's title. When empty, a figure of one series is titled with its
	// name.
	Title string
	// Columns is the number of panel columns (0 chooses: one column for up to three panels,
	// two for four, three beyond).
	Columns int
	// Width and Height are the figure's size, legend and title included (0: from the
	// number of panels). Each must lie in [MinSide, MaxSide].
	Width, Height vg.Length
	// DPI is the resolution of PNG files (DefaultDPI when 0).
	DPI int
}

// Limits and defaults of New.
const (
	DefaultPoints    = 512
	MaxPoints        = 1 << 16
	MaxLength        = 1 << 20
	MinAutoLength    = 32
	DefaultMaxLength = 4096
	MaxSeries        = 64
	// DisplayTol is the decay a default impulse length shows: the response has fallen to
	// 1e-6 of its start, invisible on a linear axis.
	DisplayTol = 1e-6
	// DynamicRangeDB is the most the magnitude axis spans below its largest value.
	DynamicRangeDB = 120
	// LogFloor is where a log-magnitude impulse response stops: values below LogFloor times
	// the figure's largest |h| are drawn at that level.
	LogFloor = 1e-16
	// zoomLimit: roots with a larger modulus are left out of the pole–zero panel (and counted
	// in its title), so that one far zero does not shrink the unit circle to a dot.
	zoomLimit = 3.0
	// markerLength: impulse responses up to this length get a marker per sample.
	markerLength = 64
)

// New returns a figure of the given panels for the series, overlaid in every panel.
func New(kinds []Kind, series []Series, o Options) (*Figure, error) {
	if len(kinds) == 0 {
		return nil, fmt.Errorf("%w: no panels asked for", ErrInvalid)
	}
	for i, k := range kinds {
		if _, err := ParseKind(string(k)); err != nil || Kind(strings.ToLower(string(k))) != k {
			return nil, fmt.Errorf("%w: no panel %q", ErrInvalid, k)
		}
		if slices.Contains(kinds[:i], k) {
			return nil, fmt.Errorf("%w: panel %q asked for twice", ErrInvalid, k)
		}
	}
	if err := checkOptions(o); err != nil {
		return nil, err
	}
	series, err := checkSeries(series)
	if err != nil {
		return nil, err
	}
	data := &seriesData{series: series, o: o}
	fig := &Figure{title: o.Title}
	if fig.title == "" && len(series) == 1 {
		fig.title = series[0].Name
	}
	var panels []cell
	allSquare := true
	for _, k := range kinds {
		var c cell
		var err error
		switch k {
		case Impulse:
			c.p, err = data.impulsePanel()
		case Magnitude, Phase, GroupDelay:
			c.p, err = data.frequencyPanel(k)
		case PoleZero:
			c.p, err = data.poleZeroPanel()
			c.square = true
		}
		if err != nil {
			return nil, err
		}
		allSquare = allSquare && c.square
		panels = append(panels, c)
	}
	if len(series) > 1 {
		for i, s := range series {
			fig.legend = append(fig.legend, legendEntry{s.Name, lineThumb(seriesStyle(i))})
		}
	}
	if slices.Contains(kinds, PoleZero) {
		fig.legend = append(fig.legend, glyphLegend()...)
	}
	cols := o.Columns
	if cols == 0 {
		switch n := len(panels); {
		case n <= 3:
			cols = 1
		case n <= 4:
			cols = 2
		default:
			cols = 3
		}
	}
	fig.cells = grid(panels, cols)
	fig.panelCount = len(panels)
	if err := fig.layout(o, allSquare); err != nil {
		return nil, err
	}
	return fig, nil
}

func checkOptions(o Options) error {
	if o.Length < 0 || o.Points < 0 || o.Columns < 0 || o.DPI < 0 || o.Width < 0 || o.Height < 0 {
		panic("figures: negative option")
	}
	if o.Length > MaxLength {
		return fmt.Errorf("%w: length %d above %d", ErrInvalid, o.Length, MaxLength)
	}
	if o.Points > MaxPoints || o.Points == 1 {
		return fmt.Errorf("%w: %d frequency points outside [2, %d]", ErrInvalid, o.Points, MaxPoints)
	}
	return nil
}

// checkSeries validates the series and names the unnamed ones.
func checkSeries(series []Series) ([]Series, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("%w: no series to draw", ErrInvalid)
	}
	if len(series) > MaxSeries {
		return nil, fmt.Errorf("%w: %d series, above the limit %d", ErrInvalid, len(series), MaxSeries)
	}
	out := slices.Clone(series)
	for i := range out {
		s := &out[i]
		if s.Name == "" {
			s.Name = fmt.Sprintf("series %d", i)
		}
		var err error
		switch {
		case s.Filter != nil && s.Kernel != nil:
			err = fmt.Errorf("both a filter and a kernel")
		case s.Filter != nil:
			err = s.Filter.Validate()
		default:
			err = checkKernel(s.Kernel)
		}
		if err != nil {
			return nil, &SeriesError{i, s.Name, fmt.Errorf("%w: %v", ErrInvalid, err)}
		}
	}
	return out, nil
}

// SeriesError is an error of one series (one channel, in a distillation figure).
type SeriesError struct {
	Index int    // the series' (channel's) index
	Name  string // its name
	Err   error
}

func (e *SeriesError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *SeriesError) Unwrap() error { return e.Err }

func checkKernel(k []float64) error {
	if len(k) == 0 {
		return fmt.Errorf("empty kernel")
	}
	for t, v := range k {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel sample %d is %v", t, v)
		}
	}
	return nil
}

// grid lays panels out row by row in cols columns, padding the last row with empty cells.
func grid(panels []cell, cols int) [][]cell {
	cols = min(cols, len(panels))
	rows := (len(panels) + cols - 1) / cols
	out := make([][]cell, rows)
	for i := range out {
		out[i] = make([]cell, cols)
	}
	for i, c := range panels {
		out[i/cols][i%cols] = c
	}
	return out
}

// seriesData computes what the panels need, once per series.
type seriesData struct {
	series   []Series
	o        Options
	omega    []float64
	resp     []*analysis.Response
	unstable *string // steadyStateNote, once computed
}

// length is the number of impulse samples to draw.
func (d *seriesData) length() (int, error) {
	if d.o.Length > 0 {
		return d.o.Length, nil
	}
	l, kernels := 0, false
	for _, s := range d.series {
		if s.Kernel != nil {
			l, kernels = max(l, len(s.Kernel)), true
		}
	}
	if kernels {
		return min(l, MaxLength), nil
	}
	tol := DisplayTol
	if d.o.Log {
		tol = LogFloor * 1e4 // the log axis shows the decay down to 1e-12
	}
	for i, s := range d.series {
		n, err := analysis.AutoLength(s.Filter, tol)
		if err != nil {
			return 0, &SeriesError{i, s.Name, fmt.Errorf("impulse length: %w", err)}
		}
		l = max(l, n)
	}
	return min(max(l, MinAutoLength), DefaultMaxLength), nil
}

func (d *seriesData) impulse(i, length int) ([]float64, error) {
	s := d.series[i]
	if s.Kernel != nil {
		return s.Kernel[:min(length, len(s.Kernel))], nil
	}
	h, err := analysis.Impulse(nil, s.Filter, length, analysis.Recurrence)
	if err != nil {
		return nil, &SeriesError{i, s.Name, fmt.Errorf("impulse response: %w", err)}
	}
	return h, nil
}

func (d *seriesData) impulsePanel() (*plot.Plot, error) {
	length, err := d.length()
	if err != nil {
		return nil, err
	}
	hs := make([][]float64, len(d.series))
	for i := range d.series {
		if hs[i], err = d.impulse(i, length); err != nil {
			return nil, err
		}
	}
	p := newPanel("impulse response", "t (samples)", "h[t]")
	if d.o.Log {
		p.Y.Label.Text = "|h[t]|"
	}
	left, err := addImpulses(p, hs, d.o.Log, func(i int) draw.LineStyle { return seriesStyle(i) })
	if err != nil {
		return nil, err
	}
	p.Title.Text += d.zeroNote(left, "h")
	p.X.Min, p.X.Max = 0, float64(max(length-1, 1))
	return p, nil
}

// addImpulses draws the responses hs on p in the given styles; with log, |h| on a log axis
// floored at LogFloor times the largest |h|, leaving out (and returning) the responses that are
// 0 at every sample, which a log axis cannot show: drawn at the floor, the zero filter read as
// |h| = 1e-16 on an axis from 1e-16 to 1e-15.
func addImpulses(p *plot.Plot, hs [][]float64, log bool, style func(i int) draw.LineStyle) (left []int, err error) {
	peak, low := 0.0, math.Inf(1)
	for _, h := range hs {
		for _, v := range h {
			peak = math.Max(peak, math.Abs(v))
			if v != 0 {
				low = math.Min(low, math.Abs(v))
			}
		}
	}
	floor := LogFloor * peak
	if floor == 0 {
		floor = LogFloor
	}
	for i, h := range hs {
		y := h
		if log {
			if !slices.ContainsFunc(h, func(v float64) bool { return v != 0 }) {
				left = append(left, i)
				continue
			}
			y = make([]float64, len(h))
			for t, v := range h {
				y[t] = math.Max(math.Abs(v), floor)
			}
		}
		if err := addLine(p, ramp(len(y)), y, style(i), len(y) <= markerLength); err != nil {
			return nil, err
		}
	}
	if log {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		// The axis starts at the smallest nonzero value; exact zeros dive below it.
		p.Y.Min = math.Max(floor, math.Min(low, peak/10))
		p.Y.Max = math.Max(peak, 10*p.Y.Min)
	}
	return left, nil
}

// steadyStateNote is a frequency panel title's second line for the series that are not
// stable (analysis.SteadyStateNote), "" when all are: their H(e^{jω}) is not the response
// they settle to for e^{jωt}. Computed once.
func (d *seriesData) steadyStateNote() string {
	if d.unstable == nil {
		var lines []string
		for _, s := range d.series {
			if s.Filter == nil {
				continue // an FIR kernel is stable
			}
			if n := analysis.SteadyStateNote(s.Filter); n != "" {
				if len(d.series) > 1 {
					n = s.Name + ": " + n
				}
				lines = append(lines, n)
			}
		}
		note := ""
		if len(lines) > 0 {
			note = "\n" + strings.Join(lines, "\n")
		}
		d.unstable = &note
	}
	return *d.unstable
}

// zeroNote is a panel title's note naming the series left out (left) because every value of
// what (h or H) they have is 0, "" when none is; one series' figure is titled with its name
// already.
func (d *seriesData) zeroNote(left []int, what string) string {
	if len(left) == 0 {
		return ""
	}
	if len(d.series) == 1 {
		return " (" + what + " = 0 throughout: not drawn)"
	}
	names := make([]string, len(left))
	for j, i := range left {
		names[j] = d.series[i].Name
	}
	return fmt.Sprintf(" (%s: %s = 0 throughout, not drawn)", strings.Join(names, ", "), what)
}

// grid returns the frequencies of the frequency panels.
func (d *seriesData) grid() []float64 {
	if d.omega == nil {
		n := d.o.Points
		if n == 0 {
			n = DefaultPoints
		}
		if d.o.Log {
			d.omega = analysis.LogGrid(n, math.Pi/1000)
		} else {
			d.omega = analysis.LinearGrid(n)
		}
	}
	return d.omega
}

// response returns series i's frequency response on the grid, computed once; a kernel's is
// that of its FIR transfer function (analysis.KernelResponse).
func (d *seriesData) response(i int) *analysis.Response {
	if d.resp == nil {
		d.resp = make([]*analysis.Response, len(d.series))
	}
	if d.resp[i] == nil {
		if s := d.series[i]; s.Kernel != nil {
			d.resp[i] = analysis.KernelResponse(s.Kernel, d.grid())
		} else {
			d.resp[i] = analysis.FreqResponse(s.Filter, d.grid())
		}
	}
	return d.resp[i]
}

// delay returns series i's group delay on the grid.
func (d *seriesData) delay(i int) ([]float64, error) {
	tau, err := DelayOf(d.series[i], d.grid())
	if err != nil {
		return nil, &SeriesError{i, d.series[i].Name, err}
	}
	return tau, nil
}

// DelayOf returns what a group-delay panel draws for s on omega, from package analysis:
// a filter's delay from its poles and zeros (analysis.GroupDelayOf), a kernel's by the
// exact derivative of its phase (analysis.KernelGroupDelay). The workbench shows the same.
func DelayOf(s Series, omega []float64) ([]float64, error) {
	if s.Kernel != nil {
		return analysis.KernelGroupDelay(s.Kernel, omega).Tau, nil
	}
	g, err := analysis.GroupDelayOf(s.Filter, omega)
	if err != nil {
		return nil, fmt.Errorf("group delay: %w", err)
	}
	return g.Tau, nil
}

func (d *seriesData) frequencyPanel(k Kind) (*plot.Plot, error) {
	omega := d.grid()
	x := make([]float64, len(omega))
	for i, w := range omega {
		x[i] = w / math.Pi
	}
	var p *plot.Plot
	switch k {
	case Magnitude:
		p = newPanel("magnitude", "ω/π", "|H| (dB)")
	case Phase:
		p = newPanel("phase", "ω/π", "phase / π (unwrapped)")
	default:
		p = newPanel("group delay", "ω/π", "τ (samples)")
	}
	top, bottom := math.Inf(-1), math.Inf(1)
	var left []int
	for i := range d.series {
		if d.response(i).Zero() { // no dB, phase or delay: only their floors
			left = append(left, i)
			continue
		}
		var y []float64
		var gaps []bool
		switch k {
		case Magnitude, Phase:
			r := d.response(i)
			if k == Magnitude {
				y = r.MagDB
				for _, v := range y {
					top, bottom = math.Max(top, v), math.Min(bottom, v)
				}
			} else {
				y = make([]float64, len(r.Phase))
				for j, v := range r.Phase {
					y[j] = v / math.Pi
				}
				// The phase is undefined where H is 0 or infinite (a zero or pole on the unit
				// circle at a grid point): a gap, not the previous point's value, which drew
				// every high-pass filter's phase from 0 at ω = 0.
				gaps = r.Masked
			}
		default:
			var err error
			if y, err = d.delay(i); err != nil {
				return nil, err
			}
		}
		for _, run := range runs(len(y), gaps) {
			if err := addLine(p, x[run[0]:run[1]], y[run[0]:run[1]], seriesStyle(i), run[1]-run[0] == 1); err != nil {
				return nil, &SeriesError{i, d.series[i].Name, err}
			}
		}
	}
	p.Title.Text += d.zeroNote(left, "H") + d.steadyStateNote()
	if k == Magnitude && top >= bottom {
		p.Y.Min, p.Y.Max = math.Max(bottom, top-DynamicRangeDB), top
	}
	if d.o.Log {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
		p.X.Min, p.X.Max = x[0], 1
	} else {
		p.X.Min, p.X.Max = 0, 1
	}
	return p, nil
}

func (d *seriesData) poleZeroPanel() (*plot.Plot, error) {
	type roots struct{ poles, zeros []complex128 }
	all := make([]*roots, len(d.series))
	have := false
	for i, s := range d.series {
		if s.Filter == nil {
			continue // a kernel has no poles or zeros
		}
		poles, err := filters.Poles(s.Filter)
		if err != nil {
			return nil, &SeriesError{i, s.Name, fmt.Errorf("poles: %w", err)}
		}
		zeros, err := analysis.Zeros(s.Filter)
		if err != nil {
			return nil, &SeriesError{i, s.Name, fmt.Errorf("zeros: %w", err)}
		}
		all[i], have = &roots{poles, zeros}, true
	}
	if !have {
		return nil, fmt.Errorf("%w: a pole-zero panel needs a filter; kernels have no poles or zeros", ErrInvalid)
	}
	var every []complex128
	for _, r := range all {
		if r != nil {
			every = append(every, r.poles...)
			every = append(every, r.zeros...)
		}
	}
	p, hidden := newPoleZeroPanel("poles and zeros", every)
	for i, r := range all {
		if r == nil {
			continue
		}
		c := seriesStyle(i).Color
		if err := addRoots(p, r.poles, poleGlyph(c)); err != nil {
			return nil, &SeriesError{i, d.series[i].Name, err}
		}
		if err := addRoots(p, r.zeros, zeroGlyph(c)); err != nil {
			return nil, &SeriesError{i, d.series[i].Name, err}
		}
	}
	if hidden > 0 {
		p.Title.Text += fmt.Sprintf(" (%d beyond |z| = %g not shown)", hidden, zoomLimit)
	}
	return p, nil
}

// newPoleZeroPanel returns an empty pole–zero panel, with the unit circle and the axes, that
// shows roots up to zoomLimit, and the number of roots beyond.
func newPoleZeroPanel(title string, roots []complex128) (*plot.Plot, int) {
	m, hidden := 0.0, 0
	for _, r := range roots {
		if a := cmplx.Abs(r); a > zoomLimit {
			hidden++
		} else {
			m = math.Max(m, a)
		}
	}
	lim := math.Max(1.15, 1.08*m)
	p := newPanel(title, "Re z", "Im z")
	light := draw.LineStyle{Color: color.Gray{Y: 170}, Width: vg.Points(0.5)}
	axes := []*plotter.Line{mustLine(xy{[]float64{-lim, lim}, []float64{0, 0}}, light), mustLine(xy{[]float64{0, 0}, []float64{-lim, lim}}, light)}
	const n = 256
	cx, cy := make([]float64, n+1), make([]float64, n+1)
	for i := range cx {
		s, c := math.Sincos(2 * math.Pi * float64(i%n) / n)
		cx[i], cy[i] = c, s
	}
	circle := mustLine(xy{cx, cy}, draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(0.75), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}})
	p.Add(axes[0], axes[1], circle)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -lim, lim, -lim, lim
	return p, hidden
}

func addRoots(p *plot.Plot, roots []complex128, g draw.GlyphStyle) error {
	var x, y []float64
	for _, r := range roots {
		if cmplx.Abs(r) <= zoomLimit {
			x, y = append(x, real(r)), append(y, imag(r))
		}
	}
	if len(x) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(xy{x, y})
	if err != nil {
		return err
	}
	s.GlyphStyle = g
	p.Add(s)
	return nil
}

// newPanel returns an empty panel with a light grid.
func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.X.Tick.Marker, p.Y.Tick.Marker = linTicks{}, linTicks{}
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = 12
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// addLine adds the line (x, y) to p; plotter.NewLine rejects NaN and infinities.
func addLine(p *plot.Plot, x, y []float64, st draw.LineStyle, markers bool) error {
	l, err := plotter.NewLine(xy{x, y})
	if err != nil {
		return err
	}
	l.LineStyle = st
	p.Add(l)
	if markers {
		s, err := plotter.NewScatter(xy{x, y})
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
		p.Add(s)
	}
	return nil
}

// runs returns the [start, end) index ranges of the points of 0 … n−1 not in gaps (all of them
// when gaps is nil).
func runs(n int, gaps []bool) [][2]int {
	var out [][2]int
	for i := 0; i < n; {
		if gaps != nil && gaps[i] {
			i++
			continue
		}
		j := i
		for j < n && (gaps == nil || !gaps[j]) {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// mustLine is addLine's constructor for the figure's own finite lines.
func mustLine(d xy, st draw.LineStyle) *plotter.Line {
	l, err := plotter.NewLine(d)
	if err != nil {
		panic("figures: " + err.Error())
	}
	l.LineStyle = st
	return l
}

// mustScatter is mustLine's marker counterpart: a marker g at each of the figure's own
// finite points.
func mustScatter(d xy, g draw.GlyphStyle) *plotter.Scatter {
	s, err := plotter.NewScatter(d)
	if err != nil {
		panic("figures: " + err.Error())
	}
	s.GlyphStyle = g
	return s
}

// xy is the plotter.XYer of two slices of the same length.
type xy struct{ x, y []float64 }

func (d xy) Len() int                    { return len(d.x) }
func (d xy) XY(i int) (float64, float64) { return d.x[i], d.y[i] }

// ramp returns 0, 1, …, n-1.
func ramp(n int) []float64 {
	t := make([]float64, n)
	for i := range t {
		t[i] = float64(i)
	}
	return t
}
