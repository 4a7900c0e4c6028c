package tui

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/presets"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// TestLadderJob: :ladder 2,4,8 (distill orders=…) fits the selected filter at each order
// with train.FitLadder; the jobs pane draws the mean error against the order with the mean
// lower bound beside it, the status line and the job give the figures, the highest order's
// fit joins the list, and the ladder is kept with the job in the session (issue 23 item 5).
func TestLadderJob(t *testing.T) {
	m := newLadderModel(t)
	keys(t, m, ":")
	typeText(t, m, "ladder 2,4,8 length=128")
	keys(t, m, "enter")
	if len(m.jobs) != 1 {
		t.Fatalf("%d jobs, status %q", len(m.jobs), m.status.text)
	}
	j := m.jobs[0]
	l := j.report.Ladder
	if j.state() != sessions.JobDone || l == nil {
		t.Fatalf("job %s, ladder %v: %s (status %q)", j.state(), l, j.report.Error, m.status.text)
	}
	if len(l.Orders) != 3 || l.Orders[0] != 2 || l.Orders[2] != 8 || j.spec.Order != 8 {
		t.Errorf("orders %v, spec order %d", l.Orders, j.spec.Order)
	}
	errs, bounds := ladderMeans(l)
	for k := range l.Orders {
		if !(errs[k] >= bounds[k]*(1-1e-9)) || (k > 0 && errs[k] > errs[k-1]*(1+1e-9)) {
			t.Errorf("order %d: mean error %g, bound %g (errors %v): the error is below its bound or rises with the order", l.Orders[k], errs[k], bounds[k], errs)
		}
	}
	if want := "n=2 " + sci(errs[0]) + " ≥ " + sci(bounds[0]); !strings.Contains(m.status.text, want) {
		t.Errorf("status %q lacks %q", m.status.text, want)
	}
	if res := m.entry(j.resultID); res == nil || res.order() != 8 && res.order() != 0 {
		t.Errorf("the result %+v is not the order-8 fit", res)
	}
	m.setFocus(paneJobs)
	send(t, m, statusMsg{text: "ladder"}) // laid out again with the jobs pane focused
	s := screen(m)
	for _, want := range []string{"#1 ring→rtf2,4,8 done", "#1 error ≥ bound by order", "n=2    " + sci(errs[0]) + " ≥ " + sci(bounds[0]), "n=8    " + sci(errs[2])} {
		if !strings.Contains(s, want) {
			t.Errorf("the jobs pane lacks %q:\n%s", want, s)
			break
		}
	}

	// kept with the job in the session
	path := filepath.Join(t.TempDir(), "l.ssmlab")
	keys(t, m, ":")
	typeText(t, m, "save-session "+path)
	keys(t, m, "enter")
	s2, err := sessions.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep jobReport
	if err := json.Unmarshal(s2.Jobs[0].Report, &rep); err != nil || rep.Ladder == nil || len(rep.Ladder.Orders) != 3 || len(rep.Orders) != 3 {
		t.Errorf("the saved job's report %s: %v", s2.Jobs[0].Report, err)
	}

	// the ladder as a figure, as ssmlab plot --ladder draws it
	svg := filepath.Join(t.TempDir(), "ladder.svg")
	keys(t, m, ":")
	typeText(t, m, "export-plot "+svg+" ladder")
	keys(t, m, "enter")
	if data, err := os.ReadFile(svg); err != nil || !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "lower bound") {
		t.Errorf("export-plot ladder: %v (status %q)", err, m.status.text)
	}

	// the distillation form's orders field, its order left empty
	m.sel = j.sourceID
	keys(t, m, "D", "down", "ctrl+u", "down", "down", "down", "down", "down")
	typeText(t, m, "2,4")
	keys(t, m, "enter")
	if len(m.jobs) != 2 || m.jobs[1].report.Ladder == nil || len(m.jobs[1].report.Ladder.Orders) != 2 {
		t.Fatalf("the form's orders 2,4: %d jobs (status %q)", len(m.jobs), m.status.text)
	}

	// mistakes
	for _, line := range []string{"ladder", "ladder 4,x", "distill orders=0"} {
		keys(t, m, ":")
		typeText(t, m, line)
		keys(t, m, "enter")
		if m.status.level != levelError || len(m.jobs) != 2 {
			t.Errorf("%s: status %v %q, %d jobs", line, m.status.level, m.status.text, len(m.jobs))
		}
	}
}

