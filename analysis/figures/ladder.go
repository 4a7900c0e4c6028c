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
)

// Ladder is what NewLadder draws: fits of one bank at several orders (train.Ladder holds
// them; this package takes the plain data so as not to depend on train).
type Ladder struct {
	// Orders are the fitted orders, ascending.
	Orders []int `json:"orders"`
	// Errors[k][ch] is channel ch's relative error at Orders[k], and Bounds[k][ch] the
	// lower bound on the error of any filter of that order on that channel (0: none known).
	Errors [][]float64 `json:"errors"`
	Bounds [][]float64 `json:"bounds"`
}

// NewLadder returns the figure of error against order: each channel's relative error in its
// colour, the mean error, and beside it the mean lower bound on the error of any filter of
// the order, on a log axis, so that the distance to what is possible reads off at each
// order. Orders are drawn on a log axis (they usually double).
func NewLadder(l Ladder, o Options) (*Figure, error) {
	if err := checkOptions(o); err != nil {
		return nil, err
	}
	n := len(l.Orders)
	switch {
	case n == 0:
		return nil, fmt.Errorf("%w: no orders", ErrInvalid)
	case len(l.Errors) != n || len(l.Bounds) != n:
		return nil, fmt.Errorf("%w: %d orders but %d rows of errors and %d of bounds", ErrInvalid, n, len(l.Errors), len(l.Bounds))
	}
	channels := len(l.Errors[0])
	for k := range n {
		if l.Orders[k] < 1 || k > 0 && l.Orders[k] <= l.Orders[k-1] {
			return nil, fmt.Errorf("%w: orders %v are not positive and ascending", ErrInvalid, l.Orders)
		}
		if len(l.Errors[k]) != channels || len(l.Bounds[k]) != channels || channels == 0 {
			return nil, fmt.Errorf("%w: order %d has %d errors and %d bounds, want %d of each", ErrInvalid, l.Orders[k], len(l.Errors[k]), len(l.Bounds[k]), max(channels, 1))
		}
		for ch := range channels {
			for _, v := range []float64{l.Errors[k][ch], l.Bounds[k][ch]} {
				if !(v >= 0) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("%w: order %d, channel %d: %v is not an error", ErrInvalid, l.Orders[k], ch, v)
				}
			}
		}
	}
	x := make([]float64, n)
	meanErr, meanBound := make([]float64, n), make([]float64, n)
	lo, hi := math.Inf(1), 0.0
	for k := range n {
		x[k] = float64(l.Orders[k])
		for ch := range channels {
			meanErr[k] += l.Errors[k][ch] / float64(channels)
			meanBound[k] += l.Bounds[k][ch] / float64(channels)
			for _, v := range []float64{l.Errors[k][ch], l.Bounds[k][ch]} {
				if v > 0 {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	if hi == 0 {
		lo, hi = errorFloor, 1
	}
	lo = math.Max(lo, errorFloor)
	// The one panel goes untitled: the figure's title names it.
	p := newPanel("", "order n", "relative L2 error")
	floor := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, e := range v {
			out[i] = math.Max(e, lo/2)
		}
		return out
	}
	shown := min(channels, MaxChannelPanels)
	for ch := range shown {
		e := make([]float64, n)
		for k := range n {
			e[k] = l.Errors[k][ch]
		}
		st := channelStyle(ch)
		st.Width = vg.Points(0.6)
		line, points, err := plotter.NewLinePoints(xy{x, floor(e)})
		if err != nil {
			return nil, channelError(ch, err)
		}
		line.LineStyle = st
		points.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
		p.Add(line, points)
	}
	// Each order is marked: a line through one point (a ladder of one order, a bound above 0
	// at one order alone) draws nothing.
	p.Add(mustLine(xy{x, floor(meanErr)}, meanErrorStyle()), mustScatter(xy{x, floor(meanErr)}, meanErrorGlyph()))
	var bx, by []float64 // a zero bound is left out: at the log axis' floor it reads as measured
	for k, b := range meanBound {
		if b > 0 {
			bx, by = append(bx, x[k]), append(by, b)
		}
	}
	if len(bx) > 0 {
		p.Add(mustLine(xy{bx, floor(by)}, boundStyle()), mustScatter(xy{bx, floor(by)}, boundGlyph()))
	}
	errorAxis(p, lo, hi)
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, orderTicks(l.Orders)
	p.X.Min, p.X.Max = x[0]/1.2, x[n-1]*1.2

	fig := &Figure{title: o.Title, panelCount: 1}
	fig.cells = [][]cell{{{p: p}}}
	fig.legend = append(fig.legend,
		legendEntry{"mean error", lineGlyphThumb{meanErrorStyle(), meanErrorGlyph()}},
		legendEntry{"mean lower bound (any filter of the order)" + BoundNote(l.Orders, meanBound), lineGlyphThumb{boundStyle(), boundGlyph()}})
	for ch := range shown {
		fig.legend = append(fig.legend, legendEntry{fmt.Sprintf("channel %d", ch), lineThumb(channelStyle(ch))})
	}
	if shown < channels {
		fig.legend = append(fig.legend, legendEntry{fmt.Sprintf("(channels %d-%d: in the mean only)", shown, channels-1), noThumb{}})
	}
	if err := fig.layout(o, false); err != nil {
		return nil, err
	}
	return fig, nil
}

// BoundNote says from which order the mean lower bound is 0, which a log axis cannot show:
// ", 0 from order 4 (not drawn)", or "" where no bound is 0. The figure and the workbench's
// ladder view both leave zero bounds out of the bound's line and say so with it.
func BoundNote(orders []int, meanBounds []float64) string {
	for k, b := range meanBounds {
		if b == 0 {
			return fmt.Sprintf(", 0 from order %d (not drawn)", orders[k])
		}
	}
	return ""
}

func meanErrorStyle() draw.LineStyle {
	return draw.LineStyle{Color: color.Black, Width: vg.Points(2)}
}

func boundStyle() draw.LineStyle {
	return draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
}

// meanErrorGlyph and boundGlyph mark the two means at each order: a filled square and a
// ring, unlike the channels' dots.
func meanErrorGlyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: draw.BoxGlyph{}}
}

func boundGlyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: color.Gray{Y: 110}, Radius: vg.Points(3.5), Shape: ringGlyph{}}
}

// orderTicks labels the fitted orders.
type orderTicks []int

func (t orderTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, n := range t {
		if v := float64(n); v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: strconv.Itoa(n)})
		}
	}
	return out
}
