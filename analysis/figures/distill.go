package figures

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/filters"
)

// Distillation is what NewDistillation draws: the kernels a job fitted and the filters it
// fitted to them, channel by channel (train.Result and train.Report hold them; this package
// takes the plain data so as not to depend on train).
type Distillation struct {
	// Targets are the target kernels, one per channel.
	Targets [][]float64
	// Fitted are the fitted filters, one per channel.
	Fitted []filters.Filter
	// RelErrors are the channels' relative L2 errors as the job reported them
	// (train.ChannelReport.RelError). When nil, they are measured here over each target's
	// length: ‖h − k‖₂ / ‖k‖₂, with h the fitted filter's impulse response and k the target.
	RelErrors []float64
}

// MaxChannelPanels is the number of channels NewDistillation gives a panel of their own; the
// error and pole panels show every channel.
const MaxChannelPanels = 12

// errorFloor is where the error panel's log axis stops (an exact fit has error 0).
const errorFloor = 1e-17

// NewDistillation returns the one-figure summary of a distillation: for each channel (up to
// MaxChannelPanels) the target kernel and the fitted filter's impulse response over the
// target's length (Options.Length shortens it; Options.Log draws |h| on a log axis), the
// relative error of every channel on a log axis, and the poles of every fitted filter with
// the unit circle. Options.Points is not used.
func NewDistillation(d Distillation, o Options) (*Figure, error) {
	if err := checkOptions(o); err != nil {
		return nil, err
	}
	n := len(d.Targets)
	switch {
	case n == 0:
		return nil, fmt.Errorf("%w: no channels", ErrInvalid)
	case len(d.Fitted) != n:
		return nil, fmt.Errorf("%w: %d targets but %d fitted filters", ErrInvalid, n, len(d.Fitted))
	case d.RelErrors != nil && len(d.RelErrors) != n:
		return nil, fmt.Errorf("%w: %d channels but %d errors", ErrInvalid, n, len(d.RelErrors))
	}
	for i := range n {
		var err error
		switch {
		case checkKernel(d.Targets[i]) != nil:
			err = fmt.Errorf("target: %v", checkKernel(d.Targets[i]))
		case d.Fitted[i] == nil:
			err = fmt.Errorf("no fitted filter")
		case d.Fitted[i].Validate() != nil:
			err = fmt.Errorf("fitted filter: %v", d.Fitted[i].Validate())
		case d.RelErrors != nil && !(d.RelErrors[i] >= 0 && !math.IsInf(d.RelErrors[i], 0)):
			err = fmt.Errorf("relative error %v", d.RelErrors[i])
		}
		if err != nil {
			return nil, channelError(i, fmt.Errorf("%w: %v", ErrInvalid, err))
		}
	}

	errs := make([]float64, n)
	var panels []cell
	for i := range n {
		k := d.Targets[i]
		h, err := analysis.Impulse(nil, d.Fitted[i], len(k), analysis.Recurrence)
		if err != nil {
			return nil, channelError(i, fmt.Errorf("impulse response: %w", err))
		}
		if d.RelErrors != nil {
			errs[i] = d.RelErrors[i]
		} else {
			errs[i] = filters.RelDiff(k, h)
		}
		if i >= MaxChannelPanels {
			continue
		}
		l := len(k)
		if o.Length > 0 {
			l = min(l, o.Length)
		}
		p := newPanel(fmt.Sprintf("channel %d: rel. error %.2g", i, errs[i]), "t (samples)", "h[t]")
		if o.Log {
			p.Y.Label.Text = "|h[t]|"
		}
		styles := func(j int) draw.LineStyle {
			if j == 0 {
				return targetStyle()
			}
			return channelStyle(i)
		}
		if _, err := addImpulses(p, [][]float64{k[:l], h[:l]}, o.Log, styles); err != nil {
			return nil, channelError(i, err)
		}
		p.X.Min, p.X.Max = 0, float64(max(l-1, 1))
		panels = append(panels, cell{p: p})
	}
	shown := len(panels)

	ep, err := errorPanel(errs)
	if err != nil {
		return nil, err
	}
	pp, err := polesPanel(d.Fitted)
	if err != nil {
		return nil, err
	}

	cols := o.Columns
	if cols == 0 {
		switch {
		case shown <= 4:
			cols = 2
		case shown <= 9:
			cols = 3
		default:
			cols = 4
		}
	}
	cols = max(cols, 2) // the summary row holds two panels
	fig := &Figure{title: o.Title, panelCount: shown + 2}
	fig.cells = grid(panels, cols)
	if len(fig.cells[0]) < cols {
		fig.cells[0] = append(fig.cells[0], make([]cell, cols-len(fig.cells[0]))...)
	}
	summary := make([]cell, cols)
	summary[0], summary[1] = cell{p: ep}, cell{p: pp, square: true}
	fig.cells = append(fig.cells, summary)

	fig.legend = append(fig.legend, legendEntry{"target", lineThumb(targetStyle())})
	for i := range shown {
		fig.legend = append(fig.legend, legendEntry{fmt.Sprintf("channel %d fit", i), lineThumb(channelStyle(i))})
	}
	if shown < n {
		fig.legend = append(fig.legend, legendEntry{fmt.Sprintf("(channels %d-%d: errors and poles only)", shown, n-1), noThumb{}})
	}
	fig.legend = append(fig.legend, legendEntry{"poles", glyphThumb(poleGlyph(color.Black))})
	if err := fig.layout(o, false); err != nil {
		return nil, err
	}
	return fig, nil
}

