package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ssmlab/ssmlab/analysis"
	"github.com/ssmlab/ssmlab/analysis/figures"
	"github.com/ssmlab/ssmlab/filters"
	"github.com/ssmlab/ssmlab/internal/atomicfile"
	"github.com/ssmlab/ssmlab/presets"
	"github.com/ssmlab/ssmlab/train"
)

// This file is the only one that names the packages beside tui; wiring another is a change
// here alone:
//
//   - sessions: wired (fileStore in store.go).
//   - analysis: wired (analysisAnalyzer below) for the responses and the group delay.

// DefaultDeps returns the services the workbench uses outside tests.
func DefaultDeps() Deps {
	return Deps{
		Presets:  registryPresets{},
		Store:    fileStore{},
		Runner:   trainRunner{},
		Analyzer: analysisAnalyzer{},
		Figures:  plotFigures{},
	}
}

func (d Deps) withDefaults() Deps {
	def := DefaultDeps()
	if d.Presets == nil {
		d.Presets = def.Presets
	}
	if d.Store == nil {
		d.Store = def.Store
	}
	if d.Runner == nil {
		d.Runner = def.Runner
	}
	if d.Analyzer == nil {
		d.Analyzer = def.Analyzer
	}
	if d.Figures == nil {
		d.Figures = def.Figures
	}
	return d
}

// registryPresets is the presets package's registry.
type registryPresets struct{}

func (registryPresets) Presets() []PresetInfo {
	all := presets.All()
	out := make([]PresetInfo, len(all))
	for i, p := range all {
		info := PresetInfo{Name: p.Name, Description: p.Description}
		for _, q := range p.Params {
			info.Params = append(info.Params, PresetParam{Name: q.Name, Default: q.Default, Help: q.Help + " — " + q.Range()})
		}
		out[i] = info
	}
	return out
}

func (registryPresets) Build(name string, values map[string]string) (Built, error) {
	r, err := presets.New(name, values)
	if err != nil {
		return Built{}, err
	}
	b := Built{Label: r.Name, Filter: r.Filter, Bank: r.Bank, Kernels: r.Kernels, Note: r.Note}
	order := -1
	switch {
	case r.Filter != nil:
		order = r.Filter.Order()
	case r.Bank != nil && len(r.Bank.Channels) > 0:
		order = r.Bank.Channels[0].Order()
	}
	b.Name = shortPresetName(name, order)
	return b, nil
}

// shortPresetName is a preset's name in the list: the preset and its order ("butter4",
// "hippo-legs64"), with "_" between them where the preset's name ends in a digit
// ("cheby1_10", which read "cheby110"), not "-", which Session.UniqueName's copies take
// ("cheby1-2"); the preset alone for kernels (order < 0).
func shortPresetName(name string, order int) string {
	name = strings.TrimSuffix(name, "-")
	if order < 0 {
		return name
	}
	if n := len(name); n > 0 && name[n-1] >= '0' && name[n-1] <= '9' {
		name += "_"
	}
	return name + fmt.Sprint(order)
}

// trainRunner runs jobs with train.Run, starting from train.DefaultSpec, on the backend
// train.SelectBackend picks for the form's choice.
type trainRunner struct{}

// Backends offers the CPU and, on a machine with a GPU, auto and the GPU in both precisions.
func (trainRunner) Backends() []train.BackendName {
	if _, err := train.DetectGPU(); err != nil {
		return []train.BackendName{train.BackendCPU}
	}
	return []train.BackendName{train.BackendCPU, train.BackendAuto, train.BackendGPU, train.BackendGPU64}
}

// Defaults are train's recommended settings, for a filter's impulse response of the length
// distill takes.
func (trainRunner) Defaults() train.Spec {
	s := train.DefaultSpec()
	s.Target.Length = train.DefaultKernelLength
	return s
}

// SuggestOrder suggests an order from the targets' lower bounds (train.SuggestOrder).
func (trainRunner) SuggestOrder(targets [][]float64, tol float64) train.Suggestion {
	return train.SuggestOrder(targets, tol, train.MaxSuggestOrder)
}

func (trainRunner) Run(ctx context.Context, spec train.Spec, targets [][]float64, progress func(JobProgress)) (*JobResult, error) {
	chose := ""
	backend, err := train.SelectBackend(spec.Backend, func(line string) { chose = line })
	if errors.Is(err, train.ErrNoGPU) {
		return nil, fmt.Errorf("no GPU backend on this machine: %s; use the cpu backend", train.NoGPUReason(err))
	}
	if err != nil {
		return nil, err
	}
	res, err := train.Run(ctx, train.Job{Spec: spec, Targets: targets}, backend, func(p train.Progress) {
		progress(jobProgress(p))
	})
	if err != nil {
		return nil, err
	}
	ran := res.Report.Backend
	if chose != "" {
		ran = chose // auto's choice, with its reason
	}
	return jobResult(res.Filters, res.Report, ran), nil
}