// TestLadderOrdersAsTheCLI: a ladder order outside [1, 4096], in the form's orders field or
// in :distill orders=…, is refused with train's words (CheckLadderOrders), those of ssmlab
// distill --orders 0; the form said "want positive integers" and took 5000.
func TestLadderOrdersAsTheCLI(t *testing.T) {
	m := newTestModel(t, 120, 40, nil)
	addPreset(t, m, "pair")
	for _, orders := range [][]int{{0, 4}, {4, 5000}} {
		want := train.CheckLadderOrders(orders).Error()
		checkRefused(t, m, "orders", fmt.Sprintf("%d,%d", orders[0], orders[1]), want)
	}
}

// TestLadderManyOrders: the workbench takes as many ladder orders as ssmlab distill
// --orders (it refused more than 16, a limit the CLI does not have), and shows them all: the
// job's heading names the orders by their ends and keeps the job's state, and pgdn/pgup
// page through each order's figures where the jobs pane lacks the room for all of them.
func TestLadderManyOrders(t *testing.T) {
	m := newLadderModel(t)
	var orders []string
	for n := 1; n <= 20; n++ {
		orders = append(orders, strconv.Itoa(n))
	}
	keys(t, m, ":")
	typeText(t, m, "ladder "+strings.Join(orders, ",")+" length=128")
	keys(t, m, "enter")
	if len(m.jobs) != 1 {
		t.Fatalf("20 orders: %d jobs, status %q", len(m.jobs), m.status.text)
	}
	j := m.jobs[0]
	l := j.report.Ladder
	if j.state() != sessions.JobDone || l == nil || len(l.Orders) != 20 {
		t.Fatalf("job %s, ladder %v: %s (status %q)", j.state(), l, j.report.Error, m.status.text)
	}
	// The status line says what was added and where the ladder is before the figures,
	// which a long ladder's line cannot hold (the job's log keeps them).
	if s := screen(m); !strings.Contains(s, "job #1 done: added ") || !strings.Contains(s, "the jobs pane draws the ladder") {
		t.Errorf("the status line lost what the finished ladder added:\n%s", s)
	}
	if log := strings.Join(j.log, "\n"); !strings.Contains(log, ladderSummary(l)) {
		t.Errorf("the job's log lacks the ladder's figures:\n%s", log)
	}
	m.setFocus(paneJobs)
	send(t, m, statusMsg{text: "ladder"}) // laid out again with the jobs pane focused
	errs, bounds := ladderMeans(l)
	seen := make([]bool, len(l.Orders))
	for range l.Orders {
		s := screen(m)
		if !strings.Contains(s, "#1 ring→rtf1,2,…,20 done") || !strings.Contains(s, "#1 error ≥ bound by order") {
			t.Fatalf("the jobs pane lacks the job's heading or the ladder's:\n%s", s)
		}
		for k, n := range l.Orders {
			seen[k] = seen[k] || strings.Contains(s, fmt.Sprintf("n=%-4d %s ≥ %s", n, sci(errs[k]), sci(bounds[k])))
		}
		keys(t, m, "pgdown")
	}
	for k, ok := range seen {
		if !ok {
			t.Errorf("paging never showed order %d's figures:\n%s", l.Orders[k], screen(m))
			break
		}
	}
	for range l.Orders {
		keys(t, m, "pgup")
	}
	if s := screen(m); !strings.Contains(s, fmt.Sprintf("n=1    %s ≥ %s", sci(errs[0]), sci(bounds[0]))) {
		t.Errorf("pgup did not page back to order 1:\n%s", s)
	}
}

