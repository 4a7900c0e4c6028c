package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ssmlab/ssmlab/sessions"
)

// jobsPane is the jobs pane: the session's jobs with progress bars, and the loss curve of
// the selected job when there is room.
type jobsPane struct {
	m             *Model
	width, height int
	sel           int
	seen          int // how many jobs sync saw: a new one is selected
	ladderTop     int // the first order whose figures the selected job's ladder shows
	bar           progress.Model
}

func newJobs(m *Model) *jobsPane {
	return &jobsPane{m: m, bar: progress.New(progress.WithSolidFill("#7D56F4"), progress.WithoutPercentage(), progress.WithFillCharacters('█', '░'))}
}

func (j *jobsPane) setSize(w, h int) { j.width, j.height = w, h }

func (j *jobsPane) title() string {
	if n := j.m.running(); n > 0 {
		return fmt.Sprintf("jobs (%d running)", n)
	}
	return "jobs"
}

func (j *jobsPane) capture(tea.KeyMsg) (tea.Cmd, bool) { return nil, false }
func (j *jobsPane) hint() string                       { return "" }

// sync selects a job just started.
func (j *jobsPane) sync() {
	if n := len(j.m.jobs); n > j.seen {
		j.sel, j.ladderTop = n-1, 0
	}
	j.seen = len(j.m.jobs)
	j.sel = max(0, min(j.sel, len(j.m.jobs)-1))
}

func (j *jobsPane) selected() *job {
	if j.sel < 0 || j.sel >= len(j.m.jobs) {
		return nil
	}
	return j.m.jobs[j.sel]
}

func (j *jobsPane) bindings() []binding {
	k, m := j.m.keys, j.m
	return []binding{
		{key: k.Up, run: func(tea.KeyMsg) tea.Cmd { j.sel, j.ladderTop = max(0, j.sel-1), 0; return nil }},
		{key: k.Down, run: func(tea.KeyMsg) tea.Cmd { j.sel, j.ladderTop = min(len(m.jobs)-1, j.sel+1), 0; return nil }},
		{key: k.PageUp, run: func(tea.KeyMsg) tea.Cmd { j.pageLadder(-1); return nil }},
		{key: k.PageDown, run: func(tea.KeyMsg) tea.Cmd { j.pageLadder(1); return nil }},
		{key: k.NewJob, run: func(tea.KeyMsg) tea.Cmd {
			cmd, err := m.openJobForm()
			m.setError(err)
			return cmd
		}, short: true},
		{key: k.Cancel, run: func(tea.KeyMsg) tea.Cmd { m.setError(m.askCancel(j.selected())); return nil }, short: true},
		{key: k.Show, run: func(tea.KeyMsg) tea.Cmd { j.show(); return nil }, short: true},
	}
}

// pageLadder pages through the figures of the selected job's ladder (sign -1 up, 1 down),
// where its view lacks the room for every order's (ladderLayout).
func (j *jobsPane) pageLadder(sign int) {
	sel := j.selected()
	if sel == nil || sel.report.Ladder == nil {
		return
	}
	n := len(sel.report.Ladder.Orders)
	if _, shown, scroll := ladderLayout(n, j.curveHeight(sel)); scroll {
		j.ladderTop = max(0, min(j.ladderTop+sign*shown, n-shown))
	}
}

// show selects the selected job's result and draws it over its target.
func (j *jobsPane) show() {
	m := j.m
	x := j.selected()
	if x == nil {
		return
	}
	if x.state() != sessions.JobDone || m.entry(x.resultID) == nil {
		m.setStatus(levelInfo, "this job has no result to show")
		return
	}
	m.sel = x.resultID
	m.overlayOn = true
	m.setFocus(panePlots)
	m.setStatus(levelInfo, "showing the result over its target (o toggles the overlay)")
}

// summary is the status bar's note on running jobs.
func (j *jobsPane) summary() string {
	for _, x := range j.m.jobs {
		if x.state() == sessions.JobRunning {
			s := fmt.Sprintf("job #%d %d%%", x.num, int(100*fraction(x.last)))
			if n := j.m.running(); n > 1 {
				s += fmt.Sprintf(" (+%d)", n-1)
			}
			return s
		}
	}
	return ""
}

// eta is a running job's " ETA 12s" ("" before its first step).
func (x *job) eta() string {
	if x.last.Step > 0 {
		return " ETA " + dur(x.last.ETA)
	}
	return ""
}