// jobResult is a finished job's filters and report as the workbench keeps them; backend is
// what ran it, as the workbench says it.
func jobResult(fs []filters.Filter, rep train.Report, backend string) *JobResult {
	return &JobResult{Filters: fs, MaxRelError: rep.MaxRelError, MeanRelError: rep.MeanRelError,
		MeanLowerBound: rep.MeanLowerBound, FormNote: rep.FormNote, Stable: rep.Stable,
		Seconds: rep.Seconds, Warnings: rep.Warnings, RadiusNote: rep.AutoRadiusText(), Backend: backend}
}

// jobProgress is a job's progress event as the workbench keeps it.
func jobProgress(p train.Progress) JobProgress {
	return JobProgress{Step: p.Step, Steps: p.Steps, Loss: p.Loss, RelErr: p.RelError, Elapsed: p.Elapsed, ETA: p.ETA,
		Order: p.Order, TopOrder: p.TopOrder, Fitted: p.Fitted, Channels: p.Channels}
}

// RunLadder fits the job at every order with train.FitLadder (as ssmlab distill --orders):
// the result is the highest order's fit, with every order's errors and bounds.
func (trainRunner) RunLadder(ctx context.Context, spec train.Spec, orders []int, targets [][]float64, progress func(JobProgress)) (*JobResult, error) {
	backend, err := train.SelectBackend(spec.Backend, func(string) {})
	if errors.Is(err, train.ErrNoGPU) {
		return nil, fmt.Errorf("no GPU backend on this machine: %s; use the cpu backend", train.NoGPUReason(err))
	}
	if err != nil {
		return nil, err
	}
	l, err := train.FitLadder(ctx, train.Job{Spec: spec, Targets: targets}, orders, backend, func(p train.Progress) {
		progress(jobProgress(p))
	})
	if err != nil {
		return nil, err
	}
	top := l.Results[len(l.Results)-1]
	r := jobResult(top.Filters, top.Report, top.Report.Backend)
	r.Ladder = &figures.Ladder{Orders: l.Orders, Errors: l.Errors(), Bounds: l.Bounds()}
	return r, nil
}

// analysisAnalyzer computes what the plots show with package analysis, as figures (and so
// ssmlab plot and :export-plot) do: the frequency response, and the group delay from the
// poles and zeros of a filter (finite and annotated next to a root on the unit circle) or by
// the exact derivative of a kernel's phase (figures.DelayOf).
type analysisAnalyzer struct{}

func (analysisAnalyzer) Responses(f filters.Filter, length int, omega []float64) (Responses, error) {
	fr := analysis.FreqResponse(f, omega)
	r := Responses{Impulse: f.Impulse(length), H: fr.H, Masked: fr.Masked, SteadyState: analysis.SteadyStateNote(f)}
	// A filter whose zeros cannot be computed shows no delay rather than a wrong one.
	r.Delay, _ = figures.DelayOf(figures.Series{Filter: f}, omega)
	return r, nil
}

func (analysisAnalyzer) KernelResponses(h []float64, omega []float64) Responses {
	delay, _ := figures.DelayOf(figures.Series{Kernel: h}, omega) // a kernel's never fails
	kr := analysis.KernelResponse(h, omega)
	return Responses{Impulse: h, H: kr.H, Delay: delay, Masked: kr.Masked}
}

func (analysisAnalyzer) PolesZeros(f filters.Filter) (poles, zeros []complex128, err error) {
	p, hp := filters.HeldPoles(f)
	if z, hz := filters.HeldZeros(f); hp && hz {
		return p, z, nil
	}
	if poles, err = filters.Poles(f); err != nil {
		return nil, nil, err
	}
	if zeros, err = filters.Zeros(f); err != nil {
		return nil, nil, err
	}
	return poles, zeros, nil
}

// plotFigures draws figures with analysis/figures and writes them with the atomic writer.
type plotFigures struct{}

func (plotFigures) WriteFigure(path string, r FigureRequest) error {
	format, err := figures.FormatOf(path)
	if err != nil {
		return err
	}
	if r.Ladder != nil {
		fig, err := figures.NewLadder(*r.Ladder, figures.Options{Title: r.Title})
		if err != nil {
			return err
		}
		return writeFigure(path, fig, format)
	}
	kinds := make([]figures.Kind, len(r.Kinds))
	for i, k := range r.Kinds {
		if kinds[i], err = figures.ParseKind(k); err != nil {
			return err
		}
	}
	series := make([]figures.Series, len(r.Series))
	for i, s := range r.Series {
		series[i] = figures.Series{Name: s.Name, Filter: s.Filter, Kernel: s.Kernel}
	}
	fig, err := figures.New(kinds, series, figures.Options{Length: r.Length, Log: r.Log})
	if err != nil {
		return err
	}
	return writeFigure(path, fig, format)
}

// writeFigure renders fig in format and writes it to path atomically.
func writeFigure(path string, fig *figures.Figure, format figures.Format) error {
	data, err := fig.Render(format)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
