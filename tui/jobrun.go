package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/sessions"
	"github.com/ssmlab/ssmlab/train"
)

// Jobs are records of the session (sessions.Job: the spec, the status, the report, the log,
// the target fitted and the filter made). The workbench reads them into jobs for the jobs
// pane and adds, while one runs here, what connects it to its goroutine; every change of a
// job's state is written back to its record.

// jobKind is the Kind of the workbench's jobs.
const jobKind = "distill"

// job is a job of the session as the jobs pane shows it.
type job struct {
	id       string // the session's job ID
	num      int    // "#num": its place among the session's jobs
	spec     train.Spec
	orders   []int  // a ladder job's orders (spec.Order is the highest); nil for one order
	sourceID string // the item it fits
	source   string // its name when the job started
	// fitted is the filter or bank the job fits, as it was when the job started, while the
	// job is known here (not in a session opened again): the overlay of its result.
	fitted   *fittedSource
	status   sessions.JobStatus
	last     JobProgress
	losses   []float64 // log10 of the loss at each progress event
	report   jobReport // once it ended
	resultID string
	log      []string

	// while it runs here
	started time.Time
	cancel  context.CancelFunc
	chans   jobChans
}

// jobReport is the report of the workbench's jobs in the session file (docs/formats.md).
type jobReport struct {
	MaxRelError float64   `json:"max_rel_error"`
	Stable      bool      `json:"stable"`
	Seconds     float64   `json:"seconds"`
	Warnings    []string  `json:"warnings,omitempty"`
	Backend     string    `json:"backend,omitempty"`
	Step        int       `json:"step"`
	Steps       int       `json:"steps"`
	Loss        float64   `json:"loss"`
	LossCurve   []float64 `json:"loss_curve,omitempty"`
	Error       string    `json:"error,omitempty"`
	// Orders are a ladder job's orders, and Ladder, once it is done, the error and the lower
	// bound of every channel at each order.
	Orders []int           `json:"orders,omitempty"`
	Ladder *figures.Ladder `json:"ladder,omitempty"`
	// Source is the name of the item the job fits when it started: the job's name for it
	// once the item is deleted.
	Source string `json:"source,omitempty"`
}

