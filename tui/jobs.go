package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/ssmlab/ssmlab/train"
)

type jobState int

const (
	jobRunning jobState = iota
	jobDone
	jobFailed
	jobCancelled
)

// job is one distillation, running or finished.
type job struct {
	id       int
	spec     train.Spec
	sourceID int
	source   string
	state    jobState
	last     JobProgress
	losses   []float64 // log10 of the loss at each progress event
	started  time.Time
	err      error
	result   *JobResult
	resultID int
	cancel   context.CancelFunc
	chans    jobChans
}

func (j *job) status(st *styles) string {
	switch j.state {
	case jobRunning:
		return st.accent.Render("running")
	case jobDone:
		return st.ok.Render("done")
	case jobCancelled:
		return st.warn.Render("cancelled")
	}
	return st.err.Render("failed")
}

// maxLossPoints bounds a job's loss history (older points are thinned).
const maxLossPoints = 2000

func (j *job) addLoss(loss float64) {
	if loss > 0 && !math.IsInf(loss, 0) && !math.IsNaN(loss) {
		j.losses = append(j.losses, math.Log10(loss))
	}
	if len(j.losses) > maxLossPoints {
		thin := j.losses[:0]
		for i := 0; i < len(j.losses); i += 2 {
			thin = append(thin, j.losses[i])
		}
		j.losses = thin
	}
}

// jobsModel is the jobs pane: the job list with progress bars, and the loss curve of the
// selected job when there is room.
type jobsModel struct {
	c             *common
	width, height int
	jobs          []*job
	sel           int
	nextID        int
	bar           progress.Model
}

func newJobs(c *common) jobsModel {
	return jobsModel{c: c, bar: progress.New(progress.WithSolidFill("#7D56F4"), progress.WithoutPercentage(), progress.WithFillCharacters('█', '░'))}
}

func (j *jobsModel) setSize(w, h int) { j.width, j.height = w, h }

func (j *jobsModel) byID(id int) *job {
	for _, x := range j.jobs {
		if x.id == id {
			return x
		}
	}
	return nil
}

func (j *jobsModel) selected() *job {
	if j.sel < 0 || j.sel >= len(j.jobs) {
		return nil
	}
	return j.jobs[j.sel]
}

func (j *jobsModel) running() int {
	n := 0
	for _, x := range j.jobs {
		if x.state == jobRunning {
			n++
		}
	}
	return n
}

// cancelAll cancels every running job (on quit).
func (j *jobsModel) cancelAll() {
	for _, x := range j.jobs {
		if x.state == jobRunning && x.cancel != nil {
			x.cancel()
		}
	}
}

// summary is the status bar's note on running jobs.
func (j *jobsModel) summary() string {
	for _, x := range j.jobs {
		if x.state == jobRunning {
			pct := 0.0
			if x.last.Steps > 0 {
				pct = float64(x.last.Step) / float64(x.last.Steps)
			}
			s := fmt.Sprintf("job #%d %d%%", x.id, int(100*pct))
			if n := j.running(); n > 1 {
				s += fmt.Sprintf(" (+%d)", n-1)
			}
			return s
		}
	}
	return ""
}

func (j *jobsModel) view(focused bool) string {
	st := j.c.st
	w, h := j.width, j.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if len(j.jobs) == 0 {
		return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(ansi.Truncate(st.dim.Render("no jobs · D distills the selected filter"), w, "…"))
	}
	// each job: a heading, then a progress bar and its numbers (running) or the outcome
	jobLines := func(x *job) int {
		if x.state == jobRunning {
			return 3
		}
		return 2
	}
	need := 0
	for _, x := range j.jobs {
		need += jobLines(x)
	}
	sel := j.selected()
	curveH := 0
	if h-need >= 7 && sel != nil && len(sel.losses) > 1 {
		curveH = min(10, h-need)
	}
	room := h - curveH
	// scroll so that the selected job is visible
	first, used := j.sel, 0
	for first > 0 && used+jobLines(j.jobs[first]) <= room {
		used += jobLines(j.jobs[first])
		first--
	}
	if used+jobLines(j.jobs[first]) > room {
		first++
	}
	first = max(0, min(first, j.sel))
	var lines []string
	for i := first; i < len(j.jobs) && len(lines)+jobLines(j.jobs[i]) <= room; i++ {
		x := j.jobs[i]
		mark := "  "
		if i == j.sel {
			mark = "› "
			if focused {
				mark = st.accent.Render("▸ ")
			}
		}
		head := fmt.Sprintf("#%d %s→%s%d ", x.id, x.source, x.spec.Model, x.spec.Order)
		lines = append(lines, ansi.Truncate(mark+head+x.status(st), w, "…"))
		switch x.state {
		case jobRunning:
			pct := 0.0
			if x.last.Steps > 0 {
				pct = float64(x.last.Step) / float64(x.last.Steps)
			}
			eta := ""
			if x.last.Step > 0 {
				eta = " ETA " + dur(x.last.ETA)
			}
			j.bar.Width = max(4, min(30, w-8-len(eta)))
			lines = append(lines, ansi.Truncate(fmt.Sprintf("  %s %3d%%%s", j.bar.ViewAs(pct), int(100*pct), eta), w, ""))
			info := fmt.Sprintf("  loss %s · step %d/%d", sci(x.last.Loss), x.last.Step, x.last.Steps)
			lines = append(lines, ansi.Truncate(st.dim.Render(info), w, "…"))
		case jobDone:
			s := fmt.Sprintf("  rel error %s · %s", sci(x.result.MaxRelError), dur(time.Duration(x.result.Seconds*float64(time.Second))))
			if !x.result.Stable {
				s += " · " + st.unstable.Render("unstable")
			}
			if len(x.result.Warnings) > 0 {
				s += " · " + st.warn.Render(fmt.Sprintf("%d warnings", len(x.result.Warnings)))
			}
			lines = append(lines, ansi.Truncate(s, w, "…"))
		case jobCancelled:
			lines = append(lines, st.dim.Render(ansi.Truncate(fmt.Sprintf("  at step %d/%d", x.last.Step, x.last.Steps), w, "…")))
		case jobFailed:
			lines = append(lines, ansi.Truncate("  "+st.err.Render(oneLine(x.err)), w, "…"))
		}
	}
	for len(lines) < room {
		lines = append(lines, "")
	}
	if curveH > 0 {
		lines = append(lines, ansi.Truncate(st.dim.Render(fmt.Sprintf("loss of #%d (log₁₀, per progress event)", sel.id)), w, "…"))
		lo, hi := niceRange(false, sel.losses)
		spec := chartSpec{xmin: 0, xmax: float64(len(sel.losses) - 1), ymin: lo, ymax: hi, xstep: 0,
			series: []series{{y: sel.losses, x0: 0, dx: 1, style: st.series}},
			yfmt:   func(_ int, v float64) string { return fmt.Sprintf("1e%.0f", v) }}
		spec.xstep = 1000 // no x labels worth reading: steps are in the job line
		lines = append(lines, drawChart(spec, w, curveH-1, st))
	}
	return lipgloss.NewStyle().Width(w).Height(h).MaxHeight(h).Render(strings.Join(lines, "\n"))
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
