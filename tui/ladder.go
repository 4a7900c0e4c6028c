package tui

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/train"
)

// A ladder job fits one target at several orders (train.FitLadder, as ssmlab distill
// --orders): the jobs pane draws the mean error against the order with the mean lower bound
// on the error of any filter of that order beside it (issue 23's "error against order with
// the bound beside it"), as ssmlab plot --ladder draws figures.Ladder.

// parseOrders reads a ladder's orders, "4,8,16": whole numbers whose range is the ladder's
// (train.CheckLadderOrders, as distill --orders says it), without repeats, sorted.
func parseOrders(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("orders %q: want whole numbers separated by commas, such as 4,8,16", s)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if err := train.CheckLadderOrders(out); err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

// statusOrders is the widest list of orders the status line names a started ladder by, so
// that the line keeps its hint.
const statusOrders = 24

// orderText is the job's order as the jobs pane and the log name it: "8", or "4,8,16"; a
// ladder of more than three orders whose list is wider than room is named by its ends,
// "1,2,…,40", else "1…40", so that the job's heading keeps its state.
func (j *job) orderText(room int) string {
	if len(j.orders) == 0 {
		return strconv.Itoa(j.spec.Order)
	}
	parts := make([]string, len(j.orders))
	for i, n := range j.orders {
		parts[i] = strconv.Itoa(n)
	}
	n := len(parts)
	full := strings.Join(parts, ",")
	if n <= 3 || len(full) <= room {
		return full
	}
	if ends := parts[0] + "," + parts[1] + ",…," + parts[n-1]; ansi.StringWidth(ends) <= room {
		return ends
	}
	return parts[0] + "…" + parts[n-1]
}

// finiteLadder reports whether every error and bound is a number JSON can hold.
func finiteLadder(l *figures.Ladder) bool {
	for _, rows := range [][][]float64{l.Errors, l.Bounds} {
		for _, row := range rows {
			for _, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return false
				}
			}
		}
	}
	return len(l.Errors) == len(l.Orders) && len(l.Bounds) == len(l.Orders)
}

// ladderMeans are the mean error and the mean bound over the channels at each order.
func ladderMeans(l *figures.Ladder) (errs, bounds []float64) {
	errs, bounds = make([]float64, len(l.Orders)), make([]float64, len(l.Orders))
	for k := range l.Orders {
		for ch := range l.Errors[k] {
			errs[k] += l.Errors[k][ch] / float64(len(l.Errors[k]))
			bounds[k] += l.Bounds[k][ch] / float64(len(l.Bounds[k]))
		}
	}
	return errs, bounds
}

// ladderSummary is one line: each order's mean error and, after ≥, its mean bound.
func ladderSummary(l *figures.Ladder) string {
	errs, bounds := ladderMeans(l)
	parts := make([]string, len(l.Orders))
	for k, n := range l.Orders {
		parts[k] = fmt.Sprintf("n=%d %s ≥ %s", n, sci(errs[k]), sci(bounds[k]))
	}
	return "error ≥ bound: " + strings.Join(parts, ", ")
}

// The ladder's chart takes ladderChartRows rows where the pane has room, and at least
// ladderMinChart.
const (
	ladderChartRows = 10
	ladderMinChart  = 4
)

// ladderHeight is the room a ladder's view asks for: its heading, its chart and a line of
// figures for each order.
func ladderHeight(l *figures.Ladder) int { return 1 + ladderChartRows + len(l.Orders) }

// ladderLayout splits a ladder's view of h rows (n orders) below its heading: the chart's
// rows and how many orders' figures show. Where not all fit under a chart of ladderMinChart
// rows, the chart keeps half and a last line says which orders show (scroll: pgup/pgdn
// page through them); a view too low for one order's figures is the chart alone.
func ladderLayout(n, h int) (chart, shown int, scroll bool) {
	h-- // the heading
	if h-n >= ladderMinChart {
		return h - n, n, false
	}
	chart = max(ladderMinChart, h/2)
	if shown = h - chart - 1; shown < 1 {
		return h, 0, false // the status line and the message log (M) have the figures
	}
	return chart, shown, true
}