// state is the job's status: a job recorded as running that does not run here was
// interrupted (the session was saved, or autosaved, while it ran).
func (j *job) state() sessions.JobStatus {
	if j.status == sessions.JobRunning && j.cancel == nil {
		return sessions.JobInterrupted
	}
	return j.status
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

func (j *job) logf(format string, args ...any) {
	j.log = append(j.log, time.Now().Format("15:04:05")+" "+fmt.Sprintf(format, args...))
}

// record is the job as the session keeps it.
func (j *job) record() (sessions.Job, error) {
	spec, err := json.Marshal(j.spec)
	if err != nil {
		return sessions.Job{}, err
	}
	rep := j.report
	rep.Step, rep.Steps, rep.Loss, rep.LossCurve = j.last.Step, j.last.Steps, finite(j.last.Loss), j.losses
	rep.Orders, rep.Source = j.orders, j.source
	report, err := json.Marshal(rep)
	if err != nil {
		return sessions.Job{}, err
	}
	return sessions.Job{ID: j.id, Kind: jobKind, Spec: spec, Report: report, Status: j.status,
		Target: j.sourceID, Result: j.resultID, Log: j.log}, nil
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// store writes the job's record to the session: a new one for a job without an ID.
func (a *app) store(j *job) error {
	rec, err := j.record()
	if err != nil {
		return err
	}
	if j.id == "" {
		j.id, err = a.sess.AddJob(rec)
		return err
	}
	return a.sess.ReplaceJob(rec)
}

// readJobs reads the session's jobs into the jobs pane's list.
func (a *app) readJobs() {
	a.jobs = nil
	for i, r := range a.sess.Jobs {
		j := &job{id: r.ID, num: i + 1, status: r.Status, sourceID: r.Target, resultID: r.Result, log: r.Log}
		_ = json.Unmarshal(r.Spec, &j.spec) // a record of another program shows what it can
		_ = json.Unmarshal(r.Report, &j.report)
		j.last = JobProgress{Step: j.report.Step, Steps: j.report.Steps, Loss: j.report.Loss}
		j.losses = j.report.LossCurve
		j.orders, j.source = j.report.Orders, j.report.Source
		a.jobs = append(a.jobs, j)
	}
}

// jobByID returns the job with the session ID id.
func (a *app) jobByID(id string) *job {
	for _, j := range a.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

// fittedSource is a filter or bank a job fitted and what the workbench computed from it.
type fittedSource struct {
	filter filters.Filter
	bank   *filters.Bank
	item   *item
}

// fittedPrefix marks the ID of the entry of a job's fitted source (fittedEntry): the job's
// ID follows it.
const fittedPrefix = "fitted:"

// fittedEntry is the entry of the source job jobID fitted, as it was when the job started,
// named after the source ("ring (as fitted)"); nil when the job is not known or fitted no
// filter (kernels do not change).
func (a *app) fittedEntry(jobID string) *entry {
	j := a.jobByID(jobID)
	if j == nil || j.fitted == nil {
		return nil
	}
	f := j.fitted
	e := &entry{item: f.item, id: fittedPrefix + jobID, kind: kindFilter, name: a.sourceName(j) + " (as fitted)", filter: f.filter, bank: f.bank, rev: a.epoch}
	if f.bank != nil {
		e.kind = kindBank
	}
	return e
}

// sourceName names the item a job fits: as it is named now, or, deleted, as it was named when
// the job started (a job recorded without that name: "(removed)").
func (a *app) sourceName(j *job) string {
	switch e := a.entry(j.sourceID); {
	case e != nil:
		return e.name
	case j.source != "":
		return j.source
	}
	return "(removed)"
}

// defaultSpecFor is the distillation form's starting point for e: the runner's defaults, an
// order of half the filter's (at most 16), and a length that fits it.
func (a *app) defaultSpecFor(e *entry) train.Spec {
	s := a.deps.Runner.Defaults()
	if b := a.deps.Runner.Backends(); len(b) > 0 {
		s.Backend = b[0]
	}
	if n := e.order(); e.kind != kindKernel && n > 0 {
		s.Order = max(1, min(16, n/2))
	}
	if e.kind == kindKernel {
		s.Target.Length = len(e.kernel())
	}
	s.Target.Length = max(s.Target.Length, 2*s.Order+8)
	return s
}

// suggestTol is the relative error the distillation form's suggested order is for (the
// CLI's default --suggest-tol).
const suggestTol = 1e-3

// targetSource returns what distilling e at length L fits: its impulse response (every
// channel of a bank), or its kernels cut or zero-padded to L.
func targetSource(e *entry, L int) func() ([][]float64, error) {
	switch e.kind {
	case kindFilter:
		f := e.filter
		return func() ([][]float64, error) { return train.ImpulseTargets([]filters.Filter{f}, L) }
	case kindBank:
		b := e.bank
		return func() ([][]float64, error) { return train.ImpulseTargets(b.Channels, L) }
	}
	ks := e.kernels()
	return func() ([][]float64, error) {
		if len(ks) == 0 {
			return nil, errors.New("the kernels are not loaded")
		}
		out := make([][]float64, len(ks))
		for i, k := range ks {
			out[i] = make([]float64, L)
			copy(out[i], k)
		}
		return out, nil
	}
}

// fitted names what distilling e fits (targetSource): its impulse response, or its kernels.
func (e *entry) fitted() string {
	switch {
	case e.kind != kindKernel:
		return "impulse response"
	case len(e.kernels()) == 1:
		return "kernel"
	}
	return "kernels"
}

// startJob starts distilling e's impulse response (every channel of a bank), at spec.Order,
// or, for a ladder (orders not empty), at each of orders.
func (a *app) startJob(e *entry, spec train.Spec, orders []int) (tea.Cmd, error) {
	if len(orders) > 0 {
		if _, ok := a.deps.Runner.(LadderRunner); !ok {
			return nil, errors.New("this job runner fits no ladders")
		}
		spec.Order = slices.Max(orders)
		if err := spec.CheckLadder(); err != nil {
			return nil, fmt.Errorf("orders: %w", err)
		}
	}
	source := targetSource(e, spec.Target.Length)
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{num: len(a.jobs) + 1, spec: spec, orders: orders, sourceID: e.id, source: e.name, status: sessions.JobRunning,
		started: time.Now(), cancel: cancel, chans: newJobChans(), last: JobProgress{Steps: spec.Steps}}
	if e.kind != kindKernel {
		j.fitted = &fittedSource{filter: e.filter, bank: e.bank, item: &item{}}
	}
	how := fmt.Sprintf("%d steps", spec.Steps)
	if spec.ByProjection() {
		how = "by variable projection, in no optimiser steps"
	}
	j.logf("started: %s of order %s, %s on %s, fitting %s", spec.Model, j.orderText(math.MaxInt), how, spec.Backend, e.name)
	if err := a.store(j); err != nil {
		cancel()
		return nil, err
	}
	a.jobs = append(a.jobs, j)
	a.setStatus(levelInfo, fmt.Sprintf("job #%d: distilling %s into %s of order %s (x in the jobs pane cancels)", j.num, e.name, spec.Model, j.orderText(statusOrders)))
	return tea.Batch(runJob(ctx, a.deps.Runner, j.id, spec, orders, source, j.chans), waitJob(j.id, j.chans, 0)), nil
}

func (a *app) cancelJob(j *job) error {
	if j == nil {
		return errors.New("no job selected")
	}
	if j.state() != sessions.JobRunning {
		return fmt.Errorf("job #%d is not running", j.num)
	}
	j.cancel()
	a.setStatus(levelInfo, fmt.Sprintf("cancelling job #%d…", j.num))
	return nil
}

// cancelJobs cancels every running job (on quit, or when another session is opened).
func (a *app) cancelJobs() {
	for _, j := range a.jobs {
		if j.cancel != nil {
			j.cancel()
		}
	}
}

// running counts the jobs running here.
func (a *app) running() int {
	n := 0
	for _, j := range a.jobs {
		if j.state() == sessions.JobRunning {
			n++
		}
	}
	return n
}

func (a *app) onJobProgress(msg jobProgressMsg) tea.Cmd {
	j := a.jobByID(msg.id)
	if j == nil || j.state() != sessions.JobRunning {
		return nil
	}
	j.last = msg.p
	j.addLoss(msg.p.Loss)
	return waitJob(j.id, j.chans, a.progress)
}

// onJobDone records how a job ended and adds its result to the session, linked to the item
// it fits and to the job.
// fitName names a job's fit by what it is, for a single fit and a ladder alike: its source,
// the model whose form it is written in, and its order. An rtf fitted by variable projection
// (a ladder's rungs, the default recipe) is written as poles and residues where tf
// coefficients lose it: a diagonal fit, named ~modalN as a modal job's is, not ~rtfN beside
// "diagonal" in the list.
func fitName(source string, model train.Model, order int, form filters.Form) string {
	for _, m := range train.Models {
		if m.Form() == form {
			model = m
		}
	}
	return fmt.Sprintf("%s~%s%d", source, model, order)
}

func (a *app) onJobDone(msg jobDoneMsg) {
	j := a.jobByID(msg.id)
	if j == nil || j.cancel == nil {
		return
	}
	j.cancel()
	j.cancel = nil
	j.report.Seconds = time.Since(j.started).Seconds()
	err := a.finish(j, msg)
	if j.status != sessions.JobDone {
		j.fitted = nil // no result to draw it under
	}
	if serr := a.store(j); err == nil {
		err = serr
	}
	a.setError(err)
}

func (a *app) finish(j *job, msg jobDoneMsg) error {
	switch {
	case errors.Is(msg.err, context.Canceled):
		j.status = sessions.JobCancelled
		j.logf("cancelled at step %d/%d", j.last.Step, j.last.Steps)
		a.setStatus(levelWarn, fmt.Sprintf("job #%d cancelled", j.num))
		return nil
	case msg.err == nil && (msg.res == nil || len(msg.res.Filters) == 0):
		msg.err = errors.New("the runner returned no filter")
	}
	if msg.err != nil {
		j.status, j.report.Error = sessions.JobFailed, oneLine(msg.err)
		j.logf("failed: %s", j.report.Error)
		a.setStatus(levelError, fmt.Sprintf("job #%d failed: %s", j.num, j.report.Error))
		return nil
	}
	res := msg.res
	j.report = jobReport{MaxRelError: res.MaxRelError, Stable: res.Stable, Seconds: res.Seconds, Warnings: res.Warnings, Backend: res.Backend}
	if res.Ladder != nil && finiteLadder(res.Ladder) {
		j.report.Ladder = res.Ladder
	}
	j.last.Step = j.last.Steps
	it := Item{Name: fitName(a.sourceName(j), j.spec.Model, j.spec.Order, res.Filters[0].Form()), Filter: res.Filters[0]}
	if len(res.Filters) > 1 {
		b, err := filters.NewBank(res.Filters)
		if err != nil {
			j.status, j.report.Error = sessions.JobFailed, oneLine(err)
			return err
		}
		it.Filter, it.Bank = nil, b
	}
	// the worst channel's error, named as the job's row names it ("worst error"): unnamed,
	// "rel error" read as the mean the status line gives beside it
	origin := sessions.Origin{Note: fmt.Sprintf("job #%d from %s: worst error %s", j.num, a.sourceName(j), sci(res.MaxRelError)), Target: j.sourceID, Job: j.id}
	// added without moving the selection: the user may be busy elsewhere
	id, err := a.add(it, origin, true)
	if err != nil {
		j.status, j.report.Error = sessions.JobFailed, oneLine(err)
		return err
	}
	j.status, j.resultID = sessions.JobDone, id
	done := "done"
	if b := res.Backend; b != "" && b != "cpu" {
		done += " on " + b
	}
	// As distill's summary: the worst and the mean error, the bound beside the mean.
	errs := fmt.Sprintf("rel error mean %s ≥ lower bound mean %s, worst %s", sci(res.MeanRelError), sci(res.MeanLowerBound), sci(res.MaxRelError))
	j.logf("%s: %s, made %s", done, errs, id)
	form := ""
	if res.FormNote != "" {
		form = " · form: " + res.FormNote
		j.logf("form: %s", res.FormNote)
	}
	if res.RadiusNote != "" {
		j.logf("%s", res.RadiusNote)
	}
	lvl := levelOK
	if !res.Stable || len(res.Warnings) > 0 {
		lvl = levelWarn
	}
	if l := j.report.Ladder; l != nil {
		// What was added and where the ladder is come first: a long ladder's figures do not
		// fit on the line, and the job's log keeps them whole.
		summary := ladderSummary(l)
		j.logf("%s", summary)
		a.setStatus(lvl, fmt.Sprintf("job #%d %s: added %s, order %d · the jobs pane draws the ladder · %s%s", j.num, done, a.entry(id).name, j.spec.Order, summary, form))
		return nil
	}
	a.setStatus(lvl, fmt.Sprintf("job #%d %s: added %s (%s) · enter in the jobs pane shows it over %s%s", j.num, done, a.entry(id).name, errs, a.sourceName(j), form))
	return nil
}