// newLadderModel is a 140×48 workbench whose jobs run train's fits (trainRunner), holding a
// ring preset, selected.
func newLadderModel(t *testing.T) *Model {
	t.Helper()
	deps := testDeps(nil)
	deps.Runner = trainRunner{}
	m := New(Options{Deps: deps, ProgressInterval: -1, Length: 64, Dir: t.TempDir(), AutosaveInterval: -1})
	send(t, m, tea.WindowSizeMsg{Width: 140, Height: 48})
	addPreset(t, m, "ring")
	return m
}

// TestFormLengthAsDistill checks that the distill form offers a filter the kernel length the
// CLI's distill takes from one (train.DefaultKernelLength): the form once offered 512.
func TestFormLengthAsDistill(t *testing.T) {
	m := newLadderModel(t)
	form := openFormAt(t, m, "length")
	if got, want := form.fields[form.focus].value(), strconv.Itoa(train.DefaultKernelLength); got != want {
		t.Errorf("the form's length is %s, distill's %s", got, want)
	}
}

// TestFitNamedByItsForm: a fit is named by the form it is written in, a ladder's as a single
// fit's: a ladder of the default rtf model on Hyena kernels, written as poles and residues,
// was added as "hyena~rtf16" beside "4×diagonal 16" in the list.
func TestFitNamedByItsForm(t *testing.T) {
	m := newLadderModel(t)
	r, err := presets.New("hyena", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	addKernels(t, m, "hyena", r.Kernels)
	runPalette(t, m, "ladder 4,8,16")
	if len(m.jobs) != 1 {
		t.Fatalf("no job: status %q", m.status.text)
	}
	res := m.entry(m.jobs[0].resultID)
	if res == nil || res.form() != "diagonal" || res.name != "hyena~modal16" {
		t.Fatalf("the ladder's fit: %+v (status %q)", res, m.status.text)
	}
	if !strings.Contains(m.status.text, "added hyena~modal16, order 16") {
		t.Errorf("status %q", m.status.text)
	}
	if got := fitName("ring", train.ModelRTF, 8, "tf"); got != "ring~rtf8" {
		t.Errorf("an rtf written as a tf is %q", got)
	}
}

// TestLadderNeedsProjection: a ladder of a recipe the optimiser trains (init=zeros) is
// refused with train's words (Spec.CheckLadder), as ssmlab distill --orders refuses it: it
// started a job that failed at once, a record of nothing in the session.
func TestLadderNeedsProjection(t *testing.T) {
	m := newLadderModel(t)
	runPalette(t, m, "ladder 2,3 init=zeros")
	spec := train.DefaultSpec()
	spec.Init = train.InitZeros
	if want := spec.CheckLadder().Error(); len(m.jobs) != 0 || !strings.Contains(m.status.text, want) {
		t.Errorf("ladder init=zeros: %d jobs, status %q; want none and %q", len(m.jobs), m.status.text, want)
	}
}

// TestFitSaysFormAndBound: a finished job says, as ssmlab distill does, the mean error beside
// the mean lower bound and, for an rtf, the form it was written in and why: an rtf job of
// Hyena kernels was added as hyena~modal8 with its worst error alone, and nothing said why
// an rtf came back as poles and residues. The job's log keeps both.
func TestFitSaysFormAndBound(t *testing.T) {
	m := newLadderModel(t)
	r, err := presets.New("hyena", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	addKernels(t, m, "hyena", r.Kernels)
	spec := train.DefaultSpec()
	spec.Order, spec.Target.Length = 8, 64
	res, err := train.Run(t.Context(), train.Job{Spec: spec, Targets: r.Kernels}, train.CPU{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	runPalette(t, m, "distill order=8")
	if len(m.jobs) != 1 || m.jobs[0].state() != sessions.JobDone {
		t.Fatalf("no finished job: status %q", m.status.text)
	}
	log := strings.Join(m.jobs[0].log, "\n")
	for _, want := range []string{
		fmt.Sprintf("mean %s ≥ lower bound mean %s", sci(rep.MeanRelError), sci(rep.MeanLowerBound)),
		"form: " + rep.FormNote,
	} {
		if !strings.Contains(m.status.text, want) || !strings.Contains(log, want) {
			t.Errorf("the status line or the job's log lacks %q:\nstatus %q\nlog %s", want, m.status.text, log)
		}
	}
}

// TestDistillStepsNeedTheOptimiser: :distill steps=N with a recipe fitted by variable
// projection (the default: hankel, rtf) is refused in train's words, as ssmlab distill
// --steps is (Spec.CheckOptimiserSetting): it was taken and ignored, and the job's log said
// "500 steps". Such a job's log says how it fits.
func TestDistillStepsNeedTheOptimiser(t *testing.T) {
	m := newLadderModel(t)
	runPalette(t, m, "distill order=2 steps=500")
	byProjection := train.DefaultSpec()
	if len(m.jobs) != 0 || m.status.text != byProjection.CheckOptimiserSetting("steps=500").Error() {
		t.Errorf("steps=500 by variable projection: %d jobs, status %q", len(m.jobs), m.status.text)
	}
	runPalette(t, m, "distill order=2")
	if len(m.jobs) != 1 || !strings.Contains(m.jobs[0].log[0], "by variable projection, in no optimiser steps") {
		t.Errorf("the job's log: %q (status %q)", m.jobs[0].log, m.status.text)
	}
	runPalette(t, m, "distill order=2 init=zeros steps=5")
	if len(m.jobs) != 2 || !strings.Contains(m.jobs[1].log[0], "5 steps") {
		t.Errorf("init=zeros steps=5: %d jobs, status %q", len(m.jobs), m.status.text)
	}
}

// TestLadderTicksAtOrders: the ladder chart's x labels are powers of two, at the orders of
// a ladder of them, on the log₂ axis: ntcharts labels the value at every twelfth column,
// wherever it falls, and a ladder of 4 … 64 in the jobs pane was labelled 4 and 20. The
// last label is the top order, or the power of two above it: ntcharts labels no tick in the
// chart's last column nor one whose label runs past its edge, and a ladder of 2 … 1024 was
// labelled 1 and 32 alone.
func TestLadderTicksAtOrders(t *testing.T) {
	for _, tc := range []struct {
		orders []int
		width  int
	}{
		{[]int{4, 8, 16, 32, 64}, 120},
		{[]int{4, 8, 16, 32, 64}, 80},
		{[]int{4, 8, 16, 32, 64}, 200},
		{[]int{3, 5, 12, 40}, 120},
		{[]int{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, 80},
		{[]int{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, 160},
		{[]int{16}, 120},
	} {
		m := newTestModel(t, tc.width, 40, nil)
		addPreset(t, m, "ring")
		l := &figures.Ladder{Orders: tc.orders}
		for k := range l.Orders {
			l.Errors = append(l.Errors, []float64{1e-1 / float64(k+1)})
			l.Bounds = append(l.Bounds, []float64{1e-3 / float64(k+1)})
		}
		m.jobs = []*job{{num: 1, spec: train.Spec{Model: "rtf", Order: slices.Max(tc.orders)}, orders: tc.orders, sourceID: m.sel, status: sessions.JobDone, report: jobReport{Ladder: l}}}
		m.setFocus(paneJobs)
		send(t, m, tea.WindowSizeMsg{Width: tc.width, Height: 40})
		s := screen(m)
		labels := ladderXLabels(s)
		if len(labels) < 2 {
			t.Errorf("ladder %v at width %d: x labels %q, want two or more:\n%s", tc.orders, tc.width, labels, s)
			continue
		}
		for _, v := range labels {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n&(n-1) != 0 || n < tc.orders[0]/2 || n > 2*slices.Max(tc.orders) {
				t.Errorf("ladder %v at width %d: x label %q is no power of two within the orders' range (labels %q):\n%s", tc.orders, tc.width, v, labels, s)
			}
		}
		top := slices.Max(tc.orders)
		if len(tc.orders) == 1 {
			top *= 2 // one order is drawn between half and twice it
		}
		if n, _ := strconv.Atoi(labels[len(labels)-1]); n < top || n >= 2*top {
			t.Errorf("ladder %v at width %d: the last x label is %q, not the top order %d or the power of two above it (labels %q):\n%s", tc.orders, tc.width, labels[len(labels)-1], top, labels, s)
		}
	}
}

// ladderXLabels are the labels under the x axis of the jobs pane's chart, a ladder's or a
// loss curve's (the pane between the first two ┃ of a line).
func ladderXLabels(screen string) []string {
	axis := false
	for _, line := range strings.Split(screen, "\n") {
		parts := strings.Split(line, "┃")
		if len(parts) < 3 {
			continue
		}
		if axis {
			return strings.Fields(parts[1])
		}
		axis = strings.Contains(parts[1], "└")
	}
	return nil
}

// TestLogAxesLabelTrueValues: the log₁₀ y axes of the jobs pane (a loss curve, a ladder)
// label the values at their rows: whole decades where the range spans one, else rounded
// values that differ, and the curves' tops and bottoms sit at the rows the labels give their
// values. "1e%.0f" of every few rows named a loss from 2.4e-6 to 1.7e-6 "1e-6" alone, and put
// decades up to half a decade off their rows ("1e-3" and "1e-2" four rows apart on a ladder
// whose rows are 0.3 decades, then two).
func TestLogAxesLabelTrueValues(t *testing.T) {
	geometric := func(from, to float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = from * math.Pow(to/from, float64(i)/float64(n-1))
		}
		return v
	}
	for _, tc := range []struct {
		name   string
		losses []float64 // a loss curve's; nil for a ladder of errors and bounds
		errs   []float64
		bounds []float64
		width  int
	}{
		{name: "loss 2.4e-6 → 1.7e-6", losses: geometric(2.4e-6, 1.7e-6, 40), width: 120},
		{name: "loss 2.4e-6 → 1.7e-6, narrow", losses: geometric(2.4e-6, 1.7e-6, 40), width: 80},
		{name: "loss 0.9 decades", losses: geometric(4e-3, 5e-4, 40), width: 120},
		{name: "loss 3 decades", losses: geometric(0.12, 8e-5, 40), width: 120},
		{name: "loss 12 decades", losses: geometric(3, 2e-12, 40), width: 120},
		{name: "ladder 1e-1 … 2e-4", errs: geometric(1e-1, 2e-2, 5), bounds: geometric(1e-3, 2e-4, 5), width: 120},
		{name: "ladder within a decade", errs: geometric(3e-2, 2e-2, 5), bounds: geometric(1.5e-2, 1e-2, 5), width: 120},
	} {
		m := newTestModel(t, tc.width, 40, nil)
		addPreset(t, m, "ring")
		j := &job{num: 1, spec: train.Spec{Model: "rtf", Order: 4}, sourceID: m.sel, status: sessions.JobRunning, cancel: func() {}}
		data := tc.losses
		for _, v := range tc.losses {
			j.addLoss(v)
		}
		if tc.losses == nil {
			l := &figures.Ladder{}
			for k := range tc.errs {
				l.Orders = append(l.Orders, 4<<k)
				l.Errors = append(l.Errors, []float64{tc.errs[k]})
				l.Bounds = append(l.Bounds, []float64{tc.bounds[k]})
			}
			j.status, j.orders, j.report = sessions.JobDone, l.Orders, jobReport{Ladder: l}
			data = slices.Concat(tc.errs, tc.bounds)
		}
		m.jobs = []*job{j}
		m.setFocus(paneJobs)
		send(t, m, tea.WindowSizeMsg{Width: tc.width, Height: 40})
		s := screen(m)
		labels, top, bottom := logChart(t, s)
		if len(labels) < 2 {
			t.Errorf("%s: y labels %v, want two or more:\n%s", tc.name, labels, s)
			continue
		}
		// The labels' rows give log₁₀ of a value as a line through the first and the last.
		first, last := labels[0], labels[len(labels)-1]
		slope := (math.Log10(last.v) - math.Log10(first.v)) / float64(last.row-first.row)
		at := func(row float64) float64 { return math.Log10(first.v) + slope*(row-float64(first.row)) }
		lo, hi := math.Log10(slices.Min(data)), math.Log10(slices.Max(data))
		for _, l := range labels {
			if off := math.Abs(math.Log10(l.v) - at(float64(l.row))); off > l.tol {
				t.Errorf("%s: the label %q is %.2f decades off the line its first and last labels draw (labels %v):\n%s", tc.name, l.text, off, labels, s)
			}
			if whole := !strings.Contains(l.text, "."); hi-lo >= 1 && (!whole || !strings.HasPrefix(l.text, "1e")) {
				t.Errorf("%s: the data span %.1f decades and the label %q is no whole decade:\n%s", tc.name, hi-lo, l.text, s)
			}
		}
		// A cell row holds the values between its label's and the next row's, give or take
		// half a row: its braille dots are not spread as the labels are (4·rows − 1 steps).
		for _, c := range []struct {
			what string
			row  int
			v    float64
		}{{"top", top, hi}, {"bottom", bottom, lo}} {
			if c.v > at(float64(c.row))-slope/2 || c.v < at(float64(c.row+1))+slope/2 { // slope < 0
				t.Errorf("%s: the curve's %s is on a row the labels put between %.3g and %.3g; its value is %.3g (labels %v):\n%s",
					tc.name, c.what, math.Pow(10, at(float64(c.row+1))), math.Pow(10, at(float64(c.row))), math.Pow(10, c.v), labels, s)
			}
		}
	}
}

// logLabel is a y label of a log₁₀ chart: its row, text, value and the rounding its digits
// allow, in decades.
type logLabel struct {
	row  int
	text string
	v    float64
	tol  float64
}

func (l logLabel) String() string { return fmt.Sprintf("%s@%d", l.text, l.row) }

// logChart reads the chart of the jobs pane (between the first two ┃ of a line): its y
// labels and the rows of the top and bottom of its curves, rows counted down from its first.
func logChart(t *testing.T, screen string) (labels []logLabel, top, bottom int) {
	t.Helper()
	var rows []string
	for _, line := range strings.Split(screen, "\n") {
		parts := strings.Split(line, "┃")
		if len(parts) < 3 || !strings.ContainsAny(parts[1], "│└") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		rows = append(rows, parts[1])
		if strings.Contains(parts[1], "└") {
			break
		}
	}
	top, bottom = -1, -1
	for i, r := range rows {
		k := strings.IndexAny(r, "│└")
		if text := strings.TrimSpace(r[:k]); text != "" {
			v, err := strconv.ParseFloat(text, 64)
			if err != nil || !(v > 0) {
				t.Fatalf("the y label %q is no positive number", text)
			}
			mant, _, _ := strings.Cut(text, "e")
			digits := len(strings.ReplaceAll(mant, ".", ""))
			labels = append(labels, logLabel{i, text, v, math.Log10(1 + 0.5*math.Pow(10, 1-float64(digits)))})
		}
		if strings.ContainsFunc(r[k:], func(c rune) bool { return c > 0x2800 && c <= 0x28ff }) {
			if top < 0 {
				top = i
			}
			bottom = i
		}
	}
	return labels, top, bottom
}