// ladderView draws a ladder in w×h cells: a heading, the chart of log₁₀ of the mean error
// (upper) and of the mean lower bound (lower) against the order on a log axis, and, room
// permitting, each order's figures from the top-th on (ladderLayout).
func ladderView(l *figures.Ladder, num, w, h, top int, st *styles) []string {
	errs, bounds := ladderMeans(l)
	logs := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = math.NaN() // a zero bound is left out (figures.BoundNote), not drawn at a floor
			if x > 0 {
				out[i] = math.Log10(math.Max(x, 1e-16))
			}
		}
		return out
	}
	xs := make([]float64, len(l.Orders))
	for k, n := range l.Orders {
		xs[k] = math.Log2(float64(n))
	}
	le, lb := logs(errs), logs(bounds)
	lo, hi := niceRange(false, append(slices.Clone(le), lb...))
	spec := chartSpec{xmin: xs[0], xmax: xs[len(xs)-1], ymin: lo, ymax: hi,
		series: []series{{y: lb, xs: xs, style: st.overlay}, {y: le, xs: xs, style: st.series}},
		logY:   true,
		// Ticks at powers of two (niceX, xwhole): ntcharts labels the value at every few
		// columns, which between them is no order ("20" on a ladder of 4 … 64).
		// Labels of up to 4 digits (4096) need 5 columns.
		// The top tick's label fits (xlast): ntcharts left the tick at 1024 of a ladder of
		// 2 … 1024 unlabelled in a narrow pane, which read 1 and 32 alone.
		niceX: true, xwhole: true, xgap: 5, xlast: true,
		xfmt: func(_ int, v float64) string {
			if math.Abs(v-math.Round(v)) > 1e-6 {
				return "" // no round ticks fit: no label rather than an order between two
			}
			return strconv.Itoa(int(math.Exp2(math.Round(v))))
		}}
	if len(xs) == 1 {
		spec.xmin, spec.xmax = xs[0]-1, xs[0]+1
	}
	chartH, shown, scroll := ladderLayout(len(l.Orders), h)
	top = max(0, min(top, len(l.Orders)-shown))
	lines := []string{ansi.Truncate(st.dim.Render(fmt.Sprintf("#%d error ≥ bound by order%s", num, figures.BoundNote(l.Orders, bounds))), w, "…")}
	lines = append(lines, drawChart(spec, w, chartH, st))
	for k := top; k < top+shown; k++ {
		lines = append(lines, ansi.Truncate(fmt.Sprintf("n=%-4d %s ≥ %s", l.Orders[k], sci(errs[k]), sci(bounds[k])), w, "…"))
	}
	if scroll {
		more := fmt.Sprintf("n=%d…%d of %d · pgup/pgdn", l.Orders[top], l.Orders[top+shown-1], len(l.Orders))
		lines = append(lines, ansi.Truncate(st.dim.Render(more), w, "…"))
	}
	return lines
}

// exportLadder writes the ladder of the jobs pane's selected job (else the last job that
// has one) as a figure, as ssmlab plot --ladder draws it.
func exportLadder(m *Model, path string) (tea.Cmd, error) {
	j := m.jobsPane.selected()
	if j == nil || j.report.Ladder == nil {
		j = nil
		for _, x := range m.jobs {
			if x.report.Ladder != nil {
				j = x
			}
		}
	}
	if j == nil {
		return nil, errors.New("no job has a ladder: :ladder 4,8,16 fits one")
	}
	title := fmt.Sprintf("%s: relative error against order, %d channel(s)", m.sourceName(j), len(j.report.Ladder.Errors[0]))
	m.setStatus(levelInfo, "exporting the ladder of job #"+strconv.Itoa(j.num)+" to "+path+"…")
	return exportPlot(m.deps.Figures, expandHome(path), FigureRequest{Ladder: j.report.Ladder, Title: title}), nil
}