// errorAxis makes p's y axis a log axis of relative errors from lo to hi, with a margin:
// at least two decades, so that it has labelled ticks.
func errorAxis(p *plot.Plot, lo, hi float64) {
	if hi/lo < 100 {
		mid := math.Sqrt(hi * lo)
		lo, hi = mid/10, mid*10
	}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	p.Y.Min, p.Y.Max = lo/2, hi*2
}

func channelError(i int, err error) error {
	return &SeriesError{Index: i, Name: fmt.Sprintf("channel %d", i), Err: err}
}

// errorPanel draws each channel's relative error as a marker in its colour, on a log axis.
func errorPanel(errs []float64) (*plot.Plot, error) {
	p := newPanel("relative L2 error per channel", "channel", "relative error")
	lo, hi := math.Inf(1), 0.0
	for i, e := range errs {
		e = math.Max(e, errorFloor)
		lo, hi = math.Min(lo, e), math.Max(hi, e)
		s, err := plotter.NewScatter(xy{[]float64{float64(i)}, []float64{e}})
		if err != nil {
			return nil, channelError(i, fmt.Errorf("relative error: %w", err))
		}
		s.GlyphStyle = draw.GlyphStyle{Color: palette[i%len(palette)], Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(s)
	}
	errorAxis(p, lo, hi)
	p.X.Min, p.X.Max = -0.5, float64(len(errs))-0.5
	p.X.Tick.Marker = intTicks{}
	return p, nil
}

// polesPanel draws the poles of every fitted filter in its channel's colour.
func polesPanel(fitted []filters.Filter) (*plot.Plot, error) {
	poles := make([][]complex128, len(fitted))
	var every []complex128
	for i, f := range fitted {
		ps, err := filters.Poles(f)
		if err != nil {
			return nil, channelError(i, fmt.Errorf("poles: %w", err))
		}
		poles[i] = ps
		every = append(every, ps...)
	}
	p, hidden := newPoleZeroPanel("poles of the fitted filters", every)
	for i, ps := range poles {
		if err := addRoots(p, ps, poleGlyph(palette[i%len(palette)])); err != nil {
			return nil, channelError(i, err)
		}
	}
	if hidden > 0 {
		p.Title.Text += fmt.Sprintf(" (%d beyond |z| = %g not shown)", hidden, zoomLimit)
	}
	return p, nil
}

// intTicks label whole numbers only (channel numbers): every one up to 20 of them, else
// every 2nd, 5th, 10th, … so that about ten are labelled.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000} {
		step = s
		if (last-first)/s <= 20 {
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(first/step) * step; v <= last; v += step {
		if v == 0 {
			v = 0 // not -0
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return out
}