// fraction is how far a job is.
func fraction(p JobProgress) float64 {
	if p.Steps > 0 {
		return float64(p.Step) / float64(p.Steps)
	}
	return 0
}

func statusText(st *styles, s sessions.JobStatus) string {
	switch s {
	case sessions.JobRunning:
		return st.accent.Render("running")
	case sessions.JobDone:
		return st.ok.Render("done")
	case sessions.JobCancelled, sessions.JobInterrupted:
		return st.warn.Render(string(s))
	case sessions.JobFailed:
		return st.err.Render("failed")
	}
	return st.dim.Render("recorded")
}

// jobLines is how many lines a job takes: a heading, then a progress bar and its numbers
// (running) or the outcome.
func jobLines(x *job) int {
	if x.state() == sessions.JobRunning {
		return 3
	}
	return 2
}

func (j *jobsPane) view(focused bool) string {
	m := j.m
	st := m.st
	w, h := j.width, j.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if len(m.jobs) == 0 {
		return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(st.dim.Render(firstFit(w, j.emptyHints()...)))
	}
	sel := j.selected()
	curveH := j.curveHeight(sel)
	room := h - curveH
	// scroll so that the selected job is visible
	first, used := j.sel, 0
	for first > 0 && used+jobLines(m.jobs[first]) <= room {
		used += jobLines(m.jobs[first])
		first--
	}
	if used+jobLines(m.jobs[first]) > room {
		first++
	}
	first = max(0, min(first, j.sel))
	var lines []string
	for i := first; i < len(m.jobs) && len(lines)+jobLines(m.jobs[i]) <= room; i++ {
		lines = append(lines, j.jobView(m.jobs[i], i == j.sel, focused)...)
	}
	if len(lines) == 0 && sel != nil && room > 0 {
		// a pane too short for the selected job's lines shows what it can of them, its
		// progress first (it was blank while a job ran)
		v := j.jobView(sel, true, focused)
		if room == 1 && sel.state() == sessions.JobRunning {
			v = []string{ansi.Truncate(fmt.Sprintf("%s#%d %s %d%%%s", st.cursorMark(true, focused), sel.num, sel.spec.Model, int(100*fraction(sel.last)), sel.eta()), w, "…")}
		}
		lines = v[:min(room, len(v))]
	}
	for len(lines) < room {
		lines = append(lines, "")
	}
	if curveH > 0 && sel.report.Ladder != nil {
		lines = append(lines, ladderView(sel.report.Ladder, sel.num, w, curveH, j.ladderTop, st)...)
	} else if curveH > 0 {
		lines = append(lines, ansi.Truncate(st.dim.Render(fmt.Sprintf("loss of #%d (log₁₀, per progress event)", sel.num)), w, "…"))
		lo, hi := niceRange(false, sel.losses)
		spec := chartSpec{xmin: 0, xmax: float64(len(sel.losses) - 1), ymin: lo, ymax: hi,
			series: []series{{y: sel.losses, x0: 0, dx: 1, style: st.series}}, logY: true}
		// No x labels worth reading: steps are in the job line. ntcharts labels the first
		// column still, and a lone "0" under the axis read as a scale.
		spec.xstep, spec.xfmt = 1000, func(int, float64) string { return "" }
		lines = append(lines, drawChart(spec, w, curveH-1, st))
	}
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(strings.Join(lines, "\n"))
}

// emptyHints are the empty pane's line, longest first: what D distils, named as the
// selection is (a filter, a bank, or a target's kernels).
func (j *jobsPane) emptyHints() []string {
	e := j.m.selected()
	if e == nil {
		return []string{"no jobs"}
	}
	what := "filter"
	switch e.kind {
	case kindBank:
		what = "bank"
	case kindKernel:
		what = e.fitted()
	}
	return []string{"no jobs · D distills the selected " + what, "D distills the selected " + what, "D distills the " + what}
}

// firstFit is the first of forms (longest first) that fits in w cells, else the last cut to w.
func firstFit(w int, forms ...string) string {
	for _, s := range forms {
		if ansi.StringWidth(s) <= w {
			return s
		}
	}
	return ansi.Truncate(forms[len(forms)-1], w, "…")
}

// curveHeight is the room below the jobs for the selected job's loss curve or ladder: 0
// where there is none or the pane lacks the room.
func (j *jobsPane) curveHeight(sel *job) int {
	need := 0
	for _, x := range j.m.jobs {
		need += jobLines(x)
	}
	switch {
	case j.height-need < 7 || sel == nil:
		return 0
	case sel.report.Ladder != nil:
		return min(ladderHeight(sel.report.Ladder), j.height-need)
	case len(sel.losses) > 1:
		return min(10, j.height-need)
	}
	return 0
}

// jobView is a job's lines: its heading, and its progress or outcome.
func (j *jobsPane) jobView(x *job, selected, focused bool) []string {
	st, w := j.m.st, j.width
	mark := st.cursorMark(selected, focused)
	state := statusText(st, x.state())
	// The state stays; a long name gives way to it.
	room := w - ansi.StringWidth(mark+" "+state)
	lines := []string{ansi.Truncate(mark+jobHeading(x, j.m.sourceName(x), room)+" "+state, w, "…")}
	switch x.state() {
	case sessions.JobRunning:
		pct := fraction(x.last)
		eta := x.eta()
		j.bar.Width = max(4, min(30, w-8-len(eta)))
		lines = append(lines, ansi.Truncate(fmt.Sprintf("  %s %3d%%%s", j.bar.ViewAs(pct), int(100*pct), eta), w, ""))
		lines = append(lines, st.dim.Render(firstFit(w, progressForms(x.last)...)))
	case sessions.JobDone:
		r := x.report
		// The worst channel's: said so, as the status line beside it gives the mean first.
		s := fmt.Sprintf("  worst error %s · %s", sci(r.MaxRelError), dur(time.Duration(r.Seconds*float64(time.Second))))
		if !r.Stable {
			s += " · " + st.unstable.Render("unstable")
		}
		if len(r.Warnings) > 0 {
			s += " · " + st.warn.Render(fmt.Sprintf("%d warnings", len(r.Warnings)))
		}
		lines = append(lines, ansi.Truncate(s, w, "…"))
	case sessions.JobFailed:
		lines = append(lines, ansi.Truncate("  "+st.err.Render(x.report.Error), w, "…"))
	case sessions.JobInterrupted:
		// Its step is the last save's, not where it stopped: progress is not saved.
		lines = append(lines, st.dim.Render(ansi.Truncate("  not resumed", w, "…")))
	default:
		lines = append(lines, st.dim.Render(ansi.Truncate(fmt.Sprintf("  at step %d/%d", x.last.Step, x.last.Steps), w, "…")))
	}
	return lines
}

// jobHeading is a job's heading in room cells: "#2 butter4→rtf16". A long name gives way,
// down to a few cells, to the model and the order, which tell the jobs of one filter apart:
// cut from its end, the heading of every job of hippo-legs64 read "hippo-legs64→rt…".
func jobHeading(x *job, name string, room int) string {
	const nameKeeps, nameLeast = 8, 3 // cells of a long name: before the order gives way, at least
	prefix, model := fmt.Sprintf("#%d ", x.num), "→"+string(x.spec.Model)
	fixed := ansi.StringWidth(prefix + model)
	order := x.orderText(room - fixed - min(ansi.StringWidth(name), nameKeeps))
	if nameRoom := room - fixed - ansi.StringWidth(order); nameRoom >= min(ansi.StringWidth(name), nameLeast) {
		return prefix + ansi.Truncate(name, nameRoom, "…") + model + order
	}
	head := prefix + name + model
	return ansi.Truncate(head+x.orderText(room-ansi.StringWidth(head)), max(room, 1), "…")
}

// progressForms are a running job's numbers, longest first: the loss, the error, for a fit
// by variable projection the order and channels they are of (each channel fits its orders
// in turn: they are of those at the highest order), the step. The narrow ones, for the
// normal layout's pane, keep the order and the error.
func progressForms(p JobProgress) []string {
	errText, short := "loss "+sci(p.Loss), "loss "+sci(p.Loss)
	full := errText
	if p.RelErr > 0 && !math.IsInf(p.RelErr, 0) {
		errText, short = "rel error "+sci(p.RelErr), "err "+sci(p.RelErr)
		full += " · " + errText
	}
	step := fmt.Sprintf("step %d/%d", p.Step, p.Steps)
	if p.Order == 0 {
		return []string{"  " + full + " · " + step, "  " + errText + " · " + step, "  " + errText, short}
	}
	order := fmt.Sprintf("order %d/%d", p.Order, p.TopOrder)
	return []string{
		fmt.Sprintf("  %s · %s, %d/%d channels · %s", full, order, p.Fitted, p.Channels, step),
		"  " + order + " · " + errText,
		"  " + order + " · " + short,
		order + " " + short,
		fmt.Sprintf("%d/%d %s", p.Order, p.TopOrder, short),
	}
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
